"""A noisy neighbour: a latency-sensitive victim measured alone, then beside an aggressor,
in one job (issue 39 §2).

One job, its nodes in two groups.  The **victim** nodes run 4 KiB random reads at queue
depth 1 (what an interactive user feels), first alone, then while the **aggressor** nodes
write as fast as they can.  This module holds the record the live check keeps and the
sign-off re-judges, and the judges both call:

* :func:`judge_overlap`: the aggressor covered at least ``min_overlap`` (90 %) of each
  victim node's run under load, and did not run during its run alone; otherwise the test
  is INVALID ("did not overlap"): a slowdown measured without the load is no slowdown.
* :func:`judge_load`: the aggressor did I/O (a bandwidth that is finite and above 0 on
  every aggressor node); otherwise INVALID.
* :func:`judge_slowdown`: each victim node's p99 latency under load over its p99 alone,
  at most ``max_p99_ratio``; FAIL naming the nodes above it.  A p99 that is 0, NaN,
  infinite or negative, or a percentile of fewer than :data:`MIN_SAMPLES` completions,
  is INVALID, never judged.

The overlap is proven from the steps' own clocks, never from Slurm's accounting (1 s
resolution): each span is a start and an end in seconds since the Unix epoch, from fio's
own JSON (``job_start`` and the direction's ``runtime``: the time fio measured) or from
the step's markers (:func:`parse_steps`: ``date +%s.%N`` before and after the command).
In the lab every node shares the host's clock; at a site the nodes' clocks are kept by
NTP, within a few milliseconds on a cluster's network: :data:`CLOCK_SLACK_S` absorbs it.

The aggressor's load is the time **every** aggressor node was running (the latest start
to the earliest end): a node that ended early took its share of the load with it.

Verdict: INVALID when a judgement is (a FAIL of a run that did not overlap proves
nothing), else FAIL when one FAILs, else PASS.

Pure: no ReFrame, no file.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

PASS, FAIL, INVALID = "PASS", "FAIL", "INVALID"

#: The least share of a victim's run under load the aggressor must cover (issue 39: 90 %).
DEFAULT_MIN_OVERLAP = 0.9
#: Seconds two nodes' clocks may differ (NTP on a cluster's network: milliseconds); the
#: victim's run alone may touch the aggressor's by this much and still be alone.
CLOCK_SLACK_S = 0.1
#: Completions a p99 needs to be a percentile (below 100, fio's p99 is the maximum).
MIN_SAMPLES = 100
#: Nodes named in one reason, at most.
NAMED = 5
#: The step markers' roles (:func:`parse_steps`).
VICTIM_ALONE, VICTIM_LOADED, AGGRESSOR = "victim-alone", "victim-loaded", "aggressor"
ROLES = (VICTIM_ALONE, VICTIM_LOADED, AGGRESSOR)
#: The marker a step prints before and after its command, on each node.
STEP_MARK = "FSACCEPT_STEP"
#: The record as a file of its test's output directory (the check writes it, ReFrame
#: copies it there, the manifest digests it): what the sign-off judges again, never the
#: run report's field.
RECORD_FILE = "interference-record.json"


class EvidenceError(ValueError):
    """An interference record that is not one; the message names the key."""


@dataclass(frozen=True)
class Settings:
    """The reference entry's limits."""

    max_p99_ratio: float
    min_overlap: float = DEFAULT_MIN_OVERLAP


@dataclass(frozen=True)
class Span:
    """A run in the steps' clock: seconds since the Unix epoch, and where they come from
    (``fio job_start+runtime``, ``step markers``)."""

    start_s: float
    end_s: float
    source: str = ""

    @property
    def duration_s(self) -> float:
        return self.end_s - self.start_s

    @property
    def sane(self) -> bool:
        """Finite, after 1970, and ending after it starts."""
        return (_number(self.start_s) and _number(self.end_s) and self.start_s > 0
                and self.end_s > self.start_s)

    def to_list(self) -> list[Any]:
        return [_json_number(self.start_s), _json_number(self.end_s), self.source]


def overlap_s(a: Span, b: Span) -> float:
    """Seconds two spans share (0 when disjoint)."""
    return max(0.0, min(a.end_s, b.end_s) - max(a.start_s, b.start_s))


def common_span(spans: Sequence[Span]) -> Span | None:
    """The time every span covers (the latest start to the earliest end); None when
    there is none."""
    if not spans:
        return None
    start, end = max(s.start_s for s in spans), min(s.end_s for s in spans)
    return Span(start, end, "all aggressor nodes") if end > start else None


def covered_fraction(victim: Span, load: Span | None) -> float:
    """The share of ``victim`` that ``load`` covers, 0 to 1."""
    if load is None:
        return 0.0
    return overlap_s(victim, load) / victim.duration_s


