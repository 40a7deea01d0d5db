"""Parse IOR 4.0.0's text output (stdout/stderr); its JSON summary file: :mod:`.parse_json`;
the typed run: :mod:`.run`.

Why ~650 lines in one module: the text is read in one stateful pass (line classifier,
summary rows, stonewall lines, per-iteration results, then findings derived from all of
them); splitting the pass would spread one state machine over several files.

Pure functions, standard library only. Every figure is taken from what IOR printed,
never recomputed: numbers are ``float(printed_text)``, so ``204.36`` stays ``204.36``,
and the whole printed line is kept (with its 1-based line number) next to each row.

Anything that makes a run untrustworthy becomes a :class:`Finding`:

* severity ``"invalid"``: ``ERROR`` lines, ``returned EOF prematurely``,
  ``cannot read from file``, ``Incorrect data``, ``Could not read back the stonewalling
  status``, ``MPI_ABORT``, IOR's refusals (``choose blocksize > transferSize``, invalid
  options), ``FAILED in``, launcher errors; output that is empty or truncated (no summary
  table or no ``Finished`` line); non-finite figures in the summary.
* severity ``"warning"``: any other ``WARNING:`` line (``Maybe caused by
  deadlineForStonewalling``, expected-size mismatches under a deadline, DUMMY notices) and a
  phase whose ``wr/rd(s)`` is shorter than the stonewall deadline (``-D``): it ended on size,
  so the deadline contract ("sustained for D seconds") was not exercised.

A run is ``valid`` when it has no ``invalid`` finding.

Entry points: :func:`parse_ior` (text output), :func:`parse_ior_json` (the file written
with ``-O summaryFormat=JSON -O summaryFile=F``). Both return an :class:`IorRun`;
:meth:`IorRun.to_dict` gives a JSON-serialisable dict.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation

from fsaccept.benchmarks.ior.run import (IorParameters, IorRun, IterationResult, MaxBandwidth,
                                         RankTimes, StonewallPhase, SummaryRow)
from fsaccept.core.findings import INVALID, WARNING, Finding, figure_problem, line_findings
from fsaccept.core.units import MIB

__all__ = [
    "INVALID",
    "WARNING",
    "Finding",
    "IorParameters",
    "IorRun",
    "IterationResult",
    "MaxBandwidth",
    "RankTimes",
    "StonewallPhase",
    "SummaryRow",
    "parse_ior",
    "parse_size",
]

_SIZE_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*(bytes|KiB|MiB|GiB|TiB|KB|MB|GB|TB)\s*$")
_SIZE_MULT = {
    "bytes": 1,
    "KiB": 1 << 10,
    "MiB": 1 << 20,
    "GiB": 1 << 30,
    "TiB": 1 << 40,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
}


def parse_size(text: str | None) -> int | None:
    """Bytes from IOR's human-readable size (``1 MiB``, ``4096 bytes``); ``None`` if the
    text is missing, not a size, or rounded (a fractional value such as ``390.62 GiB``)."""
    if not text:
        return None
    m = _SIZE_RE.match(text)
    if not m:
        return None
    num, unit = m.groups()
    if "." in num:
        return None
    return int(num) * _SIZE_MULT[unit]


def _num(tok: str) -> float | None:
    """Printed number -> float; ``-`` / ``NA`` -> None."""
    if tok in ("-", "NA"):
        return None
    try:
        return float(tok)
    except ValueError:
        return None


def _int(tok: str | None) -> int | None:
    if tok is None:
        return None
    try:
        return int(tok)
    except ValueError:
        return None


# --------------------------------------------------------------------------- text parser

_STONEWALL_RE = re.compile(
    r"^stonewalling pairs accessed min: (-?\d+) max: (\d+) -- min data: (\S+) GiB "
    r"mean data: (\S+) GiB time: (\S+)s"
)
_MAX_RE = re.compile(r"^Max (Write|Read):\s+(\S+) MiB/sec \((\S+) MB/sec\)")
_RANK_PAIRS = ": stonewalling pairs accessed: "
# IOR's per-rank CSV (-O saveRankPerformanceDetailsCSV), shown in the job's output:
# access, rank, open-to-close s, transfer s, and the two per-rank rates (bytes/s).
_RANK_TIME_RE = re.compile(r"(write|read),(\d+),([^,]+),([^,]+),([^,]+),([^,]+)")
_RANK_TIME_OPS = ("write,", "read,")
_DATA_ERRORS_RE = re.compile(r"Incorrect data on (write|read) \((-?\d+) errors found\)")
# Anything that invalidates a run, searched for in lines not already classified.
_BAD_RE = re.compile(
    r"ERROR|EOF prematurely|Incorrect data|MPI_ABORT|Could not read back|"
    r"cannot read from file|choose blocksize|: FAILED in |Invalid options|"
    r"Error invalid argument|srun: error|slurmstepd: error|CANCELLED|"
    r"Segmentation fault|exited on signal|non-zero (?:status|exit code)|"
    r"Assertion .* failed|Process received signal"
)

# A transfer that failed or moved less than asked (ENOSPC, EIO, ...): the data
# IOR credits was not all written or read.
_IO_ERROR_RE = re.compile(r"\) failed |partial (?:write|read)\(\)")

_SUMMARY_FIELDS = (
    "operation", "max_mib", "min_mib", "mean_mib", "stddev_mib", "max_ops", "min_ops",
    "mean_ops", "stddev_ops", "mean_s", "stonewall_s", "stonewall_mib", "test_id", "tasks",
    "tasks_per_node", "reps", "fpp", "reord", "reordoff", "reordrand", "seed", "segments",
    "block_bytes", "xfer_bytes", "agg_mib", "api", "ref_num",
)  # 27 columns, in the order of IOR's header
_ROW_OPS = ("write", "read", "remove")
# The start of a run's header, found anywhere in a line: a killed run's last line, cut
# off without its newline, glues the next run's header to itself ("...pairs accIOR-4.0.0:
# MPI Coordinated Test...").
# Bounded version text: linear on any line (no backtracking over a long run of text).
_RUN_START_RE = re.compile(r"IOR-[^\s:]{0,40}: MPI Coordinated Test|Began {15}: "
                           r"|Command line {8}: |Options: ?$")
_KV_SEP = ": "
_BYTES_MOVED = "WARNING: Using actual aggregate bytes moved = "
_STAT_BYTES = "WARNING: Stat() of aggregate file size"


def _classify(line: str) -> tuple[str, str] | None:
    """(severity, kind) for a line that matters, else None."""
    if line.startswith("WARNING:"):
        if _IO_ERROR_RE.search(line):
            return INVALID, "io-error"
        if "EOF prematurely" in line:
            return INVALID, "eof"
        if "Incorrect data" in line:
            return INVALID, "incorrect-data"
        if "Could not read back the stonewalling status" in line:
            return INVALID, "stonewall-status"
        return WARNING, "warning"
    if not _BAD_RE.search(line):
        return None
    if "cannot read from file" in line:
        return INVALID, "cannot-read"
    if "EOF prematurely" in line:
        return INVALID, "eof"
    if "Incorrect data" in line:
        return INVALID, "incorrect-data"
    if "Could not read back" in line:
        return INVALID, "stonewall-status"
    if "MPI_ABORT" in line:
        if line.startswith("NOTE: invoking MPI_ABORT"):  # Open MPI's boilerplate after the abort
            return None
        return INVALID, "mpi-abort"
    if (
        "choose blocksize" in line
        or "only sensible" in line
        or "Invalid options" in line
        or "Error invalid argument" in line
    ):
        return INVALID, "refused"
    if "ERROR" in line or ": FAILED in " in line:
        return INVALID, "error"
    return INVALID, "launcher"


def error_findings(text: str) -> list[Finding]:
    """Findings in text that is not IOR's own report, e.g. the job's stderr
    (assertions, launcher errors, I/O errors); line numbers are of ``text``."""
    return line_findings(text, _classify)


def set_params(run: IorRun) -> None:
    p = run.parameters
    run.params = IorParameters(
        api=p.get("api"),
        test_filename=p.get("test filename"),
        access=p.get("access"),
        type=p.get("type"),
        segments=_int(p.get("segments")),
        ordering_in_file=p.get("ordering in a file"),
        ordering_inter_file=p.get("ordering inter file"),
        nodes=_int(p.get("nodes")),
        tasks=_int(p.get("tasks")),
        clients_per_node=_int(p.get("clients per node")),
        repetitions=_int(p.get("repetitions")),
        xfersize=p.get("xfersize"),
        blocksize=p.get("blocksize"),
        aggregate_filesize=p.get("aggregate filesize"),
        xfer_bytes=parse_size(p.get("xfersize")),
        block_bytes=parse_size(p.get("blocksize")),
        stonewalling_time=_int(p.get("stonewallingTime")),
        stonewalling_wearout=_int(p.get("stoneWallingWearOut")),
    )


def _summary_row(toks: list[str], lineno: int | None) -> SummaryRow:
    printed = dict(zip(_SUMMARY_FIELDS, toks, strict=True))
    n = _num
    return SummaryRow(
        operation=toks[0],
        max_mib=float(toks[1]),
        min_mib=float(toks[2]),
        mean_mib=float(toks[3]),
        stddev_mib=float(toks[4]),
        max_ops=float(toks[5]),
        min_ops=float(toks[6]),
        mean_ops=float(toks[7]),
        stddev_ops=float(toks[8]),
        mean_s=float(toks[9]),
        stonewall_s=n(toks[10]),
        stonewall_mib=n(toks[11]),
        test_id=_int(toks[12]),
        tasks=_int(toks[13]),
        tasks_per_node=_int(toks[14]),
        reps=_int(toks[15]),
        fpp=_int(toks[16]),
        reord=_int(toks[17]),
        reordoff=_int(toks[18]),
        reordrand=_int(toks[19]),
        seed=_int(toks[20]),
        segments=_int(toks[21]),
        block_bytes=_int(toks[22]),
        xfer_bytes=_int(toks[23]),
        agg_mib=n(toks[24]),
        api=toks[25],
        ref_num=_int(toks[26]),
        line=lineno,
        printed=printed,
    )


def parse_ior(text: str) -> IorRun:
    """Parse IOR's text output (stdout+stderr of one run, any verbosity).

    Never raises on odd input: problems become findings. Single pass over the lines.
    """
    run = IorRun(source="text")
    findings = run.findings
    if not text.strip():
        findings.append(Finding(INVALID, "empty", None, "IOR output is empty"))
        return run

    lines = text.splitlines()
    in_options = False
    options_done = False
    pending = StonewallPhase()  # collects per-rank lines until the phase summary line
    in_summary = False
    hints: dict[str, str] | None = None  # the hints block being read, if any
    header_seen = False  # a run's header began: another one is a second run
    test_id: int | None = None  # TestID of the test being printed (an IOR script has several)
    options_test: int | None = None  # TestID when the last Options: block started
    bytes_moved: int | None = None  # "Using actual aggregate bytes moved" for the next row
    stat_bytes: int | None = None  # "Stat() of aggregate file size" for the next row

    def second_run(lineno: int, what: str) -> None:
        if not any(f.kind == "two-runs" for f in findings):
            findings.append(Finding(INVALID, "two-runs", lineno,
                                    f"{what}: the output holds more than one run "
                                    "(parse each apart)"))

    for idx, line in enumerate(lines):
        if not line:
            if in_options:
                in_options, options_done = False, True
            continue
        c = line[0]

        # Hot path: per-rank lines "N: stonewalling pairs accessed: K" (one per rank).
        if "0" <= c <= "9":
            k = line.find(_RANK_PAIRS)
            if k > 0:
                try:
                    v = int(line[k + len(_RANK_PAIRS):])
                    rank = int(line[:k])
                except ValueError:
                    pass
                else:
                    run.rank_pairs.setdefault(rank, []).append(v)
                    pending.ranks_reported += 1
                    if pending.rank_pairs_min is None or v < pending.rank_pairs_min:
                        pending.rank_pairs_min = v
                    if pending.rank_pairs_max is None or v > pending.rank_pairs_max:
                        pending.rank_pairs_max = v
                    continue

        lineno = idx + 1

        glued = _RUN_START_RE.search(line, 1)
        if glued:
            if header_seen:
                second_run(lineno, f"a second run's header ({glued.group().strip()!r}) is "
                                   "glued to a cut-off line here")
            header_seen = True

        if c in "wr" and line.startswith(_RANK_TIME_OPS):
            _rank_time(run, line, lineno)
            continue

        # Result rows: per-iteration (11 tokens) or summary (27 tokens).
        if c in "wr" and line.startswith(_ROW_OPS):
            toks = line.split()
            if toks[0] in _ROW_OPS:
                if len(toks) == 11:
                    n = _num
                    run.results.append(IterationResult(
                        toks[0], n(toks[1]), n(toks[2]), n(toks[3]), n(toks[4]), n(toks[5]),
                        n(toks[6]), n(toks[7]), n(toks[8]), n(toks[9]),
                        iteration=_int(toks[10]), line=lineno, bw_token=toks[1],
                        test_id=test_id, bytes_moved=bytes_moved if toks[0] != "remove" else None,
                        stat_bytes=stat_bytes if toks[0] != "remove" else None,
                    ))
                    if toks[0] != "remove":
                        bytes_moved = stat_bytes = None
                    continue
                if len(toks) == 27 and in_summary:
                    try:
                        run.summary.append(_summary_row(toks, lineno))
                    except ValueError:
                        findings.append(
                            Finding(INVALID, "unparseable", lineno, f"bad summary row: {line}")
                        )
                    continue

        if c == "W" or c == "E":
            if line.startswith(_BYTES_MOVED):
                bytes_moved = _int(line[len(_BYTES_MOVED):].strip())
            elif line.startswith(_STAT_BYTES):
                stat_bytes = _int(line.partition("=")[2].strip())
            cls = _classify(line)
            if cls is not None:
                findings.append(Finding(cls[0], cls[1], lineno, line))
                if cls[1] == "incorrect-data":
                    m = _DATA_ERRORS_RE.search(line)
                    if m:
                        run.data_errors[m.group(1)] = \
                            run.data_errors.get(m.group(1), 0) + int(m.group(2))
                continue
            if line.startswith("Writing output to "):
                run.summary_file = line[len("Writing output to "):].strip()
                continue

        # MPI-IO hints (--mpiio.showHints): "hints passed to MPI_File_open() {", then
        # "\tkey = value" lines, then "}"; the first block of each kind is kept.
        if hints is not None:
            if c == "\t" and " = " in line:
                key, _, value = line.strip().partition(" = ")
                hints.setdefault(key, value)
                continue
            if line == "}":
                hints = None
                continue
            hints = None
        if c == "h" and line.endswith("{"):
            if line.startswith("hints passed to MPI_File_open()"):
                hints = run.hints_passed if not run.hints_passed else {}
                continue
            if line.startswith("hints returned from opened file"):
                hints = run.hints_returned if not run.hints_returned else {}
                continue

        # Options block: "%-20s: %s" (every ShowSetup key is shorter than 20 characters)
        if in_options and len(line) > 20 and line[20] == ":" and c != " ":
            run.parameters[line[:20].rstrip()] = line[21:].strip()
            continue

        if c == "s" and line.startswith("stonewalling pairs accessed min:"):
            m = _STONEWALL_RE.match(line)
            if m:
                pending.pairs_min = int(m.group(1))
                pending.pairs_max = int(m.group(2))
                pending.min_data_gib = _num(m.group(3))
                pending.mean_data_gib = _num(m.group(4))
                pending.time_s = _num(m.group(5))
            pending.line = lineno
            run.stonewall.append(pending)
            pending = StonewallPhase()
            continue

        if c == "M" and line.startswith("Max "):
            m = _MAX_RE.match(line)
            if m:
                run.max_bandwidth.append(
                    MaxBandwidth(m.group(1).lower(), float(m.group(2)), float(m.group(3)), lineno)
                )
                continue

        if c == "P" and line.startswith("Pairs deadlineForStonewallingaccessed:"):
            pairs = _int(line.split(":", 1)[1].strip())
            if pairs is not None:
                run.pairs_deadline_accessed.append(pairs)
            continue

        if c == "S" and line.startswith("Summary of all tests:"):
            in_summary = True
            continue

        if c == "O" and line.startswith("Options:"):
            if not options_done and not run.parameters:
                in_options = True
            elif test_id == options_test:  # once per test (an IOR script -f has several)
                second_run(lineno, "a second 'Options:' block starts here")
            options_test = test_id
            header_seen = True
            continue

        if line.startswith("IOR-") and ": MPI Coordinated Test" in line:
            if run.version is not None:
                second_run(lineno, "a second IOR run starts here")
            run.version = run.version or line.split(":", 1)[0]
            header_seen = True
            continue

        # "key                 : value" header lines
        if line[:1].isalpha() and len(line) > 20 and line[20:22] == _KV_SEP:
            key = line[:20].rstrip()
            val = line[22:].rstrip()
            if key == "Command line":
                if run.command_line is not None:
                    second_run(lineno, "a second 'Command line' starts here")
                run.command_line = run.command_line or val
                header_seen = True
            elif key == "Began":
                if run.began is not None:
                    second_run(lineno, "a second 'Began' starts here")
                run.began = run.began or val
                header_seen = True
            elif key == "Machine":
                run.machine = run.machine or val
            elif key == "StartTime":
                run.start_time = run.start_time or val
            elif key == "Finished":
                run.finished, run.finished_line = val, lineno
            else:
                if key == "TestID":
                    test_id = _int(val)
                run.header.setdefault(key, val)
            continue

        cls = _classify(line)
        if cls is not None:
            findings.append(Finding(cls[0], cls[1], lineno, line))

    if pending.ranks_reported:  # per-rank lines with no closing phase line (truncated)
        run.stonewall.append(pending)

    set_params(run)
    derived_findings(run)
    return run


def _rank_time(run: IorRun, line: str, lineno: int) -> None:
    """One line of IOR's per-rank CSV, once per rank: a rank's open-to-close time, a
    positive finite number, its transfer time, finite and not negative (a transfer
    shorter than the microsecond timer's tick reads 0), and the two rates, numbers (the
    rate over a transfer time of 0 is ``inf``).  How they agree with each other and with
    the rest of IOR's output is judged by :func:`.validity.rank_time_reasons`."""
    m = _RANK_TIME_RE.fullmatch(line.strip())
    values = [_num(m.group(i)) for i in range(3, 7)] if m else [None]
    if m is None or None in values or any(math.isnan(v) or v < 0 for v in values) \
            or not (math.isfinite(values[0]) and values[0] > 0 and math.isfinite(values[1])):
        run.findings.append(Finding(INVALID, "unparseable", lineno,
                                    f"bad per-rank time line: {line[:120]}"))
        return
    rows = run.rank_rows.setdefault(m.group(1), {})
    rank = int(m.group(2))
    if rank in rows:
        run.findings.append(Finding(INVALID, "two-runs", lineno,
                                    f"rank {rank}'s {m.group(1)} time is printed twice "
                                    "(the per-rank file holds more than one run)"))
        return
    rows[rank] = RankTimes(*values, line=lineno)


