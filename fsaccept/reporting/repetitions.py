"""A test's repetitions judged as a whole: as many as its entry asks (``repetitions``),
its thresholds applied to the statistic its entry declares (``judge``), and no judged
figure noisier over them than its entry allows (``max_cov``).

Each repetition is a test case of its own (ReFrame's ``--repeat``), judged by the same
rules as a single run (:func:`fsaccept.reporting.runreport.tests_of`); the test's
verdict is the worst of its repetitions' and of these.  ReFrame applies the thresholds
to each run.  With ``judge: min`` that stands: every repetition must pass, as a
guarantee must.  With ``judge: mean`` (the default), a run that failed on its
thresholds alone is not a failure of the test (:func:`on_the_mean`); the thresholds
judge the mean of the runs instead (:func:`repetition_verdicts`).  Every other rule of a
run (an INVALID run, a figure no file system can have) still judges each one.  These
rules apply to a test of its benchmark's own catalogue, its entry verified; a
condition's variant (degraded, filled, a sweep's point) is judged by its condition, and
without a verified reference every run is judged.

Pure: the verified reference's entry and the test's figures in, verdicts out.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from typing import Any

from fsaccept.benchmarks import registry
from fsaccept.benchmarks.catalogue import ACCEPTANCE, TestSpec
from fsaccept.core.formatting import format_quantity
from fsaccept.core.reference import Repeats
from fsaccept.core.statistics import noise_reason, spread
from fsaccept.reporting.case import Case
from fsaccept.reporting.verdicts import FAIL, INVALID, PASS, Verdict, verdict_of


def asked_of(spec: TestSpec | None, reference: Any) -> tuple[Repeats, str] | None:
    """What the test's entry asks of its repetitions, and where the entry is
    (``tests.ior_write_bandwidth``); None when nothing is judged here: no verified
    reference (``reference``: the verified file with the test's target selected), not a
    test of its benchmark's own catalogue, or no entry."""
    if spec is None or spec.role != ACCEPTANCE or reference is None:
        return None
    bench = registry.BENCHMARKS.get(spec.benchmark)
    entry = reference.entries.get(spec.key)
    if bench is None or spec not in bench.tests or not isinstance(entry, dict):
        return None
    return Repeats.of(entry), f"{reference.target.tests_where}.{spec.key}"


def failed_on_thresholds_alone(tc: Case) -> bool:
    """Whether ReFrame failed the run on its thresholds and nothing else: failed in its
    performance stage, each figure it failed beyond that figure's limit."""
    if verdict_of(tc).verdict != FAIL:
        return False
    failed = [f for f in tc.figures if f.result == "fail"]
    return bool(failed) and all(
        f.value is not None and ((f.lower_limit is not None and f.value < f.lower_limit)
                                 or (f.upper_limit is not None and f.value > f.upper_limit))
        for f in failed)


def on_the_mean(spec: TestSpec | None, reference: Any, cases: list[Case],
                verdicts: list[Verdict], looser: Any) -> list[Verdict]:
    """The repetitions' verdicts as the entry's judge takes them: with ``judge: mean``
    and more than one run, a run that failed on its thresholds alone passes (its
    thresholds, checked by ``looser(case)`` against the verified entry first, judge the
    mean instead: :func:`repetition_verdicts`).  Otherwise ``verdicts`` as they are."""
    asked = asked_of(spec, reference)
    if asked is None or asked[0].judge != "mean" or len(cases) < 2:
        return verdicts
    out = []
    for tc, v in zip(cases, verdicts):
        if v.verdict == FAIL and failed_on_thresholds_alone(tc):
            wrong = looser(tc)
            v = Verdict(INVALID, "; ".join(wrong)) if wrong else Verdict(PASS)
        out.append(v)
    return out


def _mean_failure(row: Any) -> str | None:
    """'write_bandwidth: the mean 412 MiB/s of 3 repetitions is below the threshold
    450 MiB/s' when the mean misses the strictest limit its runs recorded, else None."""
    samples = [f for f in row.samples if f.value is not None]
    if len(samples) < 2:
        return None
    mean = statistics.fmean(f.value for f in samples)
    lows = [f.lower_limit for f in samples if f.lower_limit is not None]
    highs = [f.upper_limit for f in samples if f.upper_limit is not None]
    n = f"{len(samples)} repetitions"
    if lows and mean < max(lows):
        return (f"{row.name}: the mean {format_quantity(mean, row.unit)} of {n} is below the "
                f"threshold {format_quantity(max(lows), row.unit)}")
    if highs and mean > min(highs):
        return (f"{row.name}: the mean {format_quantity(mean, row.unit)} of {n} is above the "
                f"limit {format_quantity(min(highs), row.unit)}")
    return None


def repetition_verdicts(spec: TestSpec | None, reference: Any, runs: int,
                        rows: Iterable[Any]) -> list[Verdict]:
    """What the test's ``runs`` repetitions are judged by beyond each one's own verdict:
    too few for its entry, the mean beyond a threshold (``judge: mean``), a judged
    figure too noisy.  ``reference``: as :func:`asked_of`'s.  ``rows``: its figures over
    the repetitions (name, unit, samples, values, threshold)."""
    said = asked_of(spec, reference)
    if said is None:
        return []
    asked, where = said
    rows = list(rows)
    out = []
    if runs < asked.count:
        out.append(Verdict(INVALID, (
            f"lighter than the contract: {runs} repetition{'s' if runs != 1 else ''}, "
            f"{where}.repetitions asks {asked.count} (scripts/acceptance repeats the tests "
            f"as the reference file asks; by hand: --repeat {asked.count})")))
    if asked.judge == "mean" and runs > 1:
        for row in rows:
            failed = _mean_failure(row) if row.threshold.judged else None
            if failed:
                out.append(Verdict(FAIL, f"{failed} ({where}.judge: mean)"))
    if asked.max_cov is None or runs < 2:
        return out
    for row in rows:
        if not row.threshold.judged:
            continue
        try:
            said_noise = noise_reason(spread(row.values), asked.max_cov)
        except ValueError:
            continue  # a figure no file system can have: its own rules say so
        if said_noise:
            out.append(Verdict(INVALID, f"{row.name}: {said_noise} ({where}.max_cov)"))
    return out
