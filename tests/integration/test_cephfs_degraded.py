"""Degraded-mode acceptance on a real CephFS, in two scenarios (issue 42):
``scripts/acceptance --system local-cephfs --degraded`` runs the healthy tests the
degraded ones are compared with, then each degraded-mode test once per scenario that
lab/systems/local_cephfs.py declares and reference/local-cephfs-degraded.yaml names:

- ``mds-failover``: the active MDS killed (``local-cluster fail-mds``), the standby takes
  its rank (``failover_s``: the takeover), the killed MDS started again as standby;
- ``osd-rebuild``: OSD 1 killed (``local-cluster fail-osd 1``), started again, its
  placement groups recovered (``recovery_s``: until every PG is active+clean).

The data written before each fault is read back intact after its recovery.  One report,
ACCEPTED, its Degraded mode section a part per scenario.

The module brings up one cluster of its own, once (tests/integration/cephlab.py): a
private state directory and the port base FSACCEPT_PORT_BASE + 2500 (19500 by default;
test_cephfs.py takes + 2000), without accounting, brought down at the end.
scripts/acceptance runs scripts/setup: the private state sees the Spack build set-up
made (each entry of ``.state/spack`` linked, only read) but not its ``inputs.yaml``, and
the Spack variables are unset, so set-up's Spack step finds none to run and writes
nothing there.  The session runs 5 degraded-mode tests, each a fault, a takeover or a
rebuild, and a heal.
"""

import json
import re
import shutil
import time
from pathlib import Path

import pytest

from tests.conftest import REPO, run
from tests.integration.cephlab import SYSTEM, lab_fixture

pytestmark = [pytest.mark.integration, pytest.mark.own_cluster]

SCENARIOS = ("mds-failover", "osd-rebuild")
#: What reference/local-cephfs-degraded.yaml runs in each scenario (its degraded.scenarios).
RUNS = {"mds-failover": ("DegradedMdtestEasy", "DegradedIORWriteBandwidth",
                         "DegradedIORDataIntegrity"),
        "osd-rebuild": ("DegradedIORWriteBandwidth", "DegradedIORDataIntegrity")}
#: Each scenario's limits there: (failover, recovery), seconds.
LIMITS = {"mds-failover": (60, 60), "osd-rebuild": (30, 120)}

#: Far from the cluster scripts/test runs and from test_cephfs.py's (+ 2000).
lab = lab_fixture(2500, "cephfs-degraded-state")


@pytest.fixture(scope="module")
def session(lab, tmp_path_factory):
    """``scripts/acceptance --system local-cephfs --degraded``, once: (its process,
    report.md, {test name: run report case})."""
    here = tmp_path_factory.mktemp("cephfs-degraded")
    env = dict(lab.env, RFM_SQLITE_DB_FILE=str(here / "results.db"),
               FSACCEPT_REFERENCE=str(lab.reference(here, source=f"{SYSTEM}-degraded.yaml")))
    started = time.monotonic()
    proc = run([str(REPO / "scripts" / "acceptance"), "--system", SYSTEM, "--degraded",
                "--no-ceilings"], env=env, timeout=3600)
    out = proc.stdout + proc.stderr
    print(f"scripts/acceptance --degraded: {time.monotonic() - started:.0f} s")
    made = [Path(p) for p in re.findall(r"acceptance: results in (\S+)", out)]
    try:
        md_paths = re.findall(r"report: (\S+report\.md)", out)
        assert len(md_paths) == 1, out[-4000:]
        md = Path(md_paths[0]).read_text()
        report = json.loads((Path(md_paths[0]).parent / "run-report.json").read_text())
        cases = {c["display_name"]: c for c in report["runs"][-1]["testcases"]}
        yield proc, md, cases
    finally:
        for d in made:
            if d.is_dir() and d.parent == REPO / "results":
                shutil.rmtree(d)


def name_of(check, scenario):
    """ReFrame's name of a check's test in a scenario (a read: its dataset's)."""
    param = "%dataset.fault_scenario" if check == "DegradedIORDataIntegrity" else \
        "%fault_scenario"
    return f"{check} {param}={scenario}"


def events(case) -> dict[str, dict]:
    return {e["event"]: e for e in json.loads(case["fault_timeline"])}


def figures(case) -> dict[str, float]:
    return {key.split(":")[-1]: v[0] for key, v in (case.get("perfvalues") or {}).items()}


