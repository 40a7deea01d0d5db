"""Figures per node, whichever benchmark measured them: the one text format the logs and
the report read (``figure=n1:1.5,n2:2.0; ...``), the slowest nodes, and the outliers
(slow clients: nodes below a fraction of the median)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from fsaccept.core.formatting import format_number

#: The performance variable counting outlier nodes (must be 0 when detection is on).
OUTLIER_FIGURE = "outlier_nodes"


@dataclass(frozen=True)
class Outlier:
    node: str
    value: float
    median: float

    @property
    def ratio(self) -> float:
        return self.value / self.median if self.median else 0.0

    def describe(self, figure: str, unit: str) -> str:
        return (f"{self.node} ({figure} {format_number(self.value)} {unit}, {self.ratio:.2f} x "
                f"the median {format_number(self.median)} {unit})")


def find_outliers(values: dict[str, float], fraction: float) -> list[Outlier]:
    """Nodes whose ``value`` is below ``fraction`` × the median of all nodes (slow clients).
    ``fraction`` 0 turns detection off."""
    if not values or fraction <= 0:
        return []
    median = statistics.median(values.values())
    return [Outlier(node, v, median) for node, v in sorted(values.items())
            if v < fraction * median]


def by_figure(per_node: dict[str, dict[str, float]], names: list[str]
              ) -> dict[str, dict[str, float]]:
    """{figure: {node: value}} (nodes sorted) from {node: {figure: value}}: every node's
    figures of ``names``, exact, as the run report and the perflog record them (data, not
    text: the report's per-node plots read them back as they are)."""
    return {name: {node: float(per_node[node][name]) for node in sorted(per_node)}
            for name in names}


def slowest(values: dict[str, float], unit: str, count: int = 3) -> str:
    """``n3 512.3 MiB/s (0.82 x the median), n1 ...``: the slowest nodes, slowest first."""
    if not values:
        return ""
    median = statistics.median(values.values())
    ranked = sorted(values.items(), key=lambda kv: (kv[1], kv[0]))[:count]
    return ", ".join(f"{node} {format_number(v)} {unit}"
                     + (f" ({v / median:.2f} x the median)" if median else "")
                     for node, v in ranked)