# --------------------------------------------------------------------------- step markers


class StepsError(ValueError):
    """Step markers that are not ones; the message names the line."""


_MARK = re.compile(rf"^{STEP_MARK} (?P<role>\S+) (?P<node>\S+) (?P<what>start|end) "
                   r"(?P<t>[0-9]{1,12}(?:\.[0-9]{1,9})?)(?: exit (?P<rc>-?[0-9]{1,4}))?$")


def parse_steps(text: str, where: str = "steps") -> dict[tuple[str, str], Span]:
    """(role, node) -> its span, from the markers each step printed around its command::

        FSACCEPT_STEP victim-loaded n3 start 1795768040.036611094
        FSACCEPT_STEP victim-loaded n3 end 1795768045.661973997 exit 0

    Other lines are skipped (the job's output holds them).  StepsError, naming the line,
    for a marker that is malformed, of an unknown role, started twice, ended before it
    started or without a start, or a start never ended (a step killed before its end)."""
    starts: dict[tuple[str, str], tuple[float, int]] = {}
    out: dict[tuple[str, str], Span] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.startswith(STEP_MARK):
            continue
        m = _MARK.match(line.rstrip())
        if not m:
            raise StepsError(f"{where}: line {lineno}: {line[:80]!r} is not a step marker "
                             f"({STEP_MARK} ROLE NODE start|end SECONDS[ exit N])")
        role, node, t = m.group("role"), m.group("node"), float(m.group("t"))
        if role not in ROLES:
            raise StepsError(f"{where}: line {lineno}: role {role[:40]!r} is not one of "
                             f"{', '.join(ROLES)}")
        key = (role, node)
        if m.group("what") == "start":
            if key in starts or key in out:
                raise StepsError(f"{where}: line {lineno}: {role} on {node} starts twice")
            starts[key] = (t, lineno)
            continue
        if key not in starts:
            raise StepsError(f"{where}: line {lineno}: {role} on {node} ends without a start")
        start, _ = starts.pop(key)
        if t < start:
            raise StepsError(f"{where}: line {lineno}: {role} on {node} ends at {t:.3f}, "
                             f"before its start at {start:.3f}")
        if m.group("rc") not in (None, "0"):
            raise StepsError(f"{where}: line {lineno}: {role} on {node} ended with exit "
                             f"{m.group('rc')}")
        out[key] = Span(start, t, "step markers")
    if starts:
        (role, node), (_, lineno) = next(iter(starts.items()))
        raise StepsError(f"{where}: line {lineno}: {role} on {node} started and never "
                         "ended (the step was killed, or its output cut short)")
    return out


# --------------------------------------------------------------------------- the record


@dataclass(frozen=True)
class Victim:
    """One victim node: its p99 completion latency alone and under load (us), the
    completions each is a percentile of, and the two runs' spans."""

    node: str
    p99_alone_us: float
    p99_loaded_us: float
    samples_alone: int
    samples_loaded: int
    alone: Span
    loaded: Span

    @property
    def ratio(self) -> float:
        """p99 under load over p99 alone (NaN when either is no latency)."""
        if not (_positive(self.p99_alone_us) and _positive(self.p99_loaded_us)):
            return math.nan
        return self.p99_loaded_us / self.p99_alone_us


@dataclass(frozen=True)
class Aggressor:
    """One aggressor node: its bandwidth over its run (MiB/s), over the victims' run
    under load when its interval log gave it (None: not measured), and its span."""

    node: str
    bandwidth_mib_s: float
    span: Span
    shared_mib_s: float | None = None


