"""The report's plots (matplotlib, PNG bytes): a test's figures against its threshold
and ceiling, and per-node distributions."""

from __future__ import annotations

import math
import re
import statistics

# The one way figures are printed (re-exported: templates and scripts use them from here).
from fsaccept.core.formatting import format_number
from fsaccept.reporting.runreport import Test

# --------------------------------------------------------------------------- plots


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _png(fig) -> bytes:
    import io
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    _pyplot().close(fig)
    return buf.getvalue()


def figure_plot(test: Test, ceiling: dict[str, float] | None = None) -> bytes | None:
    """Measured vs threshold (and ceiling) for each figure of a test: one bar per
    run, a line at the passing limit.  None when the test has no measured figure."""
    # A figure that is not finite is shown in the tables (INVALID), never drawn.
    rows = [fr for fr in test.figures if fr.values and all(math.isfinite(v) for v in fr.values)]
    if not rows:
        return None
    plt = _pyplot()
    fig, axes = plt.subplots(len(rows), 1, figsize=(6.4, 0.6 + 1.4 * len(rows)), squeeze=False,
                             constrained_layout=True)
    for ax, fr in zip(axes[:, 0], rows):
        vals = fr.values
        labels = [f"run {i + 1}" for i in range(len(vals))] if len(vals) > 1 else ["measured"]
        colors = ["#b00020" if f.result == "fail" else "#1f6f3f" for f in fr.samples
                  if f.value is not None]
        bars = ax.barh(labels, vals, color=colors)
        ax.bar_label(bars, labels=[f"{format_number(v)} {fr.unit}" for v in vals], fontsize=7, padding=2)
        limit = fr.threshold.lower_limit
        if limit is not None:
            ax.axvline(limit, color="black", linestyle="--", label=f"threshold {format_number(limit)} {fr.unit}")
        if ceiling and ceiling.get(fr.name):
            ax.axvline(ceiling[fr.name], color="#1a56b0", linestyle=":",
                       label=f"ceiling {format_number(ceiling[fr.name])} {fr.unit}")
        ax.set_title(f"{test.name}: {fr.name}", fontsize=9, loc="left")
        ax.set_xlabel(fr.unit, fontsize=8)
        ax.tick_params(labelsize=8)
        right = max([*vals, limit or 0, (ceiling or {}).get(fr.name) or 0])
        ax.set_xlim(0, right * 1.12 or 1)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7, loc="lower right")
    return _png(fig)


def per_node_plot(family: str, figure: str, values: dict[str, list[float]],
                  unit: str = "") -> bytes:
    """One bar per node (mean of its values), with the spread of the nodes."""
    plt = _pyplot()
    nodes = sorted(values, key=lambda n: [int(t) if t.isdigit() else t
                                          for t in re.split(r"(\d+)", n)])
    means = [statistics.fmean(values[n]) for n in nodes]
    fig, ax = plt.subplots(figsize=(6.4, 2.6), constrained_layout=True)
    ax.bar(nodes, means, color="#1a56b0")
    if len(means) > 1:
        ax.axhline(statistics.fmean(means), color="black", linestyle="--",
                   label=f"mean {format_number(statistics.fmean(means))} {unit}")
        ax.legend(fontsize=7)
    ax.set_title(f"{family}: {figure} per node", fontsize=9, loc="left")
    ax.set_ylabel(unit, fontsize=8)
    ax.tick_params(labelsize=8)
    return _png(fig)
