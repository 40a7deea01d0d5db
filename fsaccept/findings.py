"""What bears on whether a benchmark run can be trusted: findings shared by
the IOR, mdtest and fio parsers."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

INVALID = "invalid"
WARNING = "warning"


@dataclass
class Finding:
    """A line (or the absence of one) that bears on whether the run can be trusted."""

    severity: str  #: ``"invalid"`` or ``"warning"`` (fio adds ``"note"``)
    kind: str  #: short machine tag: ``error``, ``eof``, ``refused``, ``truncated``, ...
    line: int | None  #: 1-based line number in the parsed text; ``None`` when not tied to a line
    text: str  #: the line as printed (or a description for derived findings)


class Judged:
    """Mixin for a parsed run with ``findings``: valid unless one is invalid."""

    findings: list[Finding]

    @property
    def valid(self) -> bool:
        """True when no finding has severity ``invalid``."""
        return not any(f.severity == INVALID for f in self.findings)


def json_safe(obj: Any) -> Any:
    """``obj`` with NaN and infinities as None (JSON has neither; a figure that is
    not finite must never look like a number)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [json_safe(v) for v in obj]
    return obj
