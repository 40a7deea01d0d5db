"""The sign-off's "Components" section: each storage target the survey measured, one row
each, with its server, the node and round that measured it, its figure and its share of
the median target; the slow ones FAIL, named.  Then each node's link the network check
measured, one row each, with its server, its figure alone, its share of the median node,
its round-trip time and retransmits; and a row of all nodes at once.

A component test is known by its record (``TestSpec.component``), never by its name:
:data:`ROWS` lays out each component's rows, :data:`CEILINGS` reads the ceiling it sets
for the bound (:mod:`.bound`).

The rows come from the survey's recorded lines (``survey_lines``: the plan) and each
target's recorded figure (``target_figures``).  The sign-off holds both to the job's own
output and to each target's fio report (:mod:`fsaccept.reporting.signoff.survey`): a
case whose records disagree with them is INVALID, and so is each of its rows.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from fsaccept.benchmarks.network import command as network_command
from fsaccept.benchmarks.network import parse as network_parse
from fsaccept.benchmarks.survey import command as survey_command
from fsaccept.benchmarks.survey import parse as survey_parse
from fsaccept.core import components
from fsaccept.core.formatting import format_number
from fsaccept.reporting.plotbudget import Plot, PlotBudget
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
    value: float | None = None  #: MiB/s, as drawn


#: The rows of all nodes at once: sending, and receiving (the read round).
TOGETHER_ROW, TOGETHER_READ_ROW = "all at once", "all at once, receiving"


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
    value: float | None = None  #: MiB/s, as drawn


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
    rows: dict[str, list[Any]] = {name: [] for name in ROWS}
    for t in tests:
        spec = spec_of_case(t.case)
        if spec is not None and spec.component in ROWS:
            rows[spec.component] += ROWS[spec.component](t, reference)
    return ComponentsSection(rows["targets"], rows["network"])


def _number(x: Any) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def _kept_figures(t: Test, field: str) -> dict[str, float]:
    """A case's recorded figures by name (node, target): the numbers among them."""
    kept = t.case.get(field)
    return {str(k): n for k, v in (kept.items() if isinstance(kept, dict) else ())
            if (n := _number(v)) is not None}


def network_rows(t: Test, reference: Any = None) -> list[LinkRow]:
    """The rows of one network test: its recorded plan and each node's recorded figure,
    the failing ones by the names the test recorded (the sign-off holds both to the
    iperf3 reports); then its aggregate, all nodes at once.  The limits: the recorded
    spread, and the verified reference's least bandwidth and greatest round-trip."""
    text = t.case.get("network_lines")
    if not isinstance(text, str) or not text:
        return []
    run = network_parse.parse_network(text)
    kept = _kept_figures(t, "link_figures")
    values = {s.node: kept[s.node] for s in run.of(network_parse.ALONE) if s.node in kept}
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
            f"≥ {1 - spread:.2f} x{kpis}", verdict, value))
    figures = {f.name: f.value for f in t.case.figures}
    servers = ", ".join(run.endpoints[:4]) + (", …" if len(run.endpoints) > 4 else "")
    for label, name in ((TOGETHER_ROW, network_command.AGGREGATE),
                        (TOGETHER_READ_ROW, network_command.READ_AGGREGATE)):
        aggregate = figures.get(name)
        if aggregate is None and name == network_command.READ_AGGREGATE \
                and run.version == "1":
            continue  # format 1 has no read round
        rows.append(LinkRow(
            t.name, label, servers,
            f"{format_number(aggregate)} {unit}" if aggregate is not None else "—", "—",
            "—", "—", "—", INVALID if t.verdict == INVALID or aggregate is None else PASS))
    return rows


def survey_rows(t: Test, reference: Any = None) -> list[TargetRow]:
    """The rows of one survey test: its recorded plan, each target's recorded figure, the
    slow ones by the spread the test recorded (the sign-off holds it to the reference)."""
    text = t.case.get("survey_lines")
    if not isinstance(text, str) or not text:
        return []
    run = survey_parse.parse_survey(text)
    kept = _kept_figures(t, "target_figures")
    values = {s.target: kept[s.target.name] for s in run.steps if s.target.name in kept}
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
            f"≥ {1 - spread:.2f} x", verdict, value))
    return rows


def drawn(parts: ComponentsSection, budget: PlotBudget) -> list[Plot]:
    """The section's charts through the report's plot budget: each component's rows
    sorted (:func:`plot`), the targets' first."""
    charts = [budget.draw(f"components-{name}", f"\0components\0{name}", title,
                          lambda rows=rows, title=title: plot(rows, title))
              for name, rows, title in (
                  ("targets", parts.targets, "Each target written alone, sorted"),
                  ("network", parts.links, "Each node's link alone, sorted"))
              if rows] if budget.drawing else []
    return [c for c in charts if c]