def derived_findings(run: IorRun) -> None:
    f = run.findings
    if run.source == "text":
        if not run.summary:
            if run.summary_file and not run.results:
                f.append(Finding(
                    INVALID, "no-summary", None,
                    f"no figures in this output: IOR wrote its summary to {run.summary_file}"
                    " (parse that file with parse_ior_json)",
                ))
            else:
                f.append(Finding(
                    INVALID, "truncated", None,
                    "no 'Summary of all tests:' table: output truncated or run aborted",
                ))
        if run.finished is None and not run.summary_file:
            f.append(Finding(INVALID, "truncated", None,
                             "no 'Finished' line: output truncated or run aborted"))
    elif not run.summary:
        f.append(Finding(INVALID, "no-summary", None, "JSON summary has no summary[] rows"))

    for row in run.summary:
        iterations = run.iterations_of(row)
        problems = summary_row_problems(row, iterations,
                                        exact_bytes_moved(run, row, iterations))
        if problems:
            kind = "non-finite" if any("finite" in p for p in problems) else "bogus-figure"
            f.append(Finding(INVALID, kind, row.line,
                             f"{row.operation} summary row cannot be a figure: "
                             + "; ".join(problems)))

    tasks = run.params.tasks
    for ph in run.stonewall:
        if ph.ranks_reported and tasks and ph.ranks_reported != tasks:
            f.append(Finding(
                WARNING, "rank-lines", ph.line,
                f"{ph.ranks_reported} per-rank 'stonewalling pairs accessed' lines for {tasks}"
                " tasks (lost or interleaved output)",
            ))

    deadline = run.params.stonewalling_time
    if deadline:
        for r in run.results:
            if r.access in ("write", "read") and r.wrrd_s is not None \
                    and r.wrrd_s < 0.99 * deadline:
                f.append(Finding(
                    WARNING, "ended-before-deadline", r.line,
                    f"{r.access} iteration {r.iteration} took {r.wrrd_s:g} s < stonewall "
                    f"deadline {deadline} s: ended on data size, not on the deadline",
                ))


