"""The sign-off of a degraded-mode session over several fault scenarios (a system's
``extras.degraded.scenarios``, a reference file's ``degraded.scenarios``): each
degraded-mode test judged by its own scenario's clause, each scenario its part of the
Degraded mode section, every test each scenario lists required under it.  Built from
the real run report of ``scripts/acceptance --system local-gluster --degraded``
(tests/data/reframe/local-gluster-degraded-accepted.json), its degraded-mode cases run
once per scenario as the parameterised checks name them (``%fault_scenario=NAME``, a
read's ``%dataset.fault_scenario=NAME``).  With one plan the reports are the golden
ones (test_golden_reports.py)."""

import copy
import json
from pathlib import Path

import yaml

from fsaccept.reporting import report as signoff
from fsaccept.suite.reference import load_reference

DATA = Path(__file__).resolve().parent.parent / "data" / "reframe"
CAPTURED = "local-gluster-degraded-accepted"
SCENARIOS = ("mds-failover", "osd-rebuild")
#: The degraded-mode tests that read a dataset (named by their dataset's scenario).
READS = ("DegradedIORStonewalledRead", "DegradedIORDataIntegrity")


def per_scenario(edit=lambda name, tc: None, scenarios=SCENARIOS):
    """The captured session as if its degraded-mode checks (and their datasets) were
    parameterised over ``scenarios``; ``edit`` changes a scenario's copy of a case."""
    run = json.loads((DATA / f"{CAPTURED}.json").read_text())
    cases = []
    for tc in run["runs"][0]["testcases"]:
        cls, _, rest = tc["name"].partition(" ")
        if not cls.startswith("Degraded"):
            cases.append(tc)
            continue
        for name in scenarios:
            c = copy.deepcopy(tc)
            param = f"%dataset.fault_scenario={name}" if cls in READS else \
                f"%fault_scenario={name}"
            c["name"] = c["display_name"] = " ".join([cls, param] + ([rest] if rest else []))
            c["unique_name"], c["fault_scenario"] = f"{cls}_{name}", name
            c["uuid"] = f"{tc['uuid']}-{name}"
            c["dependencies_actual"] = [
                [f"{d[0].split('_')[0]}_{name}" if d[0].startswith("Degraded") else d[0],
                 *d[1:]] for d in tc["dependencies_actual"]]
            edit(name, c)
            cases.append(c)
    run["runs"][0]["testcases"] = cases
    run["session_info"]["num_cases"] = run["runs"][0]["num_cases"] = len(cases)
    run["session_info"]["num_failures"] = run["runs"][0]["num_failures"] = sum(
        c["result"] == "fail" for c in cases)
    return run


def reference(tmp_path, scenarios=None):
    """The captured reference file, with ``degraded.scenarios`` (None: none named)."""
    data = yaml.safe_load((DATA / f"{CAPTURED}.reference.yaml").read_text())
    if scenarios is not None:
        data["degraded"]["scenarios"] = scenarios
    path = tmp_path / "scenarios.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return load_reference(path)


def context(run, ref):
    return signoff.build_context(run, reference=ref, plots=False)


def blocking(ctx):
    return ctx["signoff"]["blocking"]


BOTH = {name: {} for name in SCENARIOS}


def test_each_scenario_has_its_part_and_all_pass(tmp_path):
    ctx = context(per_scenario(), reference(tmp_path, BOTH))
    assert ctx["signoff"]["verdict"] == "ACCEPTED", blocking(ctx)
    section = ctx["degraded"]
    assert [p.name for p in section.scenarios] == list(SCENARIOS)
    for part in section.scenarios:
        assert len(part.faults) == 4 and all(f.verdict == "PASS" for f in part.faults)
        assert all(part.name in f.test for f in part.faults + part.figures)
        assert part.clause.startswith("While a storage server is down, each figure at "
                                      "least 60%")
    md = signoff.render(ctx, "report.md.j2")
    degraded = md[md.index("## Degraded mode"):md.index("## Tests")]
    for name in SCENARIOS:
        assert f"### Scenario {name}" in degraded
        assert f"| DegradedIORWriteBandwidth %fault_scenario={name} | " in degraded
        assert f"| DegradedIORDataIntegrity %dataset.fault_scenario={name} | " in degraded
    html = signoff.render(ctx, "report.html.j2")
    assert '<table id="degraded-faults-osd-rebuild">' in html
    assert "<h3>Scenario mds-failover</h3>" in html


def test_a_scenario_s_own_clause_judges_its_own_tests(tmp_path):
    """osd-rebuild asks 70 % (the tests recorded 60 % of 10 MiB/s) and a recovery within
    1 s: its copies are INVALID, naming the scenario; mds-failover's pass."""
    ref = reference(tmp_path, {"mds-failover": {},
                               "osd-rebuild": {"fraction": 0.7, "max_recovery_s": 1}})
    ctx = context(per_scenario(), ref)
    assert ctx["signoff"]["verdict"] == "NOT ACCEPTED"
    said = [b for b in blocking(ctx) if "DegradedIORWriteBandwidth" in b]
    assert len(said) == 1 and said[0].startswith(
        "DegradedIORWriteBandwidth %fault_scenario=osd-rebuild: INVALID"), said
    assert "write_bandwidth: the reference file says ≥ 6.3 MiB/s (7 − 10 %)" in said[0]
    assert "recovery_s: the reference file says ≤ 1 s" in said[0]
    assert "degraded_fraction is recorded as 0.6, but the reference file's " \
           "degraded.scenarios.osd-rebuild gives 0.7 for ior_write_bandwidth" in said[0]
    parts = {p.name: p for p in ctx["degraded"].scenarios}
    assert "within 1 s of its restore" in parts["osd-rebuild"].clause
    assert "within 60 s of its restore" in parts["mds-failover"].clause
    assert all(f.limits["recovery_s"] == 1 for f in parts["osd-rebuild"].faults)
    assert all(f.verdict == "PASS" for f in parts["mds-failover"].faults)
    assert {f.contract for f in parts["osd-rebuild"].figures} == {0.7, None}


