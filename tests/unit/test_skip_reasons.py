"""Every skip names its real cause, a fixture's included: a test ReFrame skips because
its fixture skipped ("skipped due to skipped dependencies", before any hook of its own)
records the fixture's reason, and the reports show it (tests/data/reframe/)."""

import hashlib
import json
from pathlib import Path
from types import SimpleNamespace

from fsaccept.reporting import runreport, verdicts
from fsaccept.rfm import acceptance as base

DATA = Path(__file__).resolve().parent.parent / "data" / "reframe"


def by_name(report):
    return {t.name: t for t in runreport.tests_of(report)}


def test_a_fixtures_skip_reason_reaches_its_tests_record_and_report():
    report = runreport.load_run_report(DATA / "fixture-skip.json")
    cases = {tc["name"]: tc for tc in runreport.all_testcases(report)}
    fixture = cases["IORIntegrityDataset ~local:compute+openmpi"]
    assert fixture["result"] == "skip" and fixture["skip_reason"].startswith(
        "ior not found on PATH: ")
    record = cases["IORDataIntegrity"]
    assert record["result"] == "skip"
    assert record["skip_reason"] == ("its fixture IORIntegrityDataset was skipped: "
                                     + fixture["skip_reason"])
    test = by_name(report)["IORDataIntegrity"]
    assert test.verdict == verdicts.SKIPPED and test.reason == record["skip_reason"]
    # The fix names the system to add or the set-up to run, never ReFrame's output.
    assert "`scripts/setup --spack" in test.reason and "--system local-spack" in test.reason
    assert verdicts.SKIPPED_BY_REFRAME not in test.reason


def test_an_older_run_report_without_the_tests_reason_takes_its_fixtures():
    data = json.loads((DATA / "fixture-skip.json").read_text())
    for tc in runreport.all_testcases(data):
        if tc["name"] == "IORDataIntegrity":
            tc["skip_reason"] = ""  # as recorded before fixtures' reasons were passed on
    test = by_name(data)["IORDataIntegrity"]
    assert test.verdict == verdicts.SKIPPED
    assert test.reason.startswith("its fixture IORIntegrityDataset ~local:compute+openmpi "
                                  "was skipped: ior not found on PATH: ")


def fake_test(deps, partition=None):
    return SimpleNamespace(current_partition=partition,
                           user_deps=lambda: [(d, None) for d in deps])


def test_only_a_test_never_set_up_takes_a_fixtures_reason(monkeypatch):
    monkeypatch.setattr(base, "SKIPPED", {"IORIntegrityDataset_7cf6c340": (
        "IORIntegrityDataset", "needs 4 nodes but only 3 are usable")})
    deps = ["BenchmarkBinaries_1", "IORIntegrityDataset_7cf6c340"]
    assert base.fixture_skip_reason(fake_test(deps)) == (
        "its fixture IORIntegrityDataset was skipped: needs 4 nodes but only 3 are usable")
    # Set up (it ran its own hooks): its own reasons only.
    assert base.fixture_skip_reason(
        fake_test(["IORIntegrityDataset_7cf6c340"], partition="local:compute")) == ""
    assert base.fixture_skip_reason(fake_test(["BenchmarkBinaries_1"])) == ""


def _judged_against_its_reference(tmp_path, result="skip"):
    """fixture-skip.json (a run without IOR: its dataset fixture skipped) with the
    reference file it recorded verified (reference/local.yaml, path and SHA-256), as a
    newcomer's own run has it; the fixture's record carries the job evidence a job that
    never ran leaves: none (``job_fstype`` '', no ``node_mounts``, no ``servers_after``)."""
    from fsaccept.reporting import report as signoff
    ref = tmp_path / "local.yaml"
    ref.write_bytes((DATA.parents[2] / "reference" / "local.yaml").read_bytes())
    sha = hashlib.sha256(ref.read_bytes()).hexdigest()
    data = json.loads((DATA / "fixture-skip.json").read_text())
    for tc in runreport.all_testcases(data):
        if tc.get("reference_sha256"):
            tc["reference_path"], tc["reference_sha256"] = str(ref), sha
        if tc["name"].startswith("IORIntegrityDataset"):
            assert tc["result"] == "skip" and tc["job_fstype"] == "" and tc["jobid"] is None
            tc.update(node_mounts="", servers_after="", result=result)
    (tmp_path / "run-report.json").write_text(json.dumps(data))
    code = signoff.main([str(tmp_path / "run-report.json"), "--out", str(tmp_path / "out")])
    return code, (tmp_path / "out" / "report.md").read_text()


def test_a_skipped_fixture_is_incomplete_with_its_reason_never_judged_on_job_evidence(
        tmp_path, capsys):
    """Issue 41: a newcomer without IOR got NOT ACCEPTED, the skipped dataset fixture
    judged for the file system of a job it never had ('could not tell the file system
    of job_fstype ... (findmnt)')."""
    code, md = _judged_against_its_reference(tmp_path)
    out = capsys.readouterr().out
    assert code == 1 and out.splitlines()[-1] == "overall verdict: INCOMPLETE", out
    assert "**Overall verdict: INCOMPLETE**" in md
    assert "findmnt" not in out and "fixture IORIntegrityDataset ~" not in out
    # Each test that did not run says why: the fixture's reason reaches its test.
    assert "IORDataIntegrity: SKIPPED (its fixture IORIntegrityDataset was skipped: ior not " \
           "found on PATH" in out
    assert "IORWriteBandwidth: SKIPPED (ior not found on PATH" in out


def test_a_fixture_that_ran_is_still_judged_on_its_job_evidence(tmp_path, capsys):
    """The same record as a fixture that passed (its job ran): its missing file system
    blocks the sign-off, as before."""
    code, _ = _judged_against_its_reference(tmp_path, result="pass")
    out = capsys.readouterr().out
    assert code == 1 and out.splitlines()[-1] == "overall verdict: NOT ACCEPTED", out
    assert ("fixture IORIntegrityDataset ~local:compute+openmpi: could not tell the file "
            "system of job_fstype") in out
