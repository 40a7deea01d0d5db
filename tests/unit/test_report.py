"""The sign-off report from real ReFrame run reports (tests/data/reframe/)."""

import hashlib
import json
import re
import statistics
from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from fsaccept.core import formatting
from fsaccept.reporting import plotbudget, runreport, sections, verdicts
from fsaccept.reporting import verdict as judging
from fsaccept.reporting import report as signoff
from fsaccept.reporting.case import case_of

DATA = Path(__file__).resolve().parent.parent / "data" / "reframe"


def load(name):
    return runreport.load_run_report(DATA / name)


def by_name(tests):
    return {t.name: t for t in tests}


def test_all_pass_is_accepted_with_exact_figures():
    report = load("ior-pass.json")
    tests = by_name(runreport.tests_of(report))
    assert list(tests) == ["IORWriteBandwidth", "IORStonewalledRead", "IORRandomWriteIOPS",
                           "IORRandomReadIOPS", "MPILaunchSanity"]
    assert all(t.verdict == verdicts.PASS for t in tests.values())
    assert judging.overall_verdict(list(tests.values())) == (verdicts.ACCEPTED, [])
    # The figure is ReFrame's perfvalue, unchanged.
    raw = {tc["name"]: tc for tc in runreport.all_testcases(report)}
    write = tests["IORWriteBandwidth"].figures[0]
    assert write.value == raw["IORWriteBandwidth"]["perfvalues"][
        "local:compute:write_bandwidth"][0] == 1987.01
    rows = sections.summary_rows(list(tests.values()))
    first = rows[0]
    assert first.test == "IORWriteBandwidth" and first.verdict == "PASS"
    assert first.nodes == "4 of 4 (100 %; 0.9 asked)" and first.ranks_per_node == "1"
    assert first.measured == "1,987.0 MiB/s (2,083.5 MB/s)"
    assert first.threshold == "≥ 45 MiB/s (50 − 10 %)"
    # The stonewall figure has no threshold (ReFrame reference 0, no bounds).
    assert rows[1].figure == "write_bandwidth_stonewall" and rows[1].threshold == "—"
    iops = next(r for r in rows if r.test == "IORRandomWriteIOPS")
    assert iops.measured == "31,618 IOPS" and iops.nodes == "1 of 4 (25 %; 0.15 asked)"


def test_mb_is_mib_times_1_048576_exactly():
    assert formatting.mib_to_mb(1987.01) == Decimal("2083.53099776")
    assert formatting.mib_to_mb(1) == Decimal("1.048576")
    assert formatting.format_figure(1292.09, "MiB/s") == "1,292.1 MiB/s (1,354.9 MB/s)"
    assert formatting.format_figure(36432.74, "IOPS") == "36,433 IOPS"


def test_invalid_reason_is_the_text_after_the_marker_and_not_run_names_the_fixture():
    tests = by_name(runreport.tests_of(load("ior-invalid-error.json")))
    w = tests["IORWriteBandwidth"]
    assert w.verdict == verdicts.INVALID
    assert w.reason.startswith("write iteration 0 ran 0.511895 s of the 1 s deadline")
    assert "INVALID" not in w.reason
    assert w.figures[0].value is None  # an invalid figure is never shown as measured
    r = tests["IORStonewalledRead"]
    assert r.verdict == verdicts.INVALID and "dataset (114 MiB) was exhausted" in r.reason
    assert tests["IORRandomWriteIOPS"].verdict == verdicts.PASS
    rr = tests["IORRandomReadIOPS"]
    assert rr.verdict == verdicts.NOT_RUN
    assert "IORRandomReadDatasetGeneration" in rr.reason and "ERROR" in rr.reason
    assert "tests.ior_random_read_iops: missing" in rr.reason
    verdict, blocking = judging.overall_verdict(list(tests.values()))
    assert verdict == verdicts.NOT_ACCEPTED
    assert [b.split(":")[0] for b in blocking] == ["IORWriteBandwidth", "IORStonewalledRead",
                                                    "IORRandomReadIOPS"]


def test_fixture_failing_in_setup_is_an_error_with_its_reason():
    report = load("ior-invalid-error.json")
    fx = next(tc for tc in runreport.all_testcases(report)
              if tc["name"].startswith("IORRandomReadDatasetGeneration"))
    v = verdicts.verdict_of(case_of(fx))
    assert v.verdict == verdicts.ERROR
    assert v.reason.startswith("failed in setup: reference error: ")
    assert "\n" not in v.reason


def test_performance_failure_is_fail_naming_the_figure():
    tests = by_name(runreport.tests_of(load("ior-fail.json")))
    w = tests["IORWriteBandwidth"]
    assert w.verdict == verdicts.FAIL
    assert w.reason == "write_bandwidth 2,166.2 MiB/s below the threshold 900,000 MiB/s"
    assert tests["IORRandomWriteIOPS"].verdict == verdicts.PASS
    verdict, blocking = judging.overall_verdict(list(tests.values()))
    assert verdict == verdicts.NOT_ACCEPTED and blocking == [
        "IORWriteBandwidth: FAIL (write_bandwidth 2,166.2 MiB/s below the threshold "
        "900,000 MiB/s)"]


def test_repeats_are_one_test_with_statistics():
    report = load("ior-repeat.json")
    tests = by_name(runreport.tests_of(report))
    assert set(tests) == {"IORRandomWriteIOPS", "MPILaunchSanity"}
    t = tests["IORRandomWriteIOPS"]
    assert len(t.cases) == 3 and t.verdict == verdicts.PASS
    values = [tc["perfvalues"]["local:compute:write_iops"][0] for tc in runreport.all_testcases(report)
              if tc["name"].startswith("IORRandomWriteIOPS")]
    st = t.figures[0].stats
    assert (st.n, st.minimum, st.maximum) == (3, min(values), max(values))
    assert st.mean == pytest.approx(statistics.fmean(values))
    assert st.sd == pytest.approx(statistics.stdev(values))
    row = sections.summary_rows([t])[0]
    assert row.measured.endswith("IOPS (mean of 3)")