def plot(rows: Sequence[TargetRow | LinkRow], what: str) -> bytes | None:
    """One component's rows sorted by figure, slowest first, a FAIL in red, the median a
    line: the slow target or link shows at a glance (the row of all nodes at once has no
    value: not drawn).  ``what``: the title.  None when
    no row has a figure."""
    from fsaccept.reporting.plots import MAX_BARS, _drawable, _png, _pyplot

    drawn = sorted((r for r in rows if r.value is not None and _drawable(r.value)),
                   key=lambda r: r.value)
    if not drawn:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 2.8), layout="constrained")
    values = [r.value for r in drawn]
    colors = ["#b00020" if r.verdict == FAIL else "#1a56b0" for r in drawn]
    names = [getattr(r, "target", None) or getattr(r, "node") for r in drawn]
    if len(drawn) <= MAX_BARS:
        ax.bar(range(len(drawn)), values, color=colors)
        ax.set_xticks(range(len(drawn)), [n.rsplit("/", 1)[-1][:16] for n in names],
                      fontsize=7, rotation=30 if len(drawn) > 8 else 0)
    else:  # a thousand targets: one point each, the slowest named
        ax.scatter(range(len(drawn)), values, s=3, color=colors, linewidths=0)
        ax.set_xticks([])
        ax.set_xlabel(f"{len(drawn):,} sorted; slowest: " + ", ".join(names[:3]),
                      fontsize=7)
    median = statistics.median(values)
    ax.axhline(median, color="black", linestyle="--", linewidth=1,
               label=f"median {format_number(median)} MiB/s")
    slow = [n for n, r in zip(names, drawn) if r.verdict == FAIL]
    ax.set_title(what + (f": {len(slow)} slow, " + ", ".join(slow[:2]) if slow else ""),
                 fontsize=9, loc="left")
    ax.set_ylabel("MiB/s", fontsize=8)
    ax.tick_params(labelsize=8)
    ax.legend(fontsize=7)
    return _png(fig)


#: Each component's rows in the section, by the name its tests' records give
#: (``TestSpec.component``).
ROWS: dict[str, Callable[[Test, Any], list[Any]]] = {
    "targets": survey_rows, "network": network_rows}


@dataclass(frozen=True)
class Ceiling:
    """What one component can move, as one component test measured it: for a test on
    ``nodes`` (None: all of them), its value in MiB/s, or None and why not."""

    component: str
    test: str
    #: (the nodes of the test it bounds, or None; the figure kind) -> (MiB/s or None, how
    #: it was derived or why there is none).
    of: Callable[[Sequence[str] | None, str], tuple[float | None, str]]


def network_ceiling(t: Test) -> Ceiling:
    """The network: what every node sent at once; for a test on some of the nodes, at
    most what those nodes sent alone, summed.  A read: what every node received at once
    (no node receives alone).  A test on a node the check did not measure has no
    network bound."""
    figures = {f.name: f.value for f in t.case.figures}
    alone = _kept_figures(t, "link_figures")

    def of(nodes: Sequence[str] | None, kind: str = "write") -> tuple[float | None, str]:
        aggregate = figures.get(network_command.READ_AGGREGATE if kind == "read"
                                else network_command.AGGREGATE)
        if aggregate is None or not math.isfinite(aggregate):
            return None, (f"{t.name} measured no read: its output, of format 1, has no "
                          "read round" if kind == "read"
                          else f"{t.name} measured no aggregate")
        bad = sorted(n for n, v in alone.items() if not (math.isfinite(v) and v >= 0))
        if bad:
            return None, f"{t.name}: {bad[0]}'s figure {alone[bad[0]]!r} is not a figure"
        at_once = f"{len(alone)} nodes {'receiving ' if kind == 'read' else ''}at once"
        if not nodes:
            return aggregate, at_once
        missing = [n for n in nodes if n not in alone]
        if missing:
            return None, f"{t.name} measured no link of {missing[0]}"
        if kind == "read":
            return aggregate, at_once
        summed = sum(alone[n] for n in nodes)
        if summed < aggregate:
            return summed, f"{len(nodes)} node{'s' if len(nodes) != 1 else ''} alone, summed"
        return aggregate, at_once
    return Ceiling("network", t.name, of)


def targets_ceiling(t: Test) -> Ceiling:
    """The targets: the sum of each one's figure alone.  A target is what the client
    places a file on (a replica or disperse set is one target), so its figure already
    pays the layout's copies: the factor is 1.  A target not measured leaves no
    bound."""
    text = t.case.get("survey_lines")
    run = survey_parse.parse_survey(text) if isinstance(text, str) and text else None
    kept = _kept_figures(t, "target_figures")
    planned = [s.target.name for s in run.steps] if run is not None else []

    def of(nodes: Sequence[str] | None, kind: str = "write") -> tuple[float | None, str]:
        missing = [name for name in planned if name not in kept
                   or not (math.isfinite(kept[name]) and kept[name] >= 0)]
        if not planned or missing:
            return None, (f"{t.name}: target {missing[0]} not measured" if missing
                          else f"{t.name} recorded no plan")
        return (components.targets_ceiling(kept[name] for name in planned),
                f"{len(planned)} target{'s' if len(planned) != 1 else ''} alone, summed")
    return Ceiling("targets", t.name, of)


#: Each component's ceiling, by the name its tests' records give.
CEILINGS: dict[str, Callable[[Test], Ceiling]] = {
    "targets": targets_ceiling, "network": network_ceiling}
