"""A test's repetitions judged as a whole (fsaccept/reporting/repetitions.py): as many
as its entry asks, no judged figure noisier than ``max_cov``; on the real ``--repeat 3``
capture (tests/data/reframe/ior-repeat.json: IORRandomWriteIOPS 3 times, 39,500 ± 9,120
IOPS, CoV 23 %)."""

from __future__ import annotations

import json

import pytest
import yaml

from fsaccept.reporting import runreport
from fsaccept.suite.reference import load_reference
from tests.conftest import REPO

CAPTURE = REPO / "tests" / "data" / "reframe" / "ior-repeat.json"


def judged(tmp_path, **entry):
    """IORRandomWriteIOPS of the capture, judged against reference/local.yaml with its
    entry's keys ``entry``."""
    data = yaml.safe_load((REPO / "reference" / "local.yaml").read_text())
    data["tests"]["ior_random_write_iops"].update(entry)
    path = tmp_path / "local.yaml"
    path.write_text(yaml.safe_dump(data))
    tests = runreport.tests_of(json.loads(CAPTURE.read_text()), reference=load_reference(path))
    return next(t for t in tests if t.name == "IORRandomWriteIOPS")


def test_fewer_repetitions_than_the_entry_asks_is_lighter_than_the_contract(tmp_path):
    t = judged(tmp_path, repetitions=5)
    assert [v.reason for v in t.repeated] == [
        "lighter than the contract: 3 repetitions, tests.ior_random_write_iops.repetitions "
        "asks 5 (scripts/acceptance repeats the tests as the reference file asks; by hand: "
        "--repeat 5)"]
    assert t.verdict == "INVALID" and t.repeated[0].reason in t.reason


def test_a_figure_noisier_than_max_cov_is_too_noisy_to_judge(tmp_path):
    t = judged(tmp_path, repetitions=3, max_cov=0.1)
    assert [v.reason for v in t.repeated] == [
        "write_iops: too noisy to judge (CoV 23 % over 3 repetitions, at most 10 %): random "
        "error dominates; find what else runs (tests.ior_random_write_iops.max_cov)"]
    assert t.verdict == "INVALID"


@pytest.mark.parametrize("entry", [{}, {"repetitions": 3}, {"repetitions": 2, "max_cov": 0.5}])
def test_as_many_repetitions_and_a_spread_within_the_bound_add_nothing(tmp_path, entry):
    assert judged(tmp_path, **entry).repeated == []


def test_without_a_verified_reference_nothing_is_judged_here():
    tests = runreport.tests_of(json.loads(CAPTURE.read_text()))
    assert all(t.repeated == [] for t in tests)


def test_the_most_repetitions_asked_is_what_a_session_repeats(tmp_path):
    data = yaml.safe_load((REPO / "reference" / "local.yaml").read_text())
    assert load_reference(REPO / "reference" / "local.yaml").most_repetitions == 1
    data["tests"]["ior_random_write_iops"]["repetitions"] = 4
    data["tests"]["ior_write_bandwidth"]["repetitions"] = 2
    path = tmp_path / "local.yaml"
    path.write_text(yaml.safe_dump(data))
    assert load_reference(path).most_repetitions == 4


def test_every_entry_takes_the_keys_and_its_benchmark_types_it_without_them(tmp_path):
    """IOR and md-workbench type an entry from every key it holds: the repetitions' are
    not theirs (a main job with repetitions: 3 failed every IOR test in setup)."""
    from fsaccept.benchmarks.fio import command as fio
    from fsaccept.benchmarks.ior import command as ior
    from fsaccept.benchmarks.md_workbench import command as mdw
    from fsaccept.benchmarks.mdtest import command as mdt
    data = yaml.safe_load((REPO / "reference" / "local-spack.yaml").read_text())
    for entry in data["tests"].values():
        entry.update(repetitions=3, max_cov=0.2)
    path = tmp_path / "local-spack.yaml"
    path.write_text(yaml.safe_dump(data))
    ref = load_reference(path)
    for key, entry in ref.entries.items():
        if key.startswith(("ior_", "checkpoint_")):
            ior.entry_parameters(key, entry)
        elif key.startswith("md_workbench"):
            mdw.parameters(key, entry)
        elif key.startswith("mdtest_"):
            mdt.parameters(key, entry)
        elif key.startswith("fio_"):
            fio.parameters(key, key[len("fio_"):], entry)