@dataclass
class Evidence:
    """What an interference test keeps: small (a few hundred bytes a node)."""

    settings: Settings
    victims: list[Victim]
    aggressors: list[Aggressor]

    VERSION = 1

    def load(self) -> Span | None:
        """The time every aggressor node was running."""
        return common_span([a.span for a in self.aggressors])

    def to_dict(self) -> dict[str, Any]:
        return {"version": self.VERSION,
                "settings": {"max_p99_ratio": self.settings.max_p99_ratio,
                             "min_overlap": self.settings.min_overlap},
                "victims": [{"node": v.node, "p99_alone_us": _json_number(v.p99_alone_us),
                             "p99_loaded_us": _json_number(v.p99_loaded_us),
                             "samples_alone": v.samples_alone,
                             "samples_loaded": v.samples_loaded,
                             "alone": v.alone.to_list(), "loaded": v.loaded.to_list()}
                            for v in self.victims],
                "aggressors": [{"node": a.node,
                                "bandwidth_mib_s": _json_number(a.bandwidth_mib_s),
                                "shared_mib_s": None if a.shared_mib_s is None
                                else _json_number(a.shared_mib_s),
                                "span": a.span.to_list()} for a in self.aggressors]}

    @classmethod
    def from_dict(cls, data: Any) -> "Evidence":
        """EvidenceError, naming the key, for what :meth:`to_dict` did not make.  A
        number that is none a run can have is kept (NaN): the judges make it INVALID."""
        if not isinstance(data, dict) or data.get("version") != cls.VERSION:
            raise EvidenceError(f"interference: not an interference record of version "
                                f"{cls.VERSION}")
        st = data.get("settings")
        if not isinstance(st, dict):
            raise EvidenceError("interference.settings: missing or not an object")
        ratio, overlap = st.get("max_p99_ratio"), st.get("min_overlap")
        if not (_number(ratio) and ratio >= 1):
            raise EvidenceError(f"interference.settings.max_p99_ratio: {ratio!r} is not a "
                                "ratio of at least 1")
        if not (_number(overlap) and DEFAULT_MIN_OVERLAP <= overlap <= 1):
            raise EvidenceError(f"interference.settings.min_overlap: {overlap!r} is not "
                                f"{DEFAULT_MIN_OVERLAP} to 1")
        victims = [_victim(x, f"interference.victims[{i}]")
                   for i, x in enumerate(_list(data, "victims"))]
        aggressors = [_aggressor(x, f"interference.aggressors[{i}]")
                      for i, x in enumerate(_list(data, "aggressors"))]
        return cls(Settings(float(ratio), float(overlap)), victims, aggressors)


def _list(data: dict[str, Any], key: str) -> list[Any]:
    v = data.get(key)
    if not isinstance(v, list):
        raise EvidenceError(f"interference.{key}: missing or not a list")
    return v


def _span(v: Any, where: str) -> Span:
    if not (isinstance(v, list) and len(v) == 3 and isinstance(v[2], str)):
        raise EvidenceError(f"{where}: not [start_s, end_s, source]")
    return Span(_time(v[0]), _time(v[1]), v[2])


def _node(x: Any, where: str) -> str:
    if not isinstance(x, dict) or not isinstance(x.get("node"), str) or not x["node"]:
        raise EvidenceError(f"{where}.node: missing or not a node's name")
    return x["node"]


def _count(x: dict[str, Any], key: str, where: str) -> int:
    v = x.get(key)
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise EvidenceError(f"{where}.{key}: {v!r} is not a count")
    return v


def _victim(x: Any, where: str) -> Victim:
    node = _node(x, where)
    return Victim(node, _time(x.get("p99_alone_us")), _time(x.get("p99_loaded_us")),
                  _count(x, "samples_alone", where), _count(x, "samples_loaded", where),
                  _span(x.get("alone"), f"{where}.alone"),
                  _span(x.get("loaded"), f"{where}.loaded"))


def _aggressor(x: Any, where: str) -> Aggressor:
    node = _node(x, where)
    shared = x.get("shared_mib_s")
    return Aggressor(node, _time(x.get("bandwidth_mib_s")), _span(x.get("span"),
                     f"{where}.span"), None if shared is None else _time(shared))


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _positive(v: Any) -> bool:
    return _number(v) and v > 0


