"""The system local-cephfs on a real CephFS (scripts/local-cluster up --fs cephfs): one
ceph-fuse client per emulated node, a main-job subset through ReFrame, and an OSD
killed before the job (INVALID, naming it).

The module brings up a cluster of its own: a private state directory (its Ceph daemons'
data, its slurm.conf) on the port base FSACCEPT_PORT_BASE + 2000 (19000 by default), so
that it never meets the cluster scripts/test runs, and brings it down at the end.  It
runs without accounting (the squeue backend) to start quicker, and uses the Spack build
set-up made (``.state/spack``, linked, only read).  Measured here: `up` from nothing
30-35 s (the OSDs made), the module 103 s.
"""

import json
import os
import shutil
import time
from pathlib import Path

import pytest
import yaml

from fsaccept.benchmarks.semantics import parse
from lab import ceph as cfs
from lab.cluster import DEFAULT_PORT_BASE, OPENMPI_ENV, ClusterLayout, ceph_layout, pid_alive
from tests.conftest import LOCAL_CLUSTER, REPO, reframe_command, require_lab_tools, run

pytestmark = pytest.mark.integration

#: Far from the cluster scripts/test runs (its Ceph ports are port base + 300..399).
PORT_BASE = DEFAULT_PORT_BASE + 2000
SYSTEM = "local-cephfs"
CHECKS = ("ior_acceptance.py", "mdtest_metadata.py")


def require_ceph_tools():
    """Ceph, Slurm and IOR installed (scripts/setup): else skip, or fail in CI."""
    require_lab_tools("ceph-mon", "ceph-fuse", "slurmd", "srun")


class Lab:
    """The module's cluster: its environment, layout and commands."""

    def __init__(self, state: Path):
        self.state = state
        self.env = dict(os.environ, FSACCEPT_STATE_DIR=str(state),
                        FSACCEPT_PORT_BASE=str(PORT_BASE),
                        SLURM_CONF=str(state / "cluster" / "slurm.conf"),
                        CEPH_CONF=str(state / "ceph" / "ceph.conf"),
                        # ReFrame and the jobs' probes import this checkout's fsaccept.
                        PYTHONPATH=os.pathsep.join(
                            [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]),
                        **OPENMPI_ENV)
        self.layout = ceph_layout(ClusterLayout(state / "cluster", port_base=PORT_BASE,
                                                fs="cephfs"))
        self.ceph = cfs.Ceph(self.layout)

    def cluster(self, *args, timeout=300, expect=0):
        proc = run([str(LOCAL_CLUSTER), *args, "--port-base", str(PORT_BASE)],
                   env=self.env, timeout=timeout)
        assert proc.returncode == expect, proc.stdout + proc.stderr
        return proc

    def reference(self, tmp_path, edit=lambda data: None) -> Path:
        """reference/local-cephfs.yaml, its target this cluster's mount point."""
        data = yaml.safe_load((REPO / "reference" / f"{SYSTEM}.yaml").read_text())
        mp = str(self.layout.mount_point)
        data["target"].update(path=mp, mount_point=mp)
        edit(data)
        path = tmp_path / f"{SYSTEM}.yaml"
        path.write_text(yaml.safe_dump(data))
        return path

    def reframe(self, tmp_path, names, reference, checks=CHECKS):
        prefix = tmp_path / "rfm"
        checks = [a for c in checks for a in ("-c", str(REPO / "checks" / c))]
        proc = run(reframe_command(*checks, "--system", SYSTEM, "-n",
                                   f"^({'|'.join(names)})$", "-r", prefix=prefix),
                   env=dict(self.env, FSACCEPT_REFERENCE=str(reference)), timeout=1200)
        report = prefix / "report.json"
        cases = json.loads(report.read_text())["runs"][-1]["testcases"] \
            if report.exists() else []
        return proc, {c["name"].split()[0]: c for c in cases}

    def wait_healed(self, timeout=180):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if run([str(LOCAL_CLUSTER), "healed", "--port-base", str(PORT_BASE)],
                   env=self.env, timeout=60).returncode == 0:
                return
            time.sleep(2)
        pytest.fail(f"ceph not healed within {timeout} s")


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    require_ceph_tools()
    state = tmp_path_factory.mktemp("cephfs-state")
    spack = REPO / ".state" / "spack"
    if spack.exists():
        (state / "spack").symlink_to(spack.resolve())  # the benchmarks' build, only read
    it = Lab(state)
    started = time.monotonic()
    try:
        it.cluster("up", "--fs", "cephfs", "--accounting", "none", timeout=600)
        print(f"up --fs cephfs: {time.monotonic() - started:.0f} s")
        yield it
    finally:
        run([str(LOCAL_CLUSTER), "down", "--port-base", str(PORT_BASE)], env=it.env,
            timeout=300)
        if not it.ceph.running():  # the OSDs' files (~0.8 GiB written), made by this module
            shutil.rmtree(state / "ceph", ignore_errors=True)


