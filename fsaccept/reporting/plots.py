"""The report's plots (matplotlib, PNG bytes): a test's figures against its threshold
and ceiling, and per-node distributions."""

from __future__ import annotations

import io
import math
import re
import statistics
import warnings
from typing import Any
from datetime import datetime, timezone

from fsaccept.core.formatting import format_number, format_quantity
from fsaccept.core.pernode import OUTLIER_FIGURE
from fsaccept.reporting.point import Point
from fsaccept.reporting.runreport import Test
from fsaccept.reporting.sections import case_label


def _pyplot():
    import matplotlib  # heavy: only a report that draws pays for matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _png(fig) -> bytes:
    buf = io.BytesIO()
    with warnings.catch_warnings():  # a long title (a value off scale named): as drawn
        warnings.filterwarnings("ignore", message="constrained_layout not applied")
        fig.savefig(buf, format="png", dpi=90)
    _pyplot().close(fig)
    return buf.getvalue()


#: A threshold or ceiling line further than this × the largest value is not drawn (it
#: would squash the bars, and a huge finite value overflows matplotlib's axis limits):
#: the title names it "off scale" instead.
OFF_SCALE = 20.0


def _on_scale(level: float | None, top: float) -> tuple[float | None, float | None]:
    """(level to draw, level off scale): one of them None, or both."""
    if level is None or not math.isfinite(level) or level <= 0:
        return None, None
    if level > max(top, 0.0) * OFF_SCALE and top > 0 or not _drawable(level):
        return None, level
    return level, None


#: A value larger than this (in magnitude) is not drawn: near the largest float,
#: matplotlib's axis limits and transforms overflow (1.7e308 × 1.12 is inf); nor one
#: smaller than its inverse but 0 (a denormal collapses the layout).  The tables show
#: it; the plot's title counts it "off scale".
DRAWN_MAX = 1e300


def _drawable(value: float | None) -> bool:
    return (value is not None and math.isfinite(value) and abs(value) <= DRAWN_MAX
            and (value == 0 or abs(value) >= 1 / DRAWN_MAX))


def _limits(values: list[float], margin: float) -> tuple[float, float]:
    """Axis limits from 0 (or the lowest negative value) to the largest value and a
    margin; (0, 1) when they would collapse to a point (all 0, or a denormal)."""
    low = min(0.0, *values) * margin
    high = max(0.0, *values) * margin
    return (low, high) if high - low > 1e-300 else (0.0, 1.0)


def figure_plot(test: Test, ceiling: dict[str, float] | None = None) -> bytes | None:
    """Measured vs threshold (and ceiling) for each figure of a test: one bar per
    run, a line at the passing limit.  None when the test has no measured figure."""
    # A figure that is not finite is shown in the tables (INVALID), never drawn.
    rows = [fr for fr in test.figures if fr.values and all(_drawable(v) for v in fr.values)]
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
        ax.bar_label(bars, labels=[format_quantity(v, fr.unit) for v in vals], fontsize=7,
                     padding=2)
        top = max(vals, default=0.0)
        limit, off = _on_scale(fr.threshold.lower_limit, top)
        if limit is not None:
            ax.axvline(limit, color="black", linestyle="--", label=f"threshold {format_number(limit)} {fr.unit}")
        cap, off2 = _on_scale((ceiling or {}).get(fr.name), top)
        if cap:
            ax.axvline(cap, color="#1a56b0", linestyle=":",
                       label=f"ceiling {format_number(cap)} {fr.unit}")
        notes = [f"{what} {format_number(v)} {fr.unit} off scale"
                 for what, v in (("threshold", off), ("ceiling", off2)) if v is not None]
        ax.set_title(f"{test.name}: {fr.name}" + "".join(f" ({n})" for n in notes),
                     fontsize=9, loc="left")
        ax.set_xlabel(fr.unit, fontsize=8)
        ax.tick_params(labelsize=8)
        ax.set_xlim(*_limits([*vals, limit or 0, cap or 0], 1.12))
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7, loc="lower right")
    return _png(fig)


