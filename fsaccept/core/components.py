"""The components below a file system and the bound they set.

A storage target (a GlusterFS brick, a Lustre OST, a CephFS OSD) is named by the file
system's own identity and the server that holds it (:class:`Target`).  The survey
measures each target alone, through the whole stack from a client, in rounds
(:func:`survey_plan`): in one round a node measures at most one target and a server
serves at most one, so that a target's figure is its own while different servers are
measured at once.  A thousand targets on a hundred servers take ten rounds, not a
thousand runs.

A target well below the median of its peers is slow (:func:`slow_targets`): the aggregate
hides it, the survey names it with its server.  The bound on a figure is the lowest of
what the clients, the network and the targets can move (:func:`bound`); a figure's
efficiency is the figure over its bound.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from fsaccept.core.pernode import Outlier, find_outliers

#: A target below (1 - DEFAULT_MAX_SPREAD) x the median of the targets is slow.  IBM's
#: readiness tools hold drives within 10 % of each other; through a whole file system's
#: stack a target is noisier, so the default is twice that.
DEFAULT_MAX_SPREAD = 0.2

#: The components a bound may come from, in the order a report lists them.
COMPONENTS = ("clients", "network", "targets")


@dataclass(frozen=True, order=True)
class Target:
    """One storage target: ``name`` as the file system names it (``b2``, ``OST0003``,
    ``osd.1``), ``server`` the host (and path) that serves it."""

    name: str
    server: str

    def describe(self) -> str:
        return f"{self.name} on {self.server}" if self.server else self.name


@dataclass(frozen=True)
class Step:
    """One measurement of a survey: ``node`` measures ``target`` in round ``round``."""

    round: int
    node: str
    target: Target


def survey_plan(targets: Sequence[Target], nodes: Sequence[str]) -> list[list[Step]]:
    """The survey's rounds.  In a round each node measures at most one target and each
    server serves at most one; the servers with the most targets left go first, so the
    rounds are as few as can be: the most targets of one server, or the targets over the
    nodes, whichever is more.  Nodes are taken in turn, so that each measures about as
    many targets as the others (a slow client then shows on several targets)."""
    if not nodes:
        raise ValueError("a survey needs at least one node")
    if len(set(targets)) != len(targets):
        raise ValueError("a target is listed twice")
    by_server: dict[str, list[Target]] = {}
    for t in sorted(targets):
        by_server.setdefault(t.server, []).append(t)
    # A heap of (-targets left, server): the fullest server first, ties by name.
    heap = [(-len(ts), server) for server, ts in by_server.items()]
    heapq.heapify(heap)
    left = {server: list(reversed(ts)) for server, ts in by_server.items()}
    rounds: list[list[Step]] = []
    turn = 0
    while heap:
        taken = [heapq.heappop(heap) for _ in range(min(len(nodes), len(heap)))]
        steps = []
        for count, server in taken:
            steps.append(Step(len(rounds), nodes[turn % len(nodes)], left[server].pop()))
            turn += 1
            if count + 1 < 0:
                heapq.heappush(heap, (count + 1, server))
        rounds.append(steps)
    return rounds


def network_plan(nodes: Sequence[str], endpoints: Sequence[tuple[str, int]]
                 ) -> tuple[list[list[tuple[str, str, int]]], list[tuple[str, str, int]]]:
    """The network check's rounds, each step ``(node, server, port)``: the ``alone``
    rounds, where each server takes one node at a time (so a node's figure is its own
    link's), and the ``together`` round, every node at once, each to an endpoint of its
    own.  ``endpoints`` in the order the servers take them (every server's first port,
    then every server's second...); a server's first port is the one its ``alone`` steps
    use.  ValueError when the endpoints are fewer than the nodes."""
    if not nodes:
        raise ValueError("the network check needs at least one node")
    if len(set(nodes)) != len(nodes) or len(set(endpoints)) != len(endpoints):
        raise ValueError("a node or an endpoint is listed twice")
    if len(endpoints) < len(nodes):
        raise ValueError(f"{len(endpoints)} endpoints for {len(nodes)} nodes: every node "
                         "needs one of its own to measure all at once (more ports)")
    first: dict[str, int] = {}
    for server, port in endpoints:
        first.setdefault(server, port)
    servers = list(first)
    alone = [[(node, servers[j], first[servers[j]])
              for j, node in enumerate(nodes[r:r + len(servers)])]
             for r in range(0, len(nodes), len(servers))]
    together = [(node, *endpoints[i]) for i, node in enumerate(nodes)]
    return alone, together


def fewest_rounds(targets: Sequence[Target], nodes: int) -> int:
    """No plan has fewer rounds: the most targets of one server, or ceil(targets/nodes)."""
    if not targets:
        return 0
    per_server: dict[str, int] = {}
    for t in targets:
        per_server[t.server] = per_server.get(t.server, 0) + 1
    return max(max(per_server.values()), math.ceil(len(targets) / nodes))


@dataclass(frozen=True)
class SlowTarget:
    """A target below ``(1 - max_spread)`` x the median of all targets: a slow client's
    record (``pernode.Outlier``) for its figure, and the target it names."""

    target: Target
    outlier: Outlier

    @property
    def value(self) -> float:
        return self.outlier.value

    @property
    def ratio(self) -> float:
        return self.outlier.ratio

    def describe(self, figure: str, unit: str) -> str:
        """``b2 on host (write 5.6 MiB/s, 0.03 x the median 185 MiB/s)``."""
        return self.outlier.describe(figure, unit)


def slow_targets(values: dict[Target, float], max_spread: float = DEFAULT_MAX_SPREAD
                 ) -> list[SlowTarget]:
    """The targets below ``(1 - max_spread)`` x the median target, slowest first (the
    same rule as the slow clients', ``pernode.find_outliers``).  ``max_spread`` 1 turns
    the judge off."""
    if not 0 <= max_spread <= 1:
        raise ValueError(f"max_spread must be between 0 and 1, got {max_spread}")
    by_name = {t.name: t for t in values}
    if len(by_name) != len(values):
        raise ValueError("two targets share a name")
    found = find_outliers({t.name: v for t, v in values.items()}, 1 - max_spread)
    return sorted((SlowTarget(by_name[o.node], Outlier(by_name[o.node].describe(), o.value,
                                                       o.median)) for o in found),
                  key=lambda s: (s.value, s.target))


def targets_ceiling(values: Iterable[float], factor: float = 1.0) -> float:
    """What the targets can take together: the sum of each one's figure alone, over the
    layout's factor (a replica-3 volume writes each byte three times: factor 3; an
    erasure-coded 8+2 one 10/8)."""
    if factor < 1:
        raise ValueError(f"a layout's factor is at least 1, got {factor}")
    return sum(values) / factor


@dataclass(frozen=True)
class Bound:
    """The most a figure can be: the lowest of its components' ceilings (``parts``,
    each by its name in :data:`COMPONENTS`), and which one that is."""

    value: float
    binding: str
    parts: dict[str, float] = field(default_factory=dict)

    def efficiency(self, figure: float) -> float:
        """The figure over the bound (1.0: all the hardware can do)."""
        return figure / self.value if self.value else math.inf


def bound(parts: dict[str, float | None]) -> Bound | None:
    """The bound from the components measured (``None``: not measured); None when none
    was.  A tie binds to the first in :data:`COMPONENTS`'s order."""
    unknown = set(parts) - set(COMPONENTS)
    if unknown:
        raise ValueError(f"not a component: {', '.join(sorted(unknown))}")
    known = {name: float(parts[name]) for name in COMPONENTS
             if parts.get(name) is not None}
    for name, value in known.items():
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"the {name}' ceiling is not a figure: {value}")
    if not known:
        return None
    binding = min(known, key=lambda name: (known[name], COMPONENTS.index(name)))
    return Bound(known[binding], binding, known)
