"""The network check's entry (``tests.network_survey``) typed, and what the check asks of
the program: its options, its deadline, its references."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from fsaccept.core import components

#: The figures: the slowest and the median node's link alone, all nodes at once, how
#: many links fail (must be 0), and what all nodes received at once (the read round).
NODE_MIN = "network_node_min"
NODE_MEDIAN = "network_node_median"
AGGREGATE = "network_aggregate"
SLOW = "slow_links"
READ_AGGREGATE = "network_read_aggregate"
FIGURES = {NODE_MIN: "MiB/s", NODE_MEDIAN: "MiB/s", AGGREGATE: "MiB/s", SLOW: "links",
           READ_AGGREGATE: "MiB/s"}
#: iperf3's own default port.
DEFAULT_PORT = 5201
#: Seconds allowed per round beyond its runtime (job steps start, iperf3 connects).
ROUND_MARGIN_S = 30


@dataclass(frozen=True)
class NetworkParameters:
    """The network check's entry of a reference file, typed."""

    name: str
    servers: tuple[str, ...]  #: () : the file system's servers, as its client lists them
    port: int
    ports: int
    runtime_s: int
    max_spread: float
    min_node_mib_s: float | None
    max_rtt_ms: float | None
    node_fraction: float


def parameters(name: str, entry: dict[str, Any]) -> NetworkParameters:
    def optional(key: str) -> float | None:
        return float(entry[key]) if entry.get(key) is not None else None
    return NetworkParameters(
        name=name, servers=tuple(entry.get("servers") or ()),
        port=int(entry.get("port", DEFAULT_PORT)), ports=int(entry.get("ports", 1)),
        runtime_s=int(entry.get("runtime_s", 5)),
        max_spread=float(entry.get("max_spread", components.DEFAULT_MAX_SPREAD)),
        min_node_mib_s=optional("min_node_mib_s"), max_rtt_ms=optional("max_rtt_ms"),
        node_fraction=float(entry.get("node_fraction", 1.0)))


def entry_rules(where: str, entry: dict[str, Any]) -> list[str]:
    """What the schema cannot say: the ports of each server are ports of one host."""
    port, ports = entry.get("port", DEFAULT_PORT), entry.get("ports", 1)
    if isinstance(port, int) and isinstance(ports, int) and port + ports - 1 > 65535:
        return [f"{where}.ports: {ports} ports from {port} pass 65535: not ports of one "
                "host"]
    return []


def placement(entry: dict[str, Any]) -> tuple[float | None, int]:
    """The entry's node fraction, one task per node; the program itself runs once, on
    the job's first node, and each iperf3 client is a step of the job."""
    return float(entry.get("node_fraction", 1.0)), 1


def program_options(p: NetworkParameters, directory: str, out: str) -> list[str]:
    """The program's arguments (``python -m fsaccept.suite.network``)."""
    servers = ["--servers", ",".join(p.servers)] if p.servers else []
    return ["--in-dir", directory, "--out", out, *servers, "--port", str(p.port),
            "--ports", str(p.ports), "--runtime", str(p.runtime_s)]


def deadline_s(p: NetworkParameters, nodes: int = 64, servers: int = 1) -> int:
    """Seconds the job may run: the alone rounds (nodes over servers) and the two
    together rounds (sending, then receiving), each its runtime and a margin."""
    rounds = math.ceil(nodes / max(1, servers)) + 2
    return rounds * (p.runtime_s + ROUND_MARGIN_S) + 120


def references(p: NetworkParameters) -> dict[str, tuple]:
    """No failing link (the count's limit is 0); the bandwidths are reported."""
    return {SLOW: (0, None, 0, "links")}
