"""mdtest 4.0.0: parse its output (its command line: :mod:`.command`; its INVALID rules:
:mod:`.validity`).

Why ~570 lines in one module: the typed run (tables, rows, phases, stonewall lines) and
the one stateful pass that fills it belong together, as in :mod:`fsaccept.benchmarks.ior.parse`.

Pure functions, standard library only (plus :mod:`fsaccept.core.versions`).

Parsing (:func:`parse_mdtest`) never recomputes mdtest's figures: every number of the
``SUMMARY rate`` and ``SUMMARY time`` tables is ``float(printed_text)``, and the printed
tokens are kept (``SummaryRow.printed``). The acceptance figure of an operation is the
table's **Mean** column: the mean over iterations (``-i``) of the aggregate rate of all
ranks (mdtest computes it per iteration as ranks x the slowest rank's items/time).

One figure *is* computed, and is labelled as derived: the create rate up to the stonewall
(``-W``). mdtest 4.0.0 prints ``File creation (stonewall): T sec, X ops/sec`` (with
``-v``) but X is not a rate: it passes an integer item count to a ``%f`` format, so it
prints whatever the floating-point register holds (0.000 in every capture here). The rate
is taken instead as the files created until the stonewall (the per-rank ``stonewall hit
with N items`` lines, or the printed average x tasks) divided by T.

Findings (:class:`fsaccept.core.findings.Finding`, reused):

* ``invalid``: ``ERROR`` lines (mdtest exits 0 after them, e.g. ``ERROR: verifying the
  data on read``), ``WARNING: unable to ...`` lines (an operation failed, and mdtest still
  counted it in its rate), ``FAILED in``, ``MPI_ABORT``, launcher errors; an unreadable
  stonewall status file; output that is empty or truncated (no ``SUMMARY rate`` table, no
  ``-- finished at`` line); non-finite figures.
* ``warning``: other ``WARNING:`` lines (``Read bytes is 0, thus, a read test will actually
  just open/close``); per-rank stonewall lines that disagree with the printed average.

A phase mdtest did not run prints as ``0.000``: such a row is *not measured*
(``SummaryRow.measured`` is false) and is never reported as a figure.
"""

from __future__ import annotations

import math
import re
import shlex
from dataclasses import asdict, dataclass, field

from typing import Any

from fsaccept.core import versions
from fsaccept.core.findings import (INVALID, WARNING, Finding, Findings, Judged, figure_problem,
                                    json_safe as _finite, line_findings)

__all__ = [
    "DEFAULT_MIN_PHASE_S",
    "FILE_FIGURES",
    "FIGURES",
    "STONEWALL_FIGURE",
    "MdtestRun",
    "PhaseLine",
    "StonewallCreate",
    "SummaryRow",
    "SummaryTable",
    "figure_name",
    "error_findings",
    "parse_mdtest",
]

#: The four file phases every acceptance run measures (and must report).
FILE_FIGURES = ("file_creation", "file_stat", "file_read", "file_removal")
#: The derived create rate up to the stonewall (``-W``); see the module docstring.
STONEWALL_FIGURE = "file_creation_stonewall"
#: Figures a reference entry may give a threshold for.
FIGURES = (*FILE_FIGURES, "tree_creation", "tree_removal", STONEWALL_FIGURE)
#: A judged phase shorter than this (seconds) is too short to measure.
DEFAULT_MIN_PHASE_S = 1.0

# --------------------------------------------------------------------------- data


def figure_name(operation: str) -> str:
    """mdtest's operation name -> figure name: ``File creation`` -> ``file_creation``."""
    return operation.strip().lower().replace(" ", "_")


@dataclass
class SummaryRow:
    """One operation row of a ``SUMMARY rate`` or ``SUMMARY time`` table.

    Rate rows are aggregate ops/s over all ranks; time rows are seconds (per iteration,
    the slowest rank's phase time). ``max``/``min``/``mean``/``sd`` are over iterations.
    With ``--showRankStatistics`` mdtest prints three per-rank columns first
    (``rank_max``/``rank_min``/``rank_mean``).
    """

    operation: str  #: as printed: ``File creation``, ``Tree removal``, ...
    figure: str  #: ``file_creation``, ``tree_removal``, ...
    max: float
    min: float
    mean: float
    sd: float
    rank_max: float | None = None
    rank_min: float | None = None
    rank_mean: float | None = None
    line: int | None = None  #: 1-based line number in the parsed text
    printed: dict[str, str] = field(default_factory=dict)  #: column -> token as printed

    @property
    def measured(self) -> bool:
        """False for a phase mdtest did not run (it prints all zeros for those)."""
        return any(v != 0 for v in (self.max, self.min, self.mean))


