"""The quota program's output (``python -m fsaccept.benchmarks.quota.probe``), parsed:
pure, the live check and the sign-off call it on the same bytes.

Its lines (``fsaccept-quota`` first)::

    fsaccept-quota version V limit BYTES stop BYTES tolerance BYTES poll_s S node NODE dir PATH
    fsaccept-quota set ok                    (or: set failed RC TEXT)
    fsaccept-quota write written BYTES stopped EDQUOT seconds S   (stopped: an errno, or stop)
    fsaccept-quota usage T BYTES             (one per poll: seconds after the writes)
    fsaccept-quota usage-error T TEXT        (a poll whose command failed)
    fsaccept-quota clear ok                  (or: clear failed RC TEXT)
    fsaccept-quota end
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from fsaccept.benchmarks.quota.command import USAGE_DELAY, WRITTEN
from fsaccept.core import ownlines
from fsaccept.core.findings import (INVALID, Finding, Findings, Judged, json_safe,
                                    line_findings)
from fsaccept.core.units import MIB

PREFIX = "fsaccept-quota"
#: The output format the program prints as its version (``tested_versions.yaml``).
FORMAT = "1"
#: The writes stopped at the program's own bound: the file system never refused.
STOP = "stop"
#: The one refusal that is the quota's.
EDQUOT = "EDQUOT"
#: A line at most this long is read (a site's command's message is cut to fit).
MAX_LINE = 4096

_INT = r"(0|[1-9][0-9]{0,17})"
_NUM = r"([0-9]+(?:\.[0-9]+)?)"
_HEADER = re.compile(rf"^{PREFIX} version (\S+) limit {_INT} stop {_INT} tolerance {_INT} "
                     rf"poll_s {_NUM} node (\S+) dir (.+)$")
_STEP = re.compile(rf"^{PREFIX} (set|clear) (?:(ok)|failed (-?[0-9]{{1,4}}) ?(.*))$")
_WRITE = re.compile(rf"^{PREFIX} write written {_INT} stopped ([A-Z][A-Z0-9]{{1,15}}|{STOP}) "
                    rf"seconds {_NUM}$")
_USAGE = re.compile(rf"^{PREFIX} usage {_NUM} {_INT}$")
_USAGE_ERROR = re.compile(rf"^{PREFIX} usage-error {_NUM} (.*)$")


@dataclass
class Step:
    """The site's set or clear command: ok, or its exit status and message."""

    ok: bool
    status: int | None = None
    text: str = ""

    def describe(self) -> str:
        return "ok" if self.ok else f"exit {self.status}: {self.text or '(no message)'}"


@dataclass
class QuotaRun(Judged):
    """Everything parsed from one run of the quota program."""

    version: str | None = None
    limit: int | None = None
    stop: int | None = None
    tolerance: int | None = None
    poll_s: float | None = None
    node: str | None = None
    directory: str | None = None
    set: Step | None = None
    written: int | None = None
    stopped: str | None = None
    seconds: float | None = None
    #: (seconds after the writes, bytes the usage command reported), in order.
    usage: list[tuple[float, int]] = field(default_factory=list)
    usage_errors: list[str] = field(default_factory=list)
    clear: Step | None = None
    ended: bool = False
    #: Each line read, in its order: (its kind, its line number, a poll's seconds or
    #: None).  Kinds: version, set, write, usage, usage-error, clear, end.
    order: list[tuple[str, int, float | None]] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=Findings)

    def usage_delay(self) -> float | None:
        """Seconds until the usage first came within the tolerance of the data written
        (None: it never did)."""
        if self.written is None or self.tolerance is None:
            return None
        for t, used in self.usage:
            if abs(used - self.written) <= self.tolerance:
                return t
        return None

    def figures(self) -> dict[str, float]:
        """The data written (MiB) and the usage's delay; a usage that never followed
        gives the time it was polled (more than the limit allows: see validity)."""
        out: dict[str, float] = {}
        if self.written is not None:
            out[WRITTEN] = self.written / MIB
        delay = self.usage_delay()
        if delay is None and self.usage:
            delay = self.usage[-1][0]
        if delay is not None:
            out[USAGE_DELAY] = delay
        return out

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["findings"] = [asdict(f) for f in self.findings]
        d["valid"], d["reasons"], d["figures"] = self.valid, self.reasons, self.figures()
        return json_safe(d)


def program_lines(text: str) -> str:
    """The program's own lines of a job's output, as printed (what the check records as
    ``quota_lines``)."""
    return ownlines.program_lines(text, PREFIX)


def _invalid(run: QuotaRun, kind: str, lineno: int | None, text: str) -> None:
    run.findings.append(Finding(INVALID, kind, lineno, text))


def parse_quota(text: str) -> QuotaRun:
    """The run ``text`` holds; what cannot be trusted is a finding (INVALID)."""
    run = QuotaRun()
    for lineno, line in ownlines.own_lines(text, PREFIX, MAX_LINE, run.findings,
                                           lambda: run.ended):
        _line(run, lineno, line)
    if run.version is None:
        _invalid(run, "eof", None, f"no '{PREFIX} version' line: the quota program did "
                 "not run")
    elif not run.ended:
        _invalid(run, "eof", None, f"no '{PREFIX} end' line: the quota program did not "
                 "finish")
    return run


def error_findings(text: str) -> list[Finding]:
    """Findings in the job's stderr: the program's own traceback (it failed, whatever
    its lines say)."""
    return line_findings(text, lambda line: (INVALID, "traceback") if line.startswith(
        "Traceback (most recent call last)") else None)


def _line(run: QuotaRun, lineno: int, line: str) -> None:
    kinds = len(run.findings)
    _read(run, lineno, line)
    if len(run.findings) == kinds:  # a line read
        kind = line.split(" ", 2)[1]
        t = run.usage[-1][0] if kind == "usage" else \
            float(line.split(" ", 3)[2]) if kind == "usage-error" else None
        run.order.append((kind, lineno, t))


def _read(run: QuotaRun, lineno: int, line: str) -> None:
    if m := _HEADER.match(line):
        if run.version is not None:
            _invalid(run, "duplicate", lineno, "a second version line")
            return
        run.version, run.node, run.directory = m.group(1), m.group(6), m.group(7)
        run.limit, run.stop, run.tolerance = (int(m.group(i)) for i in (2, 3, 4))
        run.poll_s = float(m.group(5))
    elif run.version is None:
        _invalid(run, "order", lineno, f"{line[:200]}: before the version line")
    elif m := _STEP.match(line):
        step = Step(ok=bool(m.group(2)), status=None if m.group(2) else int(m.group(3)),
                    text=(m.group(4) or "").strip())
        if getattr(run, m.group(1)) is not None:
            _invalid(run, "duplicate", lineno, f"a second {m.group(1)} line")
        setattr(run, m.group(1), step)
    elif m := _WRITE.match(line):
        if run.written is not None:
            _invalid(run, "duplicate", lineno, "a second write line")
        run.written, run.stopped, run.seconds = int(m.group(1)), m.group(2), float(m.group(3))
    elif m := _USAGE.match(line):
        t = float(m.group(1))
        if not math.isfinite(t) or (run.usage and t < run.usage[-1][0]):
            _invalid(run, "malformed", lineno, f"{line[:200]}: its time goes back")
            return
        run.usage.append((t, int(m.group(2))))
    elif m := _USAGE_ERROR.match(line):
        run.usage_errors.append(f"{float(m.group(1)):g} s: {m.group(2)[:300]}")
    elif line == f"{PREFIX} end":
        run.ended = True
    else:
        _invalid(run, "malformed", lineno, f"{line[:200]}: not a line it prints")
