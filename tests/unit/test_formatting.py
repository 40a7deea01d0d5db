"""Figures for people: five significant digits, separators, units (fsaccept.core.formatting),
and no raw float where people read figures (console summary, report.md, report.html,
nightly summary); the exact values stay in the run report."""

import json
import math
import re
from decimal import Decimal
from pathlib import Path

import pytest

from fsaccept.reporting import runreport, sections
from fsaccept.reporting import report as signoff
from fsaccept.reporting import trends
from fsaccept.core import formatting
from fsaccept.core.formatting import format_figure, format_number, mib_to_mb

DATA = Path(__file__).resolve().parent.parent / "data" / "reframe"
REPORTS = sorted(p.name for p in DATA.glob("*.json"))

#: A number with a decimal point (not part of a name or path: IORTest_8dcb3750.2026...).
NUMBER = re.compile(r"(?<![\w/.])\d[\d,]*\.\d+")
#: Provenance quoted as the run logged it: mdtest's summary rows as mdtest printed them;
#: outlier_nodes_named as this captured run logged it (runs now log it readable).
# The benchmarks' own printed numbers, quoted as printed (md-workbench's phase lines too).
# Shown as recorded (a degraded-mode fault's timeline holds its exact epoch times).
QUOTED = ("rate_statistics", "stonewall_create", "outlier_nodes_named", "phase_summary",
          "fault_timeline",
          # IOR's per-rank CSV times, quoted as IOR printed them (checked against it)
          "slowest_rank", "fastest_rank")


def raw_floats(text: str) -> list[str]:
    out = []
    for token in NUMBER.findall(text):
        digits = token.replace(",", "").replace(".", "").lstrip("0")
        if len(digits) > 5:
            out.append(token)
    return out


@pytest.mark.parametrize("value, text", [
    (424.6202964782715, "424.62"),      # the three raw floats
    (5486.8377199999995, "5,486.8"),
    (9758.741849999999, "9,758.7"),
    (3427179.21, "3,427,179"),          # the integer part is never rounded away
    (1987.01, "1,987.0"),
    (45.0, "45"), (45, "45"), (0.9, "0.9"), (45.5, "45.5"),  # short exact values stay
    (0.000123456789, "0.00012346"),
    (-1234.5678, "-1,234.6"),
    (0.0, "0"), (1383, "1,383"), (10**20, "100,000,000,000,000,000,000"),
    (1.7e308, "1.7e+308"), (-1e300, "-1e+300"),
    (None, "—"),
])
def test_format_number(value, text):
    assert format_number(value) == text


def test_nan_and_inf_are_not_made_to_look_like_figures():
    assert format_number(math.nan) == "nan" and format_number(math.inf) == "inf"


def test_format_figure_always_has_the_unit_and_mb_beside_mib():
    assert format_figure(424.6202964782715, "MiB/s") == "424.62 MiB/s (445.25 MB/s)"
    assert format_figure(5486.8377199999995, "IOPS") == "5,486.8 IOPS"
    assert format_figure(9758.741849999999, "ops/s") == "9,758.7 ops/s"
    assert format_figure(None, "MiB/s") == "—"
    # The conversion itself stays exact; only its display is rounded.
    assert mib_to_mb(424.6202964782715) == Decimal("424.6202964782715") * Decimal("1.048576")


@pytest.mark.parametrize("name", REPORTS)
def test_no_raw_float_in_console_summary_or_reports(name):
    report = runreport.load_run_report(DATA / name)
    tests = runreport.tests_of(report)
    assert raw_floats(sections.summary_text(sections.summary_rows(tests))) == []
    ctx = signoff.build_context(report, plots=False)
    for template in ("report.md.j2", "report.html.j2"):
        text = signoff.render(ctx, template)
        # Commands, job scripts and the benchmarks' own messages (INVALID reasons quote
        # the benchmark's printed times) are shown as they are.
        text = re.sub(r"```.*?```|<pre>.*?</pre>", "", text, flags=re.S)
        for t in tests:
            for v in t.verdicts:
                text = text.replace(v.reason, "")
        lines = [ln for ln in text.splitlines() if "1.048576" not in ln
                 and "invalid_reasons" not in ln and not any(k in ln for k in QUOTED)]
        assert raw_floats("\n".join(lines)) == [], (name, template)


