"""A test's repetitions judged as a whole: as many as its entry asks (``repetitions``),
and no judged figure noisier over them than its entry allows (``max_cov``).

Each repetition is a test case of its own (ReFrame's ``--repeat``), judged by the same
rules as a single run (:func:`fsaccept.reporting.runreport.tests_of`); the test's
verdict is the worst of its repetitions' and of these.  Both rules only make a verdict
stricter: a repetition that fails its threshold fails the test (every repetition is
judged, as a guarantee is).  They apply to a test of its benchmark's own catalogue; a
condition's variant (degraded, filled, a sweep's point) is judged by its condition.

Pure: the verified reference's entry and the test's figures in, verdicts out.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from fsaccept.benchmarks import registry
from fsaccept.benchmarks.catalogue import ACCEPTANCE, TestSpec
from fsaccept.core.reference import Repeats
from fsaccept.core.statistics import noise_reason, spread
from fsaccept.reporting.verdicts import INVALID, Verdict


def repetition_verdicts(spec: TestSpec | None, reference: Any, runs: int,
                        rows: Iterable[Any]) -> list[Verdict]:
    """What the test's ``runs`` repetitions are judged by beyond each one's own verdict:
    too few for its entry (``reference``: the verified file with the test's target
    selected; None: not verified, nothing judged here), a judged figure too noisy.
    ``rows``: its figures over the repetitions (name, values, threshold)."""
    if spec is None or spec.role != ACCEPTANCE or reference is None:
        return []
    bench = registry.BENCHMARKS.get(spec.benchmark)
    entry = reference.entries.get(spec.key)
    if bench is None or spec not in bench.tests or not isinstance(entry, dict):
        return []
    asked = Repeats.of(entry)
    where = f"{reference.target.tests_where}.{spec.key}"
    out = []
    if runs < asked.count:
        out.append(Verdict(INVALID, (
            f"lighter than the contract: {runs} repetition{'s' if runs != 1 else ''}, "
            f"{where}.repetitions asks {asked.count} (scripts/acceptance repeats the tests "
            f"as the reference file asks; by hand: --repeat {asked.count})")))
    if asked.max_cov is None or runs < 2:
        return out
    for row in rows:
        if not row.threshold.judged:
            continue
        try:
            said = noise_reason(spread(row.values), asked.max_cov)
        except ValueError:
            continue  # a figure no file system can have: its own rules say so
        if said:
            out.append(Verdict(INVALID, f"{row.name}: {said} ({where}.max_cov)"))
    return out
