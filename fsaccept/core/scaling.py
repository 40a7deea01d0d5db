"""Scaling sweeps: the points a test is measured at, and a curve judged by its shape.

The reference file's ``sweeps:`` section (:class:`Sweeps`, defaults when it is absent)
says which tests are swept, the points of each dimension (client nodes, ranks per node,
IOR transfer sizes), the least parallel efficiency a curve must keep at its largest point
against linear scaling from its smallest (``min_efficiency``), and optional thresholds at
single points.  :func:`judge_curve` judges one measured curve: the live sweep's points
and the sign-off both come here.  Pure: no ReFrame, no file.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from fsaccept.core.units import KIB, MIB, format_size, parse_size

#: The swept dimensions, as the reference file names them; ``stripe``: a Lustre striping
#: (count, size), the points a matrix of stripe counts and sizes.
NODES, RANKS, TRANSFER, STRIPE = "nodes", "ranks_per_node", "transfer_size", "stripe"
DIMENSIONS = (NODES, RANKS, TRANSFER, STRIPE)
#: The reference section's key for each dimension's points.
SECTION_KEYS = {NODES: "nodes", RANKS: "ranks_per_node", TRANSFER: "transfer_sizes",
                STRIPE: "stripes"}
#: Dimensions only a file system of this type has.
ONLY_ON = {STRIPE: "lustre"}
#: Lustre stripe sizes are multiples of 64 KiB.
STRIPE_UNIT = 64 * KIB
#: Dimensions along which linear scaling is the expectation (bandwidth over transfer
#: sizes is judged by its points' thresholds only).
EFFICIENCY_DIMENSIONS = (NODES, RANKS)

#: Default points: 1, 2, 4 ... 128 client nodes (those beyond a test's node fraction of
#: the partition are skipped when set up), 1 ... 64 ranks per node (those beyond a
#: node's cores likewise), transfers of 64 KiB to 16 MiB.
DEFAULT_POINTS: dict[str, tuple[int, ...]] = {
    NODES: tuple(2**i for i in range(8)),
    RANKS: tuple(2**i for i in range(7)),
    TRANSFER: (64 * KIB, 256 * KIB, MIB, 4 * MIB, 16 * MIB),
}
#: Default stripe matrix (Lustre targets only): 1, 4 and all (-1) OSTs x 1, 4, 16 MiB.
DEFAULT_STRIPES = {"counts": (1, 4, -1), "sizes": (MIB, 4 * MIB, 16 * MIB)}


def applies(dimension: str, fstype: str) -> bool:
    """Whether a dimension can be swept on a target of this file-system type."""
    return ONLY_ON.get(dimension, fstype) == fstype


def stripe_points(counts: Any, sizes: Any) -> tuple[tuple[int, int], ...]:
    """The matrix: each count with each size."""
    return tuple((int(c), parse_size(s)) for c in counts for s in sizes)
DEFAULT_MIN_EFFICIENCY = 0.7
#: Most points one dimension may have: each point is a job.
MAX_POINTS = 16

PASS, FAIL, INCOMPLETE = "PASS", "FAIL", "INCOMPLETE"

#: How a point skipped at set-up for lying beyond what the partition allows starts its
#: reason: the curve ends before it (not a missing point).
BEYOND = "beyond what the partition allows:"
#: ... or below what the test needs (mdtest stats and reads on another node: 2 at least):
#: its curve starts at the next point.
BELOW = "below what the test needs:"


def label(dimension: str, x: Any) -> str:
    """A point as people read it (and ReFrame names it): '4', '1MiB', '4x1MiB'."""
    if dimension == STRIPE:
        return f"{x[0]}x{format_size(x[1])}"
    return format_size(int(x)) if dimension == TRANSFER else f"{x:g}"


def stripe_of(text: str) -> tuple[int, int]:
    """A stripe point from its label ('-1x8MiB'); ValueError when it is not one."""
    count, sep, size = str(text).partition("x")
    if not sep or not re.fullmatch(r"-?\d+", count):
        raise ValueError(f"{text!r} is not a stripe point (COUNTxSIZE)")
    return int(count), parse_size(size)


@dataclass(frozen=True)
class PointThreshold:
    """A floor at one point of one test's curve (``sweeps.thresholds[i]``)."""

    test: str
    dimension: str
    x: int
    value: float
    unit: str
    tolerance: float = 0.0

    @property
    def floor(self) -> float:
        """The least figure that passes (the value less its tolerance)."""
        return self.value * (1 - self.tolerance)


