"""IOR figures per node: what each node moved before the stonewall.

IOR 4.0.0 prints, in wear-out phases (``-O stoneWallingWearOut=1``) with ``-v``, every
rank's transfers until the stonewall (``N: stonewalling pairs accessed: K``).  With the
rank map Slurm gave the job, a node's figure is the sum over its ranks of K × the transfer
size (MiB/s) or K (IOPS), over the stonewall time of the summary (``Stonewall(s)``, two
decimals; the phase line's one-decimal time otherwise).  Phases without wear-out print no
per-rank counts: there is then no per-node figure (None), and nothing is made up.

A burst (a checkpoint saved or restored, :class:`Burst`) is timed by IOR's per-rank
open-to-close times instead; a run report records its slowest and fastest rank as
:func:`rank_text` writes them.

A test's own figures (:func:`figures_of`) come from the job's output alone, by the
functions the live check reports them with: the sign-off rebuilds them from the job's
output.  So does the count of slow clients (:func:`node_figures`): IOR's per-rank counts
and the job's own rank lines (``fsaccept-rank RANK NODE``) are both in it; only the
fraction of the median comes from the reference entry.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fsaccept.benchmarks.catalogue import DatasetMargin
from fsaccept.benchmarks.ior.run import IorRun, SummaryRow
from fsaccept.core import pernode
from fsaccept.core.pernode import OUTLIER_FIGURE, Outlier, find_outliers
from fsaccept.core.units import MIB


def per_node(run: IorRun, rank_map: dict[int, str], operation: str,
             kind: str = "bandwidth") -> dict[str, float] | None:
    """Node -> MiB/s (``kind="bandwidth"``) or IOPS moved until the stonewall; None when
    IOR printed no per-rank counts, or a rank is missing from the output or the map."""
    row = run.summary_for(operation)
    if row is None or not run.rank_pairs or not rank_map:
        return None
    seconds = row.stonewall_s or next(
        (p.time_s for p in reversed(run.stonewall) if p.time_s), None)
    if not seconds or row.tasks is None or set(run.rank_pairs) != set(range(row.tasks)) \
            or not set(rank_map) >= set(run.rank_pairs):
        return None
    per_pair = (row.xfer_bytes or 0) / MIB if kind == "bandwidth" else 1.0
    if not per_pair:
        return None
    totals: dict[str, float] = {}
    for rank, pairs in run.rank_pairs.items():
        node = rank_map[rank]
        totals[node] = totals.get(node, 0.0) + pairs[-1] * per_pair  # the last phase
    return {node: total / seconds for node, total in totals.items()}


@dataclass(frozen=True)
class NodeFigures:
    """Each node's figure until the stonewall, and the slow clients among them."""

    values: dict[str, float]  #: node -> MiB/s or IOPS (:func:`per_node`)
    outliers: list[Outlier]  #: the nodes below the fraction of the median (0: none sought)


def node_figures(run: IorRun, rank_map: Mapping[int, str], operation: str, kind: str,
                 outlier_fraction: float) -> NodeFigures | None:
    """Each node's figure (:func:`per_node`) and the nodes below ``outlier_fraction`` x
    the median node (:func:`fsaccept.core.pernode.find_outliers`; 0: off); None when IOR
    printed no per-rank counts, or a rank is missing from the output or the map.  The live
    check and the sign-off both count the outliers with it."""
    values = per_node(run, dict(rank_map), operation, kind)
    if values is None:
        return None
    return NodeFigures(values, find_outliers(values, outlier_fraction))


def unit(kind: str) -> str:
    """A figure kind's unit: MiB/s for a bandwidth, IOPS for the others."""
    return "MiB/s" if kind == "bandwidth" else "IOPS"


def recorded_node_fields(found: NodeFigures, name: str, kind: str) -> dict[str, Any]:
    """What the live check records of its per-node figures (``name``: its main figure):
    each node's (``per_node_figures``), the slowest nodes (``slowest_nodes``) and the
    slow clients named (``outlier_nodes_named``).  The sign-off rebuilds the same from
    the job's output and requires the run report's to be these."""
    return {"per_node_figures": pernode.by_figure(
                {node: {name: v} for node, v in found.values.items()}, [name]),
            "slowest_nodes": pernode.slowest(found.values, unit(kind)),
            "outlier_nodes_named": "; ".join(o.describe(name, unit(kind))
                                             for o in found.outliers)}


@dataclass(frozen=True)
class Burst:
    """A fixed volume moved once by every rank (a checkpoint saved or restored), timed by
    IOR's per-rank open-to-close times: the slowest rank's is the burst's time."""

    seconds: float  #: the slowest rank's open-to-close time
    first_s: float  #: the fastest rank's
    slowest_rank: int
    fastest_rank: int
    volume_bytes: int  #: ranks × block × segments, as IOR's summary row reports them

    @property
    def bandwidth_mib_s(self) -> float:
        """The volume over the slowest rank's time (MiB/s)."""
        return self.volume_bytes / MIB / self.seconds


def rank_text(rank: int, node: str, seconds: float) -> str:
    """How a run report records a burst's slowest or fastest rank: 'rank 3 on n2: 4.21 s'
    (its time to six significant digits)."""
    return f"rank {rank} on {node}: {seconds:.6g} s"


#: :func:`rank_text`'s rank, read back.
RANK_TEXT = re.compile(r"rank (\d{1,18}) on \S+: \S+ s")


