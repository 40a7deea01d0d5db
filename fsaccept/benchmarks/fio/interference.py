"""An interference test's record from fio's reports
(:mod:`fsaccept.benchmarks.fio.interference_judge`).

Each victim node leaves two fio JSON reports (alone, under load), each aggressor node
one, and optionally its bandwidth log.  From fio's own numbers:

* a victim's p99: ``jobs[0].read.clat_ns.percentile["99.000000"]`` / 1000 (us), the
  completion latency fio measured, of ``clat_ns.N`` reads;
* a run's span: ``jobs[0].job_start`` (ms since the Unix epoch, fio's job epoch: set
  after the job laid out its files, when its I/O starts; CLOCK_REALTIME unless fio's
  ``job_start_clock_id`` says otherwise, which is refused) to ``job_start`` plus the
  direction's ``runtime`` (ms, the time fio measured);
* the aggressor's bandwidth: ``jobs[0].write.bw_bytes`` / 1 MiB (its whole run), and over
  the victims' run under load from its ``--write_bw_log`` with ``--log_unix_epoch=1``
  (:func:`shared_bandwidth`).

Each report is one job (``numjobs=1``, or ``group_reporting``: one group); a report that
is not valid (:attr:`FioRun.valid`) or lacks a number is :class:`InterferenceError`,
naming the node and the key.

The steps' roles, the job's own lines about them (which node ran which step, with which
exit status; its ``fsaccept-info victims|aggressors`` lines) and the record made from the
reports (:func:`make_record`, with the steps' markers against fio's clock) are here too:
the live check (:mod:`fsaccept.rfm.interference`) and the sign-off's rebuild
(:func:`rebuilt`, from the files the check keeps) call the same functions.

Pure: parsed runs in, a record out.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from fsaccept.benchmarks.fio import command as fiocmd
from fsaccept.benchmarks.fio import figures
from fsaccept.benchmarks.fio.logs import IntervalLog, parse_log
from fsaccept.benchmarks.fio.parse import INVALID as FIO_INVALID
from fsaccept.benchmarks.fio.run import FioRun
from fsaccept.benchmarks.fio import interference_judge as interference
from fsaccept.core.joboutput import INFO_MARKER
from fsaccept.core.units import MIB

#: fio's key of the 99th percentile in ``clat_ns.percentile``.
P99 = "99.000000"
#: Where a span comes from.
FIO_CLOCK = "fio job_start+runtime"
#: The steps' roles (``fsaccept.benchmarks.fio.interference_judge``'s), in the order the
#: job starts them.
ALONE, LOADED, AGGRESSOR = (interference.VICTIM_ALONE, interference.VICTIM_LOADED,
                            interference.AGGRESSOR)
ROLES = (ALONE, AGGRESSOR, LOADED)
#: The job line saying the run under load did not run (``fsaccept-info under_load ...``).
UNDER_LOAD_INFO = "under_load"


class InterferenceError(ValueError):
    """A report that cannot give the record's numbers; the message names node and key."""


def _job(run: FioRun, where: str):
    if not run.valid:
        raise InterferenceError(f"{where}: fio's run is not valid: "
                                f"{'; '.join(run.reasons)[:300]}")
    if len(run.jobs) != 1:
        raise InterferenceError(f"{where}: {len(run.jobs)} jobs in fio's report: the "
                                "interference test runs one (group_reporting) per node")
    job = run.jobs[0]
    clock = job.options.get("job_start_clock_id", "0").strip()
    if clock != "0":
        raise InterferenceError(f"{where}: job_start_clock_id={clock}: job_start is not the "
                                "wall clock (CLOCK_REALTIME), so it cannot be set beside "
                                "the other nodes'")
    return job


def span_of(run: FioRun, direction: str, where: str) -> interference.Span:
    """The run's span in the wall clock: fio's ``job_start`` + the direction's runtime."""
    job = _job(run, where)
    start = job.raw.get("job_start")
    if isinstance(start, bool) or not isinstance(start, int) or start <= 0:
        raise InterferenceError(f"{where}: jobs[0].job_start {start!r} is not a time in ms "
                                "(fio 3.37 writes it; an older fio cannot prove the overlap)")
    runtime = job.direction(direction).runtime_ms
    return interference.Span(start / 1000.0, (start + runtime) / 1000.0, FIO_CLOCK)


