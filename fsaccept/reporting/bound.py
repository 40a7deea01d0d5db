"""The bound the measured components set, and each figure judged against it.

For each figure kind (``catalogue.BOUND_KINDS``: bandwidth written, bandwidth read), the
bound is the lowest ceiling of the components the run measured
(:func:`fsaccept.core.components.bound`), each read by its component test's record
(``TestSpec.component``, ``ceiling_kinds``; :data:`.components.CEILINGS`):

- the clients: not measured yet (no client check);
- the network: what the network check's nodes sent at once (a write), or received at
  once (a read); for a write on some of the nodes, at most what those sent alone,
  summed;
- the targets: each target written alone, summed.

A test's figures judged against it are its record's ``bounded`` (IOR's aggregate
bandwidths), on its own nodes and target.  A component test that is INVALID sets no
ceiling.  The reference's ``components:`` section states the rules:

- ``efficiency_min``: a figure below this share of its bound FAILs, naming the binding
  component and its ceiling (none: the efficiency is shown, not judged);
- ``above_bound_tolerance`` (default :data:`DEFAULT_ABOVE_BOUND_TOLERANCE`): a figure
  above its bound by more than this share is INVALID: the measured components cannot
  deliver it, so a cache did.

The sign-off judges it from the figures it rebuilt from the raw outputs: the
components' and the file system's alike.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from fsaccept.benchmarks.catalogue import BOUND_KINDS
from fsaccept.core import components
from fsaccept.core.formatting import format_number
from fsaccept.reporting.components import CEILINGS, Ceiling
from fsaccept.reporting.plotbudget import Plot, PlotBudget
from fsaccept.reporting.runreport import Test
from fsaccept.reporting.verdicts import FAIL, INVALID, PASS, spec_of_case

#: A figure above its bound by more than this share is INVALID unless the reference
#: says otherwise: the components' own figures are single runs, a quarter leaves room
#: for their noise.
DEFAULT_ABOVE_BOUND_TOLERANCE = 0.25
#: What a figure kind is called in the report.
KIND_WORDS = {"write": "write bandwidth", "read": "read bandwidth"}
#: The figures' unit (the components' ceilings are in it).
UNIT = "MiB/s"
NOT_JUDGED = "—"


@dataclass(frozen=True)
class Rules:
    """The reference's ``components:`` section."""

    efficiency_min: float | None = None
    above_bound_tolerance: float = DEFAULT_ABOVE_BOUND_TOLERANCE

    @classmethod
    def of(cls, reference: Any) -> "Rules":
        data = getattr(reference, "data", None)
        section = data.get("components") if isinstance(data, dict) else None
        section = section if isinstance(section, dict) else {}
        low = section.get("efficiency_min")
        return cls(float(low) if low is not None else None,
                   float(section.get("above_bound_tolerance",
                                     DEFAULT_ABOVE_BOUND_TOLERANCE)))


@dataclass(frozen=True)
class Part:
    """One component's ceiling of one kind: MiB/s, or None and why not."""

    component: str
    value: float | None
    how: str

    @property
    def text(self) -> str:
        return (f"{format_number(self.value)} {UNIT} ({self.how})" if self.value is not None
                else f"not measured ({self.how})")


@dataclass(frozen=True)
class KindBound:
    """The bound of one figure kind over the whole job, and its parts."""

    kind: str
    parts: tuple[Part, ...]
    bound: components.Bound | None
    #: The target (``targets.<name>``; "": the single one).
    target: str = ""

    @property
    def words(self) -> str:
        return KIND_WORDS[self.kind]

    def part(self, component: str) -> Part:
        return next(p for p in self.parts if p.component == component)

    @property
    def text(self) -> str:
        return f"{format_number(self.bound.value)} {UNIT}" if self.bound else "—"


@dataclass(frozen=True)
class Judged:
    """One figure against its bound on its test's nodes."""

    test: str
    figure: str
    kind: str
    value: float
    of_kind: KindBound
    efficiency: float | None
    limit: str
    verdict: str     #: PASS, FAIL, INVALID, or "—" (no bound, or the test is INVALID)
    reason: str = ""

    @property
    def bound(self) -> components.Bound | None:
        return self.of_kind.bound

    @property
    def binding(self) -> str:
        return self.bound.binding if self.bound else "—"

    @property
    def efficiency_text(self) -> str:
        return f"{100 * self.efficiency:.1f} %" if self.efficiency is not None else "—"


