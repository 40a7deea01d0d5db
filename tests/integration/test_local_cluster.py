"""The emulated cluster is real: real daemons, real srun, real Open MPI."""

import json
import os
import socket
import subprocess
from pathlib import Path

import pytest

from lab.cluster import LocalCluster, env_port_base, pid_alive
from tests.conftest import LOCAL_CLUSTER, REPO, reframe_command, run

pytestmark = pytest.mark.integration


def test_srun_runs_mpi_ranks_on_four_distinct_nodes(cluster_env, tmp_path):
    exe = tmp_path / "allreduce"
    build = run(["mpicc", "-o", str(exe), str(REPO / "checks" / "src" / "mpi_allreduce.c")])
    assert build.returncode == 0, build.stderr
    launch = ["srun", "-N4", "-n8", "--ntasks-per-node=2", "--distribution=block",
              "--mpi=pmix", "--kill-on-bad-exit=1", str(exe)]
    proc = run(launch, env=cluster_env, timeout=300)
    if proc.returncode != 0 and "Segmentation fault" in proc.stderr:
        # Open MPI 4.1.4's TCP BTL segfaults in start-up now and then on the loaded
        # emulated cluster (seen in CI: both ranks of one node); the checks launch once
        # more for the same reason (BenchmarkTest.retry_a_launch_that_crashed).
        proc = run(launch, env=cluster_env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = [l.split() for l in proc.stdout.splitlines() if l.startswith("rank ")]
    assert sorted(int(l[1]) for l in lines) == list(range(8))
    nodes = [l[6] for l in lines]
    assert sorted(set(nodes)) == ["n1", "n2", "n3", "n4"]
    assert all(nodes.count(n) == 2 for n in set(nodes))
    assert "allreduce sum 28 expected 28" in proc.stdout


def test_up_on_a_running_cluster_is_a_no_op(cluster_env):
    pids_before = run([str(LOCAL_CLUSTER), "status"]).stdout.splitlines()[0]
    proc = run([str(LOCAL_CLUSTER), "up"])
    assert proc.returncode == 0
    assert "already running with 4 nodes (no change)" in proc.stdout
    assert run([str(LOCAL_CLUSTER), "status"]).stdout.splitlines()[0] == pids_before


def test_env_prints_the_slurm_conf_export(cluster_env):
    proc = run([str(LOCAL_CLUSTER), "env"])
    assert proc.stdout.strip() == f"export SLURM_CONF={cluster_env['SLURM_CONF']}"


def test_reframe_runs_the_launch_check_on_the_local_system(cluster_env, tmp_path):
    proc = run(reframe_command("-c", str(REPO / "checks" / "launch_sanity.py"), "-r",
                               "--system", "local", prefix=tmp_path), timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads((tmp_path / "report.json").read_text())
    cases = report["runs"][-1]["testcases"]
    assert [(c["name"], c["result"]) for c in cases] == [("MPILaunchSanity", "pass")]
    assert cases[0]["job_nodelist"] == ["n1", "n2", "n3", "n4"]


def _private_cluster(tmp_path):
    """Environment for a second, throw-away cluster with its own state directory."""
    return dict(os.environ, FSACCEPT_STATE_DIR=str(tmp_path / "state"))


def _free_port_base():
    """Port base + 4000..4999 (bind-checked by `up` itself anyway): far from the
    cluster's (+0..399), scripts/test's second lane's (+1000..1399), the CephFS
    modules' labs (+2000..2899) and the fourth lane's cluster (+3000..3399); this
    module runs in the second lane, so +5000..5799 of the first's."""
    return env_port_base() + 4000 + (os.getpid() % 40) * 20


def test_up_resize_and_down_of_a_private_cluster_leave_no_daemon(cluster_env, tmp_path):
    env = _private_cluster(tmp_path)
    base = str(_free_port_base())
    try:
        up = run([str(LOCAL_CLUSTER), "up", "--nodes", "2", "--port-base", base], env=env)
        assert up.returncode == 0, up.stdout + up.stderr
        assert "2 idle nodes" in up.stdout
        resized = run([str(LOCAL_CLUSTER), "up", "--nodes", "5", "--port-base", base], env=env)
        assert resized.returncode == 0, resized.stdout + resized.stderr
        assert "restarting: cluster had 2 nodes, 5 requested" in resized.stdout
        sinfo = run(["sinfo", "-h", "-N", "-o", "%N %T"],
                    env=dict(env, SLURM_CONF=str(tmp_path / "state/cluster/slurm.conf")))
        assert sinfo.stdout.split() == ["n1", "idle", "n2", "idle", "n3", "idle",
                                        "n4", "idle", "n5", "idle"]
        pids = [int(p.read_text()) for p in (tmp_path / "state/cluster").glob("*.pid")]
        assert len(pids) == 6
    finally:
        down = run([str(LOCAL_CLUSTER), "down"], env=env)
    assert down.returncode == 0 and "stopped slurmctld" in down.stdout
    assert not [p for p in pids if pid_alive(p)]
    assert run([str(LOCAL_CLUSTER), "status"], env=env).stdout.strip() == \
        "local cluster: not running"


def test_two_ups_at_once_start_one_cluster(cluster_env, tmp_path):
    # A nightly and an acceptance run started together both call `up`.
    env = _private_cluster(tmp_path)
    base = str(_free_port_base() + 5)
    argv = [str(LOCAL_CLUSTER), "up", "--nodes", "2", "--port-base", base]
    try:
        ups = [subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True) for _ in range(2)]
        outs = [p.communicate(timeout=180) for p in ups]
        assert [p.returncode for p in ups] == [0, 0], outs
        said = sorted(outs, key=lambda out: "already running" in out[0])
        assert "2 idle nodes" in said[0][0] and "already running with 2 nodes" in said[1][0], said
        pids = [int(p.read_text()) for p in (tmp_path / "state/cluster").glob("*.pid")]
        assert len(pids) == 3 and all(pid_alive(p) for p in pids)
    finally:
        down = run([str(LOCAL_CLUSTER), "down"], env=env)
    assert down.returncode == 0, down.stdout + down.stderr


def test_a_port_already_taken_gets_one_clear_line(cluster_env, tmp_path):
    env = _private_cluster(tmp_path)
    base = _free_port_base() + 10
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", base + 1))
        squatter.listen()
        proc = run([str(LOCAL_CLUSTER), "up", "--nodes", "2", "--port-base", str(base)],
                   env=env)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (f"local-cluster: error: port {base + 1} (for slurmd n1) "
                                   "is already in use; choose another range with --port-base")


def test_zero_nodes_gets_one_clear_line():
    proc = run([str(LOCAL_CLUSTER), "up", "--nodes", "0"])
    assert proc.returncode == 2
    assert proc.stderr.strip() == "local-cluster: error: --nodes must be between 1 and 64, got 0"


def test_missing_munge_gets_one_clear_line(tmp_path):
    # A PATH without /usr/sbin is a machine without munged and the Slurm daemons.
    env = dict(os.environ, PATH="/usr/bin:/bin", FSACCEPT_STATE_DIR=str(tmp_path))
    proc = run([str(LOCAL_CLUSTER), "up"], env=env)
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("local-cluster: error: munged not found "
                                   "(Debian package munge): run scripts/setup")


def test_down_leaves_munged_running_while_another_cluster_uses_it(cluster_env, tmp_path):
    """One munged serves every cluster on the host.  A cluster whose `up` started it
    (recorded in its state: here the running munged, as if this cluster had started
    it) does not stop it on `down` while another cluster's daemons (the main one's)
    still use it: it hands it over (its pid in LocalCluster.MUNGED_HANDOVER), and the
    last cluster down stops it.  The handover file is put back as it was: a munged the
    host runs of its own must never be named there."""
    env = _private_cluster(tmp_path)
    base = str(_free_port_base() + 15)
    munged = int(Path("/run/munge/munged.pid").read_text())
    handover = LocalCluster.MUNGED_HANDOVER
    before = handover.read_text() if handover.exists() else None
    try:
        up = run([str(LOCAL_CLUSTER), "up", "--nodes", "1", "--port-base", base], env=env)
        assert up.returncode == 0, up.stdout + up.stderr
        (tmp_path / "state/cluster/munged.pid").write_text(f"{munged}\n")
        down = run([str(LOCAL_CLUSTER), "down"], env=env)
        handed = handover.read_text() if handover.exists() else None
    finally:
        run([str(LOCAL_CLUSTER), "down"], env=env)
        if before is None:
            handover.unlink(missing_ok=True)
        else:
            handover.write_text(before)
    assert down.returncode == 0, down.stdout + down.stderr
    assert "munged left running (started by an up, still used by Slurm daemons " \
           in down.stdout, down.stdout
    assert "the last cluster down stops it)" in down.stdout
    assert handed == f"{munged}\n"
    assert not (tmp_path / "state/cluster/munged.pid").exists()
    assert pid_alive(munged)
    assert run(["sh", "-c", "munge -n | unmunge"]).returncode == 0
    assert run(["sinfo", "-h", "-o", "%D"], env=cluster_env).stdout.strip() == "4"
