"""IOR figures per node: what each node moved before the stonewall.

IOR 4.0.0 prints, in wear-out phases (``-O stoneWallingWearOut=1``) with ``-v``, every
rank's transfers until the stonewall (``N: stonewalling pairs accessed: K``).  With the
rank map Slurm gave the job, a node's figure is the sum over its ranks of K × the transfer
size (MiB/s) or K (IOPS), over the stonewall time of the summary (``Stonewall(s)``, two
decimals; the phase line's one-decimal time otherwise).  Phases without wear-out print no
per-rank counts: there is then no per-node figure (None), and nothing is made up.
"""

from __future__ import annotations

from fsaccept.benchmarks.ior.run import IorRun
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
