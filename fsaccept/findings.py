"""What bears on whether a benchmark run can be trusted: findings shared by
the IOR, mdtest and fio parsers."""

from __future__ import annotations

from dataclasses import dataclass

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
