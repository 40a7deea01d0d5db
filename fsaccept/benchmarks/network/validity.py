"""The network check's INVALID rules, its figures and its failures.  The live check and
the sign-off call the same functions, on the program's lines and iperf3's reports parsed
from the same bytes."""

from __future__ import annotations

import statistics
from collections.abc import Callable

from fsaccept.benchmarks.network import command
from fsaccept.benchmarks.network.parse import (ALONE, FORMATS, KINDS, TOGETHER,
                                               TOGETHER_READ, Link, NetworkRun, Planned,
                                               link_figure)
from fsaccept.core import components
from fsaccept.core.formatting import format_number
from fsaccept.core.pernode import find_outliers

#: Reads a step's kept iperf3 report by its file name (None: not there).
Reports = Callable[[str], "str | None"]


def measured(run: NetworkRun, reports: Reports, kind: str = ALONE
             ) -> tuple[dict[str, Link], list[str]]:
    """Each node's link in the ``kind`` steps, from its own iperf3 report, and the steps
    not measured."""
    links, not_measured = {}, []
    for step in run.of(kind):
        link, why = link_figure(reports(step.report) if step.report else None, step.exit,
                                KINDS[kind])
        if link is None:
            not_measured.append(f"{step.node} to {step.endpoint} ({kind}): not measured "
                                f"({why})")
        else:
            links[step.node] = link
    return links, not_measured


def servers_of(run: NetworkRun) -> dict[str, str]:
    """Each node's server in its alone step."""
    return {s.node: s.server for s in run.of(ALONE)}


def kinds_of(run: NetworkRun) -> tuple[str, ...]:
    """The kinds of step its format has: format 1 has no read round."""
    return (ALONE, TOGETHER) if run.version == "1" else tuple(KINDS)


def invalid_reasons(run: NetworkRun, reports: Reports,
                    p: command.NetworkParameters | None = None) -> list[str]:
    """INVALID reasons; none: the figures may be judged.  A check that measured only part
    of the nodes judges nothing."""
    reasons = list(run.reasons)
    if run.version is None:
        return reasons
    if run.version not in FORMATS:
        reasons.append(f"network output format {run.version}, not one of "
                       f"{', '.join(FORMATS)}")
    if p is not None and run.runtime_s != p.runtime_s:
        reasons.append(f"iperf3 ran {run.runtime_s} s per step, not the entry's "
                       f"{p.runtime_s} s")
    if p is not None and p.servers:
        declared = {(h, p.port + k) for h in p.servers for k in range(p.ports)}
        used = {tuple(e.rsplit(":", 1)) for e in run.endpoints}
        if {(h, int(port)) for h, port in used} != declared:
            reasons.append(f"the program measured endpoints {','.join(run.endpoints)}, not "
                           "the entry's servers and ports")
    reasons += plan_reasons(run)
    for kind in kinds_of(run):
        reasons += measured(run, reports, kind)[1]
    reasons += [f"{node} {kind}: {link.seconds:.3g} s of intervals, fewer than 3: no "
                "steady rate (runtime_s at least 3)"
                for kind in kinds_of(run)[1:]
                for node, link in measured(run, reports, kind)[0].items()
                if link.steady_mib_s is None]
    versions = {link.version for kind in kinds_of(run)
                for link in measured(run, reports, kind)[0].values()}
    if len(versions) > 1:
        reasons.append(f"the nodes ran iperf3 {', '.join(sorted(versions))}: not one "
                       "version")
    return reasons


