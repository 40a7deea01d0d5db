"""The semantics check's INVALID rules and its verdict's reasons: which case failed, on
which pair of nodes.  The live check and the sign-off call the same functions."""

from __future__ import annotations

from dataclasses import dataclass

from fsaccept.benchmarks.semantics import command, parse
from fsaccept.benchmarks.semantics.parse import SemanticsRun


@dataclass(frozen=True)
class SemanticsExpectation:
    """What a run was asked to do, to compare with what the program printed."""

    tasks: int
    trials: int
    records: int
    renames: int


def expectation_from_output(run: SemanticsRun) -> SemanticsExpectation | None:
    """The expectation a re-read output is held to, from its own header."""
    if None in (run.ranks, run.trials, run.records, run.renames):
        return None
    return SemanticsExpectation(tasks=run.ranks, trials=run.trials, records=run.records,
                                renames=run.renames)


def reread_reasons(run: SemanticsRun) -> tuple[list[str], list[str]]:
    """The live check's rules a re-read output can be held to (its own header)."""
    exp = expectation_from_output(run)
    if exp is None:
        return [], ["ranks and trials: no header to read them from"]
    findings = set(run.reasons)
    return ([r for r in invalid_reasons(run, exp) if r not in findings],
            ["ranks requested: needs the node fraction and partition size"])


def invalid_reasons(run: SemanticsRun, exp: SemanticsExpectation) -> list[str]:
    """INVALID reasons; an empty list means the cases may be judged.  A case whose
    writer and reader ran on one node proves nothing about two clients."""
    reasons = list(run.reasons)
    if run.version is None:
        return reasons
    asked = (exp.tasks, exp.trials, exp.records, exp.renames)
    ran = (run.ranks, run.trials, run.records, run.renames)
    if ran != asked:
        reasons.append(f"the program ran ranks, trials, records, renames {ran}, "
                       f"{asked} asked")
    if len(set(run.nodes.values())) < len(run.nodes) or len(run.nodes) != run.ranks:
        reasons.append(f"{len(run.nodes)} rank lines on {len(set(run.nodes.values()))} nodes "
                       f"for {run.ranks} ranks: one rank per node is needed")
    same = [c for c in run.cases.values()
            if c.name in parse.PAIRED and c.writer == c.reader]
    if same:
        reasons.append(f"writer and reader on the same node {same[0].writer} "
                       f"({', '.join(c.name for c in same)}): one client answered both, "
                       "nothing crossed nodes")
    return reasons


def failures(run: SemanticsRun, p: command.SemanticsParameters) -> list[str]:
    """Each promised case that failed, with its node pair and what was seen: the FAIL's
    reasons (the figures' thresholds decide the verdict; this says where)."""
    out = []
    limits = command.thresholds(p)
    for case in run.cases.values():
        if not command.promised(p, case.name):
            continue
        if not case.supported:
            out.append(f"{case.name}: {case.pair}: not supported ({case.detail}), "
                       "and the reference promises it")
            continue
        limit = limits.get(parse.figure_of(case.name))
        if limit is None:
            continue
        if case.value > limit[0] or case.ok == "0":
            unit = "s" if case.unit == parse.SECONDS else f" {case.unit}"
            out.append(f"{case.name}: {case.pair}: {case.value:g}{unit} (at most "
                       f"{limit[0]:g}{unit}; {case.detail})")
    return out


def not_promised(run: SemanticsRun, p: command.SemanticsParameters) -> list[str]:
    """Cases the reference does not promise, with what was seen and the reference's
    words: listed as such, never as PASS."""
    out = []
    for c in run.cases.values():
        if command.promised(p, c.name):
            continue
        unit = "s" if c.unit == parse.SECONDS else f" {c.unit}"
        seen = f"{c.value:g}{unit} on {c.pair}" if c.supported else c.detail
        out.append(f"{c.name}: not promised ({p.not_promised[c.name]}); seen: {seen}")
    return out
