"""md-workbench's INVALID rules: what makes a parsed run's figures untrustworthy."""

from __future__ import annotations

from dataclasses import dataclass

from fsaccept.benchmarks.md_workbench.parse import MdWorkbenchRun
from fsaccept.core import versions


@dataclass(frozen=True)
class MdWorkbenchExpectation:
    """What a run was asked to do, to compare with what md-workbench reports."""

    tasks: int
    datasets: int
    precreate_per_set: int
    objects_per_set: int
    iterations: int
    stonewall_s: int = 0
    judged: tuple[str, ...] = ()  #: figures with a threshold


#: Why md-workbench's ranks must be placed in blocks, said when they were not
#: (:func:`fsaccept.core.placement.block_reasons`).
BLOCK_PLACEMENT = "-O (ranks per node) would not read each object on another node than wrote it"


def expectation_from_output(run: MdWorkbenchRun) -> MdWorkbenchExpectation | None:
    """The expectation a re-read log is held to, from its own Args line (md-workbench's
    defaults where a flag is absent); None without one.  The ranks follow from
    ``total objects`` = ranks x D x (P + I x R)."""
    o = run.options
    try:
        d, p = int(o.get("-D", 10)), int(o.get("-P", 3000))
        i, r = int(o.get("-I", 1000)), int(o.get("-R", 3))
        w = int(o.get("-w", 0))
    except ValueError:
        return None
    per_rank = d * (p + i * r)
    if not run.total_objects or not per_rank or run.total_objects % per_rank:
        return None
    return MdWorkbenchExpectation(tasks=run.total_objects // per_rank, datasets=d,
                                  precreate_per_set=p, objects_per_set=i, iterations=r,
                                  stonewall_s=w if "-W" in o else 0)


def reread_reasons(run: MdWorkbenchRun) -> tuple[list[str], list[str]]:
    """The live check's rules a re-read log can be held to (its own Args line)."""
    exp = expectation_from_output(run)
    if exp is None:
        return [], ["ranks, iterations and stonewall: no Args line to read them from"]
    findings = set(run.reasons)
    return ([r for r in invalid_reasons(run, exp) if r not in findings],
            ["ranks requested: needs the node fraction and partition size"])


def invalid_reasons(run: MdWorkbenchRun, exp: MdWorkbenchExpectation) -> list[str]:
    """INVALID reasons; an empty list means the figures may be judged."""
    reasons = list(run.reasons)
    if not run.benchmark():
        return reasons
    reasons += versions.version_reasons("ior", run.version, "metadata")
    per_rank = exp.datasets * (exp.precreate_per_set + exp.objects_per_set * exp.iterations)
    if run.total_objects is not None and run.total_objects != exp.tasks * per_rank:
        reasons.append(f"md-workbench counted {run.total_objects} objects, "
                       f"{exp.tasks * per_rank} expected of {exp.tasks} ranks: it did not run "
                       "with the ranks requested")
    if len(run.benchmark()) != exp.iterations:
        reasons.append(f"{len(run.benchmark())} benchmark iterations printed, "
                       f"{exp.iterations} asked (-R)")
    if exp.stonewall_s:
        reasons += _stonewall_reasons(run, exp)
    missing = [f for f in exp.judged if f not in run.figures()]
    if missing:
        reasons.append(f"no {', '.join(missing)} in md-workbench's output")
    return reasons


def _stonewall_reasons(run: MdWorkbenchRun, exp: MdWorkbenchExpectation) -> list[str]:
    """With a stonewall, an iteration that ended before it (its objects ran out, not its
    time): the rate does not cover the time asked for.  md-workbench prints
    ``stonewall-iter`` either way; the slowest rank's time tells."""
    reasons = []
    for n, phase in enumerate(run.benchmark()):
        if phase.time_max_s is not None and phase.time_max_s < exp.stonewall_s:
            reasons.append(
                f"benchmark iteration {n} ended before the {exp.stonewall_s} s stonewall "
                f"(the slowest rank ran {phase.time_max_s:g} s): its {exp.objects_per_set} "
                "objects per set ran out first; raise objects_per_set and "
                "precreate_per_set")
    return reasons