def test_a_scenario_s_own_tests_are_required_under_it(tmp_path):
    """Each scenario lists mdtest-easy (the section's tests); osd-rebuild's copy did not
    run: INCOMPLETE, naming it."""
    ref = reference(tmp_path, BOTH)
    run = per_scenario()
    cases = run["runs"][0]["testcases"]
    cases[:] = [c for c in cases if c.get("unique_name") != "DegradedMdtestEasy_osd-rebuild"]
    run["session_info"]["num_cases"] = run["runs"][0]["num_cases"] = len(cases)
    ctx = context(run, ref)
    assert ctx["signoff"]["verdict"] == "INCOMPLETE", blocking(ctx)
    assert ("1 acceptance test(s) the reference file defines did not run: "
            "DegradedMdtestEasy in scenario osd-rebuild") in blocking(ctx)


def test_a_test_a_scenario_does_not_list_is_not_the_contract_s(tmp_path):
    """mds-failover runs only mdtest-easy: its write's copy is no test of the contract."""
    ref = reference(tmp_path, {"mds-failover": {"tests": {"mdtest_easy": {}}},
                               "osd-rebuild": {}})
    ctx = context(per_scenario(), ref)
    said = [b for b in blocking(ctx)
            if b.startswith("DegradedIORWriteBandwidth %fault_scenario=mds-failover")]
    assert said and "degraded.scenarios.mds-failover.tests does not list " \
                    "ior_write_bandwidth" in said[0], blocking(ctx)


def test_a_scenario_the_file_does_not_name_is_invalid(tmp_path):
    def elsewhere(name, tc):
        if name == "osd-rebuild" and tc["name"].startswith("DegradedMdtestEasy"):
            tc["fault_scenario"] = "ost-rebuild"
    ctx = context(per_scenario(elsewhere), reference(tmp_path, BOTH))
    assert ctx["signoff"]["verdict"] == "NOT ACCEPTED"
    assert any(b.startswith("DegradedMdtestEasy %fault_scenario=osd-rebuild: INVALID")
               and "its fault scenario (fault_scenario 'ost-rebuild') is not the "
               "contract's" in b and "degraded.scenarios.ost-rebuild: no such scenario "
               "(the file names: mds-failover, osd-rebuild)" in b
               for b in blocking(ctx)), blocking(ctx)


def test_a_test_of_no_scenario_where_the_file_names_some_is_invalid(tmp_path):
    """The captured session itself (one plan) against a file that names scenarios."""
    run = json.loads((DATA / f"{CAPTURED}.json").read_text())
    ctx = context(run, reference(tmp_path, BOTH))
    assert ctx["signoff"]["verdict"] == "NOT ACCEPTED"
    assert any(b.startswith("DegradedIORWriteBandwidth: INVALID")
               and "the file names scenarios (mds-failover, osd-rebuild); this test ran "
               "under none" in b for b in blocking(ctx)), blocking(ctx)


def test_a_read_of_another_scenario_s_dataset_is_invalid(tmp_path):
    def crossed(name, tc):
        if name == "osd-rebuild" and tc["name"].startswith("DegradedIORDataIntegrity"):
            tc["dependencies_actual"] = [
                [d[0].replace("osd-rebuild", "mds-failover"), *d[1:]]
                for d in tc["dependencies_actual"]]
    ctx = context(per_scenario(crossed), reference(tmp_path, BOTH))
    assert any(b.startswith("DegradedIORDataIntegrity %dataset.fault_scenario=osd-rebuild: "
                            "INVALID")
               and "the data it reads was written for another fault scenario: "
               "DegradedIORIntegrityDataset's 'mds-failover', its own 'osd-rebuild'" in b
               for b in blocking(ctx)), blocking(ctx)


def test_the_system_s_scenarios_without_the_file_naming_any_share_its_clause(tmp_path):
    """A file without degraded.scenarios: every scenario the system declares is judged
    by the section's clause, each its part of the section."""
    ctx = context(per_scenario(), reference(tmp_path))
    assert ctx["signoff"]["verdict"] == "ACCEPTED", blocking(ctx)
    parts = ctx["degraded"].scenarios
    assert [p.name for p in parts] == list(SCENARIOS)
    assert parts[0].clause == parts[1].clause != ""


def test_one_scenario_alone_still_has_its_part(tmp_path):
    ctx = context(per_scenario(scenarios=("mds-failover",)),
                  reference(tmp_path, {"mds-failover": {"max_failover_s": 45}}))
    assert ctx["signoff"]["verdict"] == "ACCEPTED", blocking(ctx)
    [part] = ctx["degraded"].scenarios
    assert part.title == "Scenario mds-failover"
    assert "the first write within 45 s of the fault" in part.clause
    assert ctx["degraded"].clause == ""