def victim_p99(run: FioRun, where: str) -> tuple[float, int]:
    """(p99 read completion latency in us, the reads it is a percentile of)."""
    job = _job(run, where)
    clat = job.read.clat
    ns = clat.percentiles.get(P99) if clat is not None else None
    if isinstance(ns, bool) or not isinstance(ns, (int, float)):
        raise InterferenceError(f"{where}: jobs[0].read.clat_ns.percentile.{P99}: "
                                f"{ns!r} is not a latency (fio's percentile_list must "
                                "hold 99)")
    return ns / 1000.0, int(clat.samples)


def aggressor_bandwidth(run: FioRun, where: str) -> float:
    """The aggressor's write bandwidth over its run, MiB/s (fio's ``bw_bytes``)."""
    return _job(run, where).write.bw_bytes / MIB


def shared_bandwidth(log: IntervalLog, interval_ms: int, window: interference.Span
                     ) -> float | None:
    """The mean write bandwidth (MiB/s) over the log's windows that lie within ``window``
    (a window without a line counts 0: fio writes none when no I/O completed); None when
    no whole window fits.  ``log``: fio's bandwidth log with ``log_unix_epoch=1`` (times
    in ms since the epoch), ``log_avg_msec=interval_ms``.  A line closes the window
    ``(t - interval_ms, t]``; the grid is the first line's (fio's helper thread writes
    each a millisecond or so late)."""
    times, values = log.direction(1)
    if not len(times):
        return 0.0 if window.duration_s * 1000 >= interval_ms else None
    t = np.frombuffer(times, dtype=np.int64)
    v = np.frombuffer(values, dtype=np.int64).astype(np.float64)
    t0 = int(t[0])
    first = math.ceil((window.start_s * 1000 - t0) / interval_ms + 1)
    last = math.floor((window.end_s * 1000 - t0) / interval_ms)
    if last < first:
        return None
    k = np.rint((t - t0) / interval_ms).astype(np.int64)
    inside = (k >= first) & (k <= last)
    return float(v[inside].sum()) / (last - first + 1) / 1024.0


def evidence(settings: interference.Settings, alone: Mapping[str, FioRun],
             loaded: Mapping[str, FioRun], aggressors: Mapping[str, FioRun],
             aggressor_logs: Mapping[str, IntervalLog] | None = None,
             interval_ms: int = 1000) -> interference.Evidence:
    """The record from each node's reports (node -> parsed run); InterferenceError naming
    the node and key for one that cannot give its numbers.  With ``aggressor_logs``, each
    aggressor's bandwidth over the time every victim ran under load."""
    missing = sorted(set(alone) ^ set(loaded))
    if missing:
        raise InterferenceError(f"{_listed(missing)}: a victim node needs both reports "
                                "(alone and under load)")
    victims = []
    for node in sorted(alone):
        p_alone, n_alone = victim_p99(alone[node], f"{node} (alone)")
        p_loaded, n_loaded = victim_p99(loaded[node], f"{node} (under load)")
        victims.append(interference.Victim(
            node, p_alone, p_loaded, n_alone, n_loaded,
            span_of(alone[node], "read", f"{node} (alone)"),
            span_of(loaded[node], "read", f"{node} (under load)")))
    window = interference.common_span([v.loaded for v in victims])
    out = []
    for node in sorted(aggressors):
        where = f"{node} (aggressor)"
        shared = None
        if aggressor_logs is not None and window is not None:
            if node not in aggressor_logs:
                raise InterferenceError(f"{where}: no bandwidth log")
            shared = shared_bandwidth(aggressor_logs[node], interval_ms, window)
        out.append(interference.Aggressor(node, aggressor_bandwidth(aggressors[node], where),
                                          span_of(aggressors[node], "write", where), shared))
    return interference.Evidence(settings, victims, out)


def _listed(names: Sequence[str]) -> str:
    return ", ".join(names[:interference.NAMED]) + (
        f" and {len(names) - interference.NAMED:,} more"
        if len(names) > interference.NAMED else "")


# --------------------------------------------------------------------------- the job's record


def role_exits(stdout: str) -> dict[tuple[str, str], str]:
    """Each step's fio exit status on each node, as the node script printed it
    (``fsaccept-node NODE ROLE exit STATUS``): (role, node) -> status."""
    return {(role, node): rc for node, role, rc in
            re.findall(rf"^{fiocmd.NODE_MARKER} (\S+) (\S+) exit (\S+)$", stdout, re.M)}


