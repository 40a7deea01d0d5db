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
    files: int
    tree_entries: int
    squash_uid: int | None = None  #: root-squash's expected owner (-s); None: not asked
    acl_uid: int | None = None  #: the uid acl-deny's ACL denies (-u); None: not asked


def expectation_from_output(run: SemanticsRun) -> SemanticsExpectation | None:
    """The expectation a re-read output is held to, from its own header."""
    asked = (run.ranks, run.trials, run.records, run.renames, run.files, run.tree_entries)
    if None in asked:
        return None
    return SemanticsExpectation(*asked, squash_uid=run.squash_uid, acl_uid=run.acl_uid)


def expectation(p: command.SemanticsParameters, tasks: int) -> SemanticsExpectation:
    """What the live check asked the program for, from the reference entry."""
    return SemanticsExpectation(
        tasks=tasks, trials=p.trials, records=p.records, renames=p.renames,
        files=p.namespace_files, tree_entries=p.namespace_tree_entries,
        squash_uid=command.asked_uid(p, "root-squash"), acl_uid=command.asked_uid(p, "acl-deny"))


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
    asked = (exp.tasks, exp.trials, exp.records, exp.renames, exp.files, exp.tree_entries)
    ran = (run.ranks, run.trials, run.records, run.renames, run.files, run.tree_entries)
    if ran != asked:
        reasons.append(f"the program ran ranks, trials, records, renames, files, tree "
                       f"entries {ran}, {asked} asked")
    uids = (run.squash_uid, run.acl_uid)
    if exp.squash_uid is not None and uids != (exp.squash_uid, exp.acl_uid):
        reasons.append(f"the program ran with squash uid {run.squash_uid} and ACL uid "
                       f"{run.acl_uid}, {exp.squash_uid} and {exp.acl_uid} asked")
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


def _quantity(value: float, unit: str) -> str:
    return f"{value:g}s" if unit == parse.SECONDS else f"{value:g} {unit}"


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
        if case.name in command.UIDS and case.uid != command.asked_uid(p, case.name):
            out.append(f"{case.name}: {case.pair}: run with uid {case.uid}, the reference "
                       f"names {command.asked_uid(p, case.name)} ({case.detail})")
            continue
        limit = limits.get(parse.figure_of(case.name))
        if case.unit == parse.RATE:
            floor = limit[0] if limit is not None else None
            if case.ok == "0" or (floor is not None and case.value < floor):
                at_least = f"at least {_quantity(floor, case.unit)}; " if floor is not None \
                    else ""
                out.append(f"{case.name}: {case.pair}: {case.wrong} wrong entries, "
                           f"{_quantity(case.value, case.unit)} ({at_least}{case.detail})")
            continue
        if limit is None:
            continue
        if case.value > limit[0] or case.ok == "0":
            out.append(f"{case.name}: {case.pair}: {_quantity(case.value, case.unit)} (at "
                       f"most {_quantity(limit[0], case.unit)}; {case.detail})")
    return out


def not_promised(run: SemanticsRun, p: command.SemanticsParameters) -> list[str]:
    """Cases the reference does not promise, with what was seen and the reference's
    words: listed as such, never as PASS."""
    out = []
    for c in run.cases.values():
        if command.promised(p, c.name):
            continue
        wrong = f", {c.wrong} wrong entries" if c.wrong is not None else ""
        seen = f"{_quantity(c.value, c.unit)}{wrong} on {c.pair} ({c.detail})" \
            if c.supported else c.detail
        out.append(f"{c.name}: not promised ({p.not_promised[c.name]}); seen: {seen}")
    return out
