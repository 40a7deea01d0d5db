"""What bears on whether a benchmark run can be trusted: findings shared by
the IOR, mdtest and fio parsers."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
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

    @property
    def reasons(self) -> list[str]:
        """Each INVALID finding in words, its line number first when it has one (a run
        whose reasons say more overrides this)."""
        return [f"line {f.line}: {f.text}" if f.line else f.text
                for f in self.findings if f.severity == INVALID]


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


#: Findings kept per (severity, kind); the rest are counted in one closing finding.
#: A failing run of 10,000 ranks prints one error line each, and a file of
#: nothing but error lines must not make a report as large as itself.
MAX_PER_KIND = 100
#: Longest text kept from one line of a benchmark's output (a "line" of a binary
#: file can be megabytes long).
MAX_LINE_CHARS = 300


def clip(text: str, limit: int = MAX_LINE_CHARS) -> str:
    """``text`` cut to ``limit`` characters, saying so."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"... ({len(text) - limit:,} more characters)"


class Findings(list):
    """A list of :class:`Finding` that keeps the first :data:`MAX_PER_KIND` of each
    (severity, kind) and counts the others in one finding after them, so that the
    cost of a run's findings is bounded whatever the output holds."""

    def __init__(self, items: Any = (), keep: int = MAX_PER_KIND):
        super().__init__(items)
        self.keep = keep
        self._seen: dict[tuple[str, str], int] = {}
        self._more: dict[tuple[str, str], Finding] = {}

    def append(self, finding: Finding) -> None:  # type: ignore[override]
        key = (finding.severity, finding.kind)
        seen = self._seen[key] = self._seen.get(key, 0) + 1
        if seen <= self.keep:
            finding.text = clip(finding.text)
            super().append(finding)
            return
        more = seen - self.keep
        text = f"(and {more:,} more '{finding.kind}' finding(s) like the above, not listed)"
        if key in self._more:
            self._more[key].text = text
        else:
            self._more[key] = Finding(finding.severity, finding.kind, None, text)
            super().append(self._more[key])

    def extend(self, findings: Any) -> None:  # type: ignore[override]
        for f in findings:
            self.append(f)

    def __iadd__(self, findings: Any) -> "Findings":  # type: ignore[override]
        self.extend(findings)
        return self


def line_findings(text: str, classify: Callable[[str], tuple[str, str] | None]) -> list[Finding]:
    """A finding for each line of ``text`` that ``classify`` gives a (severity, kind);
    line numbers are of ``text`` (e.g. a job's stderr, which is not the report itself)."""
    findings = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        cls = classify(line)
        if cls:
            findings.append(Finding(cls[0], cls[1], lineno, line))
    return findings


#: The largest float: an int beyond it has no float value (``float()`` overflows).
_FLOAT_MAX = int(sys.float_info.max)


def figure_problem(value: Any, io_done: bool = True) -> str | None:
    """Why ``value`` cannot be a figure, or None: it is not a number, not finite,
    negative, or zero although I/O was done (``io_done``). Such a figure is
    INVALID, never judged against a threshold (a NaN passes every comparison
    ReFrame makes, an infinity passes a lower bound)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"{value!r} is not a number"
    if isinstance(value, int) and not -_FLOAT_MAX <= value <= _FLOAT_MAX:
        # A JSON integer beyond a float's range (1e400 written out): no figure, and
        # math.isfinite would raise OverflowError (repr can raise past 4,300 digits).
        digits = math.floor(math.log10(abs(value))) + 1
        return (f"an integer of {digits:,} digits (beyond a float's range) is not a finite "
                "number")
    if not math.isfinite(value):
        return f"{value!r} is not a finite number"
    if value < 0:
        return f"{value!r} is negative"
    if value == 0 and io_done:
        return "0 although I/O was done"
    return None
