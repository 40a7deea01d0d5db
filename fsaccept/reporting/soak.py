"""The sign-off's "Soak" section: a soak's record
(:class:`fsaccept.benchmarks.fio.soak.Evidence`) re-judged by the functions the live check
used, a table of the judgements, and a time-series plot per figure: the aggregate over the
run with the band of its intervals' min and max in each bucket, the clients' median with
their min-max band, the clients the judges named, and the stalls marked.

Drawn from the record's buckets (at most :data:`fsaccept.benchmarks.fio.soak.MAX_BUCKETS`
points a line): a day of 1,000 clients draws as fast as five minutes of one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from fsaccept.benchmarks.fio import soak
from fsaccept.core.formatting import format_number


@dataclass
class SoakSection:
    evidence: soak.Evidence
    judgements: list[soak.Judgement]

    @property
    def verdict(self) -> str:
        return soak.verdict(self.judgements)

    @property
    def clients(self) -> int:
        return max((len(s.clients) for s in self.evidence.series), default=0)

    def rows(self) -> list[dict[str, str]]:
        """One row per judgement, for the tables."""
        def q(j: soak.Judgement, v: float | None) -> str:
            if v is None:
                return "—"
            if j.what == "stall":
                return f"{format_number(round(v, 1))} s"
            return f"{v:+.1%}" if j.what == "drift" else f"{v:.1%}"
        return [{"judgement": j.what, "figure": j.figure, "measured": q(j, j.value),
                 "limit": ("—" if j.limit is None else
                           f"{format_number(j.limit)} s" if j.what == "stall"
                           else f"{j.limit:.0%}"),
                 "verdict": j.verdict, "reasons": "; ".join(j.reasons) or "—"}
                for j in self.judgements]

    def markdown(self, plots: dict[str, str] | None = None) -> str:
        """The section in Markdown; ``plots``: figure name -> PNG file to link."""
        st = self.evidence.settings
        lines = ["## Soak", "",
                 f"{format_number(st.duration_s)} s at {format_number(st.interval_s)} s "
                 f"intervals, {self.clients:,} clients: **{self.verdict}**. No client "
                 f"without progress for more than {format_number(st.max_stall_s)} s, each "
                 f"bandwidth's drift within {st.max_drift:.0%}, no node more than "
                 f"{st.max_node_shortfall:.0%} below the others' median.", "",
                 "| judgement | figure | measured | limit | verdict | reasons |",
                 "| --- | --- | --- | --- | --- | --- |"]
        for r in self.rows():
            lines.append("| " + " | ".join(r[k].replace("|", "\\|") for k in (
                "judgement", "figure", "measured", "limit", "verdict", "reasons")) + " |")
        for s in self.evidence.series:
            if plots and s.name in plots:
                lines += ["", f"![{s.name}]({plots[s.name]})"]
        return "\n".join(lines) + "\n"


def soak_section(evidence: soak.Evidence) -> SoakSection:
    return SoakSection(evidence, soak.judge(evidence))


def soak_sections(tests: list[Any]) -> list[tuple[str, SoakSection]]:
    """(test name, its section) of each soak that recorded a readable record, re-judged
    from that record (one that cannot be read is the test's INVALID reason, not a
    section)."""
    from fsaccept.reporting.signoff.common import fio_kind
    from fsaccept.reporting.signoff.soak import soak_evidence_of
    from fsaccept.reporting.verdicts import spec_of_case
    out = []
    for t in tests:
        kind = fio_kind(spec_of_case(t.case))
        if kind is None or not kind.soak:
            continue
        evidence, _ = soak_evidence_of(t.case)
        if evidence is not None:
            out.append((t.name, soak_section(evidence)))
    return out


#: Clients the judges named that the legend names (the others drawn, counted).
NAMED_IN_LEGEND = 3


def _time_axis(duration_s: float) -> tuple[float, str]:
    if duration_s > 3 * 3600:
        return 3600.0, "hours"
    if duration_s > 3 * 60:
        return 60.0, "minutes"
    return 1.0, "seconds"


def series_plot(series: soak.Series, stalls: list[soak.Stall] | None = None,
                named: tuple[str, ...] = ()) -> bytes | None:
    """A figure over the run: the aggregate (top) and the clients (bottom), per bucket,
    the stalls shaded.  None when nothing is drawable."""
    from fsaccept.reporting.plots import _png, _pyplot

    b = series.buckets
    if not np.isfinite(b["agg_mean"]).any():
        return None
    scale, unit = _time_axis(series.duration_s)
    x = (np.arange(series.n_buckets) + 0.5) * series.bucket_s / scale
    plt = _pyplot()
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7.2, 4.6), sharex=True,
                                      layout="constrained")
    what = "sum" if series.kind == soak.BANDWIDTH else "mean"
    top.fill_between(x, b["agg_min"], b["agg_max"], color="#1a56b0", alpha=0.2,
                     linewidth=0, label=f"min-max of {format_number(series.interval_s)} s "
                     "intervals")
    top.plot(x, b["agg_mean"], color="#1a56b0", linewidth=1,
             label=f"all clients ({what}), mean per {format_number(series.bucket_s)} s")
    bottom.fill_between(x, b["clients_min"], b["clients_max"], color="grey", alpha=0.3,
                        linewidth=0, label="clients' min-max")
    bottom.plot(x, b["clients_median"], color="black", linewidth=1,
                label="clients' median")
    drawn = [c for c in named if c in series.kept]
    for i, client in enumerate(drawn):
        label = (client if i < NAMED_IN_LEGEND else
                 f"and {len(drawn) - NAMED_IN_LEGEND:,} more" if i == NAMED_IN_LEGEND
                 else None)
        bottom.plot(x, series.kept[client], linestyle="--", linewidth=1, label=label)
    # A stall is a line at its start (45 s of a day is no visible span) and its span.
    for i, (start, end) in enumerate(_spans(stalls or [])):
        for ax in (top, bottom):
            ax.axvline(start / scale, color="#b00020", linewidth=0.8,
                       label="stall" if i == 0 and ax is top else None)
            ax.axvspan(start / scale, end / scale, color="#b00020", alpha=0.3,
                       linewidth=0)
    for ax in (top, bottom):
        ax.set_ylabel(series.unit, fontsize=8)
        ax.tick_params(labelsize=8)
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=6, loc="lower left")
    bottom.set_xlabel(f"{unit} into the run", fontsize=8)
    top.set_title(f"Soak: {series.name}, {len(series.clients):,} clients", fontsize=9,
                  loc="left")
    return _png(fig)


def _spans(stalls: list[soak.Stall]) -> list[tuple[float, float]]:
    """Stalls of all clients as merged spans (start, end), seconds."""
    out: list[list[float]] = []
    for s in sorted(stalls, key=lambda s: s.start_s):
        if out and s.start_s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], s.end_s)
        else:
            out.append([s.start_s, s.end_s])
    return [(a, b) for a, b in out]


def plots(section: SoakSection) -> dict[str, bytes]:
    """Figure name -> PNG, one per figure of the record."""
    st = section.evidence.settings
    over = [s for s in section.evidence.stalls if s.no_progress_s > st.max_stall_s]
    named = tuple(dict.fromkeys(n for j in section.judgements for n in j.named))
    out = {}
    for s in section.evidence.series:
        png = series_plot(s, over, named)
        if png is not None:
            out[s.name] = png
    return out


def loads(data: Any) -> SoakSection:
    """The section from a recorded soak (:meth:`Evidence.to_dict`); EvidenceError naming
    the key for what is not one."""
    return soak_section(soak.Evidence.from_dict(data))
