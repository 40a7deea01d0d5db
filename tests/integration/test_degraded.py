"""Degraded-mode acceptance on the emulated cluster's replicated GlusterFS volume: a brick
killed (``scripts/local-cluster fail-brick b2``) and restarted, the heal timed, each
way the fault can go wrong made on the real thing.

Every scenario ends with the volume whole (4 brick daemons, nothing left to heal) and
nothing of the run on the target: the fault agent restores whatever ends the job.  The
site's declaration (``extras.degraded``) is varied by a ReFrame configuration file of
the test's own, as a site varies its system file.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from lab import gluster as gfs
from lab.cluster import (DEFAULT_PORT_BASE, OPENMPI_ENV, ClusterLayout, default_state_dir,
                         gluster_layout, slurm_conf_path)
from tests.conftest import (LOCAL_CLUSTER, REPO, any_load_thresholds, require_gluster_tools,
                            run)

pytestmark = [pytest.mark.integration, pytest.mark.second_volume_cluster]

CHECKS = REPO / "checks" / "degraded" / "degraded_mode.py"
CLUSTER = shlex.quote(str(LOCAL_CLUSTER))
#: lab/systems/local_gluster.py's declaration.
PLAN = {"degrade": f"{CLUSTER} fail-brick b2", "restore": f"{CLUSTER} restore-bricks",
        "healed": f"{CLUSTER} healed"}


def layout():
    return gluster_layout(ClusterLayout(default_state_dir(), port_base=DEFAULT_PORT_BASE,
                                        fs="gluster", gluster_volume_type="replica"))


def up(volume_type):
    proc = run([str(LOCAL_CLUSTER), "up", "--fs", "gluster", "--gluster-volume-type",
                volume_type], timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def replica():
    """The cluster with its replicated volume; the distributed one again afterwards."""
    require_gluster_tools()
    up("replica")
    yield dict(os.environ, SLURM_CONF=str(slurm_conf_path()), **OPENMPI_ENV)
    up("distribute")


def reference(tmp_path: Path, edit=lambda data: None) -> Path:
    """reference/local-gluster-replica.yaml, its target the running volume, its thresholds
    any load meets (a loaded host wrote 5.89 MiB/s against its 9), edited."""
    lay = layout()
    data = any_load_thresholds(
        yaml.safe_load((REPO / "reference" / "local-gluster-replica.yaml").read_text()))
    data["target"].update(path=str(lay.mount_point), mount_point=str(lay.mount_point),
                          source=lay.source)
    data["degraded"]["detect_timeout_s"] = 10
    data["time_limit_margin_min"] = 2
    edit(data)
    path = tmp_path / "reference.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def settings(tmp_path: Path, plan: dict) -> Path:
    """fsaccept's ReFrame configuration with local-gluster's declaration replaced."""
    path = tmp_path / "settings.py"
    path.write_text(f"""
import importlib.util
_spec = importlib.util.spec_from_file_location('fsaccept_settings', {str(REPO / 'config' / 'settings.py')!r})
_m = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_m)
site_configuration = _m.site_configuration
for _s in site_configuration['systems']:
    if _s['name'] == 'local-gluster':
        for _p in _s['partitions']:
            _p['extras']['degraded'] = {plan!r}
