"""The data a test wrote (``data_pattern``) against the session's data-reduction probe:
:func:`fsaccept.core.reduction.reducible_data_reasons`, by the benchmark's own rule on
its pattern (``Benchmark.pattern_reducible``: a benchmark with none writes no data the
probe's result bears on).
"""

from __future__ import annotations

import re

from fsaccept.benchmarks import registry
from fsaccept.benchmarks.catalogue import ACCEPTANCE, SCALING, TestSpec
from fsaccept.core import reduction
from fsaccept.reporting.case import Case
from fsaccept.reporting.signoff.common import SessionEvidence, fio_kind


def _reducible(label: str) -> tuple[str, bool] | None:
    """(the pattern's words, whether the benchmark's own rule calls it reducible) of a
    recorded ``data_pattern`` ('ior random (irreducible)'): the label's own words on
    reducibility are not taken on trust."""
    match = re.match(r"(\S+) (\S+) \(", label)
    if not match or match.group(1) not in registry.BENCHMARKS:
        return None
    bench = registry.BENCHMARKS[match.group(1)]
    if bench.data_patterns and match.group(2) not in bench.data_patterns:
        return None  # not a pattern it writes: no rule says what it is
    rule = bench.pattern_reducible
    return label, (rule(match.group(2)) if rule else True)


def reduction_reasons(case: Case, spec: TestSpec,
                       session: SessionEvidence) -> list[str]:
    result = session.probes.get(str(case.get("target_mount")))
    bench = registry.BENCHMARKS.get(spec.benchmark)
    # A sweep's point is a rate as its healthy test's is; only a benchmark whose record
    # rules on its patterns writes data the probe bears on.
    if result is None or spec.role not in (ACCEPTANCE, SCALING) or bench is None \
            or bench.pattern_reducible is None:
        return []
    if not spec.reduction_matters:  # a count of wrong transfers is not a rate
        return []
    label = case.get("data_pattern")
    if not label:
        kind = fio_kind(spec)
        if kind is not None and kind.metadata:  # fio's metadata test writes no data
            return []
        return ["evidence missing: no data_pattern, and the session's probe found the file "
                "system reducing data"]
    read = _reducible(str(label))
    if read is None:
        return [f"data_pattern {str(label)[:80]!r} is not one fsaccept writes"]
    return reduction.reducible_data_reasons(read[0], read[1], result)