def per_node_plot(family: str, figure: str, values: dict[str, list[float]],
                  unit: str = "") -> bytes:
    """One bar per node (mean of its values), with the spread of the nodes."""
    plt = _pyplot()
    off = [n for n, vs in values.items() if not all(_drawable(v) for v in vs)]
    nodes = sorted((n for n in values if n not in off),
                   key=lambda n: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", n)])
    means = [statistics.fmean(values[n]) for n in nodes]
    fig, ax = plt.subplots(figsize=(6.4, 2.6), constrained_layout=True)
    if len(nodes) <= MAX_BARS:
        ax.bar(nodes, means, color="#1a56b0")
    else:  # 1,382 nodes: the values sorted, the slowest named (a tick each is unreadable)
        order = sorted(range(len(nodes)), key=lambda i: means[i])
        ax.scatter(range(len(order)), [means[i] for i in order], s=3, color="#1a56b0",
                   linewidths=0)
        ax.set_xticks([])
        ax.set_xlabel(f"{len(nodes):,} nodes, sorted by value; lowest: "
                      + ", ".join(nodes[i] for i in order[:3]), fontsize=7)
    if len(means) > 1:
        ax.axhline(statistics.fmean(means), color="black", linestyle="--",
                   label=f"mean {format_number(statistics.fmean(means))} {unit}")
        ax.legend(fontsize=7)
    ax.set_title(f"{family}: {figure} per node" + (f" ({len(off):,} off scale: "
                 + ", ".join(sorted(off)[:3]) + ")" if off else ""), fontsize=9, loc="left")
    ax.set_ylabel(unit, fontsize=8)
    ax.tick_params(labelsize=8)
    return _png(fig)


#: A check with more cases than this is drawn as one sorted line, not a bar each.
MAX_BARS = 60
#: Figures drawn per check (those judged against a threshold first).
MAX_PANELS = 3


def check_plot(check: str, tests: list[Test]) -> bytes | None:
    """One plot for a check of several test cases (one per node with ``--distribute``):
    a panel per judged figure, each case's value (a bar each, or for many cases the
    values sorted, the cases that did not pass in red), the threshold line, the lowest
    cases named.  None when no case has a value."""
    data: dict[str, list[tuple[float, str, bool]]] = {}
    off_scale: dict[str, int] = {}
    units: dict[str, str] = {}
    limits: dict[str, tuple[float | None, float | None]] = {}
    judged: list[str] = []
    differ: set[str] = set()
    for t in tests:
        label = case_label(t, check)
        ok = t.verdict == "PASS"
        for fr in t.figures:
            units.setdefault(fr.name, fr.unit)
            th = fr.threshold
            if th.limited and fr.name != OUTLIER_FIGURE and fr.name not in limits:
                limits[fr.name] = (th.lower_limit, th.upper_limit)
                judged.append(fr.name)
            elif th.limited and fr.name in limits and limits[fr.name] != (
                    th.lower_limit, th.upper_limit):
                differ.add(fr.name)  # a family of variants: a limit each, no one line
            v = fr.value
            if _drawable(v):
                data.setdefault(fr.name, []).append((v, label, ok))
            elif v is not None and math.isfinite(v):
                off_scale[fr.name] = off_scale.get(fr.name, 0) + 1
    panels = [n for n in judged if n in data] or list(data)
    panels = panels[:MAX_PANELS]
    if not panels:
        return None
    plt = _pyplot()
    fig, axes = plt.subplots(len(panels), 1, figsize=(7.2, 0.4 + 2.4 * len(panels)),
                             squeeze=False, constrained_layout=True)
    for ax, name in zip(axes[:, 0], panels):
        points = sorted(data[name])
        vals = [p[0] for p in points]
        colors = ["#1f6f3f" if p[2] else "#b00020" for p in points]
        unit = units.get(name, "")
        if len(points) <= MAX_BARS:
            ax.bar(range(len(points)), vals, color=colors)
            ax.set_xticks(range(len(points)), [p[1] for p in points], rotation=60,
                          ha="right", fontsize=6)
        else:
            ax.scatter(range(len(points)), vals, c=colors, s=3, linewidths=0)
            ax.set_xlabel(f"{len(points):,} test cases, sorted by value (red: not PASS); "
                          "lowest: " + ", ".join(p[1] for p in points[:3]), fontsize=7)
            ax.set_xticks([])
        top = vals[-1]
        lo, hi = limits.get(name, (None, None)) if name not in differ else (None, None)
        notes = ["thresholds differ per case"] if name in differ else []
        for what, level in (("threshold", lo), ("limit", hi)):
            shown, off = _on_scale(level, top)
            if shown is not None:
                ax.axhline(shown, color="black", linestyle="--",
                           label=f"{what} {format_number(shown)} {unit}")
            if off is not None:
                notes.append(f"{what} {format_number(off)} {unit} off scale")
        if off_scale.get(name):
            notes.append(f"{off_scale[name]:,} values off scale")
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7, loc="lower right")
        ax.set_title(f"{check}: {name}, {len(points):,} cases" + "".join(
            f" ({n})" for n in notes), fontsize=9, loc="left")
        ax.set_ylabel(unit, fontsize=8)
        ax.tick_params(axis="y", labelsize=8)
        ax.set_ylim(*_limits([*vals, *(l for l in (lo, hi)
                                       if l is not None and _on_scale(l, top)[0])], 1.08))
    return _png(fig)


