"""The sign-off report of a run of very many separately named tests (parameter sweeps,
many-check sites), and plots of hostile figures: built from the real run reports in
tests/data/reframe/, edited in code.  (Speed is measured by bench/bench_report.py.)"""

import copy
import json
import math
from pathlib import Path

import pytest

from fsaccept.reporting import plots, runreport, sections
from fsaccept.reporting import report as signoff

DATA = Path(__file__).resolve().parent.parent / "data" / "reframe"
PNG = b"\x89PNG"


def _cases(name="fio-client.json"):
    data = json.loads((DATA / name).read_text())
    return data, data["runs"][0]["testcases"]


def _perf(case, figure):
    return next(v for k, v in case["perfvalues"].items() if k.endswith(":" + figure))


def _swept(variants):
    """fio-client.json as a parameter sweep and a many-check site would name it: each
    test case ``variants`` times, as ``Check %nodes=N %xfer=X`` variants and as
    ``CheckNNNN`` classes of their own (figures unchanged)."""
    data, cases = _cases()
    out = []
    for tc in cases:
        for i in range(variants):
            name = (f"{tc['name']} %nodes={2 ** (i % 3)} %xfer={i}m" if i % 2 else
                    f"{tc['name']}{i:04d}")
            c = copy.deepcopy(tc)
            c.update(name=name, display_name=name, unique_name=f"{tc['name']}_{i}",
                     uuid=f"{tc['uuid']}-{i}")
            out.append(c)
    data["runs"] = [{**data["runs"][0], "testcases": out}]
    for where in (data["runs"][0], data["session_info"]):
        where.update(num_cases=len(out), num_failures=sum(c["result"] == "fail" for c in out))
    return data


def test_check_family_is_the_class_name_without_parameters_or_a_number():
    assert sections.check_family("IORWriteBandwidth %nodes=4 %xfer=1m") == "IORWriteBandwidth"
    assert sections.check_family("IORWriteBandwidth0042") == "IORWriteBandwidth"
    assert sections.check_family("fio_ost_17") == "fio_ost"
    assert sections.check_family("IORReadDatasetGeneration ~local:compute+openmpi") == \
        "IORReadDatasetGeneration"
    assert sections.check_family("1234") == "1234"  # nothing left: the name itself


def test_a_run_of_many_separately_named_tests_is_summarised_per_check_family(
        tmp_path, monkeypatch):
    """A plot per check family, not per test; its worst cases in full, one line each for
    the rest; the same plots and sections at 12 and 120 variants of each check."""
    drawn = []
    monkeypatch.setattr(signoff, "check_plot",
                        lambda check, tests: drawn.append(check) or PNG)
    monkeypatch.setattr(signoff, "figure_plot",
                        lambda test, limits: drawn.append(test.name) or PNG)
    seen = {}
    for variants in (12, 120):
        drawn.clear()
        src = tmp_path / f"rr-{variants}.json"
        src.write_text(json.dumps(_swept(variants)))
        _, ctx = signoff.write_report_context(src, tmp_path / f"out-{variants}")
        html = (tmp_path / f"out-{variants}" / "report.html").read_text()
        assert [c.name for c in ctx["checks"]] == [
            "FioRandomReadDirect", "FioRandomReadBuffered", "FioSequentialWrite",
            "FioSequentialRead", "FioFsync", "FioMetadata"]
        assert all(c.large and len(c.tests) == variants for c in ctx["checks"])
        seen[variants] = (sorted(drawn), html.count('<section class="test"'))
        assert not ctx["node_plots"]  # per node: the tables of the cases shown in full
    assert seen[12] == seen[120]
    assert seen[120][0] == sorted(c.name for c in ctx["checks"])  # one per family
    assert seen[120][1] == 6 * sections.WORST_SHOWN
    chk = ctx["checks"][0]
    labels = {r.label for r in chk.compact}  # a variant's parameters, not its node list
    assert "%nodes=2 %xfer=1m" in labels and "0002" in labels


def test_a_normal_run_is_not_grouped_into_families():
    data = json.loads((DATA / "full-suite.json").read_text())
    ctx = signoff.build_context(data, plots=False)
    assert len(ctx["checks"]) == len(ctx["tests"]) <= sections.FAMILY_LIMIT
    assert all(len(c.tests) == 1 for c in ctx["checks"])


def test_a_variant_on_one_node_is_labelled_by_its_parameters_a_distributed_case_by_its_node():
    data, cases = _cases()
    tc = cases[0]
    tc["job_nodelist"] = ["n3"]
    t = runreport.tests_of(data)[0]
    t.name = f"{tc['name']} %xfer=1m"
    assert sections.case_label(t, tc["name"]) == "%xfer=1m"
    t.name = f"{tc['name']} %$nid=n3"
    assert sections.case_label(t, tc["name"]) == "n3"