def names(text: str) -> list[str]:
    """The nodes of a group as the job printed them ("n1,n2")."""
    return [n for n in text.split(",") if n]


def expected_steps(victims: Sequence[str], aggressors: Sequence[str]) -> list[tuple[str, str]]:
    """(role, node) of every step the job runs, in its order."""
    return ([(ALONE, v) for v in victims] + [(AGGRESSOR, a) for a in aggressors]
            + [(LOADED, v) for v in victims])


def figure_kinds() -> list[str]:
    """What the test's figures are, in the words of ``known_bad_versions.yaml``."""
    return sorted({fiocmd.FIGURE_KINDS[unit] for unit in
                   fiocmd.INTERFERENCE_FIGURES.values() if unit in fiocmd.FIGURE_KINDS})


def group_reasons(victims_text: str, aggressors_text: str, want: int,
                  nodes: Sequence[str]) -> list[str]:
    """The groups the job printed against the entry's ``victim_nodes`` (``want``) and the
    job's node list (``nodes``; empty: not known): the victims are its first ``want``
    nodes, the aggressors the others."""
    victims, aggressors = names(victims_text), names(aggressors_text)
    if not victims or not aggressors:
        return [f"the job named no victim or no aggressor nodes ({INFO_MARKER} victims "
                f"{victims_text!r}, aggressors {aggressors_text!r}): the test needs both"]
    out = []
    if len(victims) != want:
        out.append(f"{len(victims)} victim node(s) ({victims_text}), but victim_nodes is "
                   f"{want}")
    if nodes and victims + aggressors != list(nodes):
        out.append(f"the job's nodes are {','.join(nodes)}, but it took {victims_text} "
                   f"as its victims and {aggressors_text} as its aggressors: the victims "
                   "are the first victim_nodes nodes, the aggressors the others")
    return out


def missing_reasons(expected: Sequence[tuple[str, str]], exits: Mapping[tuple[str, str], str],
                    under_load: str | None, victims_text: str,
                    aggressors_text: str) -> list[str]:
    """A step that did not run on a node of its group, or ran on a node of the other."""
    out = []
    missing = [(r, n) for r, n in expected if (r, n) not in exits]
    if under_load:  # the run alone failed: the run under load was not started
        out.append(f"the run under load {under_load}")
        missing = [(r, n) for r, n in missing if r == ALONE]
    if missing:
        out.append(", ".join(f"{n} ({r})" for r, n in missing[:interference.NAMED])
                   + (f" and {len(missing) - interference.NAMED} more"
                      if len(missing) > interference.NAMED else "")
                   + ": no fio ran (the step did not reach the node, or it failed first)")
    stray = sorted(set(exits) - set(expected))
    if stray:
        out.append(", ".join(f"{n} ({r})" for r, n in stray[:interference.NAMED])
                   + ": a step ran on a node not of its group (victims "
                   f"{victims_text or '-'}, aggressors {aggressors_text or '-'})")
    return out


def role_reasons(found: Mapping[str, Mapping[str, list]]) -> tuple[list[str], list[str]]:
    """(INVALID reasons, notes) of each role's nodes' findings (role -> node -> findings),
    one line per kind (:func:`fsaccept.benchmarks.fio.figures.summarize_by_node`)."""
    reasons, notes = [], []
    for role in ROLES:
        per = found.get(role, {})
        reasons += [f"{role}: {r}" for r in figures.summarize_by_node(
            {n: [f for f in fs if f.severity == FIO_INVALID] for n, fs in per.items()})]
        notes += [f"{role}: {r}" for r in figures.summarize_by_node(
            {n: [f for f in fs if f.severity != FIO_INVALID] for n, fs in per.items()})]
    return reasons, notes


def aggressor_log_name(node: str) -> str:
    """The bandwidth log an aggressor node writes in the stage directory."""
    return f"{fiocmd.AGGRESSOR_LOG}{node}_bw.1.log"


