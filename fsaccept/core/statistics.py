"""Repeated measurements of one figure: their spread, a confidence interval for their
mean, whether random error dominates, and the ratio of two such figures with its
interval (is a difference real, or within the noise?).

One measurement is not a result.  A figure measured n times is given as its mean ± its
standard deviation (n, range, the mean's confidence interval from Student's t); a figure
whose coefficient of variation (σ / mean) exceeds what its entry allows is too noisy to
judge.  Two figures are compared by the ratio of their means, B / A, with a confidence
interval from Welch's t-test on the logarithms of the repetitions (a ratio's error is
symmetric on a log scale; Welch: the two sides' variances need not be equal): the
difference is significant when the interval excludes 1.  One new measurement against a
history (a nightly run against the nights before it) is judged by the history's
prediction bound (:meth:`Spread.prediction_bound`): beyond it, the change is more than
the noise.  SciPy computes every interval;
the mean and the standard deviation are the standard library's (``statistics``).

Random errors shrink with repeats; systematic ones (a cache that answered) do not: a
narrow interval says the runs agree, not that they measured the file system.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass

from fsaccept.core.formatting import format_number

#: The confidence of every interval, unless a caller asks for another.
CONFIDENCE = 0.95


def _percent(fraction: float) -> str:
    """``0.95`` -> ``95 %`` (the project's spacing; a figure's own unit is left alone)."""
    return f"{fraction * 100:.0f} %"


@dataclass(frozen=True)
class Spread:
    """A figure's repetitions, in the order they ran.  :func:`spread` makes one of
    figures a file system can have (finite, at least 0); a run report's recorded values,
    shown as they are, make one directly."""

    values: tuple[float, ...]
    confidence: float = CONFIDENCE

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def mean(self) -> float:
        return statistics.fmean(self.values)

    @property
    def sd(self) -> float | None:
        """The sample standard deviation (n - 1); None for one repetition."""
        return statistics.stdev(self.values) if self.n > 1 else None

    @property
    def minimum(self) -> float:
        return min(self.values)

    @property
    def maximum(self) -> float:
        return max(self.values)

    @property
    def cov(self) -> float | None:
        """The coefficient of variation, σ / mean; None for one repetition or a zero mean."""
        sd = self.sd
        return None if sd is None or self.mean == 0 else sd / self.mean

    @property
    def interval(self) -> tuple[float, float] | None:
        """The mean's confidence interval (Student's t, n - 1 degrees of freedom); None
        for one repetition."""
        sd = self.sd
        if sd is None:
            return None
        from scipy import stats  # delayed: SciPy is heavy, and only repeats need it
        if sd == 0:
            return self.mean, self.mean
        low, high = stats.t.interval(self.confidence, self.n - 1, loc=self.mean,
                                     scale=sd / math.sqrt(self.n))
        return float(low), float(high)

    def prediction_bound(self, above: bool, confidence: float) -> float | None:
        """The bound one more measurement of the same kind stays within, at
        ``confidence`` (one-sided): mean + t·σ·√(1 + 1/n) when ``above``, else mean −
        it (Student's t, n − 1 degrees of freedom: a new measurement's own noise and the
        mean's error, both from these repetitions).  None for one repetition."""
        sd = self.sd
        if sd is None:
            return None
        if not 0 < confidence < 1:
            raise ValueError(f"a confidence must lie between 0 and 1, not {confidence!r}")
        from scipy import stats  # delayed, as in interval
        half = float(stats.t.ppf(confidence, self.n - 1)) * sd * math.sqrt(1 + 1 / self.n)
        return self.mean + half if above else self.mean - half

    def text(self, unit: str = "", digits: int = 3) -> str:
        """``412 ± 9 MiB/s (n = 3, range 401 … 420, 95 % CI 390 … 434)``; one
        repetition: ``412 MiB/s (n = 1: no spread)``."""
        u = f" {unit}" if unit else ""
        def g(v: float) -> str:  # rounded to ``digits``, shown as every figure is
            return format_number(float(f"{v:.{digits}g}"))
        if self.sd is None:
            return f"{g(self.mean)}{u} (n = 1: no spread)"
        low, high = self.interval
        return (f"{g(self.mean)} ± {g(self.sd)}{u} (n = {self.n}, range {g(self.minimum)} … "
                f"{g(self.maximum)}, {_percent(self.confidence)} CI {g(low)} … {g(high)})")


def spread(values: Iterable[float], confidence: float = CONFIDENCE) -> Spread:
    """The spread of ``values``; ValueError for none, or for a value that is not a finite
    number at least 0 (a figure no file system can have is no repetition)."""
    vals = tuple(float(v) for v in values)
    if not vals:
        raise ValueError("no repetitions")
    bad = [v for v in vals if not math.isfinite(v) or v < 0]
    if bad:
        raise ValueError(f"a repetition is not a finite figure at least 0: {bad[0]!r}")
    if not 0 < confidence < 1:
        raise ValueError(f"a confidence must lie between 0 and 1, not {confidence!r}")
    return Spread(vals, confidence)


def noise_reason(s: Spread, max_cov: float) -> str | None:
    """The INVALID reason of a figure whose CoV exceeds ``max_cov`` (a fraction), else
    None (one repetition has no CoV to judge: the caller decides whether that is
    allowed)."""
    cov = s.cov
    if cov is None or cov <= max_cov:
        return None
    return (f"too noisy to judge (CoV {_percent(cov)} over {s.n} repetitions, at most "
            f"{_percent(max_cov)}): random error dominates; find what else runs")


@dataclass(frozen=True)
class Ratio:
    """B's figure over A's: the ratio of their means, with its confidence interval."""

    a: Spread
    b: Spread

    @property
    def value(self) -> float:
        return self.b.mean / self.a.mean

    @property
    def interval(self) -> tuple[float, float] | None:
        """The ratio's confidence interval: Welch's t-test on the logarithms of each
        side's repetitions, its interval for the difference of their means, taken back
        by exp; None with one repetition on either side, or a zero figure."""
        if self.a.n < 2 or self.b.n < 2 or 0 in self.a.values or 0 in self.b.values:
            return None
        logs_a = [math.log(v) for v in self.a.values]
        logs_b = [math.log(v) for v in self.b.values]
        if len(set(logs_a)) == 1 and len(set(logs_b)) == 1:
            return self.value, self.value  # no spread on either side: exact
        from scipy import stats  # delayed: SciPy is heavy, and only comparisons need it
        test = stats.ttest_ind(logs_b, logs_a, equal_var=False)
        ci = test.confidence_interval(confidence_level=self.a.confidence)
        # The interval is around the ratio of geometric means; centre it on the ratio of
        # the means, which the report prints.
        centre = sum(logs_b) / len(logs_b) - sum(logs_a) / len(logs_a)
        shift = math.log(self.value) - centre
        return math.exp(ci.low + shift), math.exp(ci.high + shift)

    @property
    def significant(self) -> bool | None:
        """Whether the interval excludes 1; None when no interval can be given."""
        iv = self.interval
        return None if iv is None else not iv[0] <= 1 <= iv[1]

    def text(self, digits: int = 2) -> str:
        """``0.66 ± 0.02 × (95 % CI 0.64 … 0.68: B is slower; significant)``, where
        ± is the interval's larger half; with one repetition on a side, says so.  A
        ratio below 0.1 keeps ``digits`` significant digits (``0.00073 ± 0.00004``:
        two decimals would print 0.00)."""
        if 0 < self.value < 0.1:
            digits = digits - 1 - math.floor(math.log10(self.value))
        r = f"{self.value:.{digits}f}"
        iv = self.interval
        if iv is None:
            side = "A" if self.a.n < 2 else "B"
            why = (f"one repetition on side {side}" if min(self.a.n, self.b.n) < 2
                   else "a zero figure")
            return f"{r} × (no interval can be given: {why})"
        half = max(self.value - iv[0], iv[1] - self.value)
        direction = ("B is higher" if self.value > 1 else "B is lower" if self.value < 1
                     else "equal")
        verdict = "significant" if self.significant else "not significant"
        return (f"{r} ± {half:.{digits}f} × ({_percent(self.a.confidence)} CI "
                f"{iv[0]:.{digits}f} … {iv[1]:.{digits}f}: {direction}; {verdict})")


def ratio(a: Spread, b: Spread) -> Ratio:
    """B over A; ValueError when A's mean is 0 (no ratio) or the confidences differ."""
    if a.mean == 0:
        raise ValueError("A's figure is 0: no ratio")
    if a.confidence != b.confidence:
        raise ValueError(f"confidences differ: {a.confidence} and {b.confidence}")
    return Ratio(a, b)
