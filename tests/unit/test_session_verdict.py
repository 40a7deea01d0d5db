"""The session's verdict, decided once (:func:`fsaccept.reporting.verdict.judge_session`):
each verdict and its reasons, from the real run reports in tests/data/reframe (each with
its reference file where the capture has one), and the report, its console lines and
nightly reading that one decision."""

import copy
import io
import json
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from fsaccept.reporting import report as signoff
from fsaccept.reporting import runreport, trends
from fsaccept.reporting import verdict as judging
from fsaccept.reporting.case import typed
from fsaccept.reporting.manifest import Integrity
from fsaccept.reporting.scaling import ScalingSection
from fsaccept.reporting.verdicts import ACCEPTED, INCOMPLETE, NOT_ACCEPTED
from fsaccept.suite.reference import load_reference

DATA = Path(__file__).resolve().parent.parent / "data" / "reframe"
UNVERIFIED = "the reference file could not be verified: {}; thresholds not compared"


def _run(name):
    return json.loads((DATA / name).read_text())


def _judged(run, reference=None, problem="", **options):
    """The verdict of a run report as parsed, judged against ``reference`` (a file in
    tests/data/reframe) the way the sign-off judges it."""
    ref = load_reference(DATA / reference) if reference else None
    report = typed(run)
    tests = runreport.tests_of(report, reference=ref)
    return judging.judge_session(report, tests, reference=ref, reference_problem=problem,
                                 **options)


def test_a_passing_session_with_its_verified_reference_is_accepted_with_no_reason():
    judged = _judged(_run("local-spack-accepted.json"), "local-spack-accepted.reference.yaml")
    assert judged == judging.SessionVerdict(ACCEPTED, []) and judged.accepted
    assert judging.console_lines(judged) == ["overall verdict: ACCEPTED"]


def test_a_failed_test_and_missing_acceptance_tests_are_not_accepted_each_named():
    judged = _judged(_run("ior-fail.json"), "ior-fail.reference.yaml")
    assert judged.verdict == NOT_ACCEPTED and not judged.accepted
    assert judged.reasons == [
        "IORWriteBandwidth: FAIL (write_bandwidth 2,166.2 MiB/s below the threshold "
        "900,000 MiB/s)",
        "2 acceptance test(s) the reference file defines did not run: IORStonewalledRead, "
        "IORRandomReadIOPS"]


def test_a_passing_session_whose_reference_file_cannot_be_verified_is_incomplete():
    judged = _judged(_run("ior-pass.json"), problem="local.yaml changed since the run")
    assert judged.verdict == INCOMPLETE
    assert judged.reasons == ["1 thing(s) the sign-off cannot verify",
                              UNVERIFIED.format("local.yaml changed since the run")]


def test_a_session_whose_tests_were_all_skipped_is_incomplete_saying_how_many():
    judged = _judged(_run("fixture-skip.json"))
    assert judged.verdict == INCOMPLETE
    assert judged.reasons[0] == "2 of 2 tests did not run"
    assert [r.split(":")[:2] for r in judged.reasons[1:3]] == [
        ["IORWriteBandwidth", " SKIPPED (ior not found on PATH"],
        ["IORDataIntegrity", " SKIPPED (its fixture IORIntegrityDataset was skipped"]]
    assert judged.reasons[3:] == [UNVERIFIED.format("none was given")]


def test_no_test_at_all_is_not_accepted():
    run = _run("ior-pass.json")
    run["runs"][0]["testcases"] = []
    judged = _judged(run, "local-spack-accepted.reference.yaml")
    assert judged.verdict == NOT_ACCEPTED and judged.reasons[0] == "no test ran"


def test_a_condition_s_failure_blocks_and_what_it_cannot_verify_leaves_it_incomplete():
    run = _run("local-spack-accepted.json")
    ref = "local-spack-accepted.reference.yaml"
    failed = ScalingSection(failures=["a curve FAILs"], incomplete=["a point is missing"])
    assert _judged(run, ref, conditions=[failed]) == judging.SessionVerdict(
        NOT_ACCEPTED, ["a curve FAILs", "a point is missing"])
    assert _judged(run, ref, conditions=[ScalingSection(), ScalingSection(
        incomplete=["a point is missing"])]) == judging.SessionVerdict(
        INCOMPLETE, ["1 thing(s) the sign-off cannot verify", "a point is missing"])


def test_a_manifest_that_does_not_verify_keeps_the_session_from_accepted():
    run, ref = _run("local-spack-accepted.json"), "local-spack-accepted.reference.yaml"
    bad = Integrity(False, "NOT VERIFIED", present=True, problems=["run-report.json changed"])
    assert _judged(run, ref, integrity=bad) == judging.SessionVerdict(
        INCOMPLETE, ["1 thing(s) the sign-off cannot verify",
                     "integrity: run-report.json changed"])
    absent = Integrity(False, "not verified: no manifest")  # none found: not demanded
    assert _judged(run, ref, integrity=absent).verdict == ACCEPTED


def test_one_check_failing_on_several_nodes_is_one_reason_with_the_counts():
    run = _run("ior-fail.json")
    cases = []
    for tc in run["runs"][0]["testcases"]:
        for i in range(3):
            c = copy.deepcopy(tc)
            c.update(name=f"{tc['name']} %$nid=nid{i}", display_name=f"{tc['name']} %$nid=nid{i}",
                     unique_name=f"{tc['unique_name']}_{i}", uuid=f"{tc['uuid']}-{i}",
                     job_nodelist=[f"nid{i}"])
            cases.append(c)
    run["runs"][0]["testcases"] = cases
    for counts in (run["session_info"], run["runs"][0]):
        counts["num_cases"], counts["num_failures"] = len(cases), 3
    judged = _judged(run, "ior-fail.reference.yaml")
    assert judged.verdict == NOT_ACCEPTED
    # Each case's node list is not the 4 nodes the entry asks: INVALID, one line for all.
    assert judged.reasons[0].startswith(
        "IORWriteBandwidth: 3 of 3 test cases did not pass (INVALID 3); first: "
        "IORWriteBandwidth %$nid=nid0: INVALID (")
    assert len(judged.reasons) == 2 and "did not run" in judged.reasons[1]


@pytest.mark.parametrize("name,reference", [
    ("ior-fail.json", "ior-fail.reference.yaml"), ("fixture-skip.json", None),
    ("local-spack-accepted.json", "local-spack-accepted.reference.yaml")])
def test_the_report_and_its_console_show_the_one_verdict(name, reference, tmp_path):
    argv = [str(DATA / name), "--out", str(tmp_path)] + (
        ["--reference", str(DATA / reference)] if reference else [])
    console = io.StringIO()
    with redirect_stdout(console):
        code = signoff.main(argv)
    _, ctx = signoff.write_report_context(DATA / name, tmp_path / "again",
                                          reference=DATA / reference if reference else None)
    judged = ctx["judged"]
    assert (ctx["signoff"]["verdict"], ctx["signoff"]["blocking"]) == (judged.verdict,
                                                                       judged.reasons)
    lines = console.getvalue().splitlines()
    assert lines[-len(judging.console_lines(judged)):] == judging.console_lines(judged)
    assert code == (0 if judged.accepted else 1)


def test_nightly_prints_each_test_s_line_as_the_verdict_s_reasons_name_it(tmp_path):
    tests = runreport.tests_of(typed(_run("ior-fail.json")))
    failed = [judging.verdict_line(t) for t in tests if t.verdict != "PASS"]
    assert failed == [judging.overall_verdict(tests)[1][0]]
    assert trends.verdict_line is judging.verdict_line
