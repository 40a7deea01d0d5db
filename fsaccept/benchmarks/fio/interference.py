"""An interference test's record from fio's reports (:mod:`fsaccept.core.interference`).

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

Pure: parsed runs in, a record out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from fsaccept.benchmarks.fio.logs import IntervalLog
from fsaccept.benchmarks.fio.run import FioRun
from fsaccept.core import interference
from fsaccept.core.units import MIB

#: fio's key of the 99th percentile in ``clat_ns.percentile``.
P99 = "99.000000"
#: Where a span comes from.
FIO_CLOCK = "fio job_start+runtime"


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