def burst(run: IorRun, operation: str) -> Burst | None:
    """The burst of ``operation`` (``write`` or ``read``); None when IOR printed no per-rank
    time for some rank of its summary, or no summary."""
    times = run.rank_times.get(operation)
    row = run.summary_for(operation)
    if not times or row is None or row.tasks is None or set(times) != set(range(row.tasks)) \
            or not (row.block_bytes and row.segments):
        return None
    slowest, fastest = max(times, key=times.__getitem__), min(times, key=times.__getitem__)
    return Burst(times[slowest], times[fastest], slowest, fastest,
                 row.tasks * row.block_bytes * row.segments)


def burst_reasons(run: IorRun, operation: str) -> list[str]:
    """Why a burst has no figure: per-rank times missing (the live check and a re-read log
    hold a run to the same rule)."""
    if run.summary_for(operation) is None or burst(run, operation) is not None:
        return []
    got = sorted(run.rank_times.get(operation, {}))
    return [f"IOR's per-rank {operation} times (saveRankPerformanceDetailsCSV) "
            + (f"cover ranks {got[0]}..{got[-1]} ({len(got)}), not every rank of its summary"
               if got else "are missing from the output") + ": no checkpoint time"]


#: The figure that counts the transfers a verified read got back wrong.
INCORRECT_TRANSFERS = "incorrect_transfers"
#: What a stonewalled test's second figure (the aggregate up to the stonewall) adds to
#: its main figure's name.
STONEWALL_SUFFIX = "_stonewall"


def figure_name(operation: str, kind: str) -> str:
    """A phase's main figure: ``write_bandwidth``, ``read_iops``."""
    return f"{operation}_{'bandwidth' if kind == 'bandwidth' else 'iops'}"


def main_figure(row: SummaryRow, kind: str) -> float:
    """IOR's own Mean figure over its iterations (``-i``): MiB/s or ops/s."""
    return row.mean_mib if kind == "bandwidth" else row.mean_ops


def stonewall_figure(row: SummaryRow) -> float | None:
    """Aggregate bandwidth up to the stonewall, before wear-out, in MiB/s; None when IOR
    printed none.  IOR prints ``Stonewall(MiB)`` as the *per-rank* mean bandwidth (mean
    data per rank / stonewall time), so the aggregate is that times the ranks."""
    if row.stonewall_mib is None or row.tasks is None:
        return None
    return row.stonewall_mib * row.tasks


def incorrect_transfers(run: IorRun) -> int:
    """The transfers a verified read (``-R``) got back wrong, as IOR counted them."""
    return run.data_errors.get("read", 0)


def figures_of(run: IorRun, operation: str, kind: str,
               burst_names: Sequence[str] = (), rank_map: Mapping[int, str] | None = None,
               outlier_fraction: float = 0.0) -> dict[str, float]:
    """The figures IOR's output gives a test of ``operation``, named as the live check
    reports them: a burst's three (``burst_names``: its time, bandwidth and first rank's
    time), else the main figure, the aggregate up to the stonewall and, with an
    ``outlier_fraction`` above 0, the count of slow clients (:func:`node_figures`, over
    ``rank_map``); and the count of transfers read back wrong.  A figure the output
    cannot give is left out."""
    out: dict[str, float] = {}
    row = run.summary_for(operation)
    if burst_names:
        found = burst(run, operation)
        if found is not None:
            time, rate, first = burst_names[:3]
            out.update({time: found.seconds, rate: found.bandwidth_mib_s,
                        first: found.first_s})
    elif row is not None:
        name = figure_name(operation, kind)
        out[name] = main_figure(row, kind)
        stonewall = stonewall_figure(row)
        if stonewall is not None:
            out[name + STONEWALL_SUFFIX] = stonewall
        nodes = (node_figures(run, rank_map or {}, operation, kind, outlier_fraction)
                 if outlier_fraction > 0 else None)
        if nodes is not None:
            out[OUTLIER_FIGURE] = len(nodes.outliers)
    if row is not None and operation == "read":
        out[INCORRECT_TRANSFERS] = incorrect_transfers(run)
    return out


def _count(value: Any) -> int | None:
    """A positive whole number as IOR prints one, else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 \
        else None


def dataset_margin(run: IorRun, operation: str, deadline_s: int | None,
                   sized_by: tuple[str, ...] = ()) -> DatasetMargin | None:
    """The dataset margin of a deadline-bound ``operation`` phase: the data it had over
    what it moves in ``deadline_s`` at its rate, for its worst iteration.

    - Had: a read's files as IOR stat()ed them (what its generation laid down), else
      the configured size, ranks x block x segments (a write's room, a dataset read
      whole).
    - Moves in the deadline: its bytes moved (exact when IOR prints them), scaled up to
      the deadline when the phase ended first (an exhausted dataset is under 1x).

    None without a deadline, or when the output gives nothing to tell it from (no row
    of the operation, nothing moved, a figure not a finite number)."""
    row = run.summary_for(operation)
    if not deadline_s or deadline_s <= 0 or row is None:
        return None
    geometry = None
    if None not in (_count(row.tasks), _count(row.block_bytes), _count(row.segments)):
        geometry = row.tasks * row.block_bytes * row.segments
    worst: DatasetMargin | None = None
    for it in run.iterations_of(row):
        if it.wrrd_s is None or it.bw_mib is None or not math.isfinite(it.wrrd_s) \
                or not math.isfinite(it.bw_mib) or it.wrrd_s <= 0 or it.bw_mib <= 0:
            continue
        moved = _count(it.bytes_moved) or it.bw_mib * MIB * it.wrrd_s
        consumed = round(moved * max(1.0, deadline_s / it.wrrd_s))
        available = (_count(it.stat_bytes) if operation == "read" else None) or geometry
        if available is None or consumed <= 0:
            continue
        found = DatasetMargin(available, consumed, deadline_s, sized_by)
        if worst is None or found.ratio < worst.ratio:
            worst = found
    return worst
