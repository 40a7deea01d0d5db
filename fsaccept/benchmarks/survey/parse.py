"""The survey program's output (``python -m fsaccept.suite.survey``), parsed: pure, the
live check and the sign-off call it on the same bytes.

Its lines (``fsaccept-survey`` first)::

    fsaccept-survey version V size BYTES runtime_s S bricks N nodes N1,N2 dir PATH
    fsaccept-survey target ROUND NODE SERVER NAME     (one per target: the plan)
    fsaccept-survey unplaced BRICK                    (a brick no file reached)
    fsaccept-survey result ROUND NODE EXIT FILE       (fio's JSON of that step, kept)
    fsaccept-survey end

A target's figure is never printed: it is read from fio's own JSON, which the job keeps
(:func:`target_figure`), by the fio benchmark's strict parser.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from fsaccept.benchmarks.fio.parse import parse_fio
from fsaccept.core import ownlines
from fsaccept.core.components import Target
from fsaccept.core.findings import INVALID, Finding, Findings, Judged, json_safe
from fsaccept.core.units import MIB

PREFIX = "fsaccept-survey"
#: The output format the program prints as its version.
FORMAT = "1"
#: A line at most this long is read: the version line lists every node (65,536 nodes of
#: 16 characters fit).
MAX_LINE = 1 << 20

_INT = r"(0|[1-9][0-9]{0,17})"
_NODE = r"([A-Za-z0-9][A-Za-z0-9._-]{0,63})"
_HEADER = re.compile(rf"^{PREFIX} version (\S+) size {_INT} runtime_s {_INT} bricks {_INT} "
                     rf"nodes (\S+) dir (/.*)$")
_TARGET = re.compile(rf"^{PREFIX} target {_INT} {_NODE} (\S+) (\S.*)$")
_UNPLACED = re.compile(rf"^{PREFIX} unplaced (\S.*)$")
_RESULT = re.compile(rf"^{PREFIX} result {_INT} {_NODE} (-?[0-9]{{1,4}}) "
                     r"(r[0-9]{1,6}-[A-Za-z0-9._-]{1,64}\.json)$")


@dataclass(frozen=True)
class Planned:
    """One step of the plan as the program printed it, and its result line."""

    round: int
    node: str
    target: Target
    exit: int | None = None
    report: str = ""  #: fio's JSON file of the step, in the job's directory


@dataclass
class SurveyRun(Judged):
    """Everything parsed from one run of the survey program."""

    version: str | None = None
    size: int | None = None
    runtime_s: int | None = None
    bricks: int | None = None
    nodes: list[str] = field(default_factory=list)
    directory: str | None = None
    steps: list[Planned] = field(default_factory=list)
    unplaced: list[str] = field(default_factory=list)
    ended: bool = False
    findings: list[Finding] = field(default_factory=Findings)

    @property
    def rounds(self) -> int:
        return len({s.round for s in self.steps})

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["findings"] = [asdict(f) for f in self.findings]
        d["valid"], d["reasons"] = self.valid, self.reasons
        return json_safe(d)


def program_lines(text: str) -> str:
    """The program's own lines of a job's output, as printed."""
    return ownlines.program_lines(text, PREFIX)


def _invalid(run: SurveyRun, kind: str, lineno: int | None, text: str) -> None:
    run.findings.append(Finding(INVALID, kind, lineno, text))


def parse_survey(text: str) -> SurveyRun:
    """The run ``text`` holds; what cannot be trusted is a finding (INVALID)."""
    run = SurveyRun()
    at: dict[tuple[int, str], int] = {}
    for lineno, line in ownlines.own_lines(text, PREFIX, MAX_LINE, run.findings,
                                           lambda: run.ended):
        if m := _HEADER.match(line):
            if run.version is not None:
                _invalid(run, "duplicate", lineno, "a second version line")
                continue
            run.version, run.size, run.runtime_s = m.group(1), int(m.group(2)), int(m.group(3))
            run.bricks, run.directory = int(m.group(4)), m.group(6)
            run.nodes = [n for n in m.group(5).split(",") if n]
        elif run.version is None:
            _invalid(run, "order", lineno, f"{line[:200]}: before the version line")
        elif m := _TARGET.match(line):
            key = (int(m.group(1)), m.group(2))
            if key in at:
                _invalid(run, "duplicate", lineno, f"a second target for round {key[0]} "
                         f"on {key[1]}")
                continue
            at[key] = len(run.steps)
            run.steps.append(Planned(key[0], key[1], Target(m.group(4), m.group(3))))
        elif m := _UNPLACED.match(line):
            run.unplaced.append(m.group(1))
        elif m := _RESULT.match(line):
            key = (int(m.group(1)), m.group(2))
            i = at.get(key)
            if i is None or run.steps[i].exit is not None:
                _invalid(run, "order", lineno, f"{line[:200]}: a result for no target of "
                         "the plan, or a second one")
                continue
            s = run.steps[i]
            run.steps[i] = Planned(s.round, s.node, s.target, int(m.group(3)), m.group(4))
        elif line == f"{PREFIX} end":
            run.ended = True
        else:
            _invalid(run, "malformed", lineno, f"{line[:200]}: not a line it prints")
    if run.version is None:
        _invalid(run, "eof", None, f"no '{PREFIX} version' line: the survey did not run")
    elif not run.ended:
        _invalid(run, "eof", None, f"no '{PREFIX} end' line: the survey did not finish")
    return run


def target_figure(report: str | None, exit_code: int | None) -> tuple[float | None, str]:
    """(a target's write bandwidth in MiB/s, or None; why not) from its step's fio JSON
    and exit status: a step that failed, a report that is not fio's, and a run fio's
    parser calls invalid give no figure."""
    if exit_code is None:
        return None, "its step has no result line"
    if exit_code != 0:
        tail = (report or "").strip()[-200:]
        return None, f"fio exited {exit_code}" + (f": {tail}" if tail else "")
    if report is None:
        return None, "its fio report is missing"
    try:
        run = parse_fio(report)
    except ValueError as err:
        return None, f"its fio report cannot be read: {str(err)[:200]}"
    bad = [f.text for f in run.findings if f.severity == INVALID]
    if bad or len(run.jobs) != 1:
        return None, "; ".join(bad)[:300] or f"{len(run.jobs)} fio jobs, not 1"
    job = run.jobs[0]
    if job.write.io_bytes <= 0 or job.write.runtime_ms <= 0:
        return None, "fio wrote nothing"
    return job.write.bw_bytes / MIB, ""
