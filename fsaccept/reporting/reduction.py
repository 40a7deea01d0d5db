"""The report's data-reduction section: what the probe measured (``DataReductionProbe``,
:mod:`fsaccept.core.reduction`) and what data each IOR and fio figure was measured with."""

from __future__ import annotations

from typing import Any

PROBE = "DataReductionProbe"


def data_reduction_lines(tests: list[Any]) -> list[str]:
    """Sentences for the section: the probe's result (or that it did not run), then each
    test whose figure was measured with reducible data (the reference asked for it)."""
    lines = []
    probes = [t for t in tests if t.name.split()[0] == PROBE]
    for t in probes:
        case = t.case
        text = case.get("reduction_summary") or f"the probe did not measure ({t.verdict})"
        lines.append(f"Data-reduction probe: {text}.")
    pattern_tests = [t for t in tests if isinstance(t.case.get("data_pattern"), str)
                     and t.case.get("data_pattern")]
    if not probes and pattern_tests:
        lines.append("Data-reduction probe: not run in this session: figures measured with "
                     "reducible data were not checked against the file system's reduction.")
    for t in pattern_tests:
        if "(reducible" in t.case["data_pattern"]:
            lines.append(f"{t.name}: measured with {t.case['data_pattern']}.")
    if pattern_tests and not any("(reducible" in t.case["data_pattern"]
                                 for t in pattern_tests):
        lines.append("Every IOR and fio figure was measured with irreducible data "
                     "(IOR -l random; fio refill_buffers).")
    return lines