def plan_reasons(run: NetworkRun) -> list[str]:
    """A plan no network check makes: a node not of the job, a node missing from either
    kind of step, a server serving two nodes in one alone round, two nodes on one
    endpoint together, or an endpoint not listed."""
    out = []
    listed = set(run.endpoints)
    for s in run.steps:
        if run.nodes and s.node not in run.nodes:
            out.append(f"{s.node} was measured, not a node of the check "
                       f"({','.join(run.nodes)})")
        if s.endpoint not in listed:
            out.append(f"{s.node} sent to {s.endpoint}, not an endpoint the check lists")
    for kind in kinds_of(run):
        nodes = [s.node for s in run.of(kind)]
        if sorted(nodes) != sorted(run.nodes):
            out.append(f"the {kind} steps measured {len(nodes)} of the {len(run.nodes)} "
                       "nodes, or one twice")
    by_round: dict[int, list[Planned]] = {}
    for s in run.of(ALONE):
        by_round.setdefault(s.round, []).append(s)
    for r, steps in sorted(by_round.items()):
        if len({s.server for s in steps}) != len(steps):
            out.append(f"alone round {r} had a server take two nodes: their figures are "
                       "not each link's own")
    for kind in kinds_of(run)[1:]:
        together = [s.endpoint for s in run.of(kind)]
        if len(set(together)) != len(together):
            out.append(f"two nodes used one endpoint in the {kind} round: iperf3 serves "
                       "one at a time")
        if len({s.round for s in run.of(kind)}) > 1:
            out.append(f"the {kind} steps are in more than one round: not all at once")
    if run.version == "1" and run.of(TOGETHER_READ):
        out.append("a read round in an output of format 1")
    return out


def figures(alone: dict[str, Link], together: dict[str, Link],
            p: command.NetworkParameters, read: dict[str, Link] | None = None
            ) -> dict[str, float]:
    """The slowest and the median node alone, the aggregate together, the failing links'
    count; with the read round's links (format 2), what all nodes received at once."""
    if not alone or not together:
        return {}
    values = [link.mib_s for link in alone.values()]
    out = {command.NODE_MIN: min(values), command.NODE_MEDIAN: statistics.median(values),
           command.AGGREGATE: aggregate(together),
           command.SLOW: float(len(failing(alone, p)))}
    if read:
        out[command.READ_AGGREGATE] = aggregate(read)
    return out


def aggregate(together: dict[str, Link]) -> float:
    """What all nodes sent at once: the sum of their steady rates (each the median of its
    intervals but the edges, :class:`~fsaccept.benchmarks.network.parse.Link`)."""
    return sum(link.steady_mib_s or 0.0 for link in together.values())


def failing(alone: dict[str, Link], p: command.NetworkParameters) -> dict[str, list[str]]:
    """Each failing node's reasons: below the spread of the median, below the entry's
    least bandwidth, above its greatest round-trip time."""
    out: dict[str, list[str]] = {}
    for o in find_outliers({n: link.mib_s for n, link in alone.items()}, 1 - p.max_spread):
        out.setdefault(o.node, []).append(
            f"sent {format_number(o.value)} MiB/s, {o.ratio:.2f} x the median "
            f"{format_number(o.median)} MiB/s: below {1 - p.max_spread:.2f} x")
    for node, link in sorted(alone.items()):
        if p.min_node_mib_s is not None and link.mib_s < p.min_node_mib_s:
            out.setdefault(node, []).append(f"sent {format_number(link.mib_s)} MiB/s, below the entry's "
                                            f"{p.min_node_mib_s:g}")
        if p.max_rtt_ms is not None and (link.rtt_ms is None or link.rtt_ms > p.max_rtt_ms):
            rtt = "no round-trip time" if link.rtt_ms is None else f"{link.rtt_ms:.3g} ms"
            out.setdefault(node, []).append(f"round-trip {rtt}, above the entry's "
                                            f"{p.max_rtt_ms:g} ms")
    return out


def failures(alone: dict[str, Link], servers: dict[str, str],
             p: command.NetworkParameters) -> list[str]:
    """Each failing link, named by its node and server."""
    return [f"slow link: {node} to {servers.get(node, '?')}: {'; '.join(why)}"
            for node, why in sorted(failing(alone, p).items())]