@dataclass
class BoundSection:
    """The bound per kind, each bounded figure judged; what blocks the sign-off."""

    kinds: list[KindBound] = field(default_factory=list)
    figures: list[Judged] = field(default_factory=list)
    rules: Rules = field(default_factory=Rules)
    failures: list[str] = field(default_factory=list)
    incomplete: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.kinds)


def _ceilings(tests: Sequence[Test]) -> dict[str, dict[str, list[tuple[Test, Ceiling]]]]:
    """target -> component -> its tests and their ceilings, in the run's order."""
    out: dict[str, dict[str, list[tuple[Test, Ceiling]]]] = {}
    for t in tests:
        spec = spec_of_case(t.case)
        if spec is not None and spec.component in CEILINGS:
            out.setdefault(t.target, {}).setdefault(spec.component, []).append(
                (t, CEILINGS[spec.component](t)))
    return out


def kind_bound(kind: str, measured: dict[str, list[tuple[Test, Ceiling]]],
               nodes: Sequence[str] | None, target: str = "") -> KindBound:
    """The bound of ``kind`` for a test on ``nodes`` (None: the whole job), from the
    component tests of its target."""
    parts = []
    for name in components.COMPONENTS:
        found = [(t, c) for t, c in measured.get(name, [])
                 if kind in (spec_of_case(t.case).ceiling_kinds or ())]
        if not found:
            parts.append(Part(name, None, "no check of it ran" if not measured.get(name)
                              else f"its check does not measure {KIND_WORDS[kind]}"))
            continue
        t, ceiling = found[-1]
        if t.verdict == INVALID:
            parts.append(Part(name, None, f"{t.name} is INVALID"))
            continue
        value, how = ceiling.of(nodes, kind)
        if value is not None and not (math.isfinite(value) and value > 0):
            value, how = None, f"{t.name} measured {value:g} MiB/s, no ceiling"
        parts.append(Part(name, value, f"{how}, {t.name}" if value is not None else how))
    return KindBound(kind, tuple(parts),
                     components.bound({p.component: p.value for p in parts}), target)


def bound_section(tests: Sequence[Test], reference: Any = None) -> BoundSection:
    """The bound of each kind and every bounded figure judged (none: no component test
    ran, no section)."""
    measured = _ceilings(tests)
    if not measured:
        return BoundSection()
    rules = Rules.of(reference)
    section = BoundSection(rules=rules)
    section.kinds = [kind_bound(k, by_component, None, target)
                     for target, by_component in measured.items() for k in BOUND_KINDS]
    for t in tests:
        spec = spec_of_case(t.case)
        if spec is None or not spec.bounded or t.target not in measured:
            continue
        nodelist = t.case.get("job_nodelist")
        nodes = [str(n) for n in nodelist] if isinstance(nodelist, list) and nodelist \
            else None
        for fr in t.figures:
            kind = spec.bounded.get(fr.name)
            if kind is None or fr.value is None:
                continue
            judged = judge(t, fr.name, kind, fr.value,
                           kind_bound(kind, measured[t.target], nodes, t.target), rules)
            section.figures.append(judged)
            if judged.verdict in (FAIL, INVALID):
                section.failures.append(f"{t.name}: {fr.name} {judged.verdict} against "
                                        f"the components' bound: {judged.reason}")
    return section