@dataclass(frozen=True)
class Sweeps:
    """The reference file's ``sweeps:`` section, with its defaults."""

    #: Keys under ``tests:`` swept; None: every test the catalogue can sweep that the
    #: file defines.
    tests: tuple[str, ...] | None = None
    points: dict[str, tuple] = field(default_factory=lambda: {
        **DEFAULT_POINTS, STRIPE: stripe_points(**DEFAULT_STRIPES)})
    min_efficiency: float = DEFAULT_MIN_EFFICIENCY
    thresholds: tuple[PointThreshold, ...] = ()

    @classmethod
    def of(cls, section: dict[str, Any] | None) -> "Sweeps":
        """From a schema-valid ``sweeps:`` section (None or absent keys: the defaults)."""
        section = section or {}
        points: dict[str, tuple] = {dim: tuple(_number(v, dim) for v in section[key])
                                    if key in section else DEFAULT_POINTS[dim]
                                    for dim, key in SECTION_KEYS.items() if dim != STRIPE}
        stripes = {**DEFAULT_STRIPES, **(section.get("stripes") or {})}
        points[STRIPE] = stripe_points(stripes["counts"], stripes["sizes"])
        thresholds = tuple(
            PointThreshold(p["test"], dim, _number(p[dim], dim),
                           float(p["threshold"]["value"]), p["threshold"]["unit"],
                           float(p["threshold"].get("tolerance", 0.0)))
            for p in section.get("thresholds") or ()
            for dim in DIMENSIONS if dim in p and dim != STRIPE)
        tests = section.get("tests")
        return cls(tests=tuple(tests) if tests is not None else None, points=points,
                   min_efficiency=section.get("min_efficiency", DEFAULT_MIN_EFFICIENCY),
                   thresholds=thresholds)

    def threshold(self, test: str, dimension: str, x: float) -> PointThreshold | None:
        return next((t for t in self.thresholds if (t.test, t.dimension, t.x)
                     == (test, dimension, x)), None)

    def efficiency_floor(self, dimension: str) -> float | None:
        return self.min_efficiency if dimension in EFFICIENCY_DIMENSIONS else None


def _number(value: Any, dimension: str) -> Any:
    if dimension == STRIPE:
        return stripe_of(value)
    return parse_size(value) if dimension == TRANSFER else int(value)


def stripes_errors(where: str, section: Any) -> list[str]:
    """The stripe matrix (``sweeps.stripes``: counts and sizes): each count -1 (all OSTs)
    or at least 1, each size a multiple of 64 KiB (Lustre's), none twice."""
    out = []
    counts, sizes = section.get("counts", ()), section.get("sizes", ())
    for i, c in enumerate(counts):
        if c == 0:
            out.append(f"{where}.counts[{i}]: 0 is no stripe count: -1 (all OSTs) or at "
                       "least 1")
        if c in counts[:i]:
            out.append(f"{where}.counts[{i}]: {c} is count {counts.index(c)} already")
    numbers = [parse_size(s) for s in sizes]
    for i, n in enumerate(numbers):
        if n % STRIPE_UNIT:
            out.append(f"{where}.sizes[{i}]: {format_size(n)} is not a multiple of 64KiB "
                       "(Lustre's stripe unit)")
        if n in numbers[:i]:
            out.append(f"{where}.sizes[{i}]: {format_size(n)} is size {numbers.index(n)} "
                       "already")
    return out


def points_errors(where: str, values: Any, dimension: str) -> list[str]:
    """What is wrong with one dimension's points (``where`` names the key): each a whole
    number of at least 1 (a size for transfers), ascending, none twice, at most
    MAX_POINTS, and at least two (a curve)."""
    if not isinstance(values, list):
        return [f"{where}: {values!r} is not a list of points"]
    out, numbers = [], []
    for i, v in enumerate(values):
        try:
            if dimension != TRANSFER and (isinstance(v, bool) or not isinstance(v, int)):
                raise ValueError(f"{v!r} is not a whole number")
            n = _number(v, dimension)
            if n < 1:
                raise ValueError(f"{v!r} is not at least 1")
        except (ValueError, TypeError) as err:
            out.append(f"{where}[{i}]: {err}")
            continue
        numbers.append((i, n))
    if out:
        return out
    if len(values) < 2:
        out.append(f"{where}: {len(values)} point(s): a curve needs at least 2")
    if len(values) > MAX_POINTS:
        out.append(f"{where}: {len(values)} points: at most {MAX_POINTS} (each is a job)")
    seen: dict[int, int] = {}
    for i, n in numbers:
        if n in seen:
            out.append(f"{where}[{i}]: {label(dimension, n)} is point {seen[n]} already")
        seen.setdefault(n, i)
    for (i, a), (j, b) in zip(numbers, numbers[1:]):
        if b < a:
            out.append(f"{where}[{j}]: {label(dimension, b)} comes after "
                       f"{label(dimension, a)}: write the points in ascending order")
    return out


