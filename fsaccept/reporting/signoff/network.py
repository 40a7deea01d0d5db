"""The network check rebuilt from what its job kept (:func:`network_reasons`): the
program's lines from the job's own output (``network_lines`` must be them), each node's
link from its step's iperf3 report (``a<round>-<node>.json``, ``t-<node>.json``), judged
again by the live check's functions (:mod:`fsaccept.benchmarks.network.validity`) with
the verified reference's entry: its servers, ports and runtime, its limits, the figures,
each node's figure and the slow links named those the reports give.
"""

from __future__ import annotations

from typing import Any

from fsaccept.benchmarks.catalogue import TestSpec
from fsaccept.benchmarks.network import command as network_command
from fsaccept.benchmarks.network import parse as network_parse
from fsaccept.benchmarks.network import validity as network_validity
from fsaccept.reporting.case import Case
from fsaccept.reporting.signoff.common import (EvidenceMissing, RunFiles, entry_parameters,
                                               figures_agree, program_run)


def network_reasons(case: Case, spec: TestSpec, reference: Any = None,
                    files: RunFiles | None = None) -> list[str]:
    """The network check rebuilt from the job's output and its steps' iperf3 reports
    (each read once and digested by the manifest), and judged again: INVALID by its rules
    (a node not measured, a plan no network check makes, the entry's runtime and
    endpoints); its figures, each node's link and the slow links it names those the
    reports give, with the verified entry's limits."""
    rebuilt = program_run(case, files, "network_lines", "the network check",
                          network_parse.parse_network, lambda _: [],
                          network_parse.program_lines)
    if isinstance(rebuilt, list):
        return rebuilt
    job, run = rebuilt
    params, unreadable = entry_parameters(spec, reference, network_command.parameters)
    if unreadable:
        return [unreadable]
    missing: list[str] = []

    def report(name: str) -> str | None:
        try:
            return files.text(case, name, "a node's iperf3 report")[0]
        except EvidenceMissing as err:
            missing.append(str(err))
            return None

    out = [f"its output ({job.path}): {r}"
           for r in network_validity.invalid_reasons(run, report, params)]
    if missing or out:
        return missing + out
    if params is None:  # no verified entry: the limits are the defaults'
        params = network_command.parameters(spec.key, {})
    alone = network_validity.measured(run, report)[0]
    together = network_validity.measured(run, report, network_parse.TOGETHER)[0]
    read = network_validity.measured(run, report, network_parse.TOGETHER_READ)[0]
    rebuilt = network_validity.figures(alone, together, params, read)
    out += figures_agree(case, network_command.FIGURES, rebuilt, "iperf3 reports")
    recorded = {f.name for f in case.figures if f.value is not None}
    out += [f"{name} is not recorded, but its iperf3 reports give {value}"
            for name, value in rebuilt.items() if name not in recorded]
    kept = case.get("link_figures")
    if not isinstance(kept, dict) or set(kept) != set(alone) or any(
            isinstance(kept[k], bool) or not isinstance(kept[k], (int, float))
            or abs(kept[k] - link.mib_s) > 1e-9 * max(1.0, link.mib_s)
            for k, link in alone.items()):
        out.append("link_figures are not each node's figure its iperf3 report gives")
    servers = network_validity.servers_of(run)
    if case.get("link_servers") != servers:
        out.append("link_servers are not each node's server its output gives")
    if case.get("link_rtt_ms") != {n: link.rtt_ms for n, link in alone.items()} or \
            case.get("link_retransmits") != {n: link.retransmits for n, link in alone.items()}:
        out.append("link_rtt_ms or link_retransmits are not each node's its iperf3 report "
                   "gives")
    if case.get("max_spread") != params.max_spread:
        out.append(f"max_spread is recorded as {case.get('max_spread')}, but the reference "
                   f"file's tests.{spec.key} says {params.max_spread}")
    named = "; ".join(network_validity.failures(alone, servers, params))
    if (case.get("slow_links_named") or "") != named:
        out.append(f"the slow links are recorded as {case.get('slow_links_named')!r}, "
                   f"but its iperf3 reports name {named or 'none'!r}")
    return out