def test_exact_values_stay_in_the_run_report():
    raw = json.loads((DATA / "full-suite.json").read_text())
    values = [v[0] for run in raw["runs"] for tc in run["testcases"]
              for v in (tc.get("perfvalues") or {}).values() if v[0] is not None]
    assert any(raw_floats(repr(v)) for v in values)  # the data has raw floats to round
    report = runreport.load_run_report(DATA / "full-suite.json")
    got = [f.value for t in runreport.tests_of(report) for fr in t.figures for f in fr.samples
           if f.value is not None]
    assert sorted(got) == sorted(values)


def test_nightly_summary_has_no_raw_float():
    comps = [trends.Comparison("FioSequentialRead", "local:compute+openmpi",
                               "seq_read_1m_direct_bw", "MiB/s", 424.6202964782715,
                               489.0123456789, -13.1681234, 7),
             trends.Comparison("FioMetadata", "local:compute+openmpi", "filecreate_ops",
                               "ops/s", 9758.741849999999, None, None, 0)]
    text = trends.summary_markdown("local", "uuid", comps, trends.NightlySettings(), [],
                                   [])
    assert raw_floats(text) == []
    assert "424.62 MiB/s" in text and "9,758.7 ops/s" in text and "-13.17 %" in text
    assert raw_floats(comps[0].describe(0.1)) == []


def test_sub_millisecond_times_are_shown_in_a_smaller_unit():
    # md-workbench prints latencies in seconds: a real capture's, as the report shows it.
    from fsaccept.benchmarks.md_workbench.parse import parse_md_workbench
    from fsaccept.reporting import verdicts
    data = Path(__file__).resolve().parents[1] / "data" / "md-workbench" / "basic.txt"
    figures = parse_md_workbench(data.read_text()).figures()
    small = {k: v for k, v in figures.items() if k.endswith("_latency_max") and v < 1e-3}
    assert small
    for name, value in small.items():
        text = formatting.format_figure(value, "s")
        assert re.fullmatch(r"[\d,.]+ µs", text), (name, value, text)
        assert "0.000" not in text
    assert formatting.format_figure(4.5061e-05, "s") == "45.061 µs"
    assert formatting.format_figure(0.0123, "s") == "12.3 ms"
    assert formatting.format_figure(2.5, "s") == "2.5 s"
    assert formatting.format_figure(0, "s") == "0 s"
    assert formatting.format_figure(411.648, "us") == "411.65 us"
    fig = verdicts.Figure("stat_latency_max", 4.5061e-05, "s", 0.0001, None, 0.1, "pass")
    assert verdicts.format_threshold(fig) == "≤ 110 µs (100 + 10 %)"
    fig = verdicts.Figure("stat_latency_max", 4.5e-04, "s", 0.0001, None, 0.1, "fail")
    assert verdicts.figure_failures([fig]) == ["stat_latency_max 450 µs above the limit 110 µs"]


@pytest.mark.parametrize("value, unit, shown", [
    (10_000_000, "us", "10 s"),          # a 10 s latency ceiling, stated in us
    (2539.5, "us", "2.5395 ms"),
    (0.17969, "MiB", "184.00 KiB"),      # a size below a MiB
    (4.5061e-05, "s", "45.061 µs"),
    (3600, "s", "3,600 s"),              # seconds are the largest time unit
    (1987.0, "MiB/s", "1,987 MiB/s"),    # rates keep their unit
    (0, "us", "0 us"),
])
def test_times_and_sizes_read_as_people_write_them(value, unit, shown):
    from fsaccept.core.formatting import format_quantity
    assert format_quantity(value, unit) == shown
