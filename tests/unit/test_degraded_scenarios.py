"""Several degraded-mode fault scenarios: the reference file's ``degraded.scenarios``
(each its own clause), the session's ``-n`` pattern, and the checks once per scenario
(``reframe -l`` of this checkout's checks: listing sets nothing up, no cluster needed).
With one plan and a file that names no scenario, everything is as before."""

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml

from fsaccept.core.degraded import scenario_name_problem
from fsaccept.suite import faults, listing
from fsaccept.suite.reference import REFERENCE_DIR, ReferenceError, load_reference

REPO = Path(__file__).resolve().parents[2]
CEPHFS = REFERENCE_DIR / "local-cephfs-degraded.yaml"
REPLICA = REFERENCE_DIR / "local-gluster-replica.yaml"


def _write(tmp_path, data, name="ref.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _cephfs(edit=lambda data: None):
    data = yaml.safe_load(CEPHFS.read_text())
    edit(data)
    return data


# -- the reference file ------------------------------------------------------------------


def test_each_scenario_is_the_section_with_its_own_keys():
    mode = load_reference(CEPHFS).degraded_mode
    assert list(mode.scenarios) == ["mds-failover", "osd-rebuild"]
    mds, osd = mode.clauses
    assert (mds.scenario, mds.where) == ("mds-failover", "degraded.scenarios.mds-failover")
    assert sorted(mds.tests) == ["ior_data_integrity", "ior_write_bandwidth", "mdtest_easy"]
    assert (mds.max_failover_s, mds.max_recovery_s, mds.detect_timeout_s) == (60, 60, 60)
    # osd-rebuild gives no tests: the section's.
    assert sorted(osd.tests) == ["ior_data_integrity", "ior_write_bandwidth"]
    assert (osd.max_failover_s, osd.max_recovery_s, osd.fraction) == (30, 120, 0.5)
    assert mode.all_tests == {"ior_data_integrity", "ior_write_bandwidth", "mdtest_easy"}


def test_a_scenario_s_thresholds_are_its_own(tmp_path):
    def own(data):
        data["degraded"]["scenarios"]["osd-rebuild"].update(
            fraction=0.25, tests={"ior_write_bandwidth": {"fraction": 0.8},
                                  "ior_data_integrity": {}})
    ref = load_reference(_write(tmp_path, _cephfs(own)))
    osd = ref.degraded_thresholds("ior_write_bandwidth", "osd-rebuild")
    mds = ref.degraded_thresholds("ior_write_bandwidth", "mds-failover")
    assert osd[""].value == 0.8 and mds[""].value == 0.5  # 0.8 and 0.5 of 1 MiB/s
    assert (osd["recovery_s"].value, osd["failover_s"].value) == (120, 30)
    assert (mds["recovery_s"].value, mds["failover_s"].value) == (60, 60)
    assert ref.degraded_clause("osd-rebuild").tests["ior_data_integrity"] == 0.25
    with pytest.raises(ReferenceError, match=re.escape(
            "degraded.scenarios.osd-rebuild.tests.mdtest_easy: missing; the scenario runs "
            "degraded: ior_data_integrity, ior_write_bandwidth")):
        ref.degraded_thresholds("mdtest_easy", "osd-rebuild")
    with pytest.raises(ReferenceError, match=re.escape(
            "degraded.scenarios.ost-rebuild: no such scenario (the file names: "
            "mds-failover, osd-rebuild)")):
        ref.degraded_thresholds("mdtest_easy", "ost-rebuild")
    with pytest.raises(ReferenceError, match=re.escape(
            "degraded.scenarios: the file names scenarios (mds-failover, osd-rebuild); "
            "this test ran under none")):
        ref.degraded_thresholds("mdtest_easy")


def test_one_clause_judges_every_scenario_of_a_file_that_names_none():
    """The old form: the section's clause, whatever the test's scenario."""
    ref = load_reference(REPLICA)
    mode = ref.degraded_mode
    assert mode.scenarios == {} and mode.clauses == [mode] and mode.where == "degraded"
    assert ref.degraded_clause("") == mode and ref.degraded_clause("anything") == mode
    assert ref.degraded_thresholds("mdtest_easy", "mds-failover") == \
        ref.degraded_thresholds("mdtest_easy")


@pytest.mark.parametrize("edit, message", [
    (lambda s: s.update({"MDS": {}}),
     "degraded.scenarios: 'MDS' is not a scenario name (at most 40 lowercase letters"),
    (lambda s: s.update({"mds-failover": {"max_recovery": 3}}),
     "degraded.scenarios.mds-failover: unknown key(s) 'max_recovery'; allowed: "
     "detect_timeout_s, fraction, max_failover_s, max_recovery_s, tests"),
    (lambda s: s["osd-rebuild"].update(tests={"md_workbench": {}}),
     "degraded.scenarios.osd-rebuild.tests.md_workbench: no degraded-mode check runs it"),
    (lambda s: s["osd-rebuild"].update(tests={"ior_read_bandwidth": {}}),
     "degraded.scenarios.osd-rebuild.tests.ior_read_bandwidth: no such test under tests:"),
    (lambda s: s["osd-rebuild"].update(fraction=1.5),
     "degraded.scenarios.osd-rebuild.fraction: 1.5 is greater than the maximum of 1"),
    (lambda s: s.clear(), "degraded.scenarios: {} should be non-empty"),
])
def test_a_bad_scenario_is_named(tmp_path, edit, message):
    def bad(data):
        if data["tests"].get("ior_read_bandwidth"):
            del data["tests"]["ior_read_bandwidth"]
        # A test the file has, that no degraded-mode check runs (the main file's entry).
        data["tests"]["md_workbench"] = yaml.safe_load(
            (REFERENCE_DIR / "local-cephfs.yaml").read_text())["tests"]["md_workbench"]
        edit(data["degraded"]["scenarios"])
    with pytest.raises(ReferenceError, match=re.escape(message)):
        load_reference(_write(tmp_path, _cephfs(bad)))


def test_scenario_names_follow_one_rule():
    assert scenario_name_problem("mds-failover") == ""
    assert scenario_name_problem("ost_rebuild2") == ""
    for bad in ("", "-x", "MDS", "a b", "a.b", "x" * 41, 3, None):
        assert scenario_name_problem(bad), bad
    with pytest.raises(faults.FaultPlanError, match="'a.b' is not a scenario name"):
        faults.plans_of({"scenarios": {"a.b": {"manual": True, "healed": "true"}}})


# -- the session's pattern ---------------------------------------------------------------


def test_the_pattern_of_one_clause_is_as_before():
    assert listing.degraded_session_pattern(load_reference(REPLICA)) == (
        r"^(MPILaunchSanity|IORWriteBandwidth|IORStonewalledRead|IORDataIntegrity|"
        r"MdtestEasy|DegradedIORWriteBandwidth|DegradedIORStonewalledRead|"
        r"DegradedIORDataIntegrity|DegradedMdtestEasy)\b")


def _selects(pattern, display_name):
    """ReFrame's -n: a search in the display name without its blanks."""
    return re.search(pattern, display_name.replace(" ", "")) is not None


def test_the_pattern_selects_each_scenario_s_own_tests():
    pattern = listing.degraded_session_pattern(load_reference(CEPHFS))
    for name in ("MPILaunchSanity", "IORWriteBandwidth", "IORDataIntegrity", "MdtestEasy",
                 "DegradedMdtestEasy %fault_scenario=mds-failover",
                 "DegradedIORWriteBandwidth %fault_scenario=osd-rebuild",
                 "DegradedIORDataIntegrity %dataset.fault_scenario=osd-rebuild",
                 "DegradedIORDataIntegrity %dataset.fault_scenario=mds-failover"):
        assert _selects(pattern, name), name
    for name in ("DegradedMdtestEasy %fault_scenario=osd-rebuild",  # not its clause's
                 "DegradedMdtestEasy %fault_scenario=mds-failover2",
                 "DegradedMdtestEasy", "DegradedIORWriteBandwidth", "MdtestHard",
                 "IORStonewalledRead", "DataReductionProbe"):
        assert not _selects(pattern, name), name


# -- the checks, once per scenario -------------------------------------------------------


def _listed(system, reference):
    env = {**os.environ, "PYTHONPATH": str(REPO), "FSACCEPT_REFERENCE": str(reference)}
    proc = subprocess.run([str(Path(sys.executable).parent / "reframe"), "-C",
                           str(REPO / "config/settings.py"), "-c", str(REPO / "checks"),
                           "-c", str(REPO / "checks" / "degraded"), "-l",
                           "-n", listing.degraded_session_pattern(load_reference(reference)),
                           "--system", system], capture_output=True, text=True,
                          cwd=tempfile.gettempdir(), env=env, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return {line.rsplit(" /", 1)[0][2:] for line in proc.stdout.splitlines()
            if line.startswith("- ")}


HEALTHY = {"MPILaunchSanity", "IORWriteBandwidth", "IORDataIntegrity"}


def test_one_plan_keeps_the_names():
    assert _listed("local-gluster", REPLICA) == HEALTHY | {
        "IORStonewalledRead", "MdtestEasy", "DegradedIORWriteBandwidth",
        "DegradedIORStonewalledRead", "DegradedIORDataIntegrity", "DegradedMdtestEasy"}


def test_each_scenario_of_the_file_runs_its_own_tests():
    assert _listed("local-cephfs", CEPHFS) == HEALTHY | {
        "MdtestEasy",
        "DegradedMdtestEasy %fault_scenario=mds-failover",
        "DegradedIORWriteBandwidth %fault_scenario=mds-failover",
        "DegradedIORWriteBandwidth %fault_scenario=osd-rebuild",
        "DegradedIORDataIntegrity %dataset.fault_scenario=mds-failover",
        "DegradedIORDataIntegrity %dataset.fault_scenario=osd-rebuild"}


def test_the_system_s_scenarios_run_where_the_file_names_none(tmp_path):
    """lab/systems/local_cephfs.py declares two scenarios; a file without
    degraded.scenarios runs each of its tests under both."""
    def unnamed(data):
        del data["degraded"]["scenarios"]
    assert _listed("local-cephfs", _write(tmp_path, _cephfs(unnamed))) == HEALTHY | {
        f"{check} %{param}fault_scenario={name}"
        for name in ("mds-failover", "osd-rebuild")
        for check, param in (("DegradedIORWriteBandwidth", ""),
                             ("DegradedIORDataIntegrity", "dataset."))}


def test_local_cephfs_declares_both_scenarios():
    """lab/systems/local_cephfs.py: each scenario's plan, its commands the lab's."""
    from fsaccept.suite import sites
    extras = sites.selected("local-cephfs")["partitions"][0]["extras"]
    plans = faults.plans_of(extras["degraded"])
    assert list(plans) == ["mds-failover", "osd-rebuild"]
    cluster = str(REPO / "scripts" / "local-cluster")
    assert plans["mds-failover"].degrade == f"{cluster} fail-mds"
    assert plans["osd-rebuild"].degrade == f"{cluster} fail-osd 1"
    for plan in plans.values():
        assert (plan.restore, plan.healed) == (f"{cluster} restore", f"{cluster} healed")
    # Each scenario the reference names is declared.
    assert set(load_reference(CEPHFS).degraded_mode.scenarios) == set(plans)


def test_the_read_s_dataset_carries_the_scenario():
    """checks/degraded's datasets carry @on_scenarios, so each scenario's read has its
    own dataset (written before its own fault); without a runtime (this import) the
    classes are unchanged."""
    source = (REPO / "checks" / "degraded" / "degraded_mode.py").read_text()
    for cls in ("DegradedIORReadDatasetGeneration", "DegradedIORIntegrityDataset",
                "DegradedIORWriteBandwidth", "DegradedIORStonewalledRead",
                "DegradedIORDataIntegrity", "DegradedMdtestEasy"):
        assert re.search(rf"^@on_scenarios\nclass {cls}\(", source, re.M), cls


def test_the_live_check_runs_and_judges_each_scenario_by_its_own(monkeypatch):
    """``DegradedMode`` on local-cephfs: each scenario its plan, its thresholds and fault
    ceilings, its heal watch; a test its scenario does not list is refused, naming the
    key, and asks for no threshold."""
    from types import SimpleNamespace

    from fsaccept.core import servers
    from fsaccept.rfm.degraded import DegradedMode
    from fsaccept.suite import sites

    class Test(SimpleNamespace):
        param_space = {"fault_scenario": None}

    test = Test(fault_scenario="osd-rebuild", refdata=load_reference(CEPHFS),
                reference_key="ior_write_bandwidth",
                _server_probe=servers.probe_for("fuse.ceph-fuse"),
                current_system=SimpleNamespace(name="local-cephfs"),
                current_partition=SimpleNamespace(
                    extras=sites.selected("local-cephfs")["partitions"][0]["extras"]),
                figure_name=lambda: "write_bandwidth")
    for name in ("fault_clause", "refusal", "heal_limit_s"):
        setattr(test, name, getattr(DegradedMode, name).__get__(test))
    monkeypatch.setattr(sys, "argv", ["reframe", "-r", "--exec-policy=serial"])
    assert test.refusal() == "" and test.plan.degrade.endswith("local-cluster fail-osd 1")
    assert test.plan.name == "osd-rebuild"
    refs = DegradedMode.threshold_references(test)
    assert (refs["write_bandwidth"][0], refs["recovery_s"][0], refs["failover_s"][0]) == \
        (0.5, 120, 30)
    assert test.heal_limit_s() == 360
    test.fault_scenario = "mds-failover"
    assert test.refusal() == "" and test.plan.degrade.endswith("local-cluster fail-mds")
    refs = DegradedMode.threshold_references(test)
    assert (refs["recovery_s"][0], refs["failover_s"][0]) == (60, 60)
    assert test.heal_limit_s() == 180
    test.fault_scenario, test.reference_key = "osd-rebuild", "mdtest_easy"
    assert test.refusal() == (
        f"{CEPHFS}: degraded.scenarios.osd-rebuild.tests.mdtest_easy: not asked for in this "
        "scenario (the contract's degraded-mode clause; docs/user/degraded.md)")
    # Asked at set-up before the server probe is chosen (AcceptanceTest.set_threshold).
    del test._server_probe
    assert DegradedMode.threshold_references(test) == {}
    test.reference_key = "ior_write_bandwidth"
    assert DegradedMode.threshold_references(test)["recovery_s"][0] == 120
    test._server_probe = servers.probe_for("fuse.ceph-fuse")
    test.fault_scenario = "ost-rebuild"
    assert test.refusal().startswith(f"{CEPHFS}: degraded.scenarios.ost-rebuild: no such "
                                     "scenario (the file names: mds-failover, osd-rebuild)")


def test_the_documented_clause_per_scenario_is_valid(tmp_path):
    """docs/user/degraded.md's ``degraded:`` with scenarios, on the example Lustre
    site's reference file: valid, each scenario its own clause."""
    doc = (REPO / "docs" / "user" / "degraded.md").read_text()
    block = next(b for b in re.findall(r"```yaml\n(.*?)```", doc, re.S) if "scenarios:" in b)
    data = yaml.safe_load((REFERENCE_DIR / "example-lustre.yaml").read_text())
    data.update(yaml.safe_load(block))
    ref = load_reference(_write(tmp_path, data))
    mds, ost = ref.degraded_mode.clauses
    assert (mds.scenario, mds.max_failover_s, sorted(mds.tests)) == (
        "mds-failover", 120, ["ior_data_integrity", "ior_write_bandwidth", "mdtest_easy"])
    assert (ost.scenario, ost.fraction, ost.max_recovery_s) == ("ost-rebuild", 0.4, 3600)