def test_the_session_is_accepted_with_a_part_per_scenario(session):
    proc, md, _ = session
    section = md[md.index("## Degraded mode"):md.index("## Tests")]
    print(section)
    assert proc.returncode == 0 and "**Overall verdict: ACCEPTED**" in md, \
        (proc.stdout + proc.stderr)[-4000:]
    assert (proc.stdout + proc.stderr).rstrip().endswith("overall verdict: ACCEPTED")
    for scenario in SCENARIOS:
        assert f"### Scenario {scenario}" in section, section
        failover, recovery = LIMITS[scenario]
        part = section[section.index(f"### Scenario {scenario}"):]
        part = part[:part.index("### Scenario", 4)] if "### Scenario" in part[4:] else part
        assert (f"the file system healed within {recovery} s of its restore; the first write "
                f"within {failover} s of the fault.") in part, part
        for check in RUNS[scenario]:
            assert re.search(
                rf"^\| {re.escape(name_of(check, scenario))} \| [0-9.]+ s \| [0-9.]+ s "
                rf"\(≤ {failover} s\) \| [0-9.]+ s \(≤ {recovery} s\) \| PASS \|",
                part, re.M), (check, part)
    assert "DegradedMdtestEasy %fault_scenario=osd-rebuild" not in md  # not its clause's
    assert "degraded-mode-timeline.png" in section


def test_each_fault_was_the_scenario_s_own_and_went_as_planned(session):
    _, _, cases = session
    for scenario in SCENARIOS:
        for check in RUNS[scenario]:
            case = cases[name_of(check, scenario)]
            said = events(case)
            assert case["result"] == "pass", case["fail_reason"]
            assert case["fault_scenario"] == scenario
            # The scenario's own plan, injected by the site's command, seen on every node,
            # restored at the job's request and healed.
            assert case["fault_plan"].startswith(f"scenario {scenario}: degrade: ")
            assert said["agent_start"]["plan"] == case["fault_plan"]
            command = "fail-mds" if scenario == "mds-failover" else "fail-osd 1"
            assert f"local-cluster {command};" in case["fault_plan"]
            assert said["degrade_end"]["status"] == 0 and "nodes_down" in said
            assert said["restore_start"]["by"] == "the job's request"
            assert "healed" in said and "nodes_healthy" in said
            assert {"time_to_detect_s", "failover_s", "recovery_s"} <= set(figures(case))
            print(check, scenario, figures(case))
            if check != "DegradedIORDataIntegrity":  # measured while degraded
                after = case["servers_after"]
                # Every node's probe said down (nodes group by the same answer, and two
                # clients may count the degraded objects at different moments).
                said_down = {n for group in after.split("; ") if ": down CephFS: " in group
                             for n in group.split(":", 1)[0].split(",")}
                assert said_down == {"n1", "n2", "n3", "n4"}, after
                assert ("OSD_DOWN" if scenario == "osd-rebuild" else "MDS") in after, after
    # The takeover: the monitor hands the rank over only once the killed MDS's beacons are
    # mds_beacon_grace (15 s) late, so the first write waits for it (Ceph's protocol, not
    # this machine's speed).
    for check in RUNS["mds-failover"]:
        assert figures(cases[name_of(check, "mds-failover")])["failover_s"] >= 10


def test_the_data_written_before_each_fault_is_read_back_intact(session):
    _, _, cases = session
    for scenario in SCENARIOS:
        case = cases[name_of("DegradedIORDataIntegrity", scenario)]
        assert figures(case)["incorrect_transfers"] == 0
        dataset = next(c for c in cases.values()
                       if c["display_name"].startswith(
                           f"DegradedIORIntegrityDataset %fault_scenario={scenario} "))
        assert dataset["fault_scenario"] == scenario
        assert dataset["job_completion_time_unix"] < events(case)["degrade_start"]["t"]
        # Read back once the file system had healed.
        assert events(case)["nodes_healthy"]["t"] < case["job_completion_time_unix"]


def test_the_file_system_is_whole_again(lab, session):
    """After both scenarios: every daemon running, healed, nothing of the run left."""
    _, _, cases = session
    assert len(lab.ceph.running()) == len(lab.layout.daemons), lab.ceph.running()
    said = lab.cluster("healed").stdout
    assert said.startswith("ceph: healed: "), said
    for case in cases.values():
        if case.get("target_dir"):
            assert not Path(case["target_dir"]).exists(), case["target_dir"]
