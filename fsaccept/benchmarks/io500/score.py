"""IO500's score, recomputed from its phase scores by its published rule (src/main.c):

- a group (BW, MD) is the geometric mean of its phases' scores, a phase at 0 or below
  left out (of the product and of the root); a group with none left is 0;
- TOTAL = sqrt(BW x MD);
- ``[SCORE]`` counts the standard phases only; ``[SCOREX]`` (extended mode) adds the
  optional ones.

io500 computes with unrounded scores and prints 6 decimals, so the comparison is of
intervals: each printed phase score stands for [s - 5e-7, s + 5e-7], the means are
monotone in each score, and a printed figure agrees when its own half-unit interval
meets the recomputed one.  Pure, standard library only.
"""

from __future__ import annotations

import math
from typing import Any

#: ``run`` below is the parser's ``Io500Run`` (the parser imports this module's table, so
#: this module does not import the parser).
Io500Run = Any

BW, MD, NONE = "BW", "MD", "none"

#: Every phase of io500-isc26_v1 in the order it runs (its ``--list``): name -> (score
#: group, optional: runs in extended mode only).  ``timestamp``, ``ior-rnd4K-easy-read``
#: and the mdworkbench create/delete phases count in no group.
PHASES: dict[str, tuple[str, bool]] = {
    "ior-easy-write": (BW, False), "ior-rnd4K-write": (BW, True),
    "mdtest-easy-write": (MD, False), "ior-rnd1MB-write": (BW, True),
    "mdworkbench-create": (NONE, True), "timestamp": (NONE, False),
    "find-easy": (MD, True), "ior-hard-write": (BW, False),
    "mdtest-hard-write": (MD, False), "find": (MD, False),
    "ior-rnd4K-read": (BW, True), "ior-rnd1MB-read": (BW, True),
    "find-hard": (MD, True), "mdworkbench-bench": (MD, True),
    "ior-easy-read": (BW, False), "mdtest-easy-stat": (MD, False),
    "ior-hard-read": (BW, False), "mdtest-hard-stat": (MD, False),
    "mdworkbench-delete": (NONE, True), "mdtest-easy-delete": (MD, False),
    "mdtest-hard-read": (MD, False), "mdtest-hard-delete": (MD, False),
    "ior-rnd4K-easy-read": (NONE, False),
}

#: Half a unit of the 6 decimals io500 prints every score with.
HALF_ULP = 0.5e-6


def group_phases(group: str, extended: bool) -> list[str]:
    """The phases a group's mean counts: ``[SCORE]`` (standard) or ``[SCOREX]``."""
    return [n for n, (g, opt) in PHASES.items() if g == group and (extended or not opt)]


def _geomean(values: list[float]) -> float:
    kept = [v for v in values if v > 0]
    if not kept:
        return 0.0
    return math.exp(sum(math.log(v) for v in kept) / len(kept))


def _group(run: Io500Run, group: str, extended: bool) -> dict[str, Any]:
    scores = {n: run.phase(n).score for n in group_phases(group, extended)
              if run.phase(n) is not None and run.phase(n).score is not None}
    counted = {n: s for n, s in scores.items() if s > 0}
    # The printed score's interval, kept above 0 (a printed 0.000001 is > 0).
    lo = _geomean([max(s - HALF_ULP, 1e-300) for s in counted.values()])
    hi = _geomean([s + HALF_ULP for s in counted.values()])
    return {"value": _geomean(list(scores.values())), "low": lo, "high": hi,
            "phases": sorted(counted), "left_out": sorted(set(scores) - set(counted))}


def recompute(run: Io500Run, name: str = "SCORE") -> dict[str, Any]:
    """``name`` (``SCORE`` or ``SCOREX``) from the run's phase scores, with its interval."""
    extended = name == "SCOREX"
    bw, md = _group(run, BW, extended), _group(run, MD, extended)
    total = {"value": math.sqrt(bw["value"] * md["value"]),
             "low": math.sqrt(bw["low"] * md["low"]) if bw["phases"] and md["phases"] else 0.0,
             "high": math.sqrt(bw["high"] * md["high"]) if bw["phases"] and md["phases"]
             else 0.0}
    return {"BW": bw, "MD": md, "TOTAL": total}


def recompute_all(run: Io500Run) -> dict[str, Any]:
    """Each score the run printed (or should have), recomputed."""
    names = ["SCORE"] + (["SCOREX"] if run.mode == "extended" else [])
    return {n: recompute(run, n) for n in names if run.phases}


def agrees(printed: float, figure: dict[str, Any]) -> bool:
    """Whether a printed figure's half-unit interval meets the recomputed interval."""
    return printed + HALF_ULP >= figure["low"] and printed - HALF_ULP <= figure["high"]


def mismatches(run: Io500Run) -> list[str]:
    """Each printed score figure the phase scores do not give, naming both values."""
    out = []
    for name, figures in recompute_all(run).items():
        for source, scores in (("result.txt", run.scores), ("the printed line",
                                                           run.printed_scores)):
            score = scores.get(name)
            if score is None:
                continue
            for key, printed in (("BW", score.bw), ("MD", score.md), ("TOTAL", score.total)):
                fig = figures[key]
                if printed is None:
                    out.append(f"[{name}] {key}: {source} holds no number")
                elif not agrees(printed, fig):
                    out.append(f"[{name}] {key}: {source} says {printed:.6f}, the phase "
                               f"scores give {fig['value']:.6f} (IO500's rule; "
                               f"{fig['low']:.6f} to {fig['high']:.6f} with their rounding)")
    return out
