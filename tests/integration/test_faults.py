"""A node dies in the middle of a benchmark job: that check fails naming the
job and the node, the rest of the suite goes on, and what earlier checks
stored (results database, perflogs) is intact."""

import json
import re
import shutil
import sqlite3
import subprocess
import time

import pytest

from tests.conftest import LOCAL_CLUSTER, REPO, reframe_command, run

pytestmark = pytest.mark.integration


def wait_for_running_job(name, env, timeout=300):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = run(["squeue", "-h", "-n", name, "-o", "%i %T"], env=env).stdout.split()
        if len(out) == 2 and out[1] == "RUNNING":
            return out[0]
        time.sleep(0.5)
    raise AssertionError(f"job {name} never ran")


def wait_node_ready(node, env, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = run(["sinfo", "-h", "-n", node, "-o", "%T"], env=env).stdout.strip()
        if state == "idle":
            return
        time.sleep(1)
    raise AssertionError(f"{node} did not come back (state {state})")


@pytest.mark.skipif(shutil.which("ior") is None, reason="IOR is not on PATH (in no registry)")
def test_a_node_that_dies_mid_run_fails_only_its_check(cluster_env, tmp_path):
    prefix = tmp_path / "rfm"
    db = tmp_path / "results.db"
    env = dict(cluster_env, RFM_ENABLE_RESULTS_STORAGE="1", RFM_SQLITE_DB_FILE=str(db))
    cmd = reframe_command("-c", str(REPO / "checks" / "launch_sanity.py"),
                          "-c", str(REPO / "checks" / "ior_acceptance.py"), "--system", "local",
                          "-n", "^(MPILaunchSanity|IORWriteBandwidth|IORRandomWriteIOPS)$",
                          "-r", prefix=prefix)
    suite = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True)
    try:
        jobid = wait_for_running_job("rfm_IORWriteBandwidth", env)
        failed = run([str(LOCAL_CLUSTER), "fail", "n2"])
        assert failed.returncode == 0, failed.stderr
        output, _ = suite.communicate(timeout=600)
    finally:
        if suite.poll() is None:
            suite.terminate()  # ReFrame cancels its jobs on SIGTERM
            try:
                suite.wait(timeout=60)
            except subprocess.TimeoutExpired:
                suite.kill()
        run([str(LOCAL_CLUSTER), "up"], timeout=180)
        wait_node_ready("n2", cluster_env)

    cases = {c["name"]: c for c in
             json.loads((prefix / "report.json").read_text())["runs"][-1]["testcases"]}
    bw = cases["IORWriteBandwidth"]
    assert bw["result"] == "fail" and bw["fail_phase"] == "sanity", output[-3000:]
    assert re.search(rf"INVALID: Slurm cancelled job {jobid} at \S+ due to node failure: "
                     r"node n2 failed during the run", bw["fail_reason"]), bw["fail_reason"]
    # The rest of the suite went on, on the nodes still up.
    assert cases["MPILaunchSanity"]["result"] == "pass"
    assert cases["IORRandomWriteIOPS"]["result"] == "pass"
    assert "n2" not in cases["IORRandomWriteIOPS"]["job_nodelist"]
    # What the passing checks stored is intact.
    perflog = prefix / "perflogs" / "local" / "compute" / "IORRandomWriteIOPS.log"
    assert perflog.read_text().splitlines()[-1].startswith("pass|")
    with sqlite3.connect(db) as conn:
        sessions = conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
    assert sessions == 1