def thresholded(tmp_path, threshold: float, judge: str | None = None, verified=True):
    """The capture's IORRandomWriteIOPS (34,942, 49,954 and 33,481 IOPS) as if run against
    a threshold of ``threshold`` IOPS (tolerance 10 %): each run that misses it failed in
    ReFrame's performance stage, as a live run records it; judged against
    reference/local.yaml with that threshold (and ``judge``)."""
    report = json.loads(CAPTURE.read_text())
    for tc in report["runs"][0]["testcases"]:
        if not tc["name"].startswith("IORRandomWriteIOPS"):
            continue
        key = next(iter(tc["perfvalues"]))
        vals = tc["perfvalues"][key]
        vals[1] = threshold
        if vals[0] < threshold * 0.9:
            vals[5] = "fail"
            tc.update(result="fail", fail_phase="performance",
                      fail_reason=f"failed to meet references: write_iops={vals[0]}, "
                                  f"expected {threshold} (l=-0.1, u=inf)")
    data = yaml.safe_load((REPO / "reference" / "local.yaml").read_text())
    entry = data["tests"]["ior_random_write_iops"]
    entry["threshold"]["value"] = threshold
    if judge:
        entry["judge"] = judge
    path = tmp_path / "local.yaml"
    path.write_text(yaml.safe_dump(data))
    tests = runreport.tests_of(report, reference=load_reference(path) if verified else None)
    return next(t for t in tests if t.name == "IORRandomWriteIOPS")


def test_judge_mean_passes_a_run_below_the_threshold_when_the_mean_is_above(tmp_path):
    # The floor is 34,200 IOPS: run 3 (33,481) misses it, the mean (39,459) does not.
    t = thresholded(tmp_path, 38000)
    assert [v.verdict for v in t.verdicts] == ["PASS", "PASS", "PASS"]
    assert t.repeated == [] and t.verdict == "PASS"


def test_judge_min_fails_on_any_run_below_the_threshold(tmp_path):
    t = thresholded(tmp_path, 38000, judge="min")
    assert [v.verdict for v in t.verdicts] == ["PASS", "PASS", "FAIL"]
    assert t.verdict == "FAIL"
    assert t.reason == "run 3: write_iops 33,481 IOPS below the threshold 34,200 IOPS"


def test_judge_mean_fails_when_the_mean_is_below_the_threshold(tmp_path):
    # The floor is 40,500 IOPS: runs 1 and 3 miss it, and the mean does too.
    t = thresholded(tmp_path, 45000)
    assert [v.verdict for v in t.verdicts] == ["PASS", "PASS", "PASS"]
    assert t.verdict == "FAIL"
    assert [v.reason for v in t.repeated] == [
        "write_iops: the mean 39,459 IOPS of 3 repetitions is below the threshold 40,500 "
        "IOPS (tests.ior_random_write_iops.judge: mean)"]


def test_without_a_verified_reference_every_run_is_judged(tmp_path):
    t = thresholded(tmp_path, 38000, verified=False)
    assert t.verdict == "FAIL" and t.reason.startswith("run 3: write_iops")


def test_a_run_that_failed_for_another_reason_fails_the_test_whatever_the_judge(tmp_path):
    report = json.loads(CAPTURE.read_text())
    runs = [tc for tc in report["runs"][0]["testcases"]
            if tc["name"].startswith("IORRandomWriteIOPS")]
    # Failed in its performance stage, but no figure beyond its limit: not a threshold.
    runs[1].update(result="fail", fail_phase="performance", fail_reason="perf function failed")
    path = tmp_path / "local.yaml"
    path.write_text((REPO / "reference" / "local.yaml").read_text())
    tests = runreport.tests_of(report, reference=load_reference(path))
    t = next(t for t in tests if t.name == "IORRandomWriteIOPS")
    assert t.verdict != "PASS" and t.verdicts[1].verdict != "PASS"


def test_a_judge_the_schema_does_not_know_exits_naming_the_key(tmp_path):
    from fsaccept.core.reference import ReferenceError
    data = yaml.safe_load((REPO / "reference" / "local.yaml").read_text())
    data["tests"]["ior_random_write_iops"]["judge"] = "median"
    path = tmp_path / "local.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ReferenceError, match="judge"):
        load_reference(path)
