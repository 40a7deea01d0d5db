"""The sign-off's "Components" section: each storage target the survey measured, one row
each, with its server, the node and round that measured it, its figure and its share of
the median target; the slow ones FAIL, named.  Then each node's link the network check
measured, one row each, with its server, its figure alone, its share of the median node,
its round-trip time and retransmits; and a row of all nodes at once.

The rows come from the survey's recorded lines (``survey_lines``: the plan) and each
target's recorded figure (``target_figures``).  The sign-off holds both to the job's own
output and to each target's fio report (:mod:`fsaccept.reporting.signoff.survey`): a
case whose records disagree with them is INVALID, and so is each of its rows.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from fsaccept.benchmarks.network import command as network_command
from fsaccept.benchmarks.network import parse as network_parse
from fsaccept.benchmarks.network import spec as network_spec
from fsaccept.benchmarks.survey import command as survey_command
from fsaccept.benchmarks.survey import parse as survey_parse
from fsaccept.benchmarks.survey import spec as survey_spec
from fsaccept.core import components
from fsaccept.core.formatting import format_number
from fsaccept.reporting.runreport import Test
from fsaccept.reporting.signoff.common import entry_parameters
from fsaccept.reporting.verdicts import FAIL, INVALID, PASS, spec_of_case


@dataclass(frozen=True)
class TargetRow:
    """One target of one survey test, as the section shows it."""

    test: str
    target: str
    server: str
    node: str
    round: int
    measured: str     #: "181.82 MiB/s", or "—" (not measured)
    of_median: str    #: "0.86 x", or "—"
    limit: str        #: "≥ 0.30 x": below it, the target is slow
    verdict: str


@dataclass(frozen=True)
class LinkRow:
    """One node's link of one network test (or ``all at once``), as the section shows
    it."""

    test: str
    node: str
    server: str
    measured: str     #: "1,155.3 MiB/s", or "—" (not measured)
    of_median: str    #: "0.86 x", or "—"
    rtt: str          #: "0.218 ms", or "—"
    retransmits: str
    limit: str        #: "≥ 0.20 x": below it, the link is slow
    verdict: str


@dataclass(frozen=True)
class ComponentsSection:
    """The section's two tables: the targets, the links.  Empty: no section."""

    targets: list[TargetRow]
    links: list[LinkRow]

    def __bool__(self) -> bool:
        return bool(self.targets or self.links)


def components_section(tests: list[Test], reference: Any = None) -> ComponentsSection:
    """A row per target of each survey test and per node of each network test that
    recorded its plan (none: no section)."""
    targets: list[TargetRow] = []
    links: list[LinkRow] = []
    for t in tests:
        spec = spec_of_case(t.case)
        if spec is not None and spec.benchmark == survey_spec.BENCHMARK.name:
            targets += survey_rows(t)
        elif spec is not None and spec.benchmark == network_spec.BENCHMARK.name:
            links += network_rows(t, reference)
    return ComponentsSection(targets, links)


def _number(x: Any) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def network_rows(t: Test, reference: Any = None) -> list[LinkRow]:
    """The rows of one network test: its recorded plan and each node's recorded figure,
    the failing ones by the names the test recorded (the sign-off holds both to the
    iperf3 reports); then its aggregate, all nodes at once.  The limits: the recorded
    spread, and the verified reference's least bandwidth and greatest round-trip."""
    text = t.case.get("network_lines")
    if not isinstance(text, str) or not text:
        return []
    run = network_parse.parse_network(text)
    kept = t.case.get("link_figures")
    kept = kept if isinstance(kept, dict) else {}
    values = {s.node: v for s in run.of(network_parse.ALONE)
              if (v := _number(kept.get(s.node))) is not None}
    spread = _number(t.case.get("max_spread"))
    spread = spread if spread is not None and 0 <= spread < 1 \
        else components.DEFAULT_MAX_SPREAD
    named = str(t.case.get("slow_links_named") or "")
    params = entry_parameters(spec_of_case(t.case), reference, network_command.parameters)[0]
    kpis = "".join([f", ≥ {format_number(params.min_node_mib_s)} MiB/s"
                    if params and params.min_node_mib_s is not None else "",
                    f", ≤ {params.max_rtt_ms:g} ms"
                    if params and params.max_rtt_ms is not None else ""])
    rtts = t.case.get("link_rtt_ms") if isinstance(t.case.get("link_rtt_ms"), dict) else {}
    retr = t.case.get("link_retransmits") \
        if isinstance(t.case.get("link_retransmits"), dict) else {}
    median = statistics.median(values.values()) if values else None
    unit = network_command.FIGURES[network_command.NODE_MEDIAN]
    rows = []
    for step in run.of(network_parse.ALONE):
        value = values.get(step.node)
        verdict = (INVALID if t.verdict == INVALID or value is None else
                   FAIL if f"slow link: {step.node} to " in named else PASS)
        rows.append(LinkRow(
            t.name, step.node, step.endpoint,
            f"{format_number(value)} {unit}" if value is not None else "—",
            f"{value / median:.2f} x" if value is not None and median else "—",
            f"{rtt:.3g} ms" if (rtt := _number(rtts.get(step.node))) is not None else "—",
            str(retr[step.node]) if isinstance(retr.get(step.node), int) else "—",
            f"≥ {1 - spread:.2f} x{kpis}", verdict))
    aggregate = next((f.value for f in t.case.figures
                      if f.name == network_command.AGGREGATE), None)
    rows.append(LinkRow(t.name, "all at once", ", ".join(run.endpoints[:4]) + (
        ", …" if len(run.endpoints) > 4 else ""),
        f"{format_number(aggregate)} {unit}" if aggregate is not None else "—", "—", "—",
        "—", "—", INVALID if t.verdict == INVALID or aggregate is None else PASS))
    return rows


def survey_rows(t: Test) -> list[TargetRow]:
    """The rows of one survey test: its recorded plan, each target's recorded figure, the
    slow ones by the spread the test recorded (the sign-off holds it to the reference)."""
    text = t.case.get("survey_lines")
    if not isinstance(text, str) or not text:
        return []
    run = survey_parse.parse_survey(text)
    kept = t.case.get("target_figures")
    kept = kept if isinstance(kept, dict) else {}
    values = {s.target: float(kept[s.target.name]) for s in run.steps
              if isinstance(kept.get(s.target.name), (int, float))
              and not isinstance(kept.get(s.target.name), bool)}
    spread = t.case.get("max_spread")
    spread = spread if isinstance(spread, (int, float)) and 0 <= spread < 1 \
        else components.DEFAULT_MAX_SPREAD
    slow = {s.target for s in components.slow_targets(values, spread)} if values else set()
    median = statistics.median(values.values()) if values else None
    unit = survey_command.FIGURES[survey_command.MEDIAN]
    rows = []
    for step in run.steps:
        value = values.get(step.target)
        verdict = (INVALID if t.verdict == INVALID or value is None else
                   FAIL if step.target in slow else PASS)
        rows.append(TargetRow(
            t.name, step.target.name, step.target.server, step.node, step.round,
            f"{format_number(value)} {unit}" if value is not None else "—",
            f"{value / median:.2f} x" if value is not None and median else "—",
            f"≥ {1 - spread:.2f} x", verdict))
    return rows