@dataclass
class SummaryTable:
    """``SUMMARY rate: (of N iterations)`` or ``SUMMARY time: ...`` with its rows."""

    kind: str  #: ``rate`` or ``time``
    iterations: int
    rows: list[SummaryRow] = field(default_factory=list)
    line: int | None = None
    tasks: int | None = None  #: from the ``N tasks, M files`` line printed before the table

    def row(self, figure: str) -> SummaryRow | None:
        for r in self.rows:
            if r.figure == figure:
                return r
        return None


@dataclass
class PhaseLine:
    """A per-iteration line printed with ``-v`` by rank 0, e.g.
    ``File creation     :   0.456 sec,   438.818 ops/sec``.

    ``time_s`` is rank 0's phase time and ``rank0_rate`` rank 0's own items/time: **not**
    aggregate figures (the SUMMARY tables are). Kept for provenance.
    """

    iteration: int  #: 1-based
    operation: str
    figure: str
    time_s: float
    rank0_rate: float | None  #: ``None`` for the ``(stonewall)`` line, whose value is not a rate
    printed_rate: str  #: the ops/sec token as printed
    line: int | None = None


@dataclass
class StonewallCreate:
    """The create phase of one iteration run with a stonewall (``-W``).

    ``rank_items`` are the ``stonewall hit with N items`` lines (one per rank, ``-v``);
    ``min_items``/``max_items``/``avg_items`` the ``Continue stonewall hit`` line, printed
    only when some rank had not created all its items when the stonewall was hit.
    """

    iteration: int  #: 1-based
    hit: bool = False  #: the ``Continue stonewall hit`` line was printed
    min_items: int | None = None
    max_items: int | None = None  #: every rank then goes on creating up to this many
    avg_items: float | None = None  #: one decimal, as printed
    rank_items: dict[int, int] = field(default_factory=dict)
    time_s: float | None = None  #: ``File creation (stonewall): T sec`` (``-v``)
    printed_ops: str | None = None  #: that line's "ops/sec" token: NOT a rate, never used
    items: int | None = None  #: files created until the stonewall, all ranks
    items_source: str = ""  #: ``rank lines`` (exact) or ``average`` (avg x tasks, rounded)
    rate: float | None = None  #: derived: ``items / time_s`` (ops/s, 3 decimals)
    line: int | None = None  #: the ``Continue stonewall hit`` line