def exact_bytes_moved(run: IorRun, row: SummaryRow,
                      iterations: list[IterationResult]) -> int | None:
    """The exact bytes the row's first iteration moved, when the log gives them: IOR's
    "Using actual aggregate bytes moved" line, or, in a run without a deadline (that
    moves all it was asked to), block size x segments x tasks."""
    first = next((it for it in iterations if it.iteration in (0, None)), None)
    if first is not None and first.bytes_moved is not None:
        return first.bytes_moved
    if run.params.stonewalling_time or None in (row.block_bytes, row.segments, row.tasks):
        return None
    geometry = (row.block_bytes, row.segments, row.tasks)
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in geometry):
        return None
    return row.block_bytes * row.segments * row.tasks


#: Relative slack of the consistency checks, on top of the precision IOR printed each
#: figure with: only floating point's (IOR prints aggs(MiB) from a C float, 24 bits).
FLOAT_SLACK = 1e-6

#: IOR's print precision (decimals) of a summary row's figures in its text table, for a
#: row that does not carry its printed tokens; its JSON prints every double "%.4f".
_TEXT_DECIMALS = {"mean_s": 5, "agg_mib": 1, "stonewall_s": 2, "stonewall_mib": 2}

#: Summary columns that must be finite and positive (the phase ran), as IOR names them.
#: Mean(s) may print 0 (a phase shorter than its last printed decimal): see below.
_ROW_FIGURES = (("max_mib", "Max(MiB)"), ("min_mib", "Min(MiB)"), ("mean_mib", "Mean(MiB)"),
                ("max_ops", "Max(OPs)"), ("min_ops", "Min(OPs)"), ("mean_ops", "Mean(OPs)"))


