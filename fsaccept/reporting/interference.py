"""The sign-off's "Interference" section: an interference test's record
(:class:`fsaccept.benchmarks.fio.interference_judge.Evidence`) re-judged by the functions
the live check used, one row per victim node (its p99 alone and beside the aggressor, the
ratio, the share of its run the aggressor covered), and the judgements.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from fsaccept.benchmarks.fio import interference_judge as interference
from fsaccept.core.formatting import format_number


@dataclass
class InterferenceSection:
    evidence: interference.Evidence
    judgements: list[interference.Judgement]

    @property
    def verdict(self) -> str:
        return interference.verdict(self.judgements)

    @property
    def aggressor_bw(self) -> str:
        bw = interference.aggressor_bandwidth(self.evidence)
        return f"{format_number(round(bw, 1))} MiB/s" if math.isfinite(bw) else "—"

    def victim_rows(self) -> list[dict[str, str]]:
        """One row per victim node."""
        load = self.evidence.load()
        limit = self.evidence.settings.max_p99_ratio

        def us(v: float) -> str:
            return f"{format_number(round(v, 1))} us" if math.isfinite(v) else "—"
        rows = []
        for v in self.evidence.victims:
            ok = v.loaded.sane and all(a.span.sane for a in self.evidence.aggressors)
            share = interference.covered_fraction(v.loaded, load) if ok else math.nan
            rows.append({"node": v.node, "alone": us(v.p99_alone_us),
                         "loaded": us(v.p99_loaded_us),
                         "ratio": f"x{v.ratio:.3g}" if math.isfinite(v.ratio) else "—",
                         "limit": f"x{format_number(limit)}",
                         "overlap": f"{share:.0%}" if math.isfinite(share) else "—"})
        return rows

    def rows(self) -> list[dict[str, str]]:
        """One row per judgement."""
        def q(j: interference.Judgement, v: float | None) -> str:
            if v is None:
                return "—"
            if j.what == "overlap":
                return f"{v:.0%}"
            if j.what == "load":
                return f"{format_number(round(v, 1))} MiB/s"
            return f"x{v:.3g}"
        return [{"judgement": j.what, "measured": q(j, j.value), "limit": (
                    "—" if j.limit is None else
                    f"at least {j.limit:.0%}" if j.what == "overlap" else
                    f"at most x{format_number(j.limit)}"),
                 "verdict": j.verdict, "reasons": "; ".join(j.reasons) or "—"}
                for j in self.judgements]


def interference_section(evidence: interference.Evidence) -> InterferenceSection:
    return InterferenceSection(evidence, interference.judge(evidence))


def interference_sections(tests: list[Any]) -> list[tuple[str, InterferenceSection]]:
    """(test name, its section) of each interference test that recorded a readable record
    (one that cannot be read is the test's INVALID reason, not a section)."""
    from fsaccept.reporting.signoff.common import fio_kind
    from fsaccept.reporting.signoff.interference import interference_evidence_of
    from fsaccept.reporting.verdicts import spec_of_case
    out = []
    for t in tests:
        kind = fio_kind(spec_of_case(t.case))
        if kind is None or not kind.interference:
            continue
        evidence, _ = interference_evidence_of(t.case)
        if evidence is not None:
            out.append((t.name, interference_section(evidence)))
    return out


def loads(data: Any) -> InterferenceSection:
    """The section from a recorded record (:meth:`Evidence.to_dict`); EvidenceError
    naming the key for what is not one."""
    return interference_section(interference.Evidence.from_dict(data))