def test_plots_are_at_most_max_plots_at_scale_and_the_report_says_how_many_were_left_out(
        tmp_path, monkeypatch):
    monkeypatch.setattr(sections, "FAMILY_LIMIT", 2)  # 18 names, 6 families: at scale
    monkeypatch.setattr(signoff, "MAX_PLOTS", 2)
    src = tmp_path / "rr.json"
    src.write_text(json.dumps(_swept(3)))
    written, ctx = signoff.write_report_context(src, tmp_path / "out")
    assert len(ctx["checks"]) == 6 and len(ctx["plots"]) == 2 and ctx["plots_left_out"] == 4
    assert len([p for p in written if p.suffix == ".png"]) == 2
    md = (tmp_path / "out" / "report.md").read_text()
    assert ("Plots are drawn for the first 2 checks only: 4 more checks or distributions "
            "are not plotted") in md
    # A normal run is drawn in full, however many plots it has.
    monkeypatch.undo()
    ctx = signoff.build_context(json.loads((DATA / "local-spack-accepted.json").read_text()))
    assert len(ctx["plots"]) > signoff.MAX_PLOTS and not ctx["plots_left_out"]
    assert "Plots are drawn for the first" not in signoff.render(ctx, "report.md.j2")


def test_thousands_of_unrelated_names_are_summarised_together(tmp_path, monkeypatch):
    """More families than FAMILY_LIMIT still: those of one test are one group, its worst
    cases in full, a line each for the others (named in full), no plot of the mixture."""
    monkeypatch.setattr(sections, "FAMILY_LIMIT", 2)
    data = _swept(3)
    for i, tc in enumerate(data["runs"][0]["testcases"]):
        tc["name"] = tc["display_name"] = f"{tc['name'].split()[0].rstrip('0123456789')}" \
            f"Site{'ABCDEFGHIJKLMNOPQRSTUVWXYZ'[i]}"
    ctx = signoff.build_context(data)
    (chk,) = ctx["checks"]
    assert chk.name == sections.POOLED and chk.large and len(chk.tests) == 18
    assert len(chk.sections) == sections.WORST_SHOWN and chk.plot is None
    assert not ctx["plots"] and {r.label for r in chk.compact} == {
        t.name for t in chk.tests}
    assert "Check Checks of one test case each: 18 test cases" in signoff.render(
        ctx, "report.md.j2")


# --------------------------------------------------------------------------- no traceback

HOSTILE = [1.7e308, -1.7e308, math.inf, math.nan, -5.0, 5e-324]


def _distributed(data, nodes=3):
    out = []
    for tc in data["runs"][0]["testcases"]:
        for i in range(nodes):
            c = copy.deepcopy(tc)
            c.update(name=f"{tc['name']} %$nid=nid{i}", display_name=f"{tc['name']} %$nid=nid{i}",
                     unique_name=f"{tc['name']}_{i}", uuid=f"{tc['uuid']}-{i}",
                     job_nodelist=[f"nid{i}"])
            out.append(c)
    data["runs"] = [{**data["runs"][0], "testcases": out}]
    return data


@pytest.mark.parametrize("bad", HOSTILE, ids=repr)
@pytest.mark.parametrize("where", ["figure", "threshold", "per node", "distributed"])
def test_a_hostile_figure_or_threshold_is_plotted_without_a_traceback(where, bad):
    """A figure, threshold or per-node value of 1.7e308, inf, NaN, a negative or a
    denormal: every plot is drawn (the value in the tables, named off scale on the plot),
    none raises (matplotlib raises on an axis limit that overflows to inf)."""
    data, cases = _cases()
    case = next(c for c in cases if c["name"] == "FioRandomReadDirect")
    if where == "figure":
        _perf(case, "randread_4k_direct_iops")[0] = bad
    elif where == "threshold":
        _perf(case, "randread_4k_direct_iops")[1] = bad
    elif where == "per node":
        case["per_node_figures"] = f"randread_4k_direct_iops=n1:{bad!r},n2:{bad!r},n3:15645.9"
    else:
        _perf(case, "randread_4k_direct_iops")[0] = bad
        data = _distributed(data)
    ctx = signoff.build_context(data)
    assert ctx["plots"] and all(p.png.startswith(PNG) for p in ctx["plots"])
    for template in ("report.md.j2", "report.html.j2"):
        signoff.render(ctx, template)


def test_plot_limits_stay_finite_for_the_largest_floats():
    assert plots._limits([1e300], 1.12) == (0.0, 1e300 * 1.12)
    assert plots._limits([5e-324, 0.0], 1.12) == (0.0, 1.0)
    assert plots._limits([-5.0, 10.0], 1.1) == (-5.5, 11.0)
    assert not plots._drawable(1.7e308) and not plots._drawable(math.nan)
    assert plots._drawable(0.0) and plots._drawable(-5.0)
    assert plots._on_scale(5e-324, 2000.0) == (None, 5e-324)
    # A figure too large to draw: the test's plot shows its other figures.
    data, cases = _cases()
    case = next(c for c in cases if c["name"] == "FioRandomReadDirect")
    _perf(case, "randread_4k_direct_iops")[0] = 1.7e308
    t = next(t for t in runreport.tests_of(data) if t.name == "FioRandomReadDirect")
    assert plots.figure_plot(t).startswith(PNG)
    values = {"n1": [1.7e308], "n2": [15645.9], "n3": [15702.1]}
    assert plots.per_node_plot("FioRandomReadDirect", "iops", values, "IOPS").startswith(PNG)
