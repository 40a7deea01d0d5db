"""Is an IOR figure valid?  The rules that turn a parsed IOR run into
INVALID reasons; an empty list means the figure may be judged PASS/FAIL.

Every reason says what was seen and what to change.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from collections.abc import Callable, Sequence
from typing import Any

from fsaccept.benchmarks.catalogue import ACCEPTANCE, TestSpec
from fsaccept.benchmarks.ior import figures
from fsaccept.benchmarks.ior.command import PHASES, Phase, TestParameters, checkpoint_block
from fsaccept.benchmarks.ior.figures import burst_reasons
from fsaccept.benchmarks.ior.patterns import argv_of, last_option
from fsaccept.benchmarks.ior.parse import WARNING, IorRun, RankTimes, exact_bytes_moved
from fsaccept.core import guards
from fsaccept.core.reference import entry_thresholds
from fsaccept.core.slurm import first_lines
from fsaccept.core.units import GIB, MIB, format_size, parse_size
from fsaccept.core.versions import version_number, version_reasons



@dataclass(frozen=True)
class IorExpectation:
    """What a phase was asked to do, to compare with what IOR reports."""

    operation: str  #: "write" or "read"
    tasks: int
    nodes: int
    deadline_s: int | None = None  #: the phase must run at least this long
    direct_io: bool = False
    node_memory_bytes: int | None = None
    min_cache_ratio: float = 1.5
    generation_deadline_s: int | None = None  #: for advice on an exhausted dataset
    figure_kind: str = "bandwidth"  #: "bandwidth" or "iops": what a known bug must affect
    #: Each rank reads what a rank on another node wrote (``-C``/``-Z``, several nodes).
    other_node: bool = False
    #: Each node reaches the file system through a client of its own (a network or
    #: distributed file system; a live fact: the job's file-system type).  Together with
    #: ``other_node``, the reader's page cache never held the data.
    separate_clients: bool = False


#: File-system types whose data lives on this host's own disks or memory (``core``'s:
#: the semantics check skips on them too).
LOCAL_FSTYPES = guards.LOCAL_FSTYPES


def output_expectation(run: IorRun, operation: str) -> IorExpectation:
    """What the run asked of itself, read from its own output: tasks and nodes as IOR
    counted them, the deadline of its command line (``-D``), direct I/O
    (``--posix.odirect``).  A write that keeps a stonewall status file writes a dataset
    for a later read: it may end on its size before the deadline, as the live dataset
    check allows.  The one expectation both a re-read log (``fsaccept parse``) and the
    live check start from, so that the same output gets the same verdict."""
    params = run.params
    argv = argv_of(run.command_line or "")
    generation = operation == "write" and any("stoneWallingStatusFile=" in a for a in argv)
    return IorExpectation(
        operation=operation, tasks=params.tasks if params and params.tasks else 0,
        nodes=params.nodes if params and params.nodes else 0,
        deadline_s=None if generation else (params.stonewalling_time if params else None),
        direct_io="--posix.odirect" in argv or "-B" in argv,
        other_node=("-C" in argv or "-Z" in argv) and bool(params and (params.nodes or 0) > 1),
        figure_kind="iops" if params and params.ordering_in_file == "random" else "bandwidth")


#: Why IOR's ranks must be placed in blocks, said when they were not
#: (:func:`fsaccept.core.placement.block_reasons`).
BLOCK_PLACEMENT = "-C would not move readers off-node"

#: srun's line for a task that exited non-zero (IOR's exit status is its error count).
EXIT_STATUS = re.compile(r"srun: error: \S+: tasks? [\d,-]+: Exited with exit code \d+$"
                         # ... and, with --kill-on-bad-exit, srun then ends the tasks that
                         # had not exited yet: their step is "CANCELLED" (no DUE TO).
                         r"|\*\*\* STEP \d+\.\d+ ON \S+ CANCELLED AT \S+ \*\*\*$")


def verified_read(run: IorRun) -> IorRun:
    """A read that verifies what it reads (``-R``: the integrity check, a restore), as
    it is judged: "Incorrect data" is what it measures, not a reason to discard it; and
    IOR then exits with its error count, which srun reports for every task (each such
    finding made a warning, in place)."""
    for finding in run.findings:
        if finding.kind == "incorrect-data" or (
                run.data_errors and EXIT_STATUS.search(finding.text)):
            finding.severity = WARNING
    return run


#: Rules the live check applies that a re-read log cannot (what they need).
NOT_FROM_OUTPUT = ("cache-suspect reads: needs the nodes' memory (Slurm)",
                   "ranks requested: needs the node fraction and partition size")


def reread_reasons(run: IorRun) -> tuple[list[str], list[str]]:
    """INVALID reasons for every phase a re-read IOR log reports, by the same rules as
    the live check (:func:`output_expectation`), and the rules it could not apply."""
    findings = set(first_lines(root_causes_first(run.reasons)))  # the parser's own, reported already
    reasons: list[str] = []
    for op in ("write", "read"):
        if run.summary_for(op) is not None:
            reasons += [r for r in ior_invalid_reasons(run, output_expectation(run, op))
                        if r not in reasons and r not in findings]
    return reasons, list(NOT_FROM_OUTPUT)


def _log_operations(run: IorRun) -> list[str]:
    return [op for op in ("write", "read") if run.summary_for(op) is not None]


def judge_against_reference(run: IorRun, key: str, entry: dict[str, Any],
                            tests: Sequence[TestSpec]
                            ) -> tuple[list[str], dict[str, Any] | None, list[str]]:
    """The rules of a reference entry ``tests.<key>`` a re-read log can be held to:
    (INVALID reasons, the judged figure {name, value, unit, threshold, lower} or None,
    rules not applied).  The log must be the entry's operation (a read log is not a write
    test: that reason comes first, and nothing else is compared), configured as the entry
    says (ranks per node, transfer and block size, deadline, wear-out, file per process or
    one shared file, data pattern...) as IOR reports having run it (its Options block and
    summary, not the command line's text); its figure is judged against the threshold."""

    test = next((t for t in tests if t.key == key and t.role == ACCEPTANCE), None)
    if test is None:
        return [], None, [f"tests.{key}: not an IOR test key"]
    operation, kind, phase_name = (test.attrs["operation"], test.attrs["figure_kind"],
                                   test.attrs["phase"])
    done = _log_operations(run)
    # A test over a patterned dataset (data integrity) is judged by either of its phases,
    # the write of the pattern or its verified read: the log's own operation picks.
    patterned = {t.attrs["operation"]: t.attrs["phase"] for t in tests
                 if t.key == key and PHASES[t.attrs["phase"]].pattern
                 and not PHASES[phase_name].rank_times}  # a checkpoint's key is one phase
    if patterned:
        operation = "read" if "read" in done else "write"
        phase_name = patterned[operation]
    if done and operation not in done:
        return ([f"the log is a {' and '.join(done)} run (IOR "
                 f"{' '.join('-' + op[0] for op in done)}), tests.{key} is a {operation} "
                 f"test: it cannot be judged as one"], None, [])
    phase = PHASES[phase_name]
    reasons = []
    params = run.params
    if params and params.tasks and params.nodes:
        per_node = params.tasks / params.nodes
        if per_node != entry.get("ranks_per_node"):
            reasons.append(f"ran {per_node:g} ranks per node, tests.{key}.ranks_per_node is "
                           f"{entry.get('ranks_per_node')}")
    argv = argv_of(run.command_line or "")
    reasons += _command_line_reasons(run, argv)
    reasons += _size_reasons(run, run.summary_for(operation), key, entry)
    reasons += _access_reasons(run, argv, key, phase.shared)
    deadline = params.stonewalling_time if params else None
    if not phase.uses_deadline:
        if deadline:
            reasons.append(f"-D {deadline}: tests.{key} runs without a deadline (all its "
                           "data)")
    elif (deadline := output_expectation(run, operation).deadline_s):
        if deadline != entry.get("deadline_s"):
            reasons.append(f"-D {deadline} is not tests.{key}.deadline_s "
                           f"{entry.get('deadline_s')}")
    else:
        reasons.append(f"ran without a deadline (-D): tests.{key}.deadline_s is "
                       f"{entry.get('deadline_s')}")
    reasons += _phase_settings_reasons(run, argv, key, entry, phase)
    reasons += _pattern_reasons(run, key, entry)
    row = run.summary_for(operation)
    if phase.rank_times:
        reasons += burst_reasons(run, operation) + _checkpoint_size_reasons(row, key, entry)
        return reasons, _burst_figure(run, test, entry), [
            "node fraction: needs the partition's node count"]
    threshold = entry.get("threshold") or {}
    figure = None
    if row is not None and threshold:
        value = row.mean_mib if kind == "bandwidth" else row.mean_ops
        lower = threshold["value"] * (1 - threshold.get("tolerance", 0.0))
        figure = {"name": f"{operation}_{kind}", "value": value, "unit": threshold["unit"],
                  "threshold": threshold["value"], "lower": lower}
    return reasons, figure, ["node fraction: needs the partition's node count"]


def _checkpoint_size_reasons(row: Any, key: str, entry: dict[str, Any]) -> list[str]:
    """A checkpoint moves its size in whole transfers per rank (``checkpoint_block``)."""
    if row is None or None in (row.tasks, row.block_bytes, row.segments, row.xfer_bytes):
        return []
    size, ranks = parse_size(entry["checkpoint_size"]), row.tasks
    want = ranks * checkpoint_block(TestParameters(key, 0, 0, row.xfer_bytes,
                                                   checkpoint_size=size), ranks)
    moved = ranks * row.block_bytes * row.segments
    if moved == want:
        return []
    return [f"IOR's {ranks} ranks moved {format_size(moved)}, tests.{key}.checkpoint_size "
            f"{entry['checkpoint_size']} in whole transfers is {format_size(want)}"]


def _burst_figure(run: IorRun, test: TestSpec, entry: dict[str, Any]) -> dict[str, Any] | None:
    """The checkpoint's judged figure: its time against a ceiling in seconds (the main
    figure), else its bandwidth against a floor."""
    burst = figures.burst(run, test.attrs["operation"])
    given = entry_thresholds(entry)
    time, rate = test.figures[:2]
    name = next((n for n in ("", time, rate) if n in given), None)
    if burst is None or name is None:
        return None
    th = given[name]
    value = burst.bandwidth_mib_s if name == rate else burst.seconds
    bound = th.as_reframe_reference()
    return {"name": name or time, "value": value, "unit": th.unit, "threshold": th.value,
            **({"upper": th.value * (1 + bound[2])} if bound[2] is not None else
               {"lower": th.value * (1 + bound[1])})}


def _access_reasons(run: IorRun, argv: list[str], key: str, shared: bool) -> list[str]:
    """A file per process against a shared-file entry, or the reverse, by the command
    line's ``-F`` and by IOR's own ``access`` line (whatever option set it)."""
    reasons = []
    if ("-F" in argv) == shared:
        reasons.append(f"the command {'has' if shared else 'lacks'} -F (a file per process): "
                       f"tests.{key} runs {'without' if shared else 'with'} it")
    access = run.params.access if run.params else None
    if access in ("file-per-process", "single-shared-file") \
            and (access == "single-shared-file") != shared:
        reasons.append(f"IOR ran {'one shared file' if not shared else 'a file per process'} "
                       f"(access: {access}): tests.{key} runs "
                       f"{'one shared file' if shared else 'a file per process'}")
    return reasons


#: IOR's line for a failed system call: ``write(20, 0x7ff0..., 573440) failed No space left
#: on device`` says why; the ``partial write()`` lines around it only what followed.
_SYSCALL_FAILED = re.compile(r"\) failed [A-Z]")


def root_causes_first(reasons: list[str]) -> list[str]:
    """The reasons with IOR's failed-system-call lines first (else in output order), so
    that the few a verdict shows name the cause: ranks print their symptoms in any order."""
    return sorted(reasons, key=lambda r: 0 if _SYSCALL_FAILED.search(r) else 1)


def _size_reasons(run: IorRun, row: Any, key: str, entry: dict[str, Any]) -> list[str]:
    """Transfer and block size as IOR ran them: its Options block (exact sizes only) and
    the judged summary row (bytes), which must agree; never the command line's text."""
    reasons = []
    for name, size_key, options, summary in (
            ("transfer size", "transfer_size", run.params.xfer_bytes,
             row.xfer_bytes if row is not None else None),
            ("block size", "block_size", run.params.block_bytes,
             row.block_bytes if row is not None else None)):
        if size_key not in entry:
            continue
        if None not in (options, summary) and options != summary:
            reasons.append(f"IOR's Options block says a {name} of {format_size(options)}, its "
                           f"summary {format_size(summary)}: the log was edited")
            continue
        ran = options if options is not None else summary
        if ran is None:
            reasons.append(f"IOR's output does not say the {name} it ran: "
                           f"tests.{key}.{size_key} cannot be checked")
        elif ran != parse_size(entry[size_key]):
            reasons.append(f"IOR ran a {name} of {format_size(ran)} (its Options block and "
                           f"summary), tests.{key}.{size_key} is {entry[size_key]}")
    return reasons


def _command_line_reasons(run: IorRun, argv: list[str]) -> list[str]:
    """An option of the command line (the last given: IOR applies the last) that says
    another value than IOR reports having run: the log was edited (or glued together)."""
    params = run.params
    ran = {"-t": (params.xfer_bytes, _ior_bytes, format_size),
           "-b": (params.block_bytes, _ior_bytes, format_size),
           "-D": (params.stonewalling_time, _whole, str),
           "-a": (params.api, str, str)}
    reasons = []
    for flag, (value, read, shown) in ran.items():
        given = last_option(argv, flag)
        if given is None or value is None or read(given) is None:
            continue
        if read(given) != value:
            reasons.append(f"the command line's {flag} {given} is not what IOR ran "
                           f"({shown(value)}, its Options block): the log was edited")
    return reasons


def _whole(text: str) -> int | None:
    return int(text) if text.isdigit() else None


def _pattern_reasons(run: IorRun, key: str, entry: dict[str, Any]) -> list[str]:
    """The data pattern written (``-l``, the last given, as IOR reads it: the only record
    of it, see :mod:`.patterns`) against the entry's ``data_pattern``."""
    wanted = entry.get("data_pattern", TestParameters.data_pattern)
    seen = run.data_pattern
    if seen is None:
        return [f"no command line in IOR's output: its data pattern cannot be checked against "
                f"tests.{key}.data_pattern {wanted}"]
    if seen != wanted:
        return [f"IOR wrote the {seen} data pattern (-l), tests.{key}.data_pattern is {wanted}"]
    return []


def _phase_settings_reasons(run: IorRun, argv: list[str], key: str, entry: dict[str, Any],
                            phase: Phase) -> list[str]:
    """How the logged run differs from the phase the entry prescribes, in what changes
    the measurement: API, direct I/O, random offsets, wear-out, the dataset status file,
    data verification (file per process: :func:`_access_reasons`).  What IOR reports
    having run (its Options block: API, random offsets, wear-out) where it says it, else
    the command line.  (Verbosity, order and paths may differ; segments only bound a
    stonewalled phase, whose deadline is checked.)"""
    api = entry.get("api", "POSIX")
    ran_api = run.params.api or last_option(argv, "-a") or "POSIX"
    reasons = []
    if ran_api != api:
        reasons.append(f"-a {ran_api} is not tests.{key}.api {api}")
    joined = " ".join(argv)
    if phase.verify and "-R" not in argv:
        reasons.append(f"the command lacks -R (verify every transfer read): tests.{key} "
                       "runs with it")
    ordering = run.params.ordering_in_file
    for option, meaning, wanted, present in (
            ("-z", "random offsets", phase.random,
             ordering == "random" if ordering else "-z" in argv),
            ("--posix.odirect", "direct I/O", bool(entry.get("direct_io")),
             "--posix.odirect" in argv),
            ("-O stoneWallingStatusFile", "the dataset's status file", phase.status,
             "stoneWallingStatusFile=" in joined)):
        if wanted != present:
            reasons.append(f"the command {'lacks' if wanted else 'has'} {option} ({meaning}): "
                           f"tests.{key} runs {'with' if wanted else 'without'} it")
    # IOR prints stoneWallingWearOut only with a deadline; without one there is none.
    wearout = bool(run.params.stonewalling_wearout)
    if phase.wearout != wearout:
        reasons.append(f"IOR ran {'with' if wearout else 'without'} wear-out (its Options "
                       f"block: stoneWallingWearOut {run.params.stonewalling_wearout or 0}): "
                       f"tests.{key} runs {'with' if phase.wearout else 'without'} it")
    return reasons


def _ior_bytes(text: str) -> int | None:
    """IOR's size syntax: 1m, 4k, 4096 (k/m/g/t are powers of 2)."""
    match = re.match(r"^(\d+)([kmgt]?)$", text.lower())
    if not match:
        return None
    return int(match.group(1)) * 1024 ** " kmgt".index(match.group(2) or " ")


def ior_invalid_reasons(run: IorRun, exp: IorExpectation) -> list[str]:
    """INVALID reasons for the ``exp.operation`` figure of ``run``."""
    reasons = first_lines(root_causes_first(run.reasons))
    reasons += version_reasons("ior", version_number(run.version), exp.figure_kind)
    row = run.summary_for(exp.operation)
    if row is None:
        if not run.reasons:
            reasons.append(f"no {exp.operation} figure in IOR's summary")
        return reasons
    if exp.tasks and row.tasks is not None and row.tasks != exp.tasks:
        reasons.append(f"IOR ran {row.tasks} ranks, {exp.tasks} were requested")
    reasons += hint_reasons(run)
    reasons += iteration_row_reasons(run, row)
    reasons += rank_time_reasons(run, exp.operation)
    if exp.deadline_s:
        # the summary's time catches what missing or garbled rows would hide
        reasons += _short_run_reasons(run, exp) or _short_summary_reasons(row, exp)
    if exp.operation == "read" and not exp.direct_io:
        reasons += _cache_reasons(row.agg_mib, exp)
    return reasons


def hint_reasons(run: IorRun) -> list[str]:
    """An MPI-IO hint IOR passed that the opened file does not report with the same value:
    the MPI library ignored or overrode it, so the run is not the procedure asked for."""
    if not run.hints_passed or not run.hints_returned:
        return []
    return [f"MPI-IO hint {key}={value} was passed to MPI_File_open(), but the opened file "
            + (f"reports {key}={run.hints_returned[key]}" if key in run.hints_returned
               else "does not report it (the MPI library ignored it)")
            for key, value in run.hints_passed.items() if run.hints_returned.get(key) != value]


#: Relative slack between two numbers of IOR's per-rank CSV: it prints each with
#: ``%.10e`` (11 significant digits, so within 5e-11 of the double it computed), and a
#: rate there is the rank's share of the volume over its time, both doubles: a rate times
#: its time gives the share back within ~1e-10.  Ten times that, and nothing more: an
#: edited digit of the 11 moves the product by far more.
RANK_CSV_SLACK = 1e-9


def _printed_half_ulp(value: float) -> float:
    """Half the last digit of a per-iteration time as IOR 4.0.0 prints it (``PPDouble``:
    six decimals below 1, two below 3600, none above), from the printed value (a value
    printed 1.000000 is given the wider 0.005: never too narrow)."""
    return 5e-7 if value < 1 else 0.005 if value < 3600 else 0.5


def rank_time_reasons(run: IorRun, operation: str) -> list[str]:
    """IOR's per-rank times of ``operation`` (``-O saveRankPerformanceDetailsCSV``, the
    rows a checkpoint's figures come from) held to what IOR itself printed of the same
    run.  Each rank's times are differences of its own ``gettimeofday`` readings, taken
    in order (open, transfers, close); IOR's per-iteration row gives, over all ranks,
    the first start to the last stop of each (``open(s)``, ``wr/rd(s)``, ``close(s)``,
    ``total(s)``).  So, whatever the nodes' clocks:

    * a rank's open-to-close time is not shorter than its transfer time;
    * its rates are the rank's share of the volume over its times;
    * no rank took longer than ``total(s)``, nor transferred longer than ``wr/rd(s)``;
    * the slowest took at least ``total(s)`` less ``open(s)`` (the rank that closed
      last opened no later than the last open ended) or less ``close(s)`` (the rank
      that opened first closed no earlier than the first close began);
    * the rows are the file the job shows after the benchmark: after IOR's
      ``Finished`` line, never before it.

    Each comparison allows IOR's print rounding (:data:`RANK_CSV_SLACK`,
    :func:`_printed_half_ulp`) and nothing more."""
    rows = run.rank_rows.get(operation)
    row = run.summary_for(operation)
    if not rows:
        return []
    reasons = []
    first = min(rows.values(), key=lambda r: r.line)
    if run.finished_line is None or first.line < run.finished_line:
        reasons.append(
            f"line {first.line}: IOR's per-rank {operation} times are printed "
            + (f"before IOR's 'Finished' line {run.finished_line}" if run.finished_line
               else "with no 'Finished' line of IOR's")
            + ": the job shows that file after the benchmark has ended, so these rows are "
            "not IOR's per-rank file of this run")
    volume = exact_bytes_moved(run, row, run.iterations_of(row)) if row else None
    reasons += _rank_row_reasons(rows, operation, volume, row.tasks if row else None)
    its = [it for it in run.results if it.access == operation]
    if len(its) == 1 and None not in (its[0].total_s, its[0].open_s, its[0].close_s,
                                      its[0].wrrd_s):
        reasons += _rank_phase_reasons(rows, its[0], operation, row, volume)
    return reasons


def _rank_row_reasons(rows: dict[int, RankTimes], operation: str, volume: int | None,
                      tasks: int | None) -> list[str]:
    """Each row on its own: open to close not shorter than its transfers, its rates its
    share of the volume (``volume`` / ``tasks``, when the output gives them exactly)."""
    shorter = [(rank, r) for rank, r in sorted(rows.items()) if r.seconds < r.transfer_s]
    reasons = [_some_ranks(shorter, lambda rank, r: (
        f"rank {rank}'s {operation} open-to-close time {r.seconds:.10g} s (line {r.line}) is "
        f"shorter than its own transfer time {r.transfer_s:.10g} s"),
        "IOR times both on one clock, open before the transfers before the close: not "
        "IOR's row")]
    if volume and tasks:
        share = volume / tasks
        off = [(rank, r) for rank, r in sorted(rows.items())
               if any(abs(rate * t - share) > RANK_CSV_SLACK * share
                      for rate, t in ((r.rate, r.seconds), (r.transfer_rate, r.transfer_s))
                      if t > 0)]
        reasons.append(_some_ranks(off, lambda rank, r: (
            f"rank {rank}'s {operation} rates (line {r.line}) times its times give "
            f"{r.rate * r.seconds:,.0f} and {r.transfer_rate * r.transfer_s:,.0f} bytes"),
            f"IOR writes each rank's share of the {volume:,} bytes moved, {share:,.0f}: a "
            "time or a rate was edited"))
    return [r for r in reasons if r]


def _some_ranks(found: list, say: Callable[[int, RankTimes], str], why: str) -> str:
    """One reason for the ranks ``found`` ((rank, row) pairs): the first, and how many
    more ('' for none)."""
    if not found:
        return ""
    more = f" (and {len(found) - 1} more rank{'s' if len(found) > 2 else ''})" \
        if len(found) > 1 else ""
    return f"{say(*found[0])}{more}: {why}"


def _rank_phase_reasons(rows: dict[int, RankTimes], it: Any, operation: str, row: Any,
                        volume: int | None) -> list[str]:
    """The ranks' times within IOR's own phase times (its per-iteration row ``it``);
    ``volume``: the bytes IOR moved, when its output gives them exactly."""
    reasons = []
    slowest_rank, slowest = max(rows.items(), key=lambda kv: kv[1].seconds)
    h = _printed_half_ulp(it.total_s)
    if slowest.seconds * (1 - RANK_CSV_SLACK) > it.total_s + h:
        reasons.append(f"rank {slowest_rank}'s {operation} open-to-close time "
                       f"{slowest.seconds:.10g} s (line {slowest.line}) is longer than IOR's "
                       f"whole phase, total(s) {it.total_s:g} (line {it.line}): not IOR's row")
    floor = max(it.total_s - h - skew - _printed_half_ulp(skew)
                for skew in (it.open_s, it.close_s))
    if slowest.seconds * (1 + RANK_CSV_SLACK) < floor:
        rate = (f"; {format_size(volume)} over it would be "
                f"{volume / MIB / slowest.seconds:,.2f} MiB/s, where IOR's summary says "
                f"Max(MiB) {row.max_mib:g}" if volume else "")
        reasons.append(
            f"IOR's per-rank {operation} times are shorter than its own phase allows: the "
            f"slowest, rank {slowest_rank}'s {slowest.seconds:.10g} s (line {slowest.line}), "
            f"is under total(s) {it.total_s:g} less the ranks' spread in opening (open(s) "
            f"{it.open_s:g}) or in closing (close(s) {it.close_s:g}), {floor:.6g} s at "
            f"least (line {it.line}){rate}")
    longest_rank, longest = max(rows.items(), key=lambda kv: kv[1].transfer_s)
    if longest.transfer_s * (1 - RANK_CSV_SLACK) > it.wrrd_s + _printed_half_ulp(it.wrrd_s):
        reasons.append(f"rank {longest_rank}'s {operation} transfer time "
                       f"{longest.transfer_s:.10g} s (line {longest.line}) is longer than "
                       f"IOR's transfer phase, wr/rd(s) {it.wrrd_s:g} (line {it.line}): not "
                       "IOR's row")
    return reasons


def iteration_row_reasons(run: IorRun, row: Any) -> list[str]:
    """The summary row's iterations must each have a readable per-iteration row: the
    deadline rule and the summary's consistency read them, so a row that is missing or
    garbled (a rank's late line spliced into it) leaves the figure unchecked."""
    rows = run.iterations_of(row)
    readable = [it for it in rows if it.bw_mib is not None and it.wrrd_s is not None]
    if row.reps is None or len(readable) == row.reps == len(rows):
        return []
    return [f"IOR's summary reports {row.reps} {row.operation} iteration(s), but "
            f"{len(readable)} readable per-iteration {row.operation} row(s) are in the "
            "output (missing or garbled): the figure's duration cannot be checked"]


def _short_summary_reasons(row: Any, exp: IorExpectation) -> list[str]:
    """The deadline rule on the summary's own time: Mean(s), the mean of the iterations'
    total times (open + I/O + close), under the deadline means an iteration ended early,
    whatever the per-iteration rows say or lack."""
    if row.mean_s is None or row.mean_s >= exp.deadline_s:
        return []
    return [f"{exp.operation} summary Mean(s) {row.mean_s:g} is shorter than the "
            f"{exp.deadline_s} s deadline: the phase ended on its data size, not on the "
            "deadline"]


def _short_run_reasons(run: IorRun, exp: IorExpectation) -> list[str]:
    reasons = []
    for it in run.results:
        if it.access != exp.operation or it.wrrd_s is None or it.wrrd_s >= exp.deadline_s:
            continue
        moved_mib = (it.bw_mib or 0) * it.wrrd_s
        needed_mib = (it.bw_mib or 0) * exp.deadline_s
        moved = (f"{it.bytes_moved:,} B" if it.bytes_moved is not None and it.bytes_moved < MIB
                 else _amount(moved_mib))
        text = (f"{exp.operation} iteration {it.iteration} ran {it.wrrd_s:g} s of the "
                f"{exp.deadline_s} s deadline: ")
        if exp.operation == "read":
            text += (f"the dataset ({moved}) was exhausted, so this is not a "
                     f"sustained {exp.deadline_s} s read. At {it.bw_mib:g} MiB/s it needs "
                     f"at least {_amount(needed_mib)}")
            if exp.generation_deadline_s:
                longer = -(-exp.generation_deadline_s * exp.deadline_s // it.wrrd_s)
                text += (f": raise generation_deadline_s from {exp.generation_deadline_s} "
                         f"to at least {longer:.0f}, and segments if the generation ends on "
                         "its size")
        else:
            text += (f"the data ran out first ({moved}); raise segments so that "
                     f"at least {_amount(needed_mib)} fit")
        reasons.append(text)
    return reasons


def _amount(mib: float) -> str:
    """MiB, with the decimals a small amount needs (never "0 MiB" for 30,000 B)."""
    if mib >= 10:
        return f"{mib:.0f} MiB"
    return f"{mib * MIB:,.0f} B" if mib < 1 else f"{mib:.2f} MiB"


def _cache_reasons(moved_mib: float | None, exp: IorExpectation) -> list[str]:
    if moved_mib is None or not exp.node_memory_bytes:
        return []
    if exp.other_node and exp.separate_clients:
        return []  # read through another client than the one that wrote the data
    per_node = moved_mib * MIB / exp.nodes
    if per_node >= exp.min_cache_ratio * exp.node_memory_bytes:
        return []
    return [f"cache-suspect: buffered read of {per_node / GIB:.2f} GiB per node, less than "
            f"{exp.min_cache_ratio:g} x node memory ({exp.node_memory_bytes / GIB:.2f} GiB): "
            "the figure may measure page cache; use direct_io, a larger dataset, or (on a "
            "network file system) -C to read on another node"]


