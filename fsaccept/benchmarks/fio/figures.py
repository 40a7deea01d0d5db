"""fio figures: which number of a parsed run each reported figure is
(:class:`FigureSpec`), one node's report judged (:func:`judge_node`), per-node figures
combined into one, and the outlier nodes.

The figures a test reports (:func:`reported`, :func:`reported_figures`) come from its
nodes' reports alone, by the functions the live check reports them with: the sign-off
rebuilds them from the reports the test keeps.  Each node's findings too
(:func:`judge_node`, :func:`node_reasons`, :func:`node_count_reasons`): the sign-off
judges them again from the same files."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from fsaccept.benchmarks.fio.parse import FioRun, json_number, parse_fio
from fsaccept.core import pernode, versions
from fsaccept.core.findings import INVALID, Finding, figure_problem
from fsaccept.core.pernode import OUTLIER_FIGURE, Outlier, find_outliers  # noqa: F401
from fsaccept.core.units import MIB



@dataclass(frozen=True)
class FigureSpec:
    """One figure a test reports, and where it is in fio's report."""

    name: str  #: e.g. ``randread_4k_direct_iops``
    unit: str  #: ``IOPS``, ``MiB/s``, ``ops/s`` or ``us``
    job: str  #: fio job name
    path: tuple[str, ...]  #: keys in the job's JSON, e.g. ``("read", "iops")``
    kind: str = "throughput"
    """``throughput``: higher is better, summed over nodes; ``latency``: lower is better,
    the worst (highest) node is the figure."""

    @property
    def source(self) -> str:
        return f"jobs[{self.job}]." + ".".join(self.path)


def figure_value(run: FioRun, spec: FigureSpec) -> float:
    """fio's own number for ``spec`` in ``run``, scaled exactly to ``spec.unit``."""
    raw = json_number(run.job(spec.job).raw, spec.path, f"jobs[{spec.job}]")
    why = figure_problem(raw)
    if why:
        raise ValueError(f"{spec.source}: {why}: not a figure")
    leaf = spec.path[-1]
    if spec.unit == "MiB/s":
        if leaf != "bw_bytes":
            raise ValueError(f"{spec.source}: MiB/s figures come from bw_bytes")
        return raw / MIB
    if spec.unit == "us":
        if not any(str(key).endswith("_ns") for key in spec.path):
            raise ValueError(f"{spec.source}: us figures come from a *_ns latency")
        return raw / 1000
    return float(raw)


def node_figures(run: FioRun, specs: Sequence[FigureSpec]) -> dict[str, float]:
    """One node's figures of ``specs`` (:func:`figure_value` of each); KeyError or
    ValueError naming the figure when its report does not give one."""
    return {spec.name: figure_value(run, spec) for spec in specs}


@dataclass
class NodeJudged:
    """One node's fio report judged (:func:`judge_node`)."""

    run: FioRun | None  #: its parsed run; None when the report is not fio's
    findings: list[Finding]  #: fio's and the harness's, INVALID or not
    figures: dict[str, float] | None = None
    """Its figures; None when a finding is INVALID."""


def judge_node(node: str, name: str, report: str | None, messages: str, exit_code: str,
               memory: int | None, target_dir: str, specs: Sequence[FigureSpec],
               figure_kinds: Sequence[str]) -> NodeJudged:
    """One node's fio run judged from what it left: its report ``name``
    (``fio-<node>.json``; its text, None when there is none), fio's messages (its
    ``.log``), its exit status as its node script printed it (``0``, ``1``,
    ``mkdir-failed``: ``target_dir/node`` could not be made), the node's memory in bytes
    (None: unknown).  Its findings: fio's own (:func:`fsaccept.benchmarks.fio.parse.parse_fio`),
    a report missing or not fio's, an exit status not 0, a fio version with a known bug
    affecting one of ``figure_kinds`` (``known_bad_versions.yaml``'s words).  Its figures
    (``specs``: :func:`node_figures`) only when no finding is INVALID.  The live check
    and the sign-off both call it."""
    try:
        run = parse_fio(report or "", messages, node_memory_bytes=memory)
    except ValueError as err:
        return NodeJudged(None, [Finding(INVALID, "not-fio", None, f"{name}: {err}")])
    found = list(run.findings)
    if report is None:
        found = [f for f in found if f.kind != "empty"]
        found.append(Finding(INVALID, "missing", None, f"{name} missing: fio wrote no report"))
    if exit_code == "mkdir-failed":
        found.append(Finding(INVALID, "exit", None, f"could not create {target_dir}/{node}"))
    elif exit_code != "0":
        found.append(Finding(INVALID, "exit", None, f"fio exited with status {exit_code}"))
    found += [Finding(INVALID, "version", None, r) for r in dict.fromkeys(
        r for k in figure_kinds for r in versions.version_reasons("fio", run.version_number, k))]
    judged = NodeJudged(run, found)
    if not any(f.severity == INVALID for f in found):
        try:
            judged.figures = node_figures(run, specs)
        except (KeyError, ValueError) as err:
            found.append(Finding(INVALID, "figure", None, f"{name}: {err.args[0]}"))
    return judged