# Nightly trends: one plot per figure over the last sessions.


class TrendPlotter:
    """Trend plots (values of the last sessions, the threshold line, the median),
    one PNG per figure, drawn on one reused matplotlib figure.

    Making a figure, laying it out and placing date ticks cost more than
    drawing: a year of nightly sessions with 30 figures took seconds that way.
    So the axes, margins and artists are made once and only their data, labels
    and limits change per plot; the x ticks are the sessions' dates, placed by
    hand (at most 6), and the margins are fixed (no constrained layout).  The
    threshold and median lines are named, with their value, in the right margin
    (a legend, laid out anew for every plot, was a third of its drawing time)."""

    MAX_TICKS = 6

    def __init__(self) -> None:
        import matplotlib  # heavy: imported by the first plot drawn
        matplotlib.use("Agg")
        from matplotlib.figure import Figure
        from matplotlib.ticker import EngFormatter

        self.fig = Figure(figsize=(6.4, 2.6), dpi=80)
        self.fig.subplots_adjust(left=0.12, right=0.86, top=0.9, bottom=0.2)
        self.ax = ax = self.fig.add_subplot()
        (self.values,) = ax.plot([], [], marker="o", markersize=3, color="#1a56b0")
        self.threshold = ax.axhline(0, color="#b00020", linestyle="--")
        self.median = ax.axhline(0, color="gray", linestyle=":")
        # Each line's name and value in the right margin, level with it (x in axes
        # coordinates, y in data): beside the data, never over it.
        self.labels = {line: ax.text(1.01, 0, "", transform=ax.get_yaxis_transform(),
                                     ha="left", va="center", fontsize=7,
                                     color=line.get_color(), linespacing=1.0)
                       for line in (self.threshold, self.median)}
        #: Pixels of the axes' height, and of a (two-line) label's.
        self.height_px = 2.6 * 80 * (0.9 - 0.2)
        self.label_px = 20
        self.title = ax.set_title("", fontsize=9, loc="left")
        # 3.5M, 250k, 2.5m (SI prefixes): no "1e6" offset above the axes, where the
        # title is, and short tick labels for any magnitude.
        ax.yaxis.set_major_formatter(EngFormatter(sep=""))
        ax.tick_params(labelsize=7)

    def plot(self, test: str, figure: str, unit: str, points: list[Point],
             median: float | None = None) -> bytes:
        ax = self.ax
        xs = [p.time for p in points]
        ys = [p.value for p in points]
        self.values.set_data(xs, ys)
        limits = [p.threshold for p in points if p.threshold is not None]
        shown = [self.values]
        for line, level, name in ((self.threshold, limits[-1] if limits else None, "threshold"),
                                  (self.median, median, "median")):
            label = self.labels[line]
            line.set_visible(level is not None)
            label.set_visible(level is not None)
            if level is not None:
                line.set_ydata([level, level])
                label.set_y(level)
                label.set_text(f"{name}\n{format_number(level)}")  # unit: the y axis
                shown.append(line)
        self.title.set_text(f"{test}: {figure} (last {len({p.session for p in points})} "
                            "sessions)")
        ax.set_ylabel(unit, fontsize=8)
        top = trend_ylim([*ys, *(l.get_ydata()[0] for l in shown[1:])])
        ax.set_ylim(0, top)
        self._place_labels(shown[1:], top)
        left, right = (min(xs), max(xs)) if xs else (0.0, 1.0)
        pad = (right - left) * 0.03 or 43200.0
        ax.set_xlim(left - pad, right + pad)
        step = max(1, math.ceil(len(xs) / self.MAX_TICKS))
        ticks = xs[::step]
        ax.set_xticks(ticks, [datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%d")
                              for t in ticks], rotation=30, ha="right")
        buf = io.BytesIO()
        # Fast zlib level: PNG encoding was a tenth of the time at the default.
        self.fig.savefig(buf, format="png", pil_kwargs={"compress_level": 1})
        return buf.getvalue()


    def _place_labels(self, lines: list, ylim_top: float) -> None:
        """Each label centred on its line; two lines closer than a label's height have
        theirs moved apart (the upper one's above, the lower one's below)."""
        px = self.height_px / ylim_top  # pixels per unit
        levels = {line: line.get_ydata()[0] for line in lines}
        for label in self.labels.values():
            label.set_verticalalignment("center")
        if len(levels) == 2:
            (low, a), (high, b) = sorted(levels.items(), key=lambda kv: kv[1])
            if (b - a) * px < self.label_px:
                self.labels[low].set_verticalalignment("top")
                self.labels[high].set_verticalalignment("bottom")