""")
    return path


def command(tmp_path, names, plan):
    prefix = tmp_path / "rfm"
    return [str(REPO / ".venv" / "bin" / "reframe"), "-C", str(settings(tmp_path, plan)),
            "--prefix", str(prefix), "--report-file", str(prefix / "report.json"),
            "-c", str(CHECKS), "--system", "local-gluster", "--exec-policy=serial",
            "-n", f"^({'|'.join(names)})$", "-r"], prefix


def cases_of(prefix: Path) -> dict[str, dict]:
    """{check: test case} of the run report under ``prefix`` (report.json, or
    scripts/acceptance's run-report.json)."""
    report = prefix / "report.json"
    if not report.exists():
        report = prefix / "run-report.json"
    cases = json.loads(report.read_text())["runs"][-1]["testcases"] if report.exists() else []
    return {c["name"].split()[0]: c for c in cases}


def run_degraded(tmp_path, env, names, plan=PLAN, edit=lambda data: None, timeout=900):
    cmd, prefix = command(tmp_path, names, plan)
    proc = run(cmd, env=dict(env, FSACCEPT_REFERENCE=str(reference(tmp_path, edit))),
               timeout=timeout)
    return proc, cases_of(prefix)


def events(case) -> dict[str, dict]:
    return {e["event"]: e for e in json.loads(case["fault_timeline"])}


def assert_whole_again(case):
    """The volume healthy again, the fault's data gone."""
    lay = layout()
    gl = gfs.Gluster(lay)
    assert len(gl.brick_pids()) == lay.bricks, gl.brick_pids()
    deadline = time.monotonic() + 120
    while not gl.healed()[0] and time.monotonic() < deadline:
        time.sleep(1)
    assert gl.healed()[0], gl.healed()
    assert "restore_end" in events(case), case["fault_timeline"]
    assert not case.get("data_left"), case.get("data_left")
    if case.get("target_dir"):
        assert not Path(case["target_dir"]).exists(), case["target_dir"]


def figures(case) -> dict[str, float]:
    """Figure name -> value (ReFrame's ``perfvalues``: "partition:env:name" -> a list
    starting with the value)."""
    return {key.split(":")[-1]: v[0] for key, v in (case.get("perfvalues") or {}).items()}


def reason(case) -> str:
    return case.get("fail_reason") or ""


def test_a_degrade_that_does_nothing_is_invalid(replica, tmp_path):
    proc, cases = run_degraded(tmp_path, replica, ["DegradedIORWriteBandwidth"],
                               plan=dict(PLAN, degrade="true"))
    case = cases["DegradedIORWriteBandwidth"]
    assert case["result"] == "fail", proc.stdout[-3000:]
    assert "INVALID: the file system was not degraded during the measurement" in reason(case)
    assert_whole_again(case)


def test_a_missed_fraction_fails(replica, tmp_path):
    def far_above(data):  # 60 % of it is beyond any emulated volume
        data["tests"]["ior_write_bandwidth"]["threshold"]["value"] = 1_000_000
    proc, cases = run_degraded(tmp_path, replica, ["DegradedIORWriteBandwidth"],
                               edit=far_above)
    case = cases["DegradedIORWriteBandwidth"]
    assert case["result"] == "fail" and case["fail_phase"] == "performance", reason(case)
    assert "write_bandwidth" in reason(case), reason(case)
    assert_whole_again(case)


def test_a_recovery_slower_than_the_contract_fails(replica, tmp_path):
    """The volume says it has healed only after 2 s; the contract gives 1 s."""
    def one_second(data):
        data["degraded"]["max_recovery_s"] = 1
    proc, cases = run_degraded(tmp_path, replica, ["DegradedIORWriteBandwidth"],
                               plan=dict(PLAN, healed=f"sleep 2; {PLAN['healed']}"),
                               edit=one_second)
    case = cases["DegradedIORWriteBandwidth"]
    assert case["result"] == "fail" and case["fail_phase"] == "performance", reason(case)
    assert "recovery_s" in reason(case), reason(case)
    assert figures(case)["recovery_s"] >= 2
    assert_whole_again(case)


def test_data_corrupted_while_degraded_fails(replica, tmp_path):
    """The degrade also overwrites a MiB of every IOR file through the login node's
    client (the surviving bricks take it; the heal copies it to b2): the read-back of
    the data written before the fault finds it."""
    mp = shlex.quote(str(layout().mount_point))
    corrupt = (f"{PLAN['degrade']} && find {mp} -type f -name 'testfile*' -exec dd "
               "if=/dev/urandom of={} bs=1M count=1 conv=notrunc status=none \\;")
    proc, cases = run_degraded(tmp_path, replica, ["DegradedIORDataIntegrity"],
                               plan=dict(PLAN, degrade=corrupt))
    case = cases["DegradedIORDataIntegrity"]
    assert case["result"] == "fail" and case["fail_phase"] == "performance", reason(case)
    assert figures(case)["incorrect_transfers"] > 0, figures(case)
    assert_whole_again(case)


def test_a_failing_degrade_command_is_restored_and_invalid(replica, tmp_path):
    """The command kills the brick, then fails: the brick comes back all the same."""
    proc, cases = run_degraded(tmp_path, replica, ["DegradedIORWriteBandwidth"],
                               plan=dict(PLAN, degrade=f"{PLAN['degrade']}; exit 7"))
    case = cases["DegradedIORWriteBandwidth"]
    assert case["result"] == "fail", proc.stdout[-3000:]
    assert "INVALID: the degrade command failed (exit 7" in reason(case), reason(case)
    assert "the file system was restored" in reason(case), reason(case)
    assert_whole_again(case)


def ranks_of_job(jobid: str) -> list[int]:
    """The IOR processes of Slurm job ``jobid`` (SLURM_JOB_ID in their environment)."""
    out = []
    for pid in run(["pgrep", "-x", "ior"], timeout=30).stdout.split():
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            continue  # ended meanwhile
        if f"SLURM_JOB_ID={jobid}".encode() in environ:
            out.append(int(pid))
    return out


def test_a_time_limit_while_degraded_restores_and_leaves_nothing(replica, tmp_path):
    """Once every node sees the fault, the job's IOR ranks are stopped (SIGSTOP: the job
    stays in its degraded phase whatever the machine's speed, and writes at most what it
    had written) and its time limit is cut to 1 minute (scontrol): Slurm ends it DUE TO
    TIME LIMIT, mid-benchmark, before the job asked for the restore."""
    def capped_write(data):  # 64 MiB a rank at most, whatever happens
        data["tests"]["ior_write_bandwidth"].update(deadline_s=120, segments=64)
    cmd, prefix = command(tmp_path, ["DegradedIORWriteBandwidth"], PLAN)
    env = dict(replica, FSACCEPT_REFERENCE=str(reference(tmp_path, capped_write)))
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    stopped, jobid = [], None
    deadline = time.monotonic() + 600
    try:
        while time.monotonic() < deadline and proc.poll() is None and not stopped:
            found = list(prefix.glob("stage/**/fsaccept-fault/jobid"))
            outs = list(prefix.glob("stage/**/rfm_job.out"))
            if found and outs and "fsaccept-fault failover" in outs[0].read_text():
                jobid = found[0].read_text().strip()
                # This job's ranks only: another lane's IOR runs on this host too.
                ranks = ranks_of_job(jobid)
                for pid in ranks:
                    os.kill(pid, signal.SIGSTOP)
                stopped = ranks
            time.sleep(0.05)
        assert stopped, "the job never reached its benchmark while degraded"
        said = run(["scontrol", "update", f"JobId={jobid}", "TimeLimit=1"], env=replica,
                   timeout=30)
        assert said.returncode == 0, said.stderr
        out, _ = proc.communicate(timeout=900)
    finally:
        if proc.poll() is None:
            proc.kill()
    case = cases_of(prefix)["DegradedIORWriteBandwidth"]
    assert case["result"] == "fail", out[-3000:]
    assert "time limit" in reason(case).lower(), reason(case)
    said = events(case)
    assert said["restore_start"]["by"] != "the job's request", said["restore_start"]
    assert_whole_again(case)


def test_the_acceptance_script_runs_healthy_then_degraded(replica, tmp_path, results_dirs):
    """``scripts/acceptance --system local-gluster --degraded``: the healthy tests the
    degraded ones are compared with, then each degraded one; one report, ACCEPTED,
    with its Degraded mode section filled."""
    env = dict(replica, RFM_SQLITE_DB_FILE=str(tmp_path / "results.db"),
               FSACCEPT_REFERENCE=str(reference(tmp_path)))
    proc = run([str(REPO / "scripts" / "acceptance"), "--system", "local-gluster",
                "--degraded", "--no-ceilings"], env=env, timeout=1800)
    out = proc.stdout + proc.stderr
    results_dirs.extend(Path(p) for p in re.findall(r"acceptance: results in (\S+)", out))
    md_paths = re.findall(r"report: (\S+report\.md)", out)
    assert len(md_paths) == 1, out[-4000:]
    md = Path(md_paths[0]).read_text()
    print(md[md.index("## Degraded mode"):md.index("## Tests")])
    assert proc.returncode == 0 and "**Overall verdict: ACCEPTED**" in md, out[-4000:]
    section = md[md.index("## Degraded mode"):md.index("## Tests")]
    for name in ("DegradedIORWriteBandwidth", "DegradedIORStonewalledRead",
                 "DegradedIORDataIntegrity", "DegradedMdtestEasy"):
        assert re.search(rf"^\| {name} \| [0-9.]+ s \| [0-9.]+ s \(≤ 30 s\) \| [0-9.]+ s "
                         r"\(≤ 60 s\) \| PASS \|", section, re.M), section
    assert "degraded-mode-timeline.png" in section
    assert out.rstrip().endswith("overall verdict: ACCEPTED"), out[-2000:]
    # Each fault injected by the site's command, seen on every node, restored at the
    # job's request and healed; the write measured while every node saw brick b2 down.
    cases = cases_of(Path(md_paths[0]).parent)
    for name in ("DegradedIORWriteBandwidth", "DegradedIORDataIntegrity"):
        said = events(cases[name])
        assert said["degrade_end"]["status"] == 0 and "nodes_down" in said
        assert said["restore_start"]["by"] == "the job's request"
        assert "healed" in said and "nodes_healthy" in said
        assert {"time_to_detect_s", "failover_s", "recovery_s"} <= set(figures(cases[name]))
        assert_whole_again(cases[name])
        print(name, figures(cases[name]))
    lay = layout()
    assert cases["DegradedIORWriteBandwidth"]["servers_after"] == (
        f"n1,n2,n3,n4: down GlusterFS client not connected to brick "
        f"{lay.address}:{lay.brick_dirs[1]}")


def test_a_failing_restore_is_named_and_down_still_stops_everything(replica, tmp_path):
    """Last: it leaves brick b2 down.  The report names the failed restore; then
    ``scripts/local-cluster down`` stops every daemon all the same (the module's
    teardown brings the cluster up again)."""
    proc, cases = run_degraded(tmp_path, replica, ["DegradedIORWriteBandwidth"],
                               plan=dict(PLAN, restore="echo volume start failed >&2; exit 3"))
    case = cases["DegradedIORWriteBandwidth"]
    assert case["result"] == "fail", proc.stdout[-3000:]
    assert ("the restore command failed (exit 3: volume start failed): the file system may "
            "still be degraded") in reason(case), reason(case)
    lay = layout()
    assert len(gfs.Gluster(lay).brick_pids()) == lay.bricks - 1
    down = run([str(LOCAL_CLUSTER), "down"], timeout=300)
    assert down.returncode == 0, down.stdout + down.stderr
    assert run([str(LOCAL_CLUSTER), "status"], timeout=60).returncode == 3
    gl = gfs.Gluster(lay)
    assert gl.brick_pids() == {} and gl.glusterd_pid() is None and gl.self_heal_pids() == {}
