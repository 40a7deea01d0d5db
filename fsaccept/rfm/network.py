"""The network check's ReFrame test (``checks/components/network.py``): the job holds the
entry's node fraction, one task per node; fsaccept's network program
(``python -m fsaccept.suite.network``) runs once, on the job's first node, and has each
node run iperf3 to the servers as a job step of this job (``srun -N1 -n1 --exact -w
NODE``): each node alone, then all at once sending, then all at once receiving.
iperf3's JSON of each step is kept (``a<round>-<node>.json``, ``t-<node>.json``,
``r-<node>.json``): the figures are read from them, by the live check and by the
sign-off alike (:mod:`fsaccept.benchmarks.network.validity`).  The
partition declares the feature ``iperf3`` when its nodes have it."""

from __future__ import annotations

import shlex
import sys

from reframe.core.builtins import run_after, variable
from reframe.core.exceptions import SanityError
from reframe.core.logging import getlogger

from fsaccept.benchmarks.network import command, parse, validity
from fsaccept.core.paths import REPO_ROOT
from fsaccept.rfm.ownprogram import OwnProgramTest


class NetworkTest(OwnProgramTest):
    """iperf3 from each node to the servers, alone and together; the slow link named."""

    #: The program's lines as printed: the sign-off parses and judges them again.
    network_lines = variable(str, value="", loggable=True)
    #: Each node's link alone, MiB/s (``{node: value}``), and its server.
    link_figures = variable(dict, value={}, loggable=True)
    link_servers = variable(dict, value={}, loggable=True)
    #: Each node's mean round-trip time alone, ms (None: the kernel gave none), and its
    #: sender's retransmits.
    link_rtt_ms = variable(dict, value={}, loggable=True)
    link_retransmits = variable(dict, value={}, loggable=True)
    max_spread = variable(float, value=0.0, loggable=True)
    #: The iperf3 version the nodes ran (its JSON's ``start.version``).
    iperf3_version = variable(str, value="", loggable=True)
    #: The failing links, in words ("; " between them).
    slow_links_named = variable(str, value="", loggable=True)

    #: No failing link is a measurement.
    counts = OwnProgramTest.counts | {command.SLOW}

    valid_systems = ["+iperf3"]
    FIGURES = command.FIGURES
    MAX_REPORT = parse.MAX_REPORT

    @property
    def params(self) -> command.NetworkParameters:
        return command.parameters(self.reference_key, self.entry)

    @run_after("setup")
    def set_network_command(self):
        self.max_spread = self.params.max_spread
        self.env_vars["PYTHONPATH"] = shlex.quote(str(REPO_ROOT))
        self.executable = shlex.quote(sys.executable)
        self.executable_opts = ["-m", "fsaccept.suite.network", *map(shlex.quote,
                                command.program_options(self.params, self.target_dir, "."))]
        self.keep_files = ["a*-*.json", "t-*.json", "r-*.json"]

    def deadlines_s(self) -> int:
        return command.deadline_s(self.params)

    def planned_volume(self) -> int:
        return 0  # nothing is written on the file system

    def figure_name(self) -> str:
        return command.SLOW

    def threshold_references(self) -> dict[str, tuple]:
        return command.references(self.params)

    def network_run(self) -> parse.NetworkRun:
        return self.parsed_run(parse.parse_network, lambda text: [])

    def links(self, kind: str = parse.ALONE) -> dict[str, parse.Link]:
        if not hasattr(self, "_links"):
            self._links = {k: tuple(validity.measured(self.network_run(), self.kept,
                                                      k)[0].items())
                           for k in parse.KINDS}
        return dict(self._links[kind])

    def record_run(self, run: parse.NetworkRun) -> None:
        self.job_info()
        self.record_version("network", run.version)
        self.iperf3_version = ",".join(sorted({link.version for k in parse.KINDS
                                               for link in self.links(k).values()}))
        self.network_lines = parse.program_lines(self._stdout_text())
        self.link_figures = {n: link.mib_s for n, link in sorted(self.links().items())}
        self.link_servers = validity.servers_of(run)
        self.link_rtt_ms = {n: link.rtt_ms for n, link in sorted(self.links().items())}
        self.link_retransmits = {n: link.retransmits
                                 for n, link in sorted(self.links().items())}
        named = validity.failures(self.links(), self.link_servers, self.params)
        self.slow_links_named = "; ".join(named)
        if named:
            getlogger().warning(f"fsaccept: {self.display_name}: {self.slow_links_named}")

    def benchmark_reasons(self) -> list[str]:
        return validity.invalid_reasons(self.network_run(), self.kept, self.params)

    def figure(self, name: str) -> float:
        value = validity.figures(self.links(), self.links(parse.TOGETHER), self.params,
                                 self.links(parse.TOGETHER_READ)).get(name)
        if value is None:  # sanity has already made this INVALID
            raise SanityError(f"INVALID: the network check measured no link ({name})")
        return value