def trend_ylim(levels: list[float]) -> float:
    """The top of a trend plot's y axis: 8 % above the highest finite level; 1 when no
    level is finite and above 0 (none, all 0 or negative, NaN, inf), and the level itself
    when 8 % more would overflow: matplotlib refuses a limit that is not finite."""
    top = max((v for v in levels if isinstance(v, (int, float)) and math.isfinite(v)),
              default=0.0)
    if top <= 0:
        return 1.0
    return top * 1.08 if math.isfinite(top * 1.08) else top


def trend_plot(test: str, figure: str, unit: str, points: list[Point],
               median: float | None = None) -> bytes:
    """One trend plot (for many, reuse a :class:`TrendPlotter`)."""
    return TrendPlotter().plot(test, figure, unit, points, median)


def plot_name(test: str, figure: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{test}-{figure}").strip("_") + ".png"


#: Colours of the timeline's phases.
_PHASES = (("degrade_end", "restore_start", "degraded", "#d62728"),
           ("restore_start", "recovered", "recovering", "#ff7f0e"))


def timeline_plot(section: Any) -> bytes | None:
    """The Degraded mode section's faults (:class:`.degraded.DegradedSection`) on one time axis (seconds from the first fault): degraded (red) and
    recovering (orange), the moments every node saw the fault and the first write
    succeeded marked."""
    # A fault drawn has its start and its end (an edited timeline may lack either).
    rows = [f for f in section.faults
            if {"degrade_start", "degrade_end"} <= {e["event"] for e in f.events}]
    if not rows:
        return None
    t0 = min(e["t"] for f in rows for e in f.events if e["event"] == "degrade_start")
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 1 + 0.5 * len(rows)), layout="constrained")
    for y, f in enumerate(rows):
        at = {e["event"]: e["t"] - t0 for e in f.events}
        ends = [at[n] for n in ("healed", "not_healed", "nodes_healthy", "nodes_not_healthy")
                if n in at]
        at["recovered"] = max(ends) if ends else at.get("restore_start")
        for start, end, label, colour in _PHASES:
            if start in at and at.get(end) is not None:
                ax.barh(y, at[end] - at[start], left=at[start], color=colour,
                        label=label if y == 0 else None)
        for name, mark in (("nodes_down", "v"), ("failover", "o")):
            if name in at:
                ax.plot(at[name], y, mark, color="black",
                        label=name.replace("_", " ") if y == 0 else None)
    ax.set_yticks(range(len(rows)), [f.test for f in rows])
    ax.set_xlabel("seconds since the first fault")
    ax.legend(loc="lower right", fontsize="small")
    ax.set_title("Degraded mode: faults and recoveries")
    return _png(fig)