def small(data):
    """MdtestEasy smaller; IORWriteBandwidth as the main job has it (its data must last
    its deadline, a second)."""
    data["tests"]["mdtest_easy"].update(items_per_rank=100)
    data["time_limit_margin_min"] = 1


# -- one client per node -------------------------------------------------------------

def test_each_node_writes_through_its_own_ceph_fuse(lab):
    mp = lab.layout.mount_point
    proc = run(["srun", "-N4", "--ntasks-per-node=1", "sh", "-c",
                f'echo $SLURMD_NODENAME $(readlink /proc/self/ns/mnt) '
                f'$(findmnt -n -o FSTYPE -M {mp}) && echo from $SLURMD_NODENAME '
                f'> {mp}/written-by-$SLURMD_NODENAME'], env=lab.env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    rows = {f[0]: f[1:] for f in (line.split() for line in proc.stdout.splitlines())}
    assert sorted(rows) == ["n1", "n2", "n3", "n4"], proc.stdout
    assert len({ns for ns, _ in rows.values()}) == 4, rows  # four mount namespaces
    assert all(t == cfs.FUSE_FSTYPE for _, t in rows.values()), rows
    pids = {n: lab.ceph.client_pid(n) for n in [*rows, "login"]}
    assert all(pids.values()) and len(set(pids.values())) == 5, pids
    for node, (ns, _) in rows.items():  # each node's client lives in its namespace
        assert os.readlink(f"/proc/{pids[node]}/ns/mnt") == ns, node
        # Seen on the login node, through its own client.
        assert (mp / f"written-by-{node}").read_text() == f"from {node}\n"
        (mp / f"written-by-{node}").unlink()


# -- the main job's subset ------------------------------------------------------------

def test_a_main_job_subset_passes_with_every_server_up(lab, tmp_path):
    proc, cases = lab.reframe(tmp_path, ["IORWriteBandwidth", "MdtestEasy"],
                              lab.reference(tmp_path, small))
    cases = {n: c for n, c in cases.items() if n != "BenchmarkBinaries"}
    assert sorted(cases) == ["IORWriteBandwidth", "MdtestEasy"], proc.stdout[-3000:]
    for name, case in cases.items():
        assert case["result"] == "pass", (name, case["fail_reason"], proc.stdout[-3000:])
        assert case["servers_after"].startswith("n1,n2,n3,n4: ok HEALTH_OK, 1 MDS ranks "
                                                "active and answering"), case["servers_after"]


# -- cross-node semantics ---------------------------------------------------------------

def test_the_semantics_cases_run_on_cephfs_and_what_differs_is_listed(lab, tmp_path):
    """The semantics check on ceph-fuse: every case measured; what ceph-fuse does that
    the contract's case would FAIL (reference/local-cephfs.yaml says what and why) is
    listed as not promised, never judged, and the rest PASS."""
    proc, cases = lab.reframe(tmp_path, ["CrossNodeSemantics"], lab.reference(tmp_path),
                              checks=("semantics",))
    case = cases["CrossNodeSemantics"]
    assert case["result"] == "pass", (case["fail_reason"], proc.stdout[-3000:])
    assert case["semantics_failures"] == ""
    listed = case["not_promised"]
    for name in ("visibility", "append", "root-squash", "acl-deny"):
        assert f"{name}: not promised (" in listed, listed
    assert "ceph/ceph#70279" in listed, listed
    assert len(case["semantics_cases"].splitlines()) == len(parse.CASES), \
        case["semantics_cases"]


# -- a server down before the job ------------------------------------------------------

def test_an_osd_killed_before_the_job_makes_it_invalid_naming_the_osd(lab, tmp_path):
    try:
        said = lab.cluster("fail-osd", "1").stdout
        assert said.startswith("osd.1: stopped (pid "), said
        proc, cases = lab.reframe(tmp_path, ["IORWriteBandwidth"],
                                  lab.reference(tmp_path, small))
        case = cases["IORWriteBandwidth"]
        reason = case["fail_reason"] or ""
        print("reported:", reason)
        assert case["result"] == "fail", proc.stdout[-3000:]
        assert "INVALID: " in reason and "the file system is degraded: CephFS: OSD_DOWN: " \
            "1 osds down (osd.1 " in reason, reason
    finally:
        print(lab.cluster("restore").stdout)
        lab.wait_healed()


# -- down ---------------------------------------------------------------------------------

def test_down_leaves_nothing_running(lab):
    """Last in the module: every daemon and client `up` started is stopped, by pid."""
    pids = {**lab.ceph.running(),
            **{f"client.{n}": lab.ceph.client_pid(n) for n in ("login", "n1", "n2", "n3",
                                                              "n4")}}
    assert len(pids) == 12 and all(pids.values()), pids
    said = lab.cluster("down").stdout
    for name in ("mon.a", "mgr.x", "osd.0", "mds.a", "client n1", "client login"):
        assert name in said, said
    alive = [n for n, p in pids.items() if pid_alive(p)]
    assert not alive, alive
    assert cfs.gfs.mount_of(lab.layout.mount_point) is None
    assert "not running" in lab.cluster("status", expect=3).stdout