def point_entry(entry: dict[str, Any], dimension: str, x: int) -> dict[str, Any]:
    """A test's reference entry at one point of its sweep (nodes: as it is; the node
    count is the placement's).  The data each node (ranks) or each rank (transfers)
    moves stays the entry's: fewer segments of a larger block."""
    out = dict(entry)
    segments = entry.get("segments")
    if dimension == RANKS:
        out["ranks_per_node"] = x
        if segments:
            out["segments"] = max(1, segments * entry.get("ranks_per_node", 1) // x)
    elif dimension == STRIPE:
        out["stripe"] = {"count": x[0], "size": x[1]}
    elif dimension == TRANSFER:
        block = parse_size(entry.get("block_size", x))
        out["transfer_size"], out["block_size"] = x, max(block, x)
        if segments:
            out["segments"] = max(1, segments * block // max(block, x))
    return out


def node_cpus(scontrol_line: str) -> int | None:
    """A node's CPUs as ``scontrol show node`` prints them (``CPUTot=``)."""
    match = re.search(r"\bCPUTot=(\d+)", scontrol_line or "")
    return int(match.group(1)) if match else None


@dataclass(frozen=True)
class Point:
    """One measured point of a curve: its run's figure, or why it has none."""

    x: float
    figure: float | None
    valid: bool
    reason: str = ""
    #: A floor at this point (None: only the curve's shape judges it).
    threshold: float | None = None


@dataclass(frozen=True)
class CurveVerdict:
    verdict: str
    reasons: tuple[str, ...]
    #: (largest / smallest figure) / (largest / smallest point): 1.0 is linear scaling.
    efficiency: float | None


def efficiency(first: Point, last: Point) -> float | None:
    """Parallel efficiency at ``last`` against linear scaling from ``first``."""
    if not (first.figure and last.figure and first.x > 0 and last.x > first.x):
        return None
    return (last.figure / first.figure) / (last.x / first.x)


def _usable(p: Point) -> bool:
    return (p.valid and p.figure is not None and isinstance(p.figure, (int, float))
            and math.isfinite(p.figure) and p.figure > 0)


def judge_matrix(points: list[Point]) -> CurveVerdict:
    """A stripe matrix: no shape expected (the figures are shown side by side);
    INCOMPLETE when a point's run is not valid or missing, or two runs share a point."""
    missing = [f"at {label(STRIPE, p.x)}: {p.reason or 'no figure'}" for p in points
               if not _usable(p)]
    xs = [p.x for p in points]
    missing += [f"two runs at {label(STRIPE, x)}" for x in sorted(set(xs)) if xs.count(x) > 1]
    if not points:
        missing.append("no point")
    return CurveVerdict(INCOMPLETE if missing else PASS, tuple(missing), None)


def judge_curve(points: list[Point], min_efficiency: float | None, dimension: str = NODES,
                unit: str = "") -> CurveVerdict:
    """PASS, FAIL or INCOMPLETE, with the reasons and the efficiency: FAIL when a valid
    point is below its own threshold, or the efficiency at the largest point is below
    ``min_efficiency`` (None: not judged); else INCOMPLETE when a point's run is not
    valid (INVALID, missing, no usable figure) or the curve has fewer than 2 points or
    two at one x; else PASS."""
    def at(p: Point) -> str:
        return f"at {label(dimension, p.x)}"

    fails, missing = [], []
    xs = [p.x for p in points]
    if any(not isinstance(x, (int, float)) or not math.isfinite(x) or x <= 0 for x in xs):
        return CurveVerdict(INCOMPLETE, ("a point is not a positive number",), None)
    twice = sorted({x for x in xs if xs.count(x) > 1})
    if twice:
        missing.append(f"two runs at {', '.join(label(dimension, x) for x in twice)}: "
                       "which one counts is not known")
    points = sorted(points, key=lambda p: p.x)
    for p in points:
        if not _usable(p):
            why = p.reason or ("no figure" if p.figure is None else
                               f"{p.figure!r} is not a figure a file system can have")
            missing.append(f"{at(p)}: {why}")
        elif p.threshold is not None and p.figure < p.threshold:
            fails.append(f"{at(p)}: {p.figure:g} {unit} is below its threshold "
                         f"{p.threshold:g} {unit}".replace("  ", " "))
    if len(points) < 2:
        missing.append(f"{len(points)} point(s): a curve needs at least 2")
    eff = efficiency(points[0], points[-1]) if dimension in EFFICIENCY_DIMENSIONS and len(
        points) >= 2 and all(
        _usable(p) for p in (points[0], points[-1])) and not twice else None
    if eff is not None and min_efficiency is not None and eff < min_efficiency:
        fails.append(f"parallel efficiency {eff:.2f} at {label(dimension, points[-1].x)} "
                     f"against linear scaling from {label(dimension, points[0].x)}: below "
                     f"{min_efficiency:g}")
    if fails:
        return CurveVerdict(FAIL, tuple(fails + missing), eff)
    if missing:
        return CurveVerdict(INCOMPLETE, tuple(missing), eff)
    return CurveVerdict(PASS, (), eff)