def test_a_repeated_test_takes_its_worst_verdict():
    report = load("ior-repeat.json")
    report["runs"][0]["testcases"][1].update(result="fail", fail_phase="sanity",
                                              fail_reason="sanity error: INVALID: too short")
    t = by_name(runreport.tests_of(report))["IORRandomWriteIOPS"]
    assert t.verdict == verdicts.INVALID
    assert t.reason == "run 2: too short"


def test_fixtures_are_linked_to_the_test_that_reads_their_data():
    tests = by_name(runreport.tests_of(load("ior-pass.json")))
    read = tests["IORStonewalledRead"]
    assert [fx["display_name"] for fx in read.fixtures] == [
        "IORReadDatasetGeneration ~local:compute+openmpi"]
    gen_cmd = dict(sections.command_lines(read.fixtures[0]))["ior_command"]
    read_cmd = dict(sections.command_lines(read.case))["ior_command"]
    assert gen_cmd.startswith("/opt/ior-4.0.0/bin/ior -w ") and "stoneWallingWearOut=1" in gen_cmd
    assert read_cmd.startswith("/opt/ior-4.0.0/bin/ior -r ")
    assert tests["IORWriteBandwidth"].fixtures == []


def test_case_section_has_provenance():
    tests = by_name(runreport.tests_of(load("ior-pass.json")))
    sec = sections.case_section(tests["IORStonewalledRead"].case, "measurement")
    assert (sec.jobid, sec.nodelist) == ("22", "n[1-4]")
    assert sec.deadline == "2 s deadline, 2.01 s run"
    assert sec.bytes_moved == "2,736,783,360 B (2.5488 GiB)"
    prov = dict(sec.provenance)
    assert prov["ior_path"] == "/opt/ior-4.0.0/bin/ior" and prov["ior_version"] == "IOR-4.0.0"
    assert prov["mpi_version"] == "Open MPI v4.1.4"
    assert prov["reference_sha256"] == ("f4ae99f0f61da52f8209b07dc095e149717beef86f9b27045716"
                                        "f803e4472816")
    assert "perfvalues" not in prov and "deadline_s" not in prov  # shown elsewhere
    # A check without a *_command variable shows ReFrame's executable and options.
    mpi = sections.case_section(tests["MPILaunchSanity"].case, "measurement")
    assert mpi.commands == [("executable", "./MPILaunchSanity")]


def test_a_preflight_alone_is_not_an_acceptance():
    report = load("ior-pass.json")
    report["runs"][0]["testcases"] = [tc for tc in report["runs"][0]["testcases"]
                                      if tc["name"] == "MPILaunchSanity"]
    verdict, blocking = judging.overall_verdict(runreport.tests_of(report))
    assert verdict == verdicts.NOT_ACCEPTED
    assert blocking == ["no acceptance test ran (only: MPILaunchSanity)"]
    assert judging.overall_verdict([]) == (verdicts.NOT_ACCEPTED, ["no test ran"])


@pytest.mark.parametrize("result,phase,reason,expected", [
    ("skip", None, None, verdicts.SKIPPED),
    ("abort", "run", "KeyboardInterrupt", verdicts.ABORTED),
    ("fail", "sanity", "sanity error: rank 3 missing", verdicts.ERROR),
    ("fail", "run", "job error: exit 1", verdicts.ERROR),
    ("xpass", None, None, verdicts.ERROR),
])
def test_other_outcomes_are_shown_as_such_and_never_pass(result, phase, reason, expected):
    v = verdicts.verdict_of(case_of({"name": "T", "result": result, "fail_phase": phase,
                                     "fail_reason": reason, "perfvalues": {}}))
    assert v.verdict == expected and v.verdict != verdicts.PASS
    if phase:
        assert phase in v.reason


def test_upper_bound_thresholds_and_their_failures():
    fig = verdicts.Figure("fsync_4k_sync_lat_p99_us", 250000.0, "us", 200000, None, 0, "fail")
    # Read as people write them: 200 ms, not 200,000 us.
    assert verdicts.format_threshold(fig) == "≤ 200 ms (200)"
    assert verdicts.figure_failures([fig]) == [
        "fsync_4k_sync_lat_p99_us 250 ms above the limit 200 ms"]


def test_per_node_values_from_a_logged_string_and_from_distributed_cases():
    assert sections.parse_per_node_text("a=n1:1.5,n2:2.0; b=n1:3,n2:bad") == {
        "a": {"n1": 1.5, "n2": 2.0}, "b": {"n1": 3.0}}
    cases = [{"name": f"FioX %$nid={n}", "system": "s", "partition": "p", "environ": "e",
              "result": "pass", "job_nodelist": [n],
              "perfvalues": {"s:p:bw": [v, 0, None, None, "MiB/s", "pass"]}}
             for n, v in (("n1", 10.0), ("n2", 20.0))]
    tests = runreport.tests_of({"session_info": {}, "runs": [{"testcases": cases}]})
    assert sections.per_node_values(tests) == {("FioX", "bw"): {"n1": [10.0], "n2": [20.0]}}
    # Repeats of one test on varying nodes are not per-node figures.
    assert sections.per_node_values(runreport.tests_of(load("ior-repeat.json"))) == {}