def node_reasons(findings: dict[str, list[Finding]]) -> list[str]:
    """The INVALID findings of every node (node → its findings), one line per kind
    (:func:`summarize_by_node`)."""
    return summarize_by_node({node: [f for f in found if f.severity == INVALID]
                              for node, found in findings.items()})


def node_count_reasons(nodes: Sequence[str], planned: int) -> list[str]:
    """Why the nodes fio reported from (``nodes``, sorted) are not the ``planned`` count."""
    if len(nodes) == planned:
        return []
    return [f"fio reported from {len(nodes)} node(s) ({','.join(nodes) or '-'}),"
            f" {planned} were planned: a node did not run it"]


@dataclass
class Combined:
    """Figures of a test over all its nodes."""

    specs: list[FigureSpec]
    per_node: dict[str, dict[str, float]]  #: node → figure → value
    aggregate: dict[str, float]
    """Throughput: sum over nodes (``math.fsum``: exactly rounded, order-free);
    latency: the worst node's value."""
    node_min: dict[str, float]  #: throughput figures: the slowest node's value
    outliers: dict[str, list[Outlier]]  #: throughput figure → nodes below the fraction
    outlier_fraction: float = 0.0  #: the fraction of the median (0: detection off)

    @property
    def outlier_nodes(self) -> list[str]:
        return sorted({o.node for found in self.outliers.values() for o in found})

    def describe_outliers(self) -> str:
        units = {s.name: s.unit for s in self.specs}
        return "; ".join(o.describe(name, units[name])
                         for name, found in self.outliers.items() for o in found)


def combine(per_node: dict[str, dict[str, float]], specs: list[FigureSpec],
            outlier_fraction: float) -> Combined:
    """Aggregate per-node figures (node → figure name → value) of ``specs``."""
    if not per_node:
        raise ValueError("no node reported figures")
    aggregate, node_min, outliers = {}, {}, {}
    for spec in specs:
        values = {node: figs[spec.name] for node, figs in per_node.items()}
        if spec.kind == "latency":
            aggregate[spec.name] = max(values.values())
            continue
        aggregate[spec.name] = math.fsum(values.values())
        node_min[spec.name] = min(values.values())
        found = find_outliers(values, outlier_fraction)
        if found:
            outliers[spec.name] = found
    return Combined(specs=specs, per_node=per_node, aggregate=aggregate, node_min=node_min,
                    outliers=outliers, outlier_fraction=outlier_fraction)


#: What a throughput figure's slowest node (:attr:`Combined.node_min`) adds to its name.
NODE_MIN_SUFFIX = "_node_min"


@dataclass(frozen=True)
class Reported:
    """One figure a fio test reports (a performance variable): its name and unit, the
    figure of its reports it is (None: the outlier count), and its value in the test's
    combined figures."""

    name: str
    unit: str
    spec: FigureSpec | None
    value: Callable[[Combined], float]


def reported(specs: Sequence[FigureSpec], outlier_fraction: float) -> list[Reported]:
    """Every figure a test of ``specs`` reports, in order: each figure's aggregate (its
    name), a throughput figure's slowest node (``<name>_node_min``), and with outlier
    detection (``outlier_fraction`` > 0) the count of outlier nodes (``outlier_nodes``)."""
    out = []
    for spec in specs:
        out.append(Reported(spec.name, spec.unit, spec,
                            lambda c, name=spec.name: c.aggregate[name]))
        if spec.kind == "throughput":
            out.append(Reported(spec.name + NODE_MIN_SUFFIX, spec.unit, spec,
                                lambda c, name=spec.name: c.node_min[name]))
    if outlier_fraction > 0:
        out.append(Reported(OUTLIER_FIGURE, "nodes", None, lambda c: len(c.outlier_nodes)))
    return out


def reported_figures(combined: Combined) -> dict[str, float]:
    """The figures a test reports from its combined figures, by name (:func:`reported`)."""
    return {r.name: r.value(combined)
            for r in reported(combined.specs, combined.outlier_fraction)}


def summarize_by_node(per_node: dict[str, list[Finding]]) -> list[str]:
    """One line per kind of finding over many nodes, naming the nodes and quoting the
    first one (a 1,000-node run must not print the same note 1,000 times):
    ``all 4 nodes: n1: job ...`` or ``n2,n3: n2: job ...``."""
    kinds: dict[tuple[str, str], list[tuple[str, Finding]]] = {}
    for node in sorted(per_node):
        for finding in per_node[node]:
            kinds.setdefault((finding.severity, finding.kind), []).append((node, finding))
    lines = []
    for hits in kinds.values():
        nodes = sorted({node for node, _ in hits})
        first_node, first = hits[0]
        if len(per_node) > 1 and len(nodes) == len(per_node):
            who = f"all {len(nodes)} nodes"
        else:
            who = ",".join(nodes)
        text = f"{first_node}: {first.text}"
        if len(hits) > 1:
            text += f" (and {len(hits) - 1} more like it)"
        lines.append(text if who == first_node else f"{who}: {text}")
    return lines


def per_node_figures(per_node: dict[str, dict[str, float]], specs: list[FigureSpec]
                     ) -> dict[str, dict[str, float]]:
    """Every node's figures of ``specs``: {figure: {node: value}}."""
    return pernode.by_figure(per_node, [spec.name for spec in specs])
