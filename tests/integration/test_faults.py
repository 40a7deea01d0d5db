"""A node dies in the middle of a benchmark job: that check fails naming the
job and the node, the rest of the suite goes on, and what the other checks
stored (results database, perflogs) is intact.

Runs with fio (Debian's, so in CI too) and, where IOR is installed, with IOR.
"""

import json
import re
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from fsaccept.rfm.jobscript import NODE_CHECK_MARKER
from tests.conftest import (LOCAL_CLUSTER, REPO, reference_copy, reframe_command,
                            require_benchmark, run)

pytestmark = pytest.mark.integration

SUITES = {
    # victim: the check whose job loses node n2; the others run before and after it.
    "fio": dict(files=["fio_client.py"], victim="FioSequentialWrite",
                others=["FioRandomReadDirect", "FioSequentialRead"],
                # n2 stays down for the rest of the run: base the fraction on usable nodes.
                extra=["-S", "FioSequentialRead.fraction_of=available"],
                # Long enough that the node dies mid-run however loaded the host is.
                longer=("fio_seq_write", {"runtime_s": 30, "time_based": True})),
    "ior": dict(files=["launch_sanity.py", "ior_acceptance.py"], victim="IORWriteBandwidth",
                others=["MPILaunchSanity", "IORRandomWriteIOPS"], extra=[],
                longer=("ior_write_bandwidth", {"deadline_s": 20})),
}


def wait_for_running_job(test, env, timeout=300):
    """Job id of ``test``'s job once it runs (every benchmark job shares one job
    name; its comment says which test it is)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = run(["squeue", "-h", "-t", "RUNNING", "-o", "%i %k"], env=env).stdout.split("\n")
        for jobid, comment in (line.split(" ", 1) for line in out if " " in line):
            if comment == test:
                return jobid
        time.sleep(0.2)
    raise AssertionError(f"the job of {test} never ran")


def wait_for_every_answer(jobid, env, timeout=300):
    """Once every node of the job has answered the mount check, in the job's output:
    the benchmark starts right after it.  A node that dies before it answered makes
    the job refuse to run the benchmark, which is another test's case."""
    deadline = time.monotonic() + timeout
    answered = set()
    while time.monotonic() < deadline:
        info = run(["scontrol", "-o", "show", "job", jobid], env=env).stdout
        out, nodes = re.search(r"\bStdOut=(\S+)", info), re.search(r"\bNumNodes=(\d+)", info)
        if out and nodes and Path(out[1]).is_file():
            answered = {line.split()[1] for line in
                        Path(out[1]).read_text(errors="replace").splitlines()
                        if line.startswith(f"{NODE_CHECK_MARKER} ") and len(line.split()) > 2}
            if len(answered) >= int(nodes[1]):
                return
        time.sleep(0.2)
    raise AssertionError(f"the nodes of job {jobid} never all answered (only {answered})")


def wait_node_ready(node, env, timeout=120):
    deadline = time.monotonic() + timeout
    state = ""
    while time.monotonic() < deadline:
        state = run(["sinfo", "-h", "-n", node, "-o", "%T"], env=env).stdout.strip()
        if state == "idle":
            return
        time.sleep(1)
    raise AssertionError(f"{node} did not come back (state {state})")


@pytest.mark.parametrize("suite", sorted(SUITES))
def test_a_node_that_dies_mid_run_fails_only_its_check(cluster_env, tmp_path, suite):
    spec = SUITES[suite]
    if suite == "ior":
        require_benchmark("ior")
    prefix = tmp_path / "rfm"
    db = tmp_path / "results.db"
    key, longer = spec["longer"]
    reference = reference_copy(tmp_path, lambda d: d["tests"][key].update(longer))
    env = dict(cluster_env, RFM_ENABLE_RESULTS_STORAGE="1", RFM_SQLITE_DB_FILE=str(db),
               FSACCEPT_REFERENCE=reference["FSACCEPT_REFERENCE"])
    names = [spec["victim"], *spec["others"]]
    files = [a for f in spec["files"] for a in ("-c", str(REPO / "checks" / f))]
    cmd = reframe_command(*files, "--system", "local", "-n", f"^({'|'.join(names)})$",
                          *spec["extra"], "-r", prefix=prefix)
    suite_run = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True)
    try:
        jobid = wait_for_running_job(spec["victim"], env)
        wait_for_every_answer(jobid, env)
        failed = run([str(LOCAL_CLUSTER), "fail", "n2"])
        assert failed.returncode == 0, failed.stderr
        output, _ = suite_run.communicate(timeout=600)
    finally:
        if suite_run.poll() is None:
            suite_run.terminate()  # ReFrame cancels its jobs on SIGTERM
            try:
                suite_run.wait(timeout=60)
            except subprocess.TimeoutExpired:
                suite_run.kill()
        run([str(LOCAL_CLUSTER), "up"], timeout=180)
        wait_node_ready("n2", cluster_env)

    cases = {c["name"]: c for c in
             json.loads((prefix / "report.json").read_text())["runs"][-1]["testcases"]}
    victim = cases[spec["victim"]]
    assert victim["result"] == "fail" and victim["fail_phase"] == "sanity", output[-3000:]
    # Slurm cancels the job when n2 stops answering (MPI ranks wait for the dead
    # one: the reason names the job and n2); fio's tasks are independent, so srun
    # may instead report killed tasks first, or n2's report is simply missing (the
    # reason names the job and the tasks or node).
    assert re.search(rf"INVALID: Slurm cancelled job {jobid} at \S+ due to node failure: "
                     r"node n2 failed during the run|"
                     rf"tasks of job {jobid} ended abnormally: n\d task \d+: Killed|"
                     rf"no report from n2 in job {jobid}",
                     victim["fail_reason"]), victim["fail_reason"]
    # The rest of the suite went on.  A check set up before Slurm noticed n2 was
    # gone may still ask for it: then Slurm blocks it and ReFrame says so, naming n2;
    # or Slurm gives it n2, whose ranks never start, and its reason names n2.
    for name in spec["others"]:
        case = cases[name]
        assert case["result"] == "pass" or re.search(
            r"UnavailableNodes:n2|none from n2\b|no report from n2\b|"
            r"node [\w,]*\bn2\b[\w,]* of the job did not answer", case["fail_reason"]), \
            (name, case["fail_reason"])
        if case["result"] == "pass" and case["perfvalues"]:
            perflog = prefix / "perflogs" / "local" / "compute" / f"{name}.log"
            assert perflog.read_text().splitlines()[-1].startswith("pass|")
            assert "n2" not in case["job_nodelist"] or name != spec["others"][-1]
    with sqlite3.connect(db) as conn:
        stored = conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
    assert stored == 1