def test_load_run_report_errors_name_the_file(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text("{not json")
    with pytest.raises(verdicts.RunReportError, match=r"x\.json: not JSON"):
        runreport.load_run_report(bad)
    bad.write_text(json.dumps({"hello": 1}))
    with pytest.raises(verdicts.RunReportError, match=r"x\.json: not a ReFrame run report"):
        runreport.load_run_report(bad)
    with pytest.raises(verdicts.RunReportError, match=r"missing\.json: cannot read"):
        runreport.load_run_report(tmp_path / "missing.json")
    bad.write_text(json.dumps({"session_info": {}, "runs": [{"testcases": 3}]}))
    with pytest.raises(verdicts.RunReportError, match=r"runs\[0\]\.testcases"):
        runreport.load_run_report(bad)


def test_rendered_report_has_the_table_signoff_and_plots():
    report = load("ior-fail.json")
    ctx = signoff.build_context(report, signed_by="A. Engineer", harness_version="0.1.0",
                            git_commit="abc123")
    md = signoff.render(ctx, "report.md.j2")
    html = signoff.render(ctx, "report.html.j2")
    assert "**Overall verdict: NOT ACCEPTED**" in md
    assert ("| [IORWriteBandwidth](#test-iorwritebandwidth) | 4 of 4 (100 %; 0.9 asked) | 1 | "
            "write_bandwidth | 2,166.2 MiB/s (2,271.4 MB/s) | ≥ 900,000 MiB/s "
            "(1,000,000 − 10 %) | FAIL |") in md
    assert "| Signed by | A. Engineer |" in md
    assert "SHA-256 `1316c31082e43b33c3bb2533f5bed4f68f466808344745931a565bb82589d4e1`" in md
    assert "fsaccept 0.1.0, git commit `abc123`" in md
    assert "/opt/ior-4.0.0/bin/ior -w -a POSIX" in md
    assert '<table id="summary">' in html and html.count("<tr>") > 10
    assert 'src="data:image/png;base64,' in html  # self-contained
    assert "<script" not in html


def test_write_report_writes_files_and_uses_recorded_reference_ceilings(tmp_path):
    ref = tmp_path / "ref.yaml"
    ref.write_text((DATA / "ior-fail.reference.yaml").read_text())
    report = load("ior-fail.json")
    # Point the report at a copy of its reference file (same bytes, same SHA-256).
    for tc in runreport.all_testcases(report):
        tc["reference_path"] = str(ref)
    src = tmp_path / "run-report.json"
    src.write_text(json.dumps(report))
    written = signoff.write_report(src, tmp_path / "out", signed_by="X")
    names = sorted(p.name for p in written)
    assert "report.html" in names and "report.md" in names
    assert "test-iorwritebandwidth.png" in names
    md = (tmp_path / "out" / "report.md").read_text()
    assert "still has SHA-256 1316c310" in md
    # The file changed since the run: say so, and show no ceilings from it.
    ref.write_text(ref.read_text() + "\n# edited\n")
    signoff.write_report(src, tmp_path / "out2")
    assert "changed or is gone since the run" in (tmp_path / "out2" / "report.md").read_text()


def test_summary_text_for_the_terminal():
    rows = sections.summary_rows(runreport.tests_of(load("ior-fail.json")))
    lines = sections.summary_text(rows).splitlines()
    assert lines[0].split() == ["Test", "Nodes", "Ranks/node", "Figure", "Measured",
                                "Threshold", "Verdict"]
    assert lines[1].startswith("IORWriteBandwidth ") and lines[1].endswith("FAIL")
    assert "2,166.2 MiB/s (2,271.4 MB/s)" in lines[1]


def test_measured_ceilings_file_gives_the_assessment(tmp_path):
    ceilings = tmp_path / "ceilings.yaml"
    ceilings.write_text("# measured with fio --direct=1 in /var/tmp\nceilings:\n"
                        "  disk_write: {component: devices, figures: write,\n"
                        "               bandwidth: {value: 1000, unit: MiB/s}}\n")
    signoff.write_report(DATA / "ior-fail.json", tmp_path / "out", ceilings_file=ceilings)
    md = (tmp_path / "out" / "report.md").read_text()
    assert "(measured with fio --direct=1 in /var/tmp)" in md
    assert "| IORWriteBandwidth | write_bandwidth | 2,166.2 MiB/s | 1,000 MiB/s" in md
    assert "216.6 % | cache |" in md


def test_a_minimal_run_report_renders():
    """Only the keys every ReFrame test case has: nothing in the templates needs more."""
    # (Not tagged acceptance: an acceptance test needs a figure judged against a threshold.)
    cases = [{"name": "DataReductionProbe", "system": "s", "partition": "p", "environ": "e",
              "result": "pass", "perfvalues": {"s:p:free_space_noise": [
                  1.5, 0, None, None, "MiB", "pass"]}}]
    ctx = signoff.build_context({"session_info": {}, "runs": [{"testcases": cases}]})
    assert ("| [DataReductionProbe](#test-datareductionprobe) | — | — | free_space_noise | "
            "1.5 MiB | — | PASS |") in signoff.render(ctx, "report.md.j2")
    assert '<table id="summary">' in signoff.render(ctx, "report.html.j2")


def test_tests_with_different_reference_files_are_not_accepted():
    report = load("ior-pass.json")
    report["runs"][0]["testcases"][0]["reference_sha256"] = "0" * 64
    verdict, blocking = judging.overall_verdict(runreport.tests_of(report))
    assert verdict == verdicts.NOT_ACCEPTED
    assert blocking == ["the tests used 2 different reference files (SHA-256 000000000000, "
                        "f4ae99f0f61d): the reference changed during the run"]


def test_the_whole_suite_with_fio_ior_mdtest_a_skip_and_a_timeout():
    tests = by_name(runreport.tests_of(load("full-suite.json")))
    assert tests["MPILaunchSanity"].verdict == verdicts.SKIPPED
    read = tests["IORStonewalledRead"]
    assert read.verdict == verdicts.INVALID and read.reason.startswith("Slurm cancelled job 153")
    assert tests["MdtestEasy"].verdict == verdicts.PASS
    units = {fr.unit for fr in tests["MdtestEasy"].figures}
    assert units == {"ops/s"}
    rows = [r for r in sections.summary_rows([tests["MdtestEasy"]]) if r.figure == "file_creation"]
    assert rows[0].measured.endswith(" ops/s") and "MB/s" not in rows[0].measured
    verdict, blocking = judging.overall_verdict(list(tests.values()))
    assert verdict == verdicts.NOT_ACCEPTED and len(blocking) == 3
    per_node = sections.per_node_values(list(tests.values()))
    assert set(per_node[("FioSequentialWrite", "seq_write_1m_direct_bw")]) == {
        "n1", "n2", "n3", "n4"}


@pytest.mark.parametrize("bogus", [-1987.01, float("nan"), float("inf")])
def test_a_bogus_figure_in_a_passing_run_report_is_invalid_never_accepted(tmp_path, bogus):
    data = json.loads((DATA / "ior-pass.json").read_text())
    case = next(c for c in data["runs"][-1]["testcases"]
                if c["name"].startswith("IORWriteBandwidth"))
    key = next(k for k in case["perfvalues"] if k.endswith(":write_bandwidth"))
    case["perfvalues"][key][0] = bogus
    path = tmp_path / "run-report.json"
    path.write_text(json.dumps(data))  # NaN and Infinity as Python's json writes them
    tests = by_name(runreport.tests_of(runreport.load_run_report(path)))
    assert tests["IORWriteBandwidth"].verdict == verdicts.INVALID
    assert "not a measurement" in tests["IORWriteBandwidth"].reason
    verdict, _ = judging.overall_verdict(list(tests.values()))
    assert verdict == verdicts.NOT_ACCEPTED


def _edited_write_case(edit):
    data = json.loads((DATA / "ior-pass.json").read_text())
    case = next(c for c in data["runs"][-1]["testcases"]
                if c["name"].startswith("IORWriteBandwidth"))
    key = next(k for k in case["perfvalues"] if k.endswith(":write_bandwidth"))
    edit(case, key)
    return data


@pytest.mark.parametrize("edit, why", [
    (lambda c, k: c["perfvalues"][k].__setitem__(0, None), "no value recorded"),
    (lambda c, k: c["perfvalues"][k].__setitem__(0, ""), "no value recorded"),
    (lambda c, k: c["perfvalues"][k].__setitem__(0, 10.0), "outside its threshold"),
    (lambda c, k: c["perfvalues"][k].__setitem__(1, float("nan")), "not a usable threshold"),
    (lambda c, k: c["perfvalues"][k].__setitem__(1, -50), "not a usable threshold"),
    (lambda c, k: c["perfvalues"][k].__setitem__(2, float("inf")), "not a usable threshold"),
    (lambda c, k: c["perfvalues"][k].__setitem__(5, "fail"), "in a test recorded as passed"),
    (lambda c, k: c.__setitem__("perfvalues", {}), "no figure recorded"),
    (lambda c, k: c.__setitem__("perfvalues", None), "no figure recorded"),
])
def test_figures_that_contradict_a_pass_make_it_invalid_never_accepted(tmp_path, edit, why):
    # An edited or damaged run report: its recorded "pass" is not taken on trust.
    path = tmp_path / "run-report.json"
    path.write_text(json.dumps(_edited_write_case(edit)))
    tests = by_name(runreport.tests_of(runreport.load_run_report(path)))
    assert tests["IORWriteBandwidth"].verdict == verdicts.INVALID
    assert why in tests["IORWriteBandwidth"].reason, tests["IORWriteBandwidth"].reason
    assert judging.overall_verdict(list(tests.values()))[0] == verdicts.NOT_ACCEPTED


def test_nodes_text_shows_fraction_count_and_rounding():
    case = {"num_nodes": 1382, "partition_nodes": 1536, "node_fraction": 0.9}
    up = runreport.Test("IORWriteBandwidth", [dict(case, num_nodes=1383, node_rounding="up")], [])
    down = runreport.Test("IORWriteBandwidth", [dict(case, node_rounding="down")], [])
    assert up.nodes_text == "1383 of 1536 (90 %; 0.9 asked)"
    assert down.nodes_text == "1382 of 1536 (90 %; 0.9 asked, rounded down)"


def _renamed(tmp_path, names):
    """ior-pass.json with its measured tests renamed (old name -> new)."""
    data = json.loads((DATA / "ior-pass.json").read_text())
    for case in data["runs"][-1]["testcases"]:
        new = names.get(case["name"])
        if new:
            case["name"] = case["unique_name"] = case["display_name"] = new
    path = tmp_path / "run-report.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.filterwarnings("ignore:constrained_layout not applied")  # a 300-char title
def test_plot_files_of_long_and_non_ascii_test_names_never_collide(tmp_path):
    # Запись, Чтение and Σ all slugged to "test-": one plots/test-.png overwrote the others.
    names = {"IORWriteBandwidth": "Запись", "IORStonewalledRead": "Чтение",
             "IORRandomWriteIOPS": "Σ", "IORRandomReadIOPS": "L" * 300}
    src = _renamed(tmp_path, names)
    written = signoff.write_report(src, tmp_path / "out")
    plots = sorted(p.name for p in written if p.suffix == ".png")
    # One file per test (none overwrites another), each a short, safe name.
    assert len(plots) == len(set(p.lower() for p in plots)) == 4
    assert all(len(p) <= 100 and re.fullmatch(r"test-[a-z0-9-]+\.png", p) for p in plots)
    assert not (tmp_path / "out" / "plots" / "test-.png").exists()
    md = (tmp_path / "out" / "report.md").read_text()
    assert all(f"(plots/{p})" in md for p in plots)
    # A plain, short name keeps its plain file name.
    assert plotbudget.plot_file("test-iorwritebandwidth", "IORWriteBandwidth", set()) == \
        "test-iorwritebandwidth.png"
    used = set()
    assert plotbudget.plot_file("test-a-b", "a b", used) == "test-a-b.png"
    assert plotbudget.plot_file("test-a-b", "a_b", used) != "test-a-b.png"


@pytest.mark.parametrize("out", ["a-file", "a-file/sub"])
def test_report_into_a_path_that_is_not_a_directory_exits_2(tmp_path, capsys, out):
    (tmp_path / "a-file").write_text("keep me\n")
    assert signoff.main([str(DATA / "ior-pass.json"), "--out", str(tmp_path / out)]) == 2
    err = capsys.readouterr().err
    assert str(tmp_path / out) in err and "Traceback" not in err
    assert (tmp_path / "a-file").read_text() == "keep me\n"


# --------------------------------------------------------------------------- issue 22, 1
# An edited run report is never ACCEPTED: each case below was ACCEPTED before.


def _accepted_variant(edit, name="ior-pass.json"):
    """A real run report edited in code (``edit(data, cases_by_name)``), its tests and
    overall verdict."""
    data = json.loads((DATA / name).read_text())
    cases = {c["name"]: c for run in data["runs"] for c in run["testcases"]}
    edit(data, cases)
    return data


def _verdicts(data, tmp_path):
    path = tmp_path / "run-report.json"
    path.write_text(json.dumps(data))
    tests = runreport.tests_of(runreport.load_run_report(path))
    return by_name(tests), judging.overall_verdict(tests)[0]


def _perf(case, figure):
    return next(v for k, v in case["perfvalues"].items() if k.endswith(":" + figure))


@pytest.mark.parametrize("slot, bad", [(1, "abc"), (1, None), (1, "50"), (2, "abc"),
                                       (2, "-0.1"), (3, "x")])
@pytest.mark.parametrize("value", [1987.01, 10.0])  # 10 is below the real threshold (45)
def test_a_threshold_that_is_not_a_number_or_null_is_invalid(tmp_path, slot, bad, value):
    def edit(data, cases):
        pv = _perf(cases["IORWriteBandwidth"], "write_bandwidth")
        pv[0], pv[slot] = value, bad
    tests, overall = _verdicts(_accepted_variant(edit), tmp_path)
    w = tests["IORWriteBandwidth"]
    assert w.verdict == verdicts.INVALID and "not a usable threshold" in w.reason, w.reason
    assert overall == verdicts.NOT_ACCEPTED


def test_an_acceptance_test_with_every_threshold_removed_is_invalid(tmp_path):
    def edit(data, cases):
        for fig in ("write_bandwidth", "write_bandwidth_stonewall"):
            _perf(cases["IORWriteBandwidth"], fig)[1:4] = [0, None, None]
    tests, overall = _verdicts(_accepted_variant(edit), tmp_path)
    w = tests["IORWriteBandwidth"]
    assert w.verdict == verdicts.INVALID
    assert w.reason == ("no figure was judged against a threshold (write_bandwidth, "
                        "write_bandwidth_stonewall): nothing to accept")
    assert overall == verdicts.NOT_ACCEPTED
    # A preflight check is judged by its sanity alone: still PASS.
    assert tests["MPILaunchSanity"].verdict == verdicts.PASS


def test_a_fio_entry_without_thresholds_is_invalid_even_with_its_outlier_count(tmp_path):
    # What a live fio entry without thresholds: records: figures at reference 0 and the
    # outlier count (outlier_fraction > 0), which is no judgement of the file system.
    def edit(data, cases):
        case = cases["FioRandomReadDirect"]
        for key, pv in case["perfvalues"].items():
            if not key.endswith(":outlier_nodes"):
                pv[1:4] = [0, None, None]
    tests, _ = _verdicts(_accepted_variant(edit, "fio-client.json"), tmp_path)
    fio = tests["FioRandomReadDirect"]
    assert fio.verdict == verdicts.INVALID and "nothing to accept" in fio.reason
    assert by_name(runreport.tests_of(load("fio-client.json")))[
        "FioRandomReadDirect"].verdict == verdicts.PASS


@pytest.mark.parametrize("key, value, reason", [
    ("fail_reason", "sanity error: INVALID: the read ran 0.5 s of its 2 s deadline",
     "the read ran 0.5 s of its 2 s deadline"),
    ("invalid_reasons", "the job refused to run the benchmark",
     "recorded as passed but carries a failure: the job refused to run the benchmark"),
    ("fail_phase", "sanity", "recorded as passed but carries a failure: sanity"),
])
def test_a_pass_that_carries_a_failure_reason_is_invalid(tmp_path, key, value, reason):
    tests, overall = _verdicts(_accepted_variant(
        lambda data, cases: cases["IORWriteBandwidth"].__setitem__(key, value)), tmp_path)
    assert tests["IORWriteBandwidth"].verdict == verdicts.INVALID
    assert tests["IORWriteBandwidth"].reason == reason
    assert overall == verdicts.NOT_ACCEPTED


def _fixture_of_read(cases):
    return next(c for n, c in cases.items() if n.startswith("IORReadDatasetGeneration"))


def test_a_read_that_passed_over_an_invalid_dataset_is_invalid(tmp_path):
    # Fixtures are test cases of their own in ReFrame's run report.
    def edit(data, cases):
        _fixture_of_read(cases).update(
            result="fail", fail_phase="sanity",
            fail_reason="sanity error: INVALID: the dataset ran out after 0.4 s")
    tests, overall = _verdicts(_accepted_variant(edit), tmp_path)
    read = tests["IORStonewalledRead"]
    assert read.verdict == verdicts.INVALID
    assert read.reason == ("measured over what its fixture prepared, which did not pass: "
                           "IORReadDatasetGeneration ~local:compute+openmpi is INVALID: the "
                           "dataset ran out after 0.4 s")
    assert overall == verdicts.NOT_ACCEPTED


def test_a_read_whose_dataset_fixture_is_missing_from_the_report_is_invalid(tmp_path):
    def edit(data, cases):
        fx = _fixture_of_read(cases)
        for run in data["runs"]:
            run["testcases"] = [c for c in run["testcases"] if c is not fx]
    tests, overall = _verdicts(_accepted_variant(edit), tmp_path)
    read = tests["IORStonewalledRead"]
    assert read.verdict == verdicts.INVALID and "is not in the run report" in read.reason
    assert overall == verdicts.NOT_ACCEPTED


def _ior_fail_passing(tmp_path, write_threshold):
    """ior-fail.json edited so that its write passed against ``write_threshold``
    (reference, lower), beside an exact copy of the reference file it recorded."""
    ref = tmp_path / "ref.yaml"
    # The tests the run did not run are not in it: a sign-off needs every test its
    # reference file defines.
    spec = yaml.safe_load((DATA / "ior-fail.reference.yaml").read_text())
    for key in ("ior_read_bandwidth", "ior_random_read_iops"):
        del spec["tests"][key]
    ref.write_text(yaml.safe_dump(spec))
    sha = hashlib.sha256(ref.read_bytes()).hexdigest()

    def edit(data, cases):
        for case in cases.values():
            case["reference_path"], case["reference_sha256"] = str(ref), sha
        w = cases["IORWriteBandwidth"]
        w.update(result="pass", fail_phase=None, fail_reason=None)
        pv = _perf(w, "write_bandwidth")
        pv[1], pv[2], pv[5] = *write_threshold, "pass"
        for where in (data["runs"][0], data["session_info"]):  # as ReFrame counts them
            where["num_failures"] -= 1
    src = tmp_path / "run-report.json"
    src.write_text(json.dumps(_accepted_variant(edit, "ior-fail.json")))
    return src


@pytest.mark.parametrize("threshold, recorded", [
    ((1000, -0.1), "≥ 900 MiB/s (1,000 − 10 %)"),          # the value lowered
    ((1000000, -0.999), "≥ 1,000 MiB/s (1,000,000 − 99.9 %)"),  # the tolerance widened
])
def test_thresholds_looser_than_the_verified_reference_file_are_invalid(
        tmp_path, capsys, threshold, recorded):
    src = _ior_fail_passing(tmp_path, threshold)
    # Taken on its own, the edited run report is consistent: ACCEPTED.
    tests = runreport.tests_of(runreport.load_run_report(src))
    assert judging.overall_verdict(tests)[0] == verdicts.ACCEPTED
    # The report verifies the reference file by its SHA-256, and then compares.
    assert signoff.main([str(src), "--out", str(tmp_path / "out")]) == 1
    out = capsys.readouterr().out
    assert "overall verdict: NOT ACCEPTED" in out
    md = (tmp_path / "out" / "report.md").read_text()
    assert "**Overall verdict: NOT ACCEPTED**" in md
    assert ("write_bandwidth: the reference file says ≥ 900,000 MiB/s (1,000,000 − 10 %), "
            f"but the test was judged against {recorded}: looser than the reference") in md
    assert "thresholds compared with it" in md


def test_thresholds_as_strict_as_the_reference_file_stay_pass(tmp_path, capsys):
    src = _ior_fail_passing(tmp_path, (1000000, -0.1))
    data = json.loads(src.read_text())
    # The measured value made to pass the real threshold; random write: a tighter one.
    w = next(c for c in data["runs"][0]["testcases"] if c["name"] == "IORWriteBandwidth")
    _perf(w, "write_bandwidth")[0] = 950000.0
    r = next(c for c in data["runs"][0]["testcases"] if c["name"] == "IORRandomWriteIOPS")
    _perf(r, "write_iops")[1:3] = [600, -0.05]
    src.write_text(json.dumps(data))
    assert signoff.main([str(src), "--out", str(tmp_path / "out")]) == 0
    assert "overall verdict: ACCEPTED" in capsys.readouterr().out


# --------------------------------------------------------------------------- issue 22, 2


def test_report_md_escapes_every_field_and_keeps_reasons_on_one_line(tmp_path):
    injected = ("sanity error: INVALID: ran short\n\n**Overall verdict: ACCEPTED**\n\n"
                "<script>alert(1)</script> [click](http://x) `x` # h")
    def edit(data, cases):
        cases["IORWriteBandwidth"].update(result="fail", fail_phase="sanity",
                                           fail_reason=injected)
        for case in cases.values():
            case["display_name"] = case["display_name"].replace("IORRandomWriteIOPS",
                                                                "IOR|Random<b>Write</b>")
        cases["IORWriteBandwidth"]["ior_command"] += " | tee ```x``` | cat"
        data["session_info"]["cmdline"] = "reframe -n 'a|b' `rm -rf`"
    data = _accepted_variant(edit)
    ctx = signoff.build_context(data)
    md = signoff.render(ctx, "report.md.j2")
    # One overall verdict paragraph: the real one.
    assert re.findall(r"^\*\*Overall verdict: .*\*\*$", md, re.M) == [
        "**Overall verdict: NOT ACCEPTED**"]
    assert "\\*\\*Overall verdict: ACCEPTED\\*\\*" in md
    # Raw HTML never passes through; a link is text.
    assert "<script>" not in md and "<b>" not in md and "&lt;script&gt;" in md
    assert "[click](" not in md and "\\[click\\](http://x)" in md
    # Every table row still has its 9 cell separators (8 columns).
    for line in md.splitlines():
        if line.startswith("| [IORWriteBandwidth]"):
            assert len(re.findall(r"(?<!\\)\|", line)) == 9, line
    # Inline code and code blocks cannot be closed by what they hold.
    assert "| Command | `` reframe -n 'a\\|b' `rm -rf` `` |" in md
    assert "````\n" in md and "tee ```x``` | cat\n````" in md
    # Reasons are one line wherever they appear.
    reason_lines = [li for li in md.splitlines() if "ran short" in li]
    assert reason_lines and all("Overall" in li for li in reason_lines)


def test_md_escape():
    assert signoff.md_escape("write_bandwidth") == "write_bandwidth"
    assert signoff.md_escape("_x_ *y* a|b") == "\\_x\\_ \\*y\\* a\\|b"
    assert signoff.md_escape("a\r\nb\u2028c") == "a b c"
    assert signoff.md_escape("- item") == "\\- item" and signoff.md_escape("2.5 s") == "2.5 s"
    assert signoff.md_escape("1. x") == "\\1. x"


# --------------------------------------------------------------------------- issue 22, 3


def test_a_huge_finite_ceiling_exits_2_naming_it(tmp_path, capsys):
    ceilings = tmp_path / "ceilings.yaml"
    ceilings.write_text("ceilings:\n  disk:\n    component: devices\n"
                        "    bandwidth: {value: 1.0e+300, unit: MiB/s}\n")
    assert signoff.main([str(DATA / "ior-pass.json"), "--out", str(tmp_path / "out"),
                         "--ceilings", str(ceilings)]) == 2
    err = capsys.readouterr().err
    assert f"{ceilings}: ceilings.disk.bandwidth.value: 1e+300 is beyond any hardware" in err
    assert "Traceback" not in err and not (tmp_path / "out").exists()


def test_plots_bound_huge_thresholds_and_ceilings_and_name_them_off_scale(tmp_path):
    # A run report may carry a huge finite threshold (it is INVALID, and still drawn).
    def edit(data, cases):
        pv = _perf(cases["IORWriteBandwidth"], "write_bandwidth")
        pv[1] = 1e300
    data = _accepted_variant(edit)
    from fsaccept.reporting import assessment, plots
    tests = by_name(runreport.tests_of(data))
    png = plots.figure_plot(tests["IORWriteBandwidth"], {"write_bandwidth": 1.7e308})
    assert png.startswith(b"\x89PNG")
    ceiling = assessment.Ceiling("huge", "devices", "system", 1, {"MiB/s": 1e308},
                                 {"MiB/s": "1e308 MiB/s"})
    ctx = signoff.build_context(data, ceilings=[ceiling])
    assert ctx["plots"] and tests["IORWriteBandwidth"].verdict == verdicts.INVALID
    assert plots._on_scale(1e300, 2000.0) == (None, 1e300)
    assert plots._on_scale(45.0, 2000.0) == (45.0, None)


# --------------------------------------------------------------------------- issue 22, 4


def test_a_report_into_an_earlier_reports_directory_removes_only_its_plots(tmp_path):
    out = tmp_path / "out"
    first = signoff.write_report(DATA / "ior-pass.json", out)
    old = {p.name for p in first if p.suffix == ".png"}
    assert len(old) >= 4 and (out / "plots" / signoff.PLOTS_MANIFEST).is_file()
    # Files fsaccept did not write, or changed since, stay.
    (out / "plots" / "mine.png").write_bytes(b"someone's plot")
    changed = sorted(old)[0]
    (out / "plots" / changed).write_bytes(b"edited by hand")
    second = signoff.write_report(DATA / "ior-fail.json", out)
    new = {p.name for p in second if p.suffix == ".png"}
    left = {p.name for p in (out / "plots").iterdir()}
    assert left == new | {"mine.png", changed, signoff.PLOTS_MANIFEST}, (left, new)
    assert (out / "plots" / "mine.png").read_bytes() == b"someone's plot"
    md = (out / "report.md").read_text()
    assert all(f"plots/{n}" in md for n in new)
    # The manifest now lists only this report's plots.
    manifest = json.loads((out / "plots" / signoff.PLOTS_MANIFEST).read_text())
    assert set(manifest["plots"]) == new


def test_a_plots_directory_without_manifest_is_left_alone(tmp_path):
    plots = tmp_path / "out" / "plots"
    plots.mkdir(parents=True)
    (plots / "test-iorrandomreadiops.png").write_bytes(b"not fsaccept's")
    (plots / signoff.PLOTS_MANIFEST).write_text('{"plots": {"../x.png": "0"}}')
    signoff.write_report(DATA / "ior-fail.json", tmp_path / "out")
    assert (plots / "test-iorrandomreadiops.png").read_bytes() == b"not fsaccept's"


# --------------------------------------------------------------------------- issue 22, 5


def _distributed(nodes):
    """fio-client.json as --distribute=all would name it on ``nodes`` nodes: each test
    case once per node (figures unchanged), built here from the real run report."""
    import copy
    data = json.loads((DATA / "fio-client.json").read_text())
    cases = []
    for tc in data["runs"][0]["testcases"]:
        for i in range(nodes):
            c = copy.deepcopy(tc)
            node = f"nid{i:05d}"
            c.update(name=f"{tc['name']} %$nid={node}", display_name=f"{tc['name']} %$nid={node}",
                     unique_name=f"{tc['name']}_{i}", uuid=f"{tc['uuid']}-{i}",
                     job_nodelist=[node])
            cases.append(c)
    data["runs"] = [{**data["runs"][0], "testcases": cases}]
    for where in (data["runs"][0], data["session_info"]):  # as ReFrame counts them
        where.update(num_cases=len(cases), num_failures=sum(c["result"] == "fail"
                                                            for c in cases))
    return data


def test_report_work_does_not_grow_per_test_case_beyond_one_line(tmp_path, monkeypatch):
    """A check of many test cases has one plot, its worst cases in full and one line per
    case: the same plots and sections at 12 and 120 nodes, the pages a line per case more,
    and the run report validated once per test-case shape."""
    from fsaccept.reporting import plots as plotting
    drawn = []
    monkeypatch.setattr(signoff, "check_plot",
                        lambda check, tests: drawn.append(check) or b"\x89PNG")
    validated = []
    real = runreport._run_report_validators

    def counting():
        top, case = real()

        class Counting:
            def is_valid(self, inst):
                validated.append(1)
                return case.is_valid(inst)

            def iter_errors(self, inst):
                return case.iter_errors(inst)
        return top, Counting()
    monkeypatch.setattr(runreport, "_run_report_validators", counting)
    sizes = {}
    for nodes in (12, 120):
        drawn.clear()
        validated.clear()
        src = tmp_path / f"rr-{nodes}.json"
        src.write_text(json.dumps(_distributed(nodes)))
        written, ctx = signoff.write_report_context(src, tmp_path / f"out-{nodes}")
        html = (tmp_path / f"out-{nodes}" / "report.html").read_text()
        md = (tmp_path / f"out-{nodes}" / "report.md").read_text()
        sizes[nodes] = dict(plots=sorted(drawn), validated=len(validated),
                            sections=html.count('<section class="test"'),
                            html=len(html), md=len(md), blocking=len(ctx["signoff"]["blocking"]),
                            compact=sum(len(c.compact) for c in ctx["checks"]))
        assert all(c.large for c in ctx["checks"])
        assert len(ctx["checks"]) == 6
    small, big = sizes[12], sizes[120]
    assert small["plots"] == big["plots"]  # one per check with values, whatever its size
    assert small["validated"] == big["validated"] <= 12
    assert small["sections"] == big["sections"] == 6 * sections.WORST_SHOWN
    # One line per check that did not pass, and the reference file it recorded, which no
    # longer verifies (reference/local.yaml changed since the capture).
    assert small["blocking"] == big["blocking"] == 5
    assert (small["compact"], big["compact"]) == (6 * 12, 6 * 120)
    per_case = (big["html"] - small["html"]) / (6 * 108)
    assert per_case < 600, per_case  # a compact line, not a section (~5 KB) per case
    assert (big["md"] - small["md"]) / (6 * 108) < 400


def test_a_large_check_shows_counts_worst_cases_first_and_its_compact_table():
    data = _distributed(20)
    case = next(c for c in data["runs"][0]["testcases"]
                if c["name"] == "FioRandomReadDirect %$nid=nid00007")
    _perf(case, "randread_4k_direct_iops")[0] = 460.0  # the slowest node, still a pass
    ctx = signoff.build_context(data, plots=False)
    chk = next(c for c in ctx["checks"] if c.name == "FioRandomReadDirect")
    assert chk.counts == [("PASS", 20)] and chk.figure == "randread_4k_direct_iops"
    assert chk.detailed[0].name == "FioRandomReadDirect %$nid=nid00007"
    assert chk.compact[0].label == "nid00007" and chk.compact[0].anchor
    assert len(chk.compact) == 20 and chk.spread.startswith("min 460 / median 62,940")
    md = signoff.render(ctx, "report.md.j2")
    assert "| [FioRandomReadDirect](#test-fiorandomreaddirect-check) | 20 | PASS 20 |" in md
    assert "| [nid00007](#test-fiorandomreaddirect-nid-nid00007) | PASS | 460 IOPS |  |" in md


def test_the_run_report_schema_decides_on_types_alone():
    # Test cases are validated once per skeleton (types, keys, lengths): sound only while
    # the schema has no keyword that looks at a value.
    def keywords(node):
        if isinstance(node, dict):
            for k, v in node.items():
                yield k
                if k in ("properties", "$defs"):
                    for sub in v.values():
                        yield from keywords(sub)
                elif isinstance(v, (dict, list)):
                    yield from keywords(v)
        elif isinstance(node, list):
            for v in node:
                yield from keywords(v)
    assert set(keywords(runreport._run_report_schema())) <= runreport.SKELETON_KEYWORDS


def test_a_bad_test_case_among_many_of_one_shape_is_found(tmp_path):
    data = _distributed(30)
    data["runs"][0]["testcases"][95]["perfvalues"]["local:compute:x"] = [1, 2]
    path = tmp_path / "rr.json"
    path.write_text(json.dumps(data))
    with pytest.raises(verdicts.RunReportError, match=r"runs\.0\.testcases\.95\.perfvalues"):
        runreport.load_run_report(path)


def test_data_a_test_could_not_remove_is_in_the_console_and_both_reports(tmp_path, capsys):
    # A derived copy of a real run report: the timed-out read test logged what its
    # cleanup could not remove (as BenchmarkTest.finish_removal logs it).
    report = load("full-suite.json")
    left = ("/mnt/t/fsaccept/IORStonewalledRead.x: 18,371 files could not be removed "
            "(/mnt/t/fsaccept/IORStonewalledRead.x/n1/f.7: Input/output error)")
    [case] = [tc for tc in runreport.all_testcases(report)
              if tc.get("name", "").startswith("IORStonewalledRead")]
    case["data_left"] = left
    src = tmp_path / "run-report.json"
    src.write_text(json.dumps(report))
    signoff.main([str(src), "--out", str(tmp_path / "out")])
    line = f"{case['display_name']}: {left}"
    assert f"data left on the target: {line}" in capsys.readouterr().out
    md = (tmp_path / "out" / "report.md").read_text()
    assert "## Data left on the target" in md
    assert signoff.md_escape(line) in md
    html = (tmp_path / "out" / "report.html").read_text()
    assert '<ul id="data-left">' in html and "18,371 files could not be removed" in html
    # And in the test's own section (its logged provenance).
    assert md.count("18,371 files could not be removed") == 2
    # Nothing left: no such section.
    case.pop("data_left")
    src.write_text(json.dumps(report))
    signoff.main([str(src), "--out", str(tmp_path / "out2")])
    assert "Data left" not in (tmp_path / "out2" / "report.md").read_text()
