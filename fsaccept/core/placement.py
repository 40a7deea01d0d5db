"""Where a test runs: node counts from fractions, usable nodes, rank placement."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from fsaccept.core.units import MIB

#: Slurm node states (any of them) that make a node unusable for a benchmark.
UNUSABLE_STATES = frozenset({"DOWN", "DRAIN", "DRAINED", "DRAINING", "FAIL", "FAILING",
                             "NOT_RESPONDING", "POWERED_DOWN", "POWERING_DOWN",
                             "MAINTENANCE", "RESERVED", "INVALID_REG", "FUTURE"})


#: How a fraction of the nodes becomes a count (reference ``node_rounding``).
ROUNDING = ("up", "down")


def nodes_for_fraction(fraction: float, total_nodes: int, rounding: str = "up") -> int:
    """Nodes a test uses: the fraction of the nodes, rounded up (default), at least 1.

    90 % of 1,536 nodes is 1,383 (1,382.4 rounded up): a fraction is a floor
    on the share of the machine a test covers, never less.  ``rounding="down"``
    reproduces procedures published that way: 1,382 (and 15 % → 230).
    """
    if rounding not in ROUNDING:
        raise ValueError(f"node rounding must be one of {', '.join(ROUNDING)}, got {rounding!r}")
    if not 0 < fraction <= 1:
        raise ValueError(f"node fraction must be in (0, 1], got {fraction}")
    if total_nodes < 1:
        raise ValueError(f"the partition has no nodes (total {total_nodes})")
    # round() first: 0.9 * 10 is 9.000000000000002 in binary floating point.
    share = round(fraction * total_nodes, 9)
    return max(1, math.ceil(share) if rounding == "up" else math.floor(share))


def entry_placement(entry: Mapping[str, Any]) -> tuple[float | None, int]:
    """(the node fraction, ranks per node) a reference entry asks: its ``node_fraction``
    and its ``ranks_per_node`` (1 unless given).  The live check places its job by it, and
    the sign-off holds the run to it (a benchmark's record may name another rule:
    ``Benchmark.placement``)."""
    return entry["node_fraction"], entry.get("ranks_per_node", 1)


def nodes_asked(fraction: float | None, total_nodes: int, rounding: str = "up") -> int:
    """The nodes a test's contract asks: its node fraction of the partition's nodes
    (:func:`nodes_for_fraction`); None: one node (a program that runs on one)."""
    return 1 if fraction is None else nodes_for_fraction(fraction, total_nodes, rounding)


def is_usable(states: Iterable[str]) -> bool:
    """Whether a node in these Slurm states (e.g. {'IDLE', 'DRAIN'}) can run a job."""
    return not UNUSABLE_STATES.intersection(s.upper().rstrip("*") for s in states)


def node_memory_bytes(scontrol_line: str) -> int | None:
    """RealMemory (MiB in Slurm) of a ``scontrol show node -o`` line, in bytes."""
    match = re.search(r"\bRealMemory=(\d+)", scontrol_line)
    return int(match.group(1)) * MIB if match else None


def parse_rank_map(text: str, marker: str = "fsaccept-rank") -> dict[int, str]:
    """Rank → node from lines ``<marker> <rank> <node>`` (printed by one
    ``srun bash -c 'echo <marker> $SLURM_PROCID $SLURMD_NODENAME'``)."""
    ranks = {}
    for match in re.finditer(rf"^{re.escape(marker)} (\d+) (\S+)$", text, re.M):
        ranks[int(match.group(1))] = match.group(2)
    return ranks


def format_rank_map(ranks: dict[int, str]) -> str:
    """Compact, ordered rank map: 'n1:0-3,n2:4-7'; non-contiguous ranks are listed."""
    parts: list[str] = []
    run_node, run_start, prev = None, None, None
    for rank in sorted(ranks):
        node = ranks[rank]
        if node != run_node or prev is None or rank != prev + 1:
            if run_node is not None:
                parts.append(_run(run_node, run_start, prev))
            run_node, run_start = node, rank
        prev = rank
    if run_node is not None:
        parts.append(_run(run_node, run_start, prev))
    return ",".join(parts)


def node_of_rank(rank_map: str, rank: int) -> str | None:
    """The node of ``rank`` in a map :func:`format_rank_map` wrote ('n1:0-3,n2:4-7');
    None when the map does not place it or is not one it writes."""
    found = None
    for part in rank_map.split(",") if rank_map else []:
        match = re.fullmatch(r"(\S+):(\d{1,18})(?:-(\d{1,18}))?", part)
        if not match:
            return None
        if int(match.group(2)) <= rank <= int(match.group(3) or match.group(2)):
            found = match.group(1)
    return found


def _run(node: str | None, start: int | None, end: int | None) -> str:
    return f"{node}:{start}" if start == end else f"{node}:{start}-{end}"


def is_block_placement(ranks: dict[int, str], ranks_per_node: int) -> bool:
    """True when ranks 0..k-1 share the first node, k..2k-1 the next, and so on
    (what IOR's -C shift assumes: its shift is the rank count of node 0)."""
    order = [ranks[r] for r in sorted(ranks)]
    if not order or sorted(ranks) != list(range(len(order))) or len(order) % ranks_per_node:
        return False
    blocks = [order[i:i + ranks_per_node] for i in range(0, len(order), ranks_per_node)]
    return all(len(set(b)) == 1 for b in blocks) and len({b[0] for b in blocks}) == len(blocks)


def block_reasons(ranks: dict[int, str], ranks_per_node: int, why: str) -> list[str]:
    """The INVALID reason of ranks not placed in blocks of ``ranks_per_node`` (a rank
    missing from the map is not in its block either); ``why``: what the benchmark
    needs blocks for.  No reason without a rank map (a launcher other than srun)."""
    if ranks and not is_block_placement(ranks, ranks_per_node):
        return [f"ranks were not placed in blocks of {ranks_per_node} per node "
                f"({format_rank_map(ranks)}): {why}"]
    return []


def unreported_ranks(reported: Mapping[int, str], tasks: int,
                     job_nodes: Iterable[str] = ()) -> str:
    """Why the ranks that reported (rank → node) are not ranks 0..``tasks``-1, each once
    ("" when they are): how many reported, which are missing, and which of the job's
    nodes no rank reported from (a node that died before Slurm noticed still gets
    a job's ranks, which never start)."""
    missing = [r for r in range(tasks) if r not in reported]
    extra = sorted(r for r in reported if not 0 <= r < tasks)
    if not missing and not extra:
        return ""
    said = f"{tasks - len(missing)} of {tasks} ranks reported"
    if missing:
        said += f" (missing: {_ranges(missing)})"
    if extra:
        said += f"; ranks outside 0-{tasks - 1} reported: {_ranges(extra)}"
    silent = sorted(set(job_nodes) - set(reported.values()))
    return said + (f"; none from {', '.join(silent)}" if silent else "")


def _ranges(numbers: list[int]) -> str:
    """'0-3,6' for [0, 1, 2, 3, 6] (sorted)."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)