def _half_ulp(token: str | None, default_decimals: int) -> float:
    """Half the last printed digit of ``token`` (``0.03009`` -> 5e-6, ``5482`` -> 0.5):
    how far the true value may be from what IOR printed."""
    if token:
        try:
            exponent = Decimal(token.strip()).as_tuple().exponent
        except InvalidOperation:
            exponent = None
        if isinstance(exponent, int):
            return 0.5 * 10.0 ** exponent
    return 0.5 * 10.0 ** -default_decimals


def _interval(row: SummaryRow, name: str) -> tuple[float, float]:
    """[low, high] of the true value of a summary figure, from its printed precision."""
    value = getattr(row, name)
    h = _half_ulp(row.printed.get(name), _TEXT_DECIMALS.get(name, 2))
    lo, hi = value - h, value + h
    return max(lo, 0.0) * (1 - FLOAT_SLACK), hi * (1 + FLOAT_SLACK)


def _overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


def _ratio(num: tuple[float, float], den: tuple[float, float]) -> tuple[float, float]:
    return (num[0] / den[1] if den[1] > 0 else math.inf,
            num[1] / den[0] if den[0] > 0 else math.inf)


def _bytes_text(nbytes: float) -> str:
    """An amount of data as a reader checks it: small amounts in exact bytes (30,000 B,
    never "0 MiB"), from 10 MiB up in MiB with 2 decimals."""
    if nbytes < 10 * MIB:
        return f"{nbytes:,.0f} B"
    return f"{nbytes / MIB:,.2f} MiB"