def step_reasons(record: interference.Evidence, output: str) -> list[str]:
    """Each run whose span in fio's clock lies outside its step's markers (by more than
    the clocks' slack): the two clocks of one node must tell one story."""
    try:
        steps = interference.parse_steps(output, "the job's output")
    except interference.StepsError as err:
        return [f"the steps' markers cannot be read: {err}"]
    runs = ([(ALONE, v.node, v.alone) for v in record.victims]
            + [(LOADED, v.node, v.loaded) for v in record.victims]
            + [(AGGRESSOR, a.node, a.span) for a in record.aggressors])
    out = []
    slack = interference.CLOCK_SLACK_S
    for role, node, span in runs:
        marked = steps.get((role, node))
        if marked is None:
            out.append(f"{node} ({role}): its step printed no {interference.STEP_MARK} "
                       "markers")
        elif span.start_s < marked.start_s - slack or span.end_s > marked.end_s + slack:
            out.append(f"{node} ({role}): fio's clock puts its run at {span.start_s:.3f} to "
                       f"{span.end_s:.3f} s, outside its step's markers ({marked.start_s:.3f}"
                       f" to {marked.end_s:.3f} s): the node's clocks disagree")
    return out


def make_record(settings: interference.Settings, runs: Mapping[tuple[str, str], FioRun],
                logs: Mapping[str, IntervalLog], output: str
                ) -> tuple[interference.Evidence | None, list[str]]:
    """The record from each step's parsed report (``(role, node) -> run``) and each
    aggressor's bandwidth log, and the reasons the steps' markers in the job's ``output``
    give against it; (None, why) when fio's reports cannot give it."""
    def of(role: str) -> dict[str, FioRun]:
        return {node: run for (r, node), run in runs.items() if r == role}
    try:
        record = evidence(settings, of(ALONE), of(LOADED), of(AGGRESSOR), logs,
                          fiocmd.AGGRESSOR_LOG_MS)
    except InterferenceError as err:
        return None, [f"the interference record cannot be made: {err}"]
    return record, step_reasons(record, output)


def rebuilt(settings: interference.Settings, stdout: str, info: Mapping[str, str],
            read: Callable[[str, bool], str | None], target_dir: str, victim_nodes: int,
            nodes: Sequence[str]) -> tuple[interference.Evidence | None, list[str]]:
    """The record a job's kept files give, made as the live check makes it, and the
    reasons that make the test INVALID before or beside it: the groups the job printed
    (``info``: its ``fsaccept-info`` lines) against ``victim_nodes`` and the job's
    ``nodes``, every step's report judged
    (:func:`fsaccept.benchmarks.fio.figures.judge_node`), a step missing or on a node of
    the other group, each aggressor's bandwidth log, and the steps' markers against
    fio's clock (:func:`make_record`).  ``read(name, needed)``: the text of the kept file
    ``name``; None when it is not there and not ``needed`` (a step whose exit status is
    not 0 may have written none); it raises for one needed and not there."""
    victims_text, aggressors_text = info.get("victims", ""), info.get("aggressors", "")
    reasons = group_reasons(victims_text, aggressors_text, victim_nodes, nodes)
    exits = role_exits(stdout)
    memory = fiocmd.node_memory_bytes(stdout)
    expected = expected_steps(names(victims_text), names(aggressors_text))
    runs: dict[tuple[str, str], FioRun] = {}
    found: dict[str, dict[str, list]] = {role: {} for role in ROLES}
    for role, node in expected:
        if (role, node) not in exits:
            continue
        stem, ran = f"{role}-{node}", exits[(role, node)] == "0"
        report, log = read(f"fio-{stem}.json", ran), read(f"fio-{stem}.log", ran)
        judged = figures.judge_node(node, f"fio-{stem}.json", report, log or "",
                                    exits[(role, node)], memory.get(node), target_dir, [],
                                    figure_kinds())
        found[role][node] = judged.findings
        if judged.run is not None:
            runs[(role, node)] = judged.run
    reasons += role_reasons(found)[0]
    reasons += missing_reasons(expected, exits, info.get(UNDER_LOAD_INFO), victims_text,
                               aggressors_text)
    if reasons:
        return None, reasons
    logs = {}
    for node in names(aggressors_text):
        name = aggressor_log_name(node)
        try:
            logs[node] = parse_log(read(name, True) or "", name)
        except ValueError as err:
            reasons.append(f"{node} (aggressor): its bandwidth log cannot be read: {err}")
    if reasons:
        return None, reasons
    return make_record(settings, runs, logs, stdout)
