"""The lines fsaccept's own programs print into a job's output (the target survey, the
network check, the quota program): each of its lines starts with the program's prefix
and a blank (``fsaccept-survey ``), and its last is its end line.  What the check
records and what the sign-off compares is :func:`program_lines`; what a parser reads is
:func:`own_lines`, which makes a line too long or with a NUL, or one after the end
line, a finding (INVALID) instead."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from fsaccept.core.findings import INVALID, Finding


def program_lines(text: str, prefix: str) -> str:
    """The program's own lines of a job's output, as printed."""
    return "\n".join(line for line in text.splitlines() if line.startswith(prefix + " "))


def own_lines(text: str, prefix: str, max_line: int, findings: list[Finding],
              ended: Callable[[], bool]) -> Iterator[tuple[int, str]]:
    """Each of the program's lines with its number, for its parser to read; a line over
    ``max_line`` characters or with a NUL (``malformed``), and a line once ``ended()``
    says the end line was read (``after-end``), become findings instead."""
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.startswith(prefix + " "):
            continue
        if len(line) > max_line or "\x00" in line:
            findings.append(Finding(INVALID, "malformed", lineno,
                                    f"{line[:120]!r}: not a line it prints"))
        elif ended():
            findings.append(Finding(INVALID, "after-end", lineno,
                                    f"{line[:200]}: after its end line"))
        else:
            yield lineno, line