def summary_row_problems(row: SummaryRow, iterations: list[IterationResult],
                         exact_bytes: int | None = None) -> list[str]:
    """Why a summary row cannot be judged: a figure that is not finite, negative or
    zero; Min <= Mean <= Max broken; data moved / time, OPs x transfer size, or the
    per-iteration rows disagreeing with the bandwidth by more than IOR's print rounding
    allows (each figure's last printed digit, :func:`_half_ulp`).  ``iterations``: the
    per-iteration rows of the same operation and test; ``exact_bytes``: the bytes the
    first iteration moved when the log gives them (it narrows the rounded aggs(MiB))."""
    problems = [f"{label} {why}" for name, label in _ROW_FIGURES
                if (why := figure_problem(getattr(row, name)))]
    # A phase shorter than the last printed digit of Mean(s) prints 0: not bogus.
    if (why := figure_problem(row.mean_s, io_done=False)):
        problems.append(f"Mean(s) {why}")
    for name, label in (("stonewall_s", "Stonewall(s)"), ("stonewall_mib", "Stonewall(MiB)"),
                        ("agg_mib", "aggs(MiB)")):
        value = getattr(row, name)
        if value is not None and (why := figure_problem(value, io_done=False)):
            problems.append(f"{label} {why}")
    if problems:
        return problems
    for unit in ("MiB", "OPs"):
        lo, mean, hi = (getattr(row, f"{k}_{unit.lower()}") for k in ("min", "mean", "max"))
        if not lo <= mean <= hi:
            problems.append(f"Min({unit}) {lo:g} <= Mean({unit}) {mean:g} <= Max({unit}) "
                            f"{hi:g} does not hold")
    mean_mib = _interval(row, "mean_mib")
    if row.reps == 1 and row.agg_mib is not None:
        agg = _interval(row, "agg_mib")
        moved = agg[0] * MIB, agg[1] * MIB
        if exact_bytes is not None and moved[0] <= exact_bytes <= moved[1]:
            moved = (float(exact_bytes), float(exact_bytes))
        rate = _ratio((moved[0] / MIB, moved[1] / MIB), _interval(row, "mean_s"))
        if not _overlap(rate, mean_mib):
            shown = (_bytes_text(moved[0]) if moved[0] == moved[1]
                     else f"{row.printed.get('agg_mib', f'{row.agg_mib:g}')} MiB")
            problems.append(
                f"data moved / time = {shown} / {row.printed.get('mean_s', f'{row.mean_s:g}')}"
                f" s = {_range_text(rate)} MiB/s within IOR's print rounding, but Mean(MiB) "
                f"is {row.mean_mib:g}")
    if row.xfer_bytes:
        ops = _interval(row, "mean_ops")
        from_ops = ops[0] * row.xfer_bytes / MIB, ops[1] * row.xfer_bytes / MIB
        if not _overlap(from_ops, mean_mib):
            problems.append(f"Mean(OPs) x transfer size = {_range_text(from_ops)} MiB/s "
                            f"within IOR's print rounding, but Mean(MiB) is {row.mean_mib:g}")
    bws = [it for it in iterations if it.bw_mib is not None]
    if bws and row.reps and len(bws) == row.reps:
        # IOR prints per-iteration bandwidth "%.2f", from 3600 up with no decimals
        ivs = [(it.bw_mib - (h := _iteration_half_ulp(it)), it.bw_mib + h) for it in bws]
        n = len(ivs)
        for label, got, name in (
                ("Max", (max(i[0] for i in ivs), max(i[1] for i in ivs)), "max_mib"),
                ("Min", (min(i[0] for i in ivs), min(i[1] for i in ivs)), "min_mib"),
                ("Mean", (sum(i[0] for i in ivs) / n, sum(i[1] for i in ivs) / n),
                 "mean_mib")):
            got = got[0] * (1 - FLOAT_SLACK), got[1] * (1 + FLOAT_SLACK)
            if not _overlap(got, _interval(row, name)):
                problems.append(f"{label}(MiB) {getattr(row, name):g} disagrees with the "
                                f"per-iteration rows ({label.lower()} {_range_text(got)} "
                                "MiB/s)")
    return problems


def _iteration_half_ulp(it: IterationResult) -> float:
    if it.bw_token is not None:
        return _half_ulp(it.bw_token, 2)
    return 0.5 if it.bw_mib is not None and it.bw_mib >= 3600 else 0.005


def _range_text(iv: tuple[float, float]) -> str:
    lo, hi = iv
    if hi == math.inf:
        return f"at least {lo:.2f}"
    if f"{lo:.2f}" == f"{hi:.2f}":
        return f"{lo:.2f}"
    return f"{lo:.2f} to {hi:.2f}"
