"""The semantics check's INVALID rules and its verdict's reasons: which case failed, on
which pair of nodes.  The live check and the sign-off call the same functions."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from fsaccept.benchmarks.semantics import command, parse
from fsaccept.benchmarks.semantics.parse import CaseResult, SemanticsRun

#: The visibility case's detail: its trials, those whose change was never seen within
#: the bound (a failure: ``ok=0``), and the bound.
VISIBILITY_DETAIL = re.compile(
    r"^trials=(0|[1-9][0-9]{0,8}) not_seen_within_bound=(0|[1-9][0-9]{0,8}) "
    r"bound_s=(\S+)(?: |$)")
#: What a case line names where every rank took part (never a case of two ranks).
ALL = "all"


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
    reasons += consistency_reasons(run)
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


def consistency_reasons(run: SemanticsRun) -> list[str]:
    """Case lines whose fields contradict each other, the header or the rank lines: the
    program prints none, so each is INVALID, saying what was seen.  A visibility median
    above its worst trial; a trial never seen within the bound with ``ok=1`` (or none
    with ``ok=0``), or a worst trial inside the bound then; a violation count that is
    not a whole number, or that ``ok`` contradicts; and, with the header (a whole
    output, not recorded lines alone), a writer or reader that is no rank's node, and
    a detail's trials or bound that are not the header's."""
    out = []
    nodes = set(run.nodes.values()) if run.version is not None else None
    for c in run.cases.values():
        if nodes is not None:
            out += _names(c, nodes)
        if c.name == "visibility":
            out += _visibility(c, run)
        elif c.unit == parse.VIOLATIONS and c.supported:
            if c.value != math.floor(c.value):
                out.append(f"{c.name}: value={_printed(c, 'value')} is not a count of "
                           "violations")
            elif (c.ok == "1") != (c.value == 0):
                out.append(f"{c.name}: ok={c.ok} with {_printed(c, 'value')} violations: "
                           "the program prints ok=1 for none, ok=0 for any")
    return out


def _printed(c: CaseResult, key: str) -> str:
    """A field of a case line as the program printed it."""
    m = re.search(rf" {key}=(\S+)", c.text)
    return m.group(1) if m else repr(getattr(c, key))


def _names(c: CaseResult, nodes: set[str]) -> list[str]:
    out = []
    for role, name in (("writer", c.writer), ("reader", c.reader)):
        if name == ALL and c.name not in parse.PAIRED:
            continue
        if name == ALL:
            out.append(f"{c.name}: {role}={ALL}, but its {role} is one rank")
        elif name not in nodes:
            out.append(f"{c.name}: its {role} {name} is no rank's node (the rank lines "
                       f"name {', '.join(sorted(nodes)) or 'none'})")
    return out


def _visibility(c: CaseResult, run: SemanticsRun) -> list[str]:
    out = []
    if c.p50 is not None and c.p50 > c.value:
        out.append(f"visibility: its median trial p50={_printed(c, 'p50')} s is above its "
                   f"worst trial value={_printed(c, 'value')} s")
    m = VISIBILITY_DETAIL.match(c.detail)
    if m is None:
        return out + [f"visibility: its detail {c.detail[:80]!r} does not begin with "
                      "trials=N not_seen_within_bound=K bound_s=B"]
    trials, unseen, bound = int(m.group(1)), int(m.group(2)), _bound(m.group(3))
    if unseen > trials:
        out.append(f"visibility: not_seen_within_bound={unseen} of trials={trials}")
    if (unseen > 0) != (c.ok == "0"):
        out.append(f"visibility: ok={c.ok} with not_seen_within_bound={unseen}: a trial "
                   "never seen within the bound is ok=0, and ok=0 is such a trial")
    elif unseen > 0 and bound is not None and c.value <= bound:
        out.append(f"visibility: not_seen_within_bound={unseen}, but its worst trial "
                   f"value={_printed(c, 'value')} s is within bound_s={m.group(3)}")
    if run.version is not None and (trials, bound) != (run.trials, run.bound_s):
        out.append(f"visibility: its detail says trials={trials} bound_s={m.group(3)}, the "
                   f"header trials {run.trials} bound_s {run.bound_s}")
    return out


def _bound(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


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