def _time(v: Any) -> float:
    """A number as recorded (NaN for what is none: judged INVALID, not refused)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return math.nan
    return float(v)


def _json_number(v: float) -> float | None:
    return float(v) if math.isfinite(v) else None


# --------------------------------------------------------------------------- judges


@dataclass(frozen=True)
class Judgement:
    what: str  # "overlap", "load", "slowdown"
    verdict: str
    reasons: tuple[str, ...] = ()
    #: The judged quantity (the least covered share, the aggressors' bandwidth, the
    #: worst ratio); None: none.
    value: float | None = None
    limit: float | None = None
    #: Nodes the judgement names.
    named: tuple[str, ...] = ()


def judge_overlap(evidence: Evidence) -> Judgement:
    """The aggressor ran through at least ``min_overlap`` of each victim node's run under
    load (every aggressor node at once), and not during its run alone."""
    need = evidence.settings.min_overlap
    if not evidence.victims or not evidence.aggressors:
        return Judgement("overlap", INVALID, (
            f"{len(evidence.victims)} victim and {len(evidence.aggressors)} aggressor "
            "node(s): an interference test needs both",), limit=need)
    bad = [f"{who} on {node}: {span.start_s!r} to {span.end_s!r} is no run's span"
           for who, node, span in
           [("the aggressor", a.node, a.span) for a in evidence.aggressors]
           + [(f"the victim {w}", v.node, s) for v in evidence.victims
              for w, s in (("alone", v.alone), ("under load", v.loaded))]
           if not span.sane]
    if bad:
        return Judgement("overlap", INVALID, tuple(bad[:NAMED]), limit=need)
    load = evidence.load()
    reasons, named = [], []
    shares = {}
    for v in evidence.victims:
        share = shares[v.node] = covered_fraction(v.loaded, load)
        if share < need:
            named.append(v.node)
            reasons.append(
                f"did not overlap: every aggressor node ran through {share:.0%} of "
                f"{v.node}'s {v.loaded.duration_s:.1f} s under load (at least {need:.0%} "
                "required)" + ("" if load is not None else
                               ": the aggressor nodes never all ran at once"))
        alone = max(overlap_s(v.alone, a.span) for a in evidence.aggressors)
        if alone > CLOCK_SLACK_S:
            named.append(v.node)
            reasons.append(f"not alone: {v.node}'s run alone shared {alone:.1f} s with the "
                           f"aggressor (more than the clocks' {CLOCK_SLACK_S:g} s)")
    least = min(shares.values())
    if reasons:
        return Judgement("overlap", INVALID, tuple(reasons[:NAMED]) + (
            (f"and {len(reasons) - NAMED:,} more",) if len(reasons) > NAMED else ()),
            least, need, tuple(dict.fromkeys(named)))
    return Judgement("overlap", PASS, (), least, need)


def judge_load(evidence: Evidence) -> Judgement:
    """Every aggressor node did I/O: its bandwidth finite and above 0 (and its shared
    bandwidth, when measured, finite and at least 0)."""
    bad = [a for a in evidence.aggressors
           if not _positive(a.bandwidth_mib_s)
           or (a.shared_mib_s is not None and not (_number(a.shared_mib_s)
                                                   and a.shared_mib_s >= 0))]
    if not evidence.aggressors:
        return Judgement("load", INVALID, ("no aggressor node: no load",))
    if bad:
        return Judgement("load", INVALID, tuple(
            f"{a.node}: the aggressor's bandwidth {a.bandwidth_mib_s!r} MiB/s (shared "
            f"{a.shared_mib_s!r}) is no load" for a in bad[:NAMED]),
            named=tuple(a.node for a in bad[:NAMED]))
    return Judgement("load", PASS, (), aggressor_bandwidth(evidence))


def aggressor_bandwidth(evidence: Evidence) -> float:
    """The aggressors' bandwidth while they shared the file system with the victims
    (MiB/s, summed over nodes): each node's over the victims' run when measured, else
    over its own run."""
    return math.fsum(a.shared_mib_s if a.shared_mib_s is not None else a.bandwidth_mib_s
                     for a in evidence.aggressors)


def judge_slowdown(evidence: Evidence) -> Judgement:
    """Each victim node's p99 under load over its p99 alone at most ``max_p99_ratio``."""
    limit = evidence.settings.max_p99_ratio
    if not evidence.victims:
        return Judgement("slowdown", INVALID, ("no victim node: nothing measured",),
                         limit=limit)
    bad: list[tuple[str, str]] = []
    for v in evidence.victims:
        for what, p99, n in (("alone", v.p99_alone_us, v.samples_alone),
                             ("under load", v.p99_loaded_us, v.samples_loaded)):
            if not _positive(p99):
                bad.append((v.node, f"{v.node}: its p99 {what} is {p99!r} us: no latency "
                            "is"))
            elif n < MIN_SAMPLES:
                bad.append((v.node, f"{v.node}: its p99 {what} is of {n:,} reads: a p99 "
                            f"needs at least {MIN_SAMPLES}"))
    if bad:
        return Judgement("slowdown", INVALID, tuple(r for _, r in bad[:NAMED]),
                         limit=limit, named=tuple(dict.fromkeys(n for n, _ in bad))[:NAMED])
    ratios = {v.node: v.ratio for v in evidence.victims}
    worst = max(ratios.values())
    over = sorted((v for v in evidence.victims if v.ratio > limit), key=lambda v: -v.ratio)
    if not over:
        return Judgement("slowdown", PASS, (), worst, limit)
    reasons = tuple(f"{v.node}: p99 {v.p99_alone_us:.4g} us alone, {v.p99_loaded_us:.4g} us "
                    f"beside the aggressor: x{v.ratio:.3g} (more than x{limit:g})"
                    for v in over[:NAMED])
    if len(over) > NAMED:
        reasons += (f"and {len(over) - NAMED:,} more node(s)",)
    return Judgement("slowdown", FAIL, reasons, worst, limit,
                     tuple(v.node for v in over[:NAMED]))


def judge(evidence: Evidence) -> list[Judgement]:
    """Every judgement of an interference test: overlap, load, slowdown."""
    return [judge_overlap(evidence), judge_load(evidence), judge_slowdown(evidence)]


def verdict(judgements: Iterable[Judgement]) -> str:
    """INVALID when one is (or there are none); else FAIL when one FAILs; else PASS."""
    verdicts = {j.verdict for j in judgements}
    return INVALID if INVALID in verdicts or not verdicts else \
        FAIL if FAIL in verdicts else PASS
