"""The semantics program's command line from a reference entry (``tests.semantics``)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from fsaccept.benchmarks.semantics import parse

#: The program's file, built by the check (ReFrame's SingleSource) from
#: ``checks/semantics/src/``.
SOURCE = "fsaccept_semantics.c"
EXECUTABLE = "fsaccept_semantics"

#: Seconds beyond the cases' bounded waits before the program's own alarm ends it.
ALARM_MARGIN_S = 60
#: Bounded waits besides the visibility trials, one per case that waits: attributes' two,
#: the two locks, a killed holder's lock, rename, links' three, the root-squash reader's
#: first stat.  The program's source marks each (``bounded-wait:``);
#: tests/unit/test_semantics_waits.py counts them against this.
OTHER_WAITS = 10
#: The namespace cases are not bounded waits: the alarm allows for creating, listing
#: and removing every entry at a tenth of the rate floor (at a tenth of
#: ``UNJUDGED_RATE`` where no floor is given: a case not promised).
NAMESPACE_SLACK = 10
UNJUDGED_RATE = 100.0
#: The owner the root-squash case expects where the reference names no anonymous uid
#: (the case is then not promised: measured, never judged): nobody's usual uid.
ANON_UID = 65534


@dataclass(frozen=True)
class SemanticsParameters:
    """The semantics entry of a reference file, typed (the program's flag in brackets)."""

    name: str
    node_fraction: float
    trials: int = 20  #: [-t] visibility trials, and O_EXCL and mkdir race rounds
    records: int = 100  #: [-k] O_APPEND records per rank
    renames: int = 200  #: [-r] versions renamed over one name
    bound_s: float = 10.0  #: [-b] the longest any wait for a change may take
    max_visibility_s: float = 1.0  #: seconds a change may take to show on another node
    namespace_files: int = 1000  #: [-n] empty files in the flat directory (namespace-list)
    namespace_tree_entries: int = 500  #: [-m] entries of the tree (namespace-walk)
    #: The floors of the namespace cases' rates (entries/s), required where promised.
    min_list_rate: float | None = None
    min_walk_rate: float | None = None
    #: [-s] the anonymous uid root's files are owned by: required where root-squash is
    #: promised (the contract names it: NFS's anonuid, GlusterFS's server.anonuid).
    root_squash_uid: int | None = None
    #: [-u] the non-root uid the acl-deny case's ACL denies (no account is needed).
    acl_test_uid: int = 65534
    #: Cases the contract does not promise -> its words (or why): measured and listed
    #: as "not promised", never judged, never PASS.
    not_promised: dict[str, str] = dataclasses.field(default_factory=dict)
    ranks_per_node: int = 1  #: one rank per node: rank r and r+1 on different nodes


#: Each counted case (:data:`parse.COUNTED`) -> the entry's key of its rate floor, and
#: of its number of entries.
RATE_FLOORS = {"namespace-list": "min_list_rate", "namespace-walk": "min_walk_rate"}
SIZES = {"namespace-list": "namespace_files", "namespace-walk": "namespace_tree_entries"}
#: Each case that needs contract data where promised -> the entry's key, and what it
#: is: a promised case without it is refused at load (every promise is judged).
PROMISE_KEYS = {
    **{case: (key, f"its rate needs a floor ({parse.RATE})") for case, key in RATE_FLOORS.items()},
    "root-squash": ("root_squash_uid", "it needs the anonymous uid the contract names "
                    "(e.g. 65534)"),
}
#: Each case whose line names the uid it was asked for (:data:`parse.UID_DETAIL`) -> the
#: entry's field that gives it.
UIDS = {"root-squash": "root_squash_uid", "acl-deny": "acl_test_uid"}
#: What each :data:`UIDS` case promises, in words (the report's row), for its uid.
UID_PROMISES = {"root-squash": "root's file owned by uid {uid}",
                "acl-deny": "uid {uid} refused by the ACL (EACCES)"}


def placement(entry: dict[str, Any]) -> tuple[float | None, int]:
    """Its entry's node fraction, one rank per node: each case's writer and reader are
    two nodes (its record's ``placement``, the live check's and the sign-off's)."""
    return entry["node_fraction"], 1


def parameters(name: str, entry: dict[str, Any]) -> SemanticsParameters:
    """The typed entry (a whole number of seconds or entries/s, as YAML gives ``1``,
    made a float)."""
    floats = {f.name for f in dataclasses.fields(SemanticsParameters)
              if f.type in ("float", "float | None")}
    plain = {k: float(v) if k in floats and v is not None else v for k, v in entry.items()
             if k != "thresholds"}
    return SemanticsParameters(name=name, **plain)


def rate_floor(p: SemanticsParameters, case: str) -> float | None:
    """A counted case's rate floor (entries/s), None when the entry gives none."""
    return getattr(p, RATE_FLOORS[case])


def namespace_entries(p: SemanticsParameters, case: str) -> int:
    """The entries a counted case creates and lists."""
    return getattr(p, SIZES[case])


def asked_uid(p: SemanticsParameters, case: str) -> int:
    """The uid a :data:`UIDS` case is run with: root-squash's expected owner (``-s``,
    :data:`ANON_UID` where the entry names none), acl-deny's denied uid (``-u``)."""
    uid = getattr(p, UIDS[case])
    return ANON_UID if uid is None else uid


def promise_words(p: SemanticsParameters, case: str) -> str | None:
    """What a :data:`UIDS` case promises, in words; None for any other case."""
    words = UID_PROMISES.get(case)
    return words.format(uid=asked_uid(p, case)) if words else None


def alarm_s(p: SemanticsParameters) -> int:
    """Seconds after which the program ends itself, saying in which case: every bounded
    wait, and each namespace case's three passes (create, list, remove) at a tenth of its
    floor."""
    namespace = sum(NAMESPACE_SLACK * namespace_entries(p, c)
                    / (rate_floor(p, c) or UNJUDGED_RATE) for c in parse.COUNTED)
    return int(p.bound_s * (p.trials + OTHER_WAITS) + namespace) + ALARM_MARGIN_S


def semantics_options(p: SemanticsParameters, directory: str) -> list[str]:
    """The program's arguments (a list: the directory one element)."""
    return ["-d", directory, "-t", str(p.trials), "-k", str(p.records), "-r", str(p.renames),
            "-n", str(p.namespace_files), "-m", str(p.namespace_tree_entries),
            "-b", f"{p.bound_s:g}", "-a", str(alarm_s(p)),
            "-s", str(asked_uid(p, "root-squash")), "-u", str(asked_uid(p, "acl-deny"))]


def planned_bytes(p: SemanticsParameters, ranks: int) -> int:
    """The most data alive at once: the appended records and a few small files (the
    namespace cases' files are empty)."""
    return ranks * p.records * 64 + 64 * 1024


def deadline_s(p: SemanticsParameters) -> int:
    """Seconds the job may run: up to the program's alarm."""
    return alarm_s(p)


def entry_rules(where: str, entry: dict[str, Any]) -> list[str]:
    """What the schema cannot say: each wait's bound above the visibility threshold (a
    change that never shows must fail the threshold, not look like a pass), and a rate
    floor for each namespace case the contract promises (every promised figure is
    judged: a rate floor, root squash's anonymous uid), and an ACL test uid that
    root's files are not owned by."""
    out = []
    bound = entry.get("bound_s", SemanticsParameters.bound_s)
    limit = entry.get("max_visibility_s", SemanticsParameters.max_visibility_s)
    if isinstance(bound, (int, float)) and isinstance(limit, (int, float)) and bound <= limit:
        out.append(f"{where}.bound_s: {bound:g} s is not above max_visibility_s {limit:g} s: "
                   "a change that never shows would stop at the bound and pass")
    silent = entry.get("not_promised")
    silent = silent if isinstance(silent, dict) else {}
    for case, (key, needs) in PROMISE_KEYS.items():
        if case not in silent and key not in entry:
            out.append(f"{where}.{key}: missing: the {case} case is promised, so {needs}, "
                       f"or list {case} under not_promised")
    squash, acl = UIDS["root-squash"], UIDS["acl-deny"]
    acl_uid = entry.get(acl, SemanticsParameters.acl_test_uid)
    if "acl-deny" not in silent and entry.get(squash) is not None \
            and entry.get(squash) == acl_uid:
        out.append(f"{where}.{acl}: {acl_uid} is {squash} too: root's files are owned by "
                   "that uid where root is squashed, and a named user's ACL entry never "
                   "applies to a file's owner; name another uid")
    return out


def promised(p: SemanticsParameters, case: str) -> bool:
    return case not in p.not_promised


def thresholds(p: SemanticsParameters) -> dict[str, tuple[float, float | None, float | None, str]]:
    """The figures the entry judges -> ReFrame's (value, lower, upper, unit), for each
    case the contract promises: a delay a ceiling of ``max_visibility_s``, a violation
    count 0 whatever the file says, a case the file system may not support (user
    xattrs) a violation when it does not, and a namespace case's rate a floor (its
    ``min_*_rate``; no upper bound) and its wrong entries 0."""
    out: dict[str, tuple[float, float | None, float | None, str]] = {}
    for case, unit in parse.CASES.items():
        if not promised(p, case):
            continue
        if unit == parse.RATE:
            floor = rate_floor(p, case)
            if floor is not None:  # never None once entry_rules have passed
                out[parse.figure_of(case)] = (floor, 0, None, unit)
            out[parse.wrong_figure(case)] = (0, None, 0, parse.VIOLATIONS)
            continue
        limit = p.max_visibility_s if unit == parse.SECONDS else 0
        out[parse.figure_of(case)] = (limit, None, 0, unit)
        if case in parse.MAY_BE_UNSUPPORTED:
            out[parse.unsupported_figure(case)] = (0, None, 0, parse.VIOLATIONS)
    return out
