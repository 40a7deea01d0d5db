"""mdtest's INVALID rules: what makes a parsed mdtest run's figures untrustworthy."""

from __future__ import annotations

import math
import shlex
from dataclasses import dataclass

from fsaccept.benchmarks.mdtest.parse import (DEFAULT_MIN_PHASE_S, FILE_FIGURES, STONEWALL_FIGURE,
                                             MdtestRun)
from fsaccept.benchmarks.mdtest.command import MdtestParameters
from fsaccept.core import versions



@dataclass(frozen=True)
class MdtestExpectation:
    """What a run was asked to do, to compare with what mdtest reports."""

    tasks: int
    nodes: int
    ranks_per_node: int
    items_per_rank: int
    judged: tuple[str, ...] = ()  #: figures with a threshold
    iterations: int = 1
    stonewall_s: int | None = None
    min_phase_s: float = DEFAULT_MIN_PHASE_S
    required: tuple[str, ...] = FILE_FIGURES


#: Why mdtest's ranks must be placed in blocks, said when they were not
#: (:func:`fsaccept.core.placement.block_reasons`).
BLOCK_PLACEMENT = "-N 1 would not move stat and read to another node"


def output_expectation(run: MdtestRun, nodes: int, ranks_per_node: int,
                       params: MdtestParameters | None = None) -> MdtestExpectation:
    """What a job's output is held to when it is judged again (the sign-off): the ranks
    mdtest says it ran (the ranks requested need the node fraction and the partition),
    on ``nodes`` nodes with ``ranks_per_node`` each; the items, iterations, stonewall,
    shortest phase and judged figures of the reference entry (``params``), else those
    the output's own command line asks."""
    if params is not None:
        return MdtestExpectation(
            tasks=run.tasks or 0, nodes=nodes, ranks_per_node=ranks_per_node,
            items_per_rank=params.items_per_rank, judged=params.thresholds,
            iterations=params.iterations, stonewall_s=params.stonewall_s,
            min_phase_s=params.min_phase_s)
    argv = shlex.split(run.command_line or "") if run.command_line else []
    stonewall = argv[argv.index("-W") + 1] if "-W" in argv[:-1] else ""
    return MdtestExpectation(
        tasks=run.tasks or 0, nodes=nodes, ranks_per_node=ranks_per_node,
        items_per_rank=(run.items_total // run.tasks) if run.items_total and run.tasks else 0,
        iterations=run.iterations or 1,
        stonewall_s=int(stonewall) if stonewall.isdigit() else None)


def invalid_reasons(run: MdtestRun, exp: MdtestExpectation) -> list[str]:
    """INVALID reasons for an acceptance run; an empty list means its figures may be
    judged. Every reason says what was seen and what to change."""
    reasons = list(run.reasons)
    if run.rate is None:  # nothing to certify: the reasons say why
        return reasons
    reasons += versions.version_reasons("mdtest", run.version_number, "metadata")
    if run.tasks is not None and run.tasks != exp.tasks:
        reasons.append(f"mdtest ran {run.tasks} ranks, {exp.tasks} were requested")
    elif run.rate.tasks is not None and run.rate.tasks != exp.tasks:
        reasons.append(f"the figures are from mdtest's SUMMARY table of {run.rate.tasks} "
                       f"tasks, {exp.tasks} were requested")
    if run.iterations is not None and run.iterations != exp.iterations:
        reasons.append(f"mdtest ran {run.iterations} iterations, {exp.iterations} were "
                       "requested")
    figures = run.figures()
    for fig in dict.fromkeys((*exp.required, *exp.judged)):
        if fig == STONEWALL_FIGURE:
            continue
        row = run.rate_row(fig)
        if row is None or not row.measured:
            printed = "printed 0.000" if row is not None else "printed no row"
            reasons.append(f"no {fig} rate: mdtest {printed} for it (the phase did not run)")
        elif fig in figures and not figures[fig] > 0:
            reasons.append(f"{fig}: mdtest printed a mean of {row.printed.get('mean')}")
    reasons += _neighbour_reasons(run, exp)
    if exp.stonewall_s:
        reasons += _stonewall_reasons(run, exp)
    reasons += _phase_time_reasons(run, exp)
    return reasons


#: ``-N``: stat and read must hit files another node created, so 2 nodes at least.
MIN_NODES = 2


def _neighbour_reasons(run: MdtestRun, exp: MdtestExpectation) -> list[str]:
    """``-N 1``: stat and read must hit files another node created."""
    if exp.nodes < MIN_NODES:
        return [f"stat and read ran on the node that created the files ({exp.nodes} node): "
                "its client cache may answer them; use a node fraction that gives at "
                "least 2 nodes"]
    if run.rank_shift is None:
        return ["mdtest printed no 'Shifting ranks by' line: -N 1 was not in effect, so "
                "stat and read may hit files of the same node"]
    if run.rank_shift != exp.ranks_per_node:
        return [f"mdtest shifted ranks by {run.rank_shift}, not by the {exp.ranks_per_node} "
                "ranks of one node: stat and read may hit files of the same node (mdtest "
                "counted the ranks on node 0 differently from Slurm's placement)"]
    return []


def _stonewall_reasons(run: MdtestRun, exp: MdtestExpectation) -> list[str]:
    if not run.stonewall:
        return [f"no stonewall figures for the create phase (-W {exp.stonewall_s}): "
                "mdtest prints them only with -v"]
    reasons = []
    for w in run.stonewall:
        if not w.hit:
            create = next((p for p in run.phases if p.iteration == w.iteration
                           and p.figure == "file_creation"), None)
            took = f" in {create.time_s:g} s" if create else ""
            reasons.append(
                f"iteration {w.iteration}: every rank created all its {exp.items_per_rank} "
                f"files{took}, before the {exp.stonewall_s} s stonewall: the create phase "
                "ended on its item count, not on time; raise items_per_rank")
        if w.time_s is None:
            reasons.append(f"iteration {w.iteration}: no 'File creation (stonewall)' time: "
                           "the create rate up to the stonewall cannot be derived")
        elif w.items is None:
            reasons.append(f"iteration {w.iteration}: the files created until the "
                           "stonewall are unknown (per-rank lines lost, no average printed)")
    return reasons


def _phase_time_reasons(run: MdtestRun, exp: MdtestExpectation) -> list[str]:
    """Every judged phase must run at least ``min_phase_s``."""
    times = run.phase_times()
    if exp.judged and run.time is None:
        return ["no 'SUMMARY time' table: the phase times are unknown (run mdtest with -P)"]
    reasons = []
    for fig in exp.judged:
        t = times.get(fig)
        if t is None or t >= exp.min_phase_s:
            continue
        what = "until the stonewall" if fig == STONEWALL_FIGURE else "phase"
        text = (f"{fig}: the {what} took {t:g} s (mean over {run.iterations} iteration(s)), "
                f"less than min_phase_s {exp.min_phase_s:g} s: too short to measure; ")
        if exp.stonewall_s and fig in ("file_creation", STONEWALL_FIGURE):
            text += f"raise stonewall_s to at least {math.ceil(exp.min_phase_s)}"
        elif exp.stonewall_s:
            grow = _at_least(exp.stonewall_s, exp.min_phase_s, t)
            text += (f"it works on the files created in the stonewall's {exp.stonewall_s} s: "
                     f"raise stonewall_s to at least {grow}")
        else:
            grow = _at_least(exp.items_per_rank, exp.min_phase_s, t)
            text += f"raise items_per_rank from {exp.items_per_rank} to at least {grow}"
        reasons.append(text)
    return reasons


def _at_least(current: int, wanted_s: float, took_s: float) -> str:
    if took_s <= 0:
        return f"{current * 100} (it took less than the 1 ms mdtest prints)"
    return str(math.ceil(current * wanted_s / took_s))
