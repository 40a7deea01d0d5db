"""The network check, declared once: its record and its catalogue of tests
(``checks/components/network.py``): iperf3 from each client node to the file system's
servers, each node alone and all at once; a slow link is named with its node and server
(docs/user/components.md)."""

from __future__ import annotations

from fsaccept.benchmarks.catalogue import ACCEPTANCE, Benchmark, TestSpec
from fsaccept.benchmarks.network import command, parse

KEY = "network_survey"

TESTS = (
    TestSpec(check="NetworkSurvey", role=ACCEPTANCE, key=KEY, benchmark="network",
             descr="iperf3 from each client node to the file system's servers, each "
                   "node alone and all at once; a node below the spread of the median, "
                   "or the entry's least bandwidth, is a slow link, named",
             tags=("components",), figures=tuple(command.FIGURES),
             schema="network.schema.json",
             named_by={command.SLOW: "slow_links_named"},
             # To the servers and from them: what the nodes can send (a write) and
             # receive (a read).
             component="network", ceiling_kinds=("write", "read"),
             # iperf3 sends over the network, not to the file system.
             reduction_matters=False),
)

BENCHMARK = Benchmark(
    # fsaccept's own program (Python, run with the harness's interpreter), iperf3 per node.
    name="network", binary="fsaccept.suite.network", spack_package="",
    version_name="network", figure_kinds=("bandwidth",), parser=parse.parse_network,
    tests=TESTS, built_by_check=True, placement=command.placement,
    entry_rules=command.entry_rules,
    # Opt-in: only a reference file with tests.network_survey loads it.
    checks_dir="components")
