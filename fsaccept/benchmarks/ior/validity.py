"""Is an IOR figure valid?  The rules that turn a parsed IOR run into
INVALID reasons; an empty list means the figure may be judged PASS/FAIL.

Every reason says what was seen and what to change.
"""

from __future__ import annotations

from dataclasses import dataclass

from fsaccept.benchmarks.ior.parse import IorRun
from fsaccept.core.slurm import first_lines
from fsaccept.core.units import GIB, MIB
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


def ior_invalid_reasons(run: IorRun, exp: IorExpectation) -> list[str]:
    """INVALID reasons for the ``exp.operation`` figure of ``run``."""
    reasons = first_lines(run.reasons)
    reasons += version_reasons("ior", version_number(run.version), exp.figure_kind)
    row = run.summary_for(exp.operation)
    if row is None:
        if not run.reasons:
            reasons.append(f"no {exp.operation} figure in IOR's summary")
        return reasons
    if row.tasks is not None and row.tasks != exp.tasks:
        reasons.append(f"IOR ran {row.tasks} ranks, {exp.tasks} were requested")
    if exp.deadline_s:
        reasons += _short_run_reasons(run, exp)
    if exp.operation == "read" and not exp.direct_io:
        reasons += _cache_reasons(row.agg_mib, exp)
    return reasons


def _short_run_reasons(run: IorRun, exp: IorExpectation) -> list[str]:
    reasons = []
    for it in run.results:
        if it.access != exp.operation or it.wrrd_s is None or it.wrrd_s >= exp.deadline_s:
            continue
        moved_mib = (it.bw_mib or 0) * it.wrrd_s
        needed_mib = (it.bw_mib or 0) * exp.deadline_s
        text = (f"{exp.operation} iteration {it.iteration} ran {it.wrrd_s:g} s of the "
                f"{exp.deadline_s} s deadline: ")
        if exp.operation == "read":
            text += (f"the dataset ({moved_mib:.0f} MiB) was exhausted, so this is not a "
                     f"sustained {exp.deadline_s} s read. At {it.bw_mib:g} MiB/s it needs "
                     f"at least {needed_mib:.0f} MiB")
            if exp.generation_deadline_s:
                longer = -(-exp.generation_deadline_s * exp.deadline_s // it.wrrd_s)
                text += (f": raise generation_deadline_s from {exp.generation_deadline_s} "
                         f"to at least {longer:.0f}, and segments if the generation ends on "
                         "its size")
        else:
            text += (f"the data ran out first ({moved_mib:.0f} MiB); raise segments so that "
                     f"at least {needed_mib:.0f} MiB fit")
        reasons.append(text)
    return reasons


def _cache_reasons(moved_mib: float | None, exp: IorExpectation) -> list[str]:
    if moved_mib is None or not exp.node_memory_bytes:
        return []
    per_node = moved_mib * MIB / exp.nodes
    if per_node >= exp.min_cache_ratio * exp.node_memory_bytes:
        return []
    return [f"cache-suspect: buffered read of {per_node / GIB:.2f} GiB per node, less than "
            f"{exp.min_cache_ratio:g} x node memory ({exp.node_memory_bytes / GIB:.2f} GiB): "
            "the figure may measure page cache; use direct_io or a larger dataset"]


