"""The semantics program's output (``checks/semantics/src/fsaccept_semantics.c``) -> a typed run.

Rank 0 prints a header, the node of every rank, one line per case and an end line::

    fsaccept-semantics version 3 ranks 2 trials 20 records 100 renames 200 files 2000 ...
    fsaccept-semantics rank 0 node n1
    fsaccept-semantics visibility writer=n1 reader=n2 value=0.0021 p50=0.00002 unit=s ok=1 detail=...
    fsaccept-semantics namespace-list writer=n1 reader=n2 value=155085.2 wrong=0 unit=entries/s ok=1 detail=...
    fsaccept-semantics root-squash writer=n1 reader=n2 value=1 unit=violations ok=0 detail=owner=0 expected=65534 ...
    fsaccept-semantics end

Pure: text in, run out.  Every pattern is linear in the line it reads.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from fsaccept.core.findings import (INVALID, WARNING, Finding, Findings, Judged, json_safe,
                                    line_findings)

PREFIX = "fsaccept-semantics"
#: The program's output format this parser reads.
VERSION = "5"

SECONDS, VIOLATIONS, RATE = "s", "violations", "entries/s"
#: Each case the program runs, in its order, and the unit of its value: seconds until
#: the reader saw the writer's change, a count of violations, or the entries per second
#: the reader listed and stat'ed.  The last two are contract features: root squash and
#: a POSIX ACL's denial.
CASES = {
    "visibility": SECONDS, "attr-append": SECONDS, "attr-truncate": SECONDS,
    "flock": VIOLATIONS, "fcntl-lock": VIOLATIONS, "lock-killed": SECONDS,
    "append": VIOLATIONS,
    "rename": VIOLATIONS, "unlink-open": VIOLATIONS, "excl-race": VIOLATIONS,
    "mkdir-race": VIOLATIONS, "hardlink": SECONDS, "symlink": SECONDS, "xattr": SECONDS,
    "namespace-list": RATE, "namespace-walk": RATE,
    "root-squash": VIOLATIONS, "acl-deny": VIOLATIONS,
}
#: The output formats this parser reads -> the cases each prints (format 3 had no
#: lock-killed case; in format 4 acl-deny tried only the deny, not the grant).
READS = {"3": tuple(c for c in CASES if c != "lock-killed"), "4": tuple(CASES),
         VERSION: tuple(CASES)}
#: The cases every format prints (what recorded case lines, without their header, must
#: hold).
IN_EVERY_FORMAT = tuple(c for c in CASES if all(c in cases for cases in READS.values()))
#: Cases whose value is a rate: their line also counts the entries the reader did not
#: list or stat as the writer made them (``wrong=K``), a figure of its own.
COUNTED = tuple(c for c, unit in CASES.items() if unit == RATE)
#: Cases whose writer and reader are two ranks (the others: every rank writes).
PAIRED = tuple(c for c in CASES if c not in ("append", "excl-race", "mkdir-race"))
#: Cases a file system may not support (ENOTSUP), or that need root to run: never PASS
#: then.
MAY_BE_UNSUPPORTED = ("xattr", "root-squash", "acl-deny")
#: Cases whose detail begins with the uid the program was asked for: root-squash's
#: ``owner=<uid|none> expected=<uid>`` (the anonymous uid, ``-s``), acl-deny's
#: ``uid=<uid>`` (the uid the ACL denies, ``-u``).  Read into :attr:`CaseResult.uid`, so
#: that a run asked for another uid than the reference names is caught.
UID_DETAIL = {
    "root-squash": re.compile(r"^owner=(0|[1-9][0-9]{0,9}|none) expected=([1-9][0-9]{0,9})(?: |$)"),
    "acl-deny": re.compile(r"^uid=([1-9][0-9]{0,9})(?: |$)"),
}
UID_WORDS = {"root-squash": "owner=<uid|none> expected=<uid>", "acl-deny": "uid=<uid>"}
#: ``ok=`` of a case whose operation the file system does not support.
UNSUPPORTED = "unsupported"


def figure_of(case: str) -> str:
    """A case's figure: ``visibility_max_s``, ``attr_append_s``, ``flock_violations``,
    ``namespace_list_rate``."""
    base = case.replace("-", "_")
    if case == "visibility":
        return "visibility_max_s"
    return {SECONDS: f"{base}_s", VIOLATIONS: f"{base}_{VIOLATIONS}",
            RATE: f"{base}_rate"}[CASES[case]]


#: The visibility case's median trial, and a case the file system does not support.
P50_FIGURE = "visibility_p50_s"


def unsupported_figure(case: str) -> str:
    return f"{case.replace('-', '_')}_unsupported"


def wrong_figure(case: str) -> str:
    """A counted case's entries not listed or stat'ed as made: ``namespace_list_violations``."""
    return f"{case.replace('-', '_')}_{VIOLATIONS}"


#: Every figure a run may report -> its unit; the first is the main figure.
FIGURES: dict[str, str] = {
    **{figure_of(c): CASES[c] for c in CASES}, P50_FIGURE: SECONDS,
    **{unsupported_figure(c): VIOLATIONS for c in MAY_BE_UNSUPPORTED},
    **{wrong_figure(c): VIOLATIONS for c in COUNTED}}


@dataclass
class CaseResult:
    """One case line, as printed."""

    name: str
    writer: str
    reader: str
    value: float
    unit: str
    ok: str  #: ``1``, ``0`` or ``unsupported``
    detail: str
    line: int
    p50: float | None = None
    wrong: int | None = None  #: a counted case's entries not listed or stat'ed as made
    uid: int | None = None  #: the uid a :data:`UID_DETAIL` case was asked for
    text: str = ""  #: the line, the very characters the program printed

    @property
    def supported(self) -> bool:
        return self.ok != UNSUPPORTED

    @property
    def pair(self) -> str:
        """'writer n1, reader n2' (``all``: every rank)."""
        return f"writer {self.writer}, reader {self.reader}"


@dataclass
class SemanticsRun(Judged):
    """Everything parsed from one run of the semantics program."""

    version: str | None = None
    ranks: int | None = None
    trials: int | None = None
    records: int | None = None
    renames: int | None = None
    files: int | None = None
    tree_entries: int | None = None
    bound_s: float | None = None
    alarm_s: int | None = None
    squash_uid: int | None = None  #: -s: the owner root-squash expects
    acl_uid: int | None = None  #: -u: the uid acl-deny's ACL denies
    directory: str | None = None
    nodes: dict[int, str] = field(default_factory=dict)  #: rank -> node
    cases: dict[str, CaseResult] = field(default_factory=dict)
    ended: bool = False
    findings: list[Finding] = field(default_factory=Findings)

    def figures(self) -> dict[str, float]:
        """Each case's value as printed (seconds, violations, or a rate), the visibility
        case's median, 1 for a case the file system does not support, and a counted
        case's wrong entries.  A rate of 0 (the reader listed nothing: its wrong
        entries fail it) is no measurement of a rate, and no figure."""
        out: dict[str, float] = {}
        for case in self.cases.values():
            if case.name in MAY_BE_UNSUPPORTED:
                out[unsupported_figure(case.name)] = 0.0 if case.supported else 1.0
            if case.wrong is not None:
                out[wrong_figure(case.name)] = float(case.wrong)
            if case.supported and not (case.unit == RATE and case.value == 0):
                out[figure_of(case.name)] = case.value
            if case.p50 is not None:
                out[P50_FIGURE] = case.p50
        return out

    def case_lines(self) -> str:
        """The case lines as printed, one per line, the program's own characters: the
        evidence the sign-off reads."""
        return "\n".join(c.text for c in self.cases.values())

    def repr_case_lines(self) -> str:
        """The case lines as the check recorded them before it kept the printed
        characters: each number re-formatted by ``repr`` (``value=5.728e-06`` for a
        printed ``value=0.000005728``).  Made from the same parsed output, so an older
        run report is still read and judged as it was (the sign-off takes either)."""
        return "\n".join(_repr_line(c) for c in self.cases.values())

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["findings"] = [asdict(f) for f in self.findings]
        d["valid"], d["reasons"], d["figures"] = self.valid, self.reasons, self.figures()
        return json_safe(d)


def _repr_line(c: CaseResult) -> str:
    p50 = f" p50={c.p50!r}" if c.p50 is not None else ""
    wrong = f" wrong={c.wrong}" if c.wrong is not None else ""
    return (f"{PREFIX} {c.name} writer={c.writer} reader={c.reader} value={c.value!r}{p50}"
            f"{wrong} unit={c.unit} ok={c.ok} detail={c.detail}")


_HEADER = re.compile(rf"^{PREFIX} version (\S+) ranks (\d+) trials (\d+) records (\d+) "
                     r"renames (\d+) files (\d+) tree_entries (\d+) bound_s (\S+) alarm_s (\d+) "
                     r"squash_uid (\d{1,10}) acl_uid (\d{1,10}) dir (.*)$")
_RANK = re.compile(rf"^{PREFIX} rank (\d+) node (\S+)$")
# Each field a run of non-blanks followed by a blank: linear.
_CASE = re.compile(rf"^{PREFIX} ([a-z-]+) writer=(\S+) reader=(\S+) value=(\S+)"
                   r"(?: p50=(\S+))?(?: wrong=(\S+))? unit=(\S+) ok=(\S+) detail=(.*)$")
_COUNT = re.compile(r"^(0|[1-9][0-9]{0,17})$")
_SPECIAL = re.compile(rf"^{PREFIX} (version|rank|end|abort|error)\b")


def _float(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        return None


def _classify(line: str) -> tuple[str, str] | None:
    """(severity, kind) of a launcher's or the system's line that bears on validity."""
    if "MPI_ABORT was invoked" in line:
        return INVALID, "mpi-abort"
    if line.startswith(("srun: error", "slurmstepd")) and "error" in line:
        return INVALID, "launcher"
    if "Segmentation fault" in line or "exited on signal" in line:
        return INVALID, "launcher"
    if "exited with non-zero status" in line:
        return INVALID, "launcher"
    if line.startswith(f"{PREFIX}: "):  # the program's own complaint (stderr)
        return WARNING, "program"
    if line.startswith("usage: fsaccept_semantics"):
        return INVALID, "usage"
    return None


def error_findings(text: str) -> list[Finding]:
    """Findings in text that is not the program's own report (the job's stderr)."""
    return line_findings(text, _classify)


def parse_semantics(text: str | Iterable[str]) -> SemanticsRun:
    """The run ``text`` holds (or its lines, read one at a time: the sign-off's reader
    of a job's output); what cannot be trusted is a finding (INVALID)."""
    run = SemanticsRun()
    found = run.findings
    lines = text.splitlines() if isinstance(text, str) else text
    for lineno, line in enumerate(lines, start=1):
        if not line.startswith(PREFIX + " "):
            cls = _classify(line)
            if cls:
                found.append(Finding(cls[0], cls[1], lineno, line))
            continue
        if "\x00" in line:
            found.append(Finding(INVALID, "unreadable", lineno, line.replace("\x00", "\\0")))
            continue
        _line(run, line, lineno)
    if run.version is None:
        found.append(Finding(INVALID, "no-header", None,
                             f"no '{PREFIX} version' line: not the semantics program's output"))
    elif run.version not in READS:
        found.append(Finding(INVALID, "version", None,
                             f"output format {run.version!r}, this parser reads "
                             f"{', '.join(map(repr, READS))}"))
    if run.version is not None and not run.ended:
        found.append(Finding(INVALID, "truncated", None,
                             f"no '{PREFIX} end' line: the run did not finish"))
    missing = [c for c in READS.get(run.version or "", CASES) if c not in run.cases]
    if run.version is not None and missing:
        found.append(Finding(INVALID, "missing-case", None,
                             f"no result for {', '.join(missing)}"))
    return run


def parse_case_lines(text: str) -> SemanticsRun:
    """The case lines a check recorded (``semantics_cases``: :meth:`SemanticsRun.case_lines`),
    without the header: what the sign-off judges again."""
    run = SemanticsRun()
    for lineno, line in enumerate(text.splitlines(), start=1):
        if line.startswith(PREFIX + " ") and "\x00" not in line and not _SPECIAL.match(line):
            _case(run, line, lineno)
        else:
            run.findings.append(Finding(INVALID, "unreadable", lineno, line.replace("\x00", "\\0")))
    missing = [c for c in IN_EVERY_FORMAT if c not in run.cases]
    if missing:
        run.findings.append(Finding(INVALID, "missing-case", None,
                                    f"no result for {', '.join(missing)}"))
    return run


def _line(run: SemanticsRun, line: str, lineno: int) -> None:
    found = run.findings
    special = _SPECIAL.match(line)
    kind = special.group(1) if special else ""
    if kind == "version":
        m = _HEADER.match(line)
        if not m or run.version is not None:
            why = "a second header" if m else "unreadable header"
            found.append(Finding(INVALID, "unreadable", lineno, f"{why}: {line}"))
            return
        run.version, run.directory = m.group(1), m.group(12)
        (run.ranks, run.trials, run.records, run.renames, run.files,
         run.tree_entries) = (int(m.group(i)) for i in range(2, 8))
        run.bound_s, run.alarm_s = _float(m.group(8)), int(m.group(9))
        run.squash_uid, run.acl_uid = int(m.group(10)), int(m.group(11))
    elif kind == "rank":
        m = _RANK.match(line)
        if not m or int(m.group(1)) in run.nodes:
            found.append(Finding(INVALID, "unreadable", lineno, line))
            return
        run.nodes[int(m.group(1))] = m.group(2)
    elif kind == "end":
        run.ended = True
    elif kind in ("abort", "error"):
        found.append(Finding(INVALID, kind, lineno, line))
    else:
        _case(run, line, lineno)


def _case(run: SemanticsRun, line: str, lineno: int) -> None:
    found = run.findings
    m = _CASE.match(line)
    if not m:
        found.append(Finding(INVALID, "unreadable", lineno, line))
        return
    name, writer, reader, value, p50, wrong, unit, ok, detail = m.groups()
    if name not in CASES:
        found.append(Finding(INVALID, "unknown-case", lineno, line))
        return
    if name in run.cases:
        found.append(Finding(INVALID, "duplicate", lineno,
                             f"a second {name} line (the first: line {run.cases[name].line})"))
        return
    number, median = _float(value), _float(p50)
    problems = []
    if unit != CASES[name]:
        problems.append(f"unit {unit!r}, not {CASES[name]!r}")
    if ok not in ("1", "0", UNSUPPORTED) or (ok == UNSUPPORTED and name not in MAY_BE_UNSUPPORTED):
        problems.append(f"ok={ok!r}")
    for label, v in (("value", number), ("p50", median)):
        if (label == "value" or p50 is not None) and (v is None or not math.isfinite(v) or v < 0):
            problems.append(f"{label} {value if label == 'value' else p50!r} is not a "
                            "finite number >= 0")
    if name == "visibility" and p50 is None:
        problems.append("no p50")
    count = None
    if name in COUNTED:
        if wrong is None or not _COUNT.match(wrong):
            problems.append(f"wrong={wrong!r} is not a count of entries")
        else:
            count = int(wrong)
            if ok != ("1" if count == 0 else "0"):
                problems.append(f"ok={ok} with {count} wrong entries")
            if count == 0 and number == 0:
                problems.append("a rate of 0 with every entry listed")
    elif wrong is not None:
        problems.append("wrong= on a case that counts no entries")
    uid = None
    if name in UID_DETAIL:
        d = UID_DETAIL[name].match(detail)
        if d is None:
            problems.append(f"its detail does not begin with {UID_WORDS[name]}")
        else:
            uid = int(d.groups()[-1])
            if name == "root-squash" and ok == "1" and d.group(1) != d.group(2):
                problems.append(f"ok=1 with owner {d.group(1)}, not {d.group(2)}")
    if problems:
        found.append(Finding(INVALID, "bogus", lineno, f"{'; '.join(problems)}: {line}"))
        return
    run.cases[name] = CaseResult(name=name, writer=writer, reader=reader, value=number,
                                 unit=unit, ok=ok, detail=detail, line=lineno, p50=median,
                                 wrong=count, uid=uid, text=line)