@dataclass
class MdtestRun(Judged):
    """Everything parsed from one mdtest run."""

    version: str | None = None  #: e.g. ``mdtest-4.0.0``
    command_line: str | None = None  #: as a shell command (mdtest quotes every argument)
    command_line_printed: str | None = None  #: ``Command line used:`` verbatim
    started: str | None = None
    finished: str | None = None
    tasks: int | None = None  #: ``launched with N total task(s)``
    nodes: int | None = None  #: ``on M node(s)``: as mdtest counted them (shared memory)
    path: str | None = None
    fs: str | None = None  #: the ``FS :`` line (size, use and inodes of the target)
    rank_shift: int | None = None
    """``Shifting ranks by K for each phase`` (``-N``): K = N x ranks on node 0, so with
    block placement and ``-N 1`` every rank stats and reads the files of the next node."""
    items_total: int | None = None  #: ``8 tasks, 1600 files``: items asked of all ranks
    items_kind: str | None = None  #: ``files``, ``directories``, ``files/directories``
    options: dict[str, str] = field(default_factory=dict)  #: the ``-v`` settings block
    iterations: int | None = None  #: ``(of N iterations)``
    rate: SummaryTable | None = None
    """The table the figures come from: with a sweep over task counts (``-f``/``-l``/``-s``,
    one table per count), the one of all launched tasks (else the last one), said in a
    ``tables`` warning; its ``tasks`` is the task count of the figures."""
    time: SummaryTable | None = None  #: printed with ``-P`` (rate and time) or ``-Z``
    tables: list[SummaryTable] = field(default_factory=list)  #: every table, in order
    phases: list[PhaseLine] = field(default_factory=list)
    stonewall: list[StonewallCreate] = field(default_factory=list)
    stonewall_status_file: str | None = None  #: ``-x`` from the command line
    verification_errors: int | None = None
    findings: list[Finding] = field(default_factory=Findings)

    @property
    def reasons(self) -> list[str]:
        """Why the run is not valid: one reason per kind of invalid finding (its first
        line, and how many more lines of that kind there are)."""
        groups: dict[str | int, list[Finding]] = {}
        for i, f in enumerate(self.findings):
            if f.severity == INVALID:  # lines of a kind grouped; derived findings each alone
                groups.setdefault(f.kind if f.line else i, []).append(f)
        out = []
        for found in groups.values():
            kind = found[0].kind
            first = found[0]
            text = f"line {first.line}: {first.text}" if first.line else first.text
            if len(found) > 1:
                text += f" (and {len(found) - 1} more such lines)"
            if kind == "op-failed":
                text += ": an operation failed (mdtest goes on, and counts it in its rates)"
            out.append(text)
        return out

    @property
    def version_number(self) -> str | None:
        """``mdtest-4.0.0`` -> ``4.0.0``."""
        return versions.version_number(self.version)

    def rate_row(self, figure: str) -> SummaryRow | None:
        return self.rate.row(figure) if self.rate else None

    def figures(self) -> dict[str, float]:
        """Figure -> mdtest's printed Mean rate (ops/s), for the phases it measured."""
        if not self.rate:
            return {}
        return {r.figure: r.mean for r in self.rate.rows if r.measured}

    def phase_times(self) -> dict[str, float]:
        """Figure -> mean phase time (s) from ``SUMMARY time``, for the measured phases;
        the derived stonewall figure gets the mean time until the stonewall."""
        times = {}
        if self.time and self.rate:
            for r in self.time.rows:
                rate = self.rate.row(r.figure)
                if rate is not None and rate.measured:
                    times[r.figure] = r.mean
        walls = [s.time_s for s in self.stonewall if s.time_s is not None]
        if walls and len(walls) == len(self.stonewall):
            times[STONEWALL_FIGURE] = sum(walls) / len(walls)
        return times

    def reported_figures(self) -> dict[str, float]:
        """The figures a test reports: :meth:`figures`, and the derived create rate up
        to the stonewall (``file_creation_stonewall``) when there is one."""
        out = self.figures()
        rate = self.stonewall_rate()
        if rate is not None:
            out[STONEWALL_FIGURE] = rate
        return out

    def stonewall_rate(self) -> float | None:
        """Derived create rate up to the stonewall (ops/s), mean over iterations; ``None``
        unless every iteration has both the item count and the time."""
        rates = [s.rate for s in self.stonewall]
        if not rates or any(r is None for r in rates):
            return None
        return sum(r for r in rates if r is not None) / len(rates)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict (non-finite floats become ``None``)."""
        d: dict[str, Any] = _finite(asdict(self))
        d["valid"] = self.valid
        d["reasons"] = self.reasons
        d["figures"] = _finite(self.figures())
        d["phase_times_s"] = _finite(self.phase_times())
        d["stonewall_rate_derived"] = _finite(self.stonewall_rate())
        return d


# --------------------------------------------------------------------------- parser

# Every pattern is linear in the line's length (a long run of spaces or a repeated word
# must not make it quadratic, tests/unit/stepcount.py measures it): no two adjacent
# quantifiers that can match the same characters, no lazy scan followed by ``\s*$``, and
# a search's variable part bounded where its starts could repeat.
_OPS = r"(?:Directory|File|Tree) [a-z]+"
_LAUNCHED_RE = re.compile(
    r"^mdtest-(\S+) was launched with (\d+) total task\(s\) on (\d+) node\(s\)")
_TABLE_RE = re.compile(r"^SUMMARY (rate|time): \(of (\d+) iterations\)")
#: What starts an mdtest run, anywhere in a line: a run glued to a cut-off line of
#: another (two outputs concatenated) starts mid-line.
_RUN_START_RE = re.compile(r"mdtest-\S+ was launched with |Command line used: |-- started at ")
_ROW_RE = re.compile(rf"^\s+({_OPS})\s+(\S.*)$")  # on a line without trailing blanks
_VERBOSE_RE = re.compile(r"^V-(\d+): Rank\s+(\d+) Line\s+\d+ ?(.*)$")
_PHASE_RE = re.compile(
    rf"^\s*(?:(?:V-1: main:|main)\s*)?({_OPS})( \(stonewall\))?\s*:\s+(\S+) sec,\s+(\S+) ops/sec")
_ITERATION_RE = re.compile(r"^main: \* iteration (\d+) \*")
_RANK_ITEMS_RE = re.compile(r"^stonewall hit with (\d+) items")
_CONTINUE_RE = re.compile(r"^Continue stonewall hit min: (\d+) max: (\d+) avg: (\S+)")
_SHIFT_RE = re.compile(r"^Shifting ranks by (\d+) for each phase")
_OPTION_RE = re.compile(r"^([a-z_]+) *: (.*)$")  # keys padded to 24 characters
_ITEMS_RE = re.compile(r"^(\d+) tasks, (\d+) (files/directories|files|directories)$")
_VERIFY_RE = re.compile(r"ERROR: verifying the data on read \((\d+) errors\)")
_BAD_RE = re.compile(
    # slurmstepd-<host>: a host name is at most 64 characters (HOST_NAME_MAX); bounded,
    # so that a line of "slurmstepd-slurmstepd-..." costs linear work
    r"ERROR|: FAILED in |MPI_ABORT|srun: error|slurmstepd(?:-[^\s:]{1,64})?: error|CANCELLED|"
    r"Segmentation fault|exited on signal|non-zero (?:status|exit code)")
_RATE_COLUMNS = ("max", "min", "mean", "sd")
_RANK_COLUMNS = ("rank_max", "rank_min", "rank_mean", "max", "min", "mean", "sd")


def _classify(line: str) -> tuple[str, str] | None:
    """(severity, kind) of a line that bears on validity, else None."""
    if line.startswith("WARNING:"):
        low = line.lower()
        if low.startswith("warning: unable to"):
            return INVALID, "op-failed"
        if "could not read stonewall status file" in low:
            return INVALID, "stonewall-status"
        return WARNING, "warning"
    if not _BAD_RE.search(line):
        return None
    if "MPI_ABORT" in line:
        if line.startswith("NOTE: invoking MPI_ABORT"):  # Open MPI's boilerplate
            return None
        return INVALID, "mpi-abort"
    if line.startswith("ERROR: verifying the data"):
        return INVALID, "verification"
    if "ERROR" in line or ": FAILED in " in line:
        return INVALID, "error"
    return INVALID, "launcher"


def error_findings(text: str) -> list[Finding]:
    """Findings in text that is not mdtest's own report, e.g. the job's stderr
    (Open MPI's MPI_ABORT notice, srun and slurmstepd errors)."""
    return line_findings(text, _classify)


def _command(printed: str) -> str:
    """``/x/mdtest '-n' '200'`` -> ``/x/mdtest -n 200`` (verbatim if it will not split)."""
    try:
        return shlex.join(shlex.split(printed))
    except ValueError:
        return printed


def _option_value(argv: list[str], flag: str) -> str | None:
    for i, arg in enumerate(argv[:-1]):
        if arg == flag:
            return argv[i + 1]
    return None


def _row(match: re.Match[str], lineno: int) -> SummaryRow | None:
    operation, rest = match.group(1), match.group(2).split()
    if len(rest) == 4:
        columns = _RATE_COLUMNS
    elif len(rest) == 7:
        columns = _RANK_COLUMNS
    else:
        return None
    try:
        values = {c: float(t) for c, t in zip(columns, rest, strict=True)}
    except ValueError:
        return None
    return SummaryRow(operation=operation, figure=figure_name(operation), line=lineno,
                      printed=dict(zip(columns, rest, strict=True)), **values)


def parse_mdtest(text: str) -> MdtestRun:
    """Parse mdtest's text output (stdout+stderr of one run, any verbosity).

    Never raises on odd input: problems become findings.
    """
    run = MdtestRun()
    findings = run.findings
    if not text.strip():
        findings.append(Finding(INVALID, "empty", None, "mdtest output is empty"))
        return run

    table: SummaryTable | None = None
    table_tasks: int | None = None  #: the last ``N tasks, M files`` line
    iteration = 1
    walls: dict[int, StonewallCreate] = {}

    def wall() -> StonewallCreate:
        return walls.setdefault(iteration, StonewallCreate(iteration))

    starts: dict[str, int] = {}  # each kind of run-start line: how often seen

    def second_run(lineno: int, what: str) -> None:
        if not any(f.kind == "two-runs" for f in findings):
            findings.append(Finding(INVALID, "two-runs", lineno,
                                    f"{what}: the output holds more than one run "
                                    "(parse each apart)"))

    for idx, raw in enumerate(text.splitlines()):
        lineno = idx + 1
        line = raw.rstrip()
        for m in _RUN_START_RE.finditer(line):
            kind = m.group().split()[-1] if m.group().startswith("mdtest-") else m.group()
            starts[kind] = starts.get(kind, 0) + 1
            if m.start() > 0:
                second_run(lineno, f"a run's {m.group().strip()!r} line is glued to a "
                                   "cut-off line here")
            elif starts[kind] > 1:
                second_run(lineno, f"a second {m.group().strip()!r} line")
        if not line:
            # mdtest ends a table with a blank line, but another rank's stray empty
            # line may come first: the table goes on until a line that is not its own.
            continue

        if table is not None:
            m = _ROW_RE.match(line)
            if m:
                _add_row(table, m, lineno, findings)
                continue
            if line.lstrip().startswith(("Operation", "---------")):
                continue
            # Anything else (another rank's line) is handled below; the table goes on
            # until mdtest's next section.

        m = _TABLE_RE.match(line)
        if m:
            table = SummaryTable(m.group(1), int(m.group(2)), line=lineno, tasks=table_tasks)
            run.tables.append(table)
            continue
        if line.startswith(("-- finished at ", "-- started at ")) or _ITEMS_RE.match(line):
            table = None

        m = _VERBOSE_RE.match(line)
        if m:
            rank, msg = int(m.group(2)), m.group(3)
            if (mm := _RANK_ITEMS_RE.match(msg)):
                wall().rank_items[rank] = int(mm.group(1))
            elif (mm := _PHASE_RE.match(msg)):
                op, stonewall = mm.group(1), bool(mm.group(2))
                t, printed = float(mm.group(3)), mm.group(4)
                if stonewall:
                    w = wall()
                    w.time_s, w.printed_ops = t, printed
                run.phases.append(PhaseLine(
                    iteration, op + (" (stonewall)" if stonewall else ""),
                    figure_name(op) + ("_stonewall" if stonewall else ""), t,
                    None if stonewall else float(printed), printed, lineno))
            elif (mm := _ITERATION_RE.match(msg)):
                iteration = int(mm.group(1))
            elif (mm := _SHIFT_RE.match(msg)):
                run.rank_shift = int(mm.group(1))
            elif rank == 0 and msg[24:26] == ": " and (mm := _OPTION_RE.match(msg)):
                run.options.setdefault(mm.group(1), mm.group(2).strip())
            continue

        if (m := _CONTINUE_RE.match(line)):
            w = wall()
            w.hit, w.line = True, lineno
            w.min_items, w.max_items = int(m.group(1)), int(m.group(2))
            w.avg_items = _float(m.group(3))
            continue

        if (m := _LAUNCHED_RE.match(line)):
            if run.version is not None:
                second_run(lineno, "a second mdtest run starts here")
                continue
            run.version = f"mdtest-{m.group(1)}"
            run.tasks, run.nodes = int(m.group(2)), int(m.group(3))
            continue
        if line.startswith("Command line used: "):
            run.command_line_printed = line[len("Command line used: "):]
            run.command_line = _command(run.command_line_printed)
            continue
        if line.startswith("-- started at "):
            run.started = line[len("-- started at "):].rstrip(" -")
            continue
        if line.startswith("-- finished at "):
            run.finished = line[len("-- finished at "):].rstrip(" -")
            continue
        if line.startswith("Path                : "):
            run.path = line[22:]
            continue
        if line.startswith("FS                  : "):
            run.fs = line[22:]
            continue
        if (m := _ITEMS_RE.match(line)):
            run.items_total, run.items_kind = int(m.group(2)), m.group(3)
            table_tasks = int(m.group(1))
            continue
        if (m := _VERIFY_RE.search(line)):
            run.verification_errors = int(m.group(1))

        cls = _classify(line)
        if cls is not None:
            findings.append(Finding(cls[0], cls[1], lineno, line))

    if run.command_line:
        try:
            run.stonewall_status_file = _option_value(shlex.split(run.command_line), "-x")
        except ValueError:
            pass
    run.stonewall = [walls[k] for k in sorted(walls)]
    _choose_tables(run)
    _stonewall_items(run)
    _derived_findings(run)
    return run


def _add_row(table: SummaryTable, match: re.Match[str], lineno: int,
             findings: list[Finding]) -> None:
    row = _row(match, lineno)
    text = match.group(0).strip()
    if row is None:
        findings.append(Finding(INVALID, "unparseable", lineno,
                                f"bad SUMMARY {table.kind} row (broken by another rank's "
                                f"output?): {text}"))
    elif table.row(row.figure) is not None:
        findings.append(Finding(INVALID, "unparseable", lineno,
                                f"SUMMARY {table.kind} has {row.operation} twice: {text}"))
    else:
        table.rows.append(row)


def _choose_tables(run: MdtestRun) -> None:
    """The rate and time tables the figures come from (see ``MdtestRun.rate``)."""
    rates = [t for t in run.tables if t.kind == "rate"]
    times = [t for t in run.tables if t.kind == "time"]
    if not rates:
        run.time = times[0] if times else None
        return
    counts = [t.tasks for t in rates]
    chosen = next((i for i, t in enumerate(rates) if t.tasks == run.tasks), len(rates) - 1)
    if len(set(counts)) <= 1:
        chosen = 0  # the same table printed again (not a sweep)
        firsts = (rates[0], times[0] if times else None)
        for extra in (t for t in run.tables if all(t is not x for x in firsts)):
            run.findings.append(Finding(WARNING, "more-tables", extra.line,
                                        f"another SUMMARY {extra.kind} table: only the first "
                                        "one is used"))
    else:
        which = rates[chosen]
        run.findings.append(Finding(
            WARNING, "tables", which.line,
            f"mdtest swept task counts ({', '.join(str(c) for c in counts)}: one SUMMARY "
            f"table each); figures and task count are from the table of {which.tasks} "
            f"tasks (line {which.line})"
            + ("" if which.tasks == run.tasks else f", {run.tasks} were launched")))
    run.rate = rates[chosen]
    run.iterations = run.rate.iterations
    # The time table printed after the chosen rate table, for the same task count.
    run.time = next((t for t in times if t.tasks == run.rate.tasks
                     and (t.line or 0) > (run.rate.line or 0)), None)


def _float(tok: str) -> float | None:
    try:
        return float(tok)
    except ValueError:
        return None


def _stonewall_items(run: MdtestRun) -> None:
    """Files created until the stonewall, and the derived rate, per iteration."""
    for w in run.stonewall:
        from_avg = None
        if w.avg_items is not None and run.tasks:
            from_avg = round(w.avg_items * run.tasks)
        if run.tasks and len(w.rank_items) == run.tasks:
            w.items, w.items_source = sum(w.rank_items.values()), "rank lines"
            # avg is printed with one decimal: the sum must round to the same average.
            if w.avg_items is not None and abs(w.items / run.tasks - w.avg_items) > 0.05 + 1e-9:
                run.findings.append(Finding(
                    WARNING, "stonewall-items", w.line,
                    f"iteration {w.iteration}: per-rank stonewall lines sum to {w.items} items, "
                    f"but mdtest printed an average of {w.avg_items} over {run.tasks} tasks"))
        elif from_avg is not None:
            w.items, w.items_source = from_avg, "average"
        elif not w.hit and run.tasks and w.rank_items:
            pass  # some rank lines lost and no average printed: unknown
        if w.items is not None and w.time_s:
            w.rate = round(w.items / w.time_s, 3)  # 3 decimals, as mdtest prints rates


def _derived_findings(run: MdtestRun) -> None:
    f = run.findings
    if run.rate is None:
        f.append(Finding(INVALID, "truncated", None,
                         "no 'SUMMARY rate' table: output truncated or run aborted"))
    elif not run.rate.rows:
        f.append(Finding(INVALID, "truncated", run.rate.line,
                         "the 'SUMMARY rate' table has no rows: output truncated"))
    if run.finished is None:
        f.append(Finding(INVALID, "truncated", None,
                         "no '-- finished at' line: output truncated or run aborted"))
    for table in (run.rate, run.time):
        for row in table.rows if table else []:
            if not all(math.isfinite(v) for v in (row.max, row.min, row.mean, row.sd)):
                f.append(Finding(INVALID, "non-finite", row.line,
                                 f"non-finite figure in SUMMARY {table.kind}: {row.operation}"))
                continue
            problems = [f"{col} {why}" for col in ("max", "min", "mean", "sd")
                        if (why := figure_problem(getattr(row, col), io_done=False))]
            if row.measured and not row.min <= row.mean <= row.max:
                problems.append(f"min {row.printed['min']} <= mean {row.printed['mean']} <= "
                                f"max {row.printed['max']} does not hold")
            if problems:
                f.append(Finding(INVALID, "bogus-figure", row.line,
                                 f"SUMMARY {table.kind} {row.operation} cannot be a figure: "
                                 + "; ".join(problems)))
