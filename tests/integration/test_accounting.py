"""Slurm accounting on the emulated cluster, as a site runs it (issue 40): slurmdbd with
MariaDB, and ReFrame's `slurm` backend reading each job's end from sacct.  The harness
still sees each way a job can end badly, and records each job's accounting beside its
figures; without accounting, the `squeue` backend still runs the checks.

A job that ends by its time limit: tests/integration/test_cleanup.py.  A node that dies
(its slurmd killed): tests/integration/test_faults.py.  Both run through this backend.
"""

import json
import re
import subprocess
import time

import pytest

from lab.cluster import slurm_conf_path
from tests.conftest import LOCAL_CLUSTER, REPO, reference_copy, reframe_command, run

pytestmark = pytest.mark.integration

CHECK = "FioSequentialWrite"


def sacct(env, jobid, fields):
    return run(["sacct", "-n", "-P", "-X", "-j", jobid, "-o", fields], env=env).stdout.strip()


def start_fio(env, tmp_path, *args, runtime_s=None):
    """ReFrame running FioSequentialWrite on `local` (fio from PATH), in the background."""
    edit = (lambda d: d["tests"]["fio_seq_write"].update(runtime_s=runtime_s, time_based=True)
            ) if runtime_s else (lambda d: None)
    env = dict(env, FSACCEPT_REFERENCE=reference_copy(tmp_path, edit)["FSACCEPT_REFERENCE"])
    prefix = tmp_path / "rfm"
    cmd = reframe_command("-c", str(REPO / "checks" / "fio_client.py"), "--system", "local",
                          "-n", f"^{CHECK}$", *args, "-r", prefix=prefix)
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True), prefix


def finish(session, prefix, timeout=600):
    try:
        output, _ = session.communicate(timeout=timeout)
    finally:
        if session.poll() is None:
            session.terminate()  # ReFrame cancels its jobs on SIGTERM
            session.wait(timeout=60)
    cases = json.loads((prefix / "report.json").read_text())["runs"][-1]["testcases"]
    return output, {c["name"]: c for c in cases}[CHECK]


def wait_for_state(env, jobid, state, timeout=300):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if run(["squeue", "-h", "-j", jobid, "-o", "%T"], env=env).stdout.strip() == state:
            return
        time.sleep(0.2)
    raise AssertionError(f"job {jobid} never reached {state}")


def wait_for_job(env, comment, timeout=300):
    """Id of the benchmark job whose comment is ``comment`` (the test's name)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in run(["squeue", "-h", "-o", "%i %k"], env=env).stdout.splitlines():
            jobid, _, said = line.partition(" ")
            if said == comment:
                return jobid
        time.sleep(0.2)
    raise AssertionError(f"no job of {comment} was submitted")


def backend(env):
    """The scheduler backend of system `local`'s partition, as ReFrame configures it."""
    return run([str(REPO / ".venv" / "bin" / "reframe"), "-C", str(REPO / "config" /
                "settings.py"), "--system", "local", "--show-config",
                "systems/0/partitions/0/scheduler"], env=env).stdout.strip().splitlines()[-1]


def test_up_sets_up_the_cluster_account_and_user_as_a_site_has_them(cluster_env):
    assoc = run(["sacctmgr", "-n", "-P", "show", "assoc", "cluster=fsaccept", "user=root",
                 "format=cluster,account,user"], env=cluster_env).stdout.split()
    assert "fsaccept|acceptance|root" in assoc
    assert backend(cluster_env) == '"slurm"'


def test_each_job_is_charged_to_the_account_and_its_record_kept_beside_the_figures(
        cluster_env, tmp_path):
    session, prefix = start_fio(cluster_env, tmp_path)
    output, case = finish(session, prefix)
    assert case["result"] == "pass", output[-3000:]
    jobid = case["jobid"]
    assert re.fullmatch(rf"{jobid}\|COMPLETED\|0:0\|\d+\|n\[1-4\]\|\S+",
                        case["job_accounting"]), case["job_accounting"]
    assert sacct(cluster_env, str(jobid), "account,state") == "acceptance|COMPLETED"


def test_a_node_an_administrator_sets_down_mid_job_makes_it_invalid(
        cluster_env, tmp_path):
    session, prefix = start_fio(cluster_env, tmp_path, runtime_s=60)
    try:
        jobid = wait_for_job(cluster_env, CHECK)
        wait_for_state(cluster_env, jobid, "RUNNING")
        down = run(["scontrol", "update", "nodename=n2", "state=down",
                    "reason=fsaccept test: node set down mid-job"], env=cluster_env)
        assert down.returncode == 0, down.stderr
        output, case = finish(session, prefix)
    finally:
        run(["scontrol", "update", "nodename=n2", "state=resume"], env=cluster_env)
    assert case["result"] == "fail" and case["fail_phase"] == "sanity", output[-3000:]
    # Slurm's line in the job's output names the job and the cause; its accounting too.
    assert re.search(rf"INVALID: Slurm cancelled job {jobid} at \S+ due to node failure|"
                     rf"Slurm's accounting: job {jobid} ended NODE_FAIL",
                     case["fail_reason"]), case["fail_reason"]
    # The node is named where Slurm names it (srun's "Node failure on n2" once a step
    # runs); here n2's slurmd answers at once, so Slurm returns it to service
    # (ReturnToService=2) and no later query can say which node it was.
    assert f"{jobid}|NODE_FAIL|" in case["job_accounting"], case["job_accounting"]


def test_a_job_that_never_starts_ends_invalid_saying_so(cluster_env, tmp_path):
    # Every node is taken by another job that outlasts the check's max_pending_time.
    blocker = run(["sbatch", "--parsable", "-N4", "--exclusive", "-J", "not-fsaccept", "-o", "/dev/null",
                   "--wrap", "sleep 600"], env=cluster_env)
    assert blocker.returncode == 0, blocker.stderr
    try:
        wait_for_state(cluster_env, blocker.stdout.strip(), "RUNNING")
        session, prefix = start_fio(cluster_env, tmp_path, "-S", "max_pending_time=15s")
        output, case = finish(session, prefix)
    finally:
        run(["scancel", blocker.stdout.strip()], env=cluster_env)
    jobid = case["jobid"]
    assert case["result"] == "fail", output[-3000:]
    # Only that reason: nothing ran, so no aftermath (no mount, no report) is listed.
    assert case["fail_reason"] == (
        f"sanity error: INVALID: Slurm's accounting: job {jobid} never started (CANCELLED by 0 "
        "while it waited in the queue: ReFrame's max_pending_time, a node Slurm could not "
        "give, or an administrator): nothing was measured"), case["fail_reason"]
    assert case["job_accounting"] == f"{jobid}|CANCELLED by 0|0:0|0|None assigned|None"


def test_without_accounting_the_squeue_backend_runs_the_checks(cluster_env, tmp_path):
    """A site without slurmdbd: its systems use ReFrame's squeue backend."""
    try:
        up = run([str(LOCAL_CLUSTER), "up", "--accounting", "none"], timeout=300)
        assert up.returncode == 0, up.stderr
        assert "AccountingStorageType=accounting_storage/none" in (
            slurm_conf_path().read_text())
        assert backend(cluster_env) == '"squeue"'
        session, prefix = start_fio(cluster_env, tmp_path)
        output, case = finish(session, prefix)
    finally:
        back = run([str(LOCAL_CLUSTER), "up", "--accounting", "slurmdbd"], timeout=300)
        assert back.returncode == 0, back.stderr
    assert case["result"] == "pass", output[-3000:]
    assert case["job_accounting"] == ""