def judge(t: Test, figure: str, kind: str, value: float, of_kind: KindBound,
          rules: Rules) -> Judged:
    """One figure against its bound, by the reference's rules."""
    tolerance = rules.above_bound_tolerance
    limit = (f"≤ {1 + tolerance:.2f} x" + (f", ≥ {rules.efficiency_min:.2f} x"
                                          if rules.efficiency_min is not None else ""))
    bound = of_kind.bound
    if not math.isfinite(value) or value < 0:
        return Judged(t.name, figure, kind, value, of_kind, None, limit, NOT_JUDGED,
                      f"{value!r} is not a figure")
    if bound is None:
        return Judged(t.name, figure, kind, value, of_kind, None, NOT_JUDGED, NOT_JUDGED,
                      f"no component measured {KIND_WORDS[kind]}")
    efficiency = bound.efficiency(value)
    part = of_kind.part(bound.binding)
    said = (f"{format_number(value)} {UNIT} is {100 * efficiency:.1f} % of the bound, "
            f"{format_number(bound.value)} {UNIT}, set by the {bound.binding} "
            f"({part.how})")
    if t.verdict == INVALID:
        return Judged(t.name, figure, kind, value, of_kind, efficiency, limit, NOT_JUDGED,
                      f"{t.name} is INVALID")
    if efficiency > 1 + tolerance:
        return Judged(t.name, figure, kind, value, of_kind, efficiency, limit, INVALID,
                      f"{said}: faster than the measured components can deliver, by more "
                      f"than the tolerance {tolerance:g}: served from a cache; the "
                      "dataset must exceed the servers' and clients' memory")
    if rules.efficiency_min is not None and efficiency < rules.efficiency_min:
        return Judged(t.name, figure, kind, value, of_kind, efficiency, limit, FAIL,
                      f"{said}: below components.efficiency_min {rules.efficiency_min:g}")
    return Judged(t.name, figure, kind, value, of_kind, efficiency, limit, PASS, said)


def drawn(section: BoundSection, budget: PlotBudget) -> list[Plot]:
    """The section's charts through the report's plot budget: one per figure kind (and
    target) with a bound (:func:`plot`)."""
    charts = [budget.draw(
        f"bound-{k.kind}{'-' + k.target if k.target else ''}", f"\0bound\0{k.target}\0{k.kind}",
        f"The bound of the {k.words}{f' ({k.target})' if k.target else ''}",
        lambda k=k: plot(k, [f for f in section.figures
                             if (f.kind, f.of_kind.target) == (k.kind, k.target)]))
        for k in section.kinds if k.bound is not None] if budget.drawing else []
    return [c for c in charts if c]


def plot(kind: KindBound, figures: Sequence[Judged]) -> bytes | None:
    """One figure kind: each component's ceiling as a bar (one not measured is named,
    undrawn), the bound a line, each of its figures a marker, so that the limit shows
    at a glance.  None without a bound."""
    from fsaccept.reporting.plots import _drawable, _png, _pyplot

    if kind.bound is None or not _drawable(kind.bound.value):
        return None
    parts = [p for p in kind.parts if p.value is not None and _drawable(p.value)]
    shown = [f for f in figures if _drawable(f.value)][:12]
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.4, 1.3 + 0.32 * (len(parts) + len(shown))),
                           layout="constrained")
    labels = [p.component for p in parts] + [f"{f.test[:28]}: {f.figure[:20]}"
                                             for f in shown]
    colors = (["#b8c4d6" if p.component != kind.bound.binding else "#1a56b0"
               for p in parts]
              + [{PASS: "#1f6f3f", FAIL: "#b00020", INVALID: "#b00020"}.get(f.verdict,
                                                                             "#888")
                 for f in shown])
    values = [p.value for p in parts] + [f.value for f in shown]
    bars = ax.barh(range(len(values)), values, color=colors)
    ax.bar_label(bars, labels=[f"{format_number(v)} {UNIT}" for v in values], fontsize=7,
                 padding=2)
    ax.set_yticks(range(len(values)), labels, fontsize=7)
    ax.invert_yaxis()
    ax.axvline(kind.bound.value, color="black", linestyle="--", linewidth=1,
               label=f"bound {format_number(kind.bound.value)} {UNIT} "
                     f"({kind.bound.binding})")
    ax.set_xlim(0, max(values) * 1.3)
    missing = [p.component for p in kind.parts if p.value is None]
    ax.set_xlabel(UNIT + (f"; not measured: {', '.join(missing)}" if missing else ""),
                  fontsize=8)
    ax.tick_params(labelsize=8)
    ax.set_title(f"{kind.words}{f' ({kind.target})' if kind.target else ''}: each "
                 "component, the bound, each figure", fontsize=9, loc="left")
    ax.legend(fontsize=7, loc="lower right")
    return _png(fig)
