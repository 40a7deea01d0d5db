"""The system local-cephfs on a real CephFS (scripts/local-cluster up --fs cephfs): one
ceph-fuse client per emulated node, a main-job subset through ReFrame, and the faults
of issue 42, each named: an OSD killed before the job, an OSD killed mid-write, a node's
ceph-fuse killed mid-run and a data pool that fills mid-write (the CephFS counterparts
of test_gluster.py's).

The module brings up a cluster of its own (tests/integration/cephlab.py): a private
state directory (its Ceph daemons' data, its slurm.conf) on the port base
FSACCEPT_PORT_BASE + 2000 (19000 by default), so that it never meets the cluster
scripts/test runs, and brings it down at the end.  It runs without accounting (the
squeue backend) to start quicker, and uses the Spack build set-up made (``.state/spack``,
linked, only read).  Faults mid-write are injected while IOR's writes are held after
each rank's first (tests/integration/src/ior_writes.c), whatever the machine's speed.
Measured here: `up` from nothing 25-35 s (the OSDs made).
"""

import json
import os
import re
import subprocess
import time

import pytest

from fsaccept.benchmarks.semantics import parse
from lab import ceph as cfs
from lab.cluster import pid_alive
from tests.conftest import run
from tests.integration.cephlab import lab_fixture
from tests.integration.test_gluster import resume_cleanup

pytestmark = [pytest.mark.integration, pytest.mark.own_cluster]

#: Far from the cluster scripts/test runs (its Ceph ports are port base + 300..399) and
#: from test_cephfs_degraded.py's (+ 2500).
lab = lab_fixture(2000, "cephfs-state")


def small(data):
    """MdtestEasy smaller; IORWriteBandwidth as the main job has it (its data must last
    its deadline, a second).  The jobs' time limit stays the reference file's (3 min):
    in CI, beside the other lanes, MdtestEasy's 800 files on ceph-fuse ran past a
    1-minute limit while still creating them."""
    data["tests"]["mdtest_easy"].update(items_per_rank=100)


def held_write(data):
    """IORWriteBandwidth for a fault mid-write: every rank is held after its first
    transfer until the fault is in (:meth:`cephlab.Lab.run_with_fault`), then writes
    for 2 s.  O_DIRECT: each write reaches the OSDs before it returns (ceph-fuse's cache
    would acknowledge buffered writes from memory, and an error then waits for close)."""
    small(data)
    data["tests"]["ior_write_bandwidth"].update(deadline_s=2, direct_io=True)


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


# -- faults in the middle of a job ---------------------------------------------------

def down_nodes(servers_after: str, what: str) -> set[str]:
    """The nodes whose server probe, after the benchmark, said down naming ``what``
    (nodes group by the same answer; two may count degraded objects at other moments)."""
    return {n for group in servers_after.split("; ")
            if ": down CephFS: " in group and what in group
            for n in group.split(":", 1)[0].split(",")}


def test_an_osd_killed_mid_write_makes_it_invalid_naming_the_osd(lab, tmp_path,
                                                                 ior_writes_preload):
    """Three copies of each object, two needed to write: IOR writes on and sees
    nothing; every node's probe after the benchmark names the OSD that is down."""
    try:
        output, cases, _, said = lab.run_with_fault(
            tmp_path, lambda _: lab.cluster("fail-osd", "1").stdout,
            ior_writes_preload, lab.reference(tmp_path, held_write))
        assert said.startswith("osd.1: stopped (pid "), said
        case = cases["IORWriteBandwidth"]
        reason = case["fail_reason"] or ""
        print("reported:", reason)
        assert case["result"] == "fail" and case["fail_phase"] == "sanity", output[-3000:]
        assert "INVALID: the file system was degraded when the benchmark ended: node " \
            in reason, reason
        assert "OSD_DOWN: 1 osds down (osd.1 " in reason, reason
        assert down_nodes(case["servers_after"], "(osd.1 ") == {"n1", "n2", "n3", "n4"}, \
            case["servers_after"]
    finally:
        print(lab.cluster("restore").stdout)
        lab.wait_healed()


def test_a_node_whose_ceph_fuse_dies_mid_run_is_named(lab, tmp_path, ior_writes_preload):
    """n2's ceph-fuse killed between its task's first write and its next: that task's
    write fails (the FUSE connection is gone), named with its node; the next test of
    the session runs without n2 or refuses naming it; `restore` gives n2 a new client."""
    data_dir = None
    try:
        output, cases, data_dir, said = lab.run_with_fault(
            tmp_path, lambda _: lab.cluster("fail-client", "n2").stdout,
            ior_writes_preload, lab.reference(tmp_path, held_write),
            names=("IORWriteBandwidth", "IORRandomWriteIOPS"))
        assert said.startswith("node n2: killed its ceph-fuse (pid "), said
        case = cases["IORWriteBandwidth"]
        reason = case["fail_reason"] or ""
        print("reported:", reason)
        assert case["result"] == "fail" and case["fail_phase"] == "sanity", output[-3000:]
        assert "INVALID: " in reason, reason
        assert re.search("Transport endpoint is not connected|Software caused connection "
                         "abort", reason), reason
        assert "n2 task 1: " in reason, reason
        other = cases["IORRandomWriteIOPS"]
        print("next test:", other["result"], other["fail_reason"])
        assert other["result"] == "pass" or "node n2: " in (other["fail_reason"] or ""), \
            other["fail_reason"]
    finally:
        print(lab.cluster("restore").stdout)
    assert lab.ceph.client_pid("n2")
    back = run(["srun", "-w", "n2", "findmnt", "-n", "-o", "FSTYPE", "-M",
                str(lab.layout.mount_point)], env=lab.env, timeout=60)
    assert back.stdout.strip() == cfs.FUSE_FSTYPE, back
    if data_dir is not None and data_dir.exists():
        resume_cleanup(data_dir)


def pool_full_epoch(lab) -> int | None:
    """The OSD map's epoch when the data pool is flagged full (its quota reached)."""
    dump = json.loads(lab.ceph.cli("osd", "dump", "--format", "json").stdout)
    pool = next(p for p in dump["pools"] if p["pool_name"] == cfs.DATA_POOL)
    return dump["epoch"] if "full_quota" in pool.get("flags_names", "") else None


def client_epoch(lab, node) -> int:
    said = subprocess.run(["ceph", "--admin-daemon",
                           str(lab.layout.run_dir / f"client.{node}.asok"), "status"],
                          capture_output=True, text=True, timeout=30)
    return json.loads(said.stdout)["osd_epoch"] if said.returncode == 0 else -1


def until(ready, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (got := ready()):
            return got
        time.sleep(0.5)
    raise AssertionError(f"{what} within {timeout} s")


def fill_the_data_pool(lab, data_dir) -> str:
    """A quota below what the data pool holds: the monitor flags it full, and each
    node's client is shown that map before IOR goes on.  A client learns a new map only
    when it next talks to an OSD, so each node reads another node's file (O_DIRECT, from
    its mount namespace): one that had not would send its next write with the old map
    and get EIO (measured), one that has gets ENOSPC before sending it."""
    lab.ceph.cli("osd", "pool", "set-quota", cfs.DATA_POOL, "max_bytes", str(1 << 20))
    epoch = until(lambda: pool_full_epoch(lab), 60, f"{cfs.DATA_POOL} not flagged full")
    files = sorted(data_dir.glob("testfile.*"))
    for i, node in enumerate(("n1", "n2", "n3", "n4")):
        other = files[(i + 1) % len(files)]
        pid = lab.ceph.client_pid(node)

        def knows_full():
            run(["nsenter", "-t", str(pid), "-m", "dd", f"if={other}", "of=/dev/null",
                 "bs=4096", "count=1", "iflag=direct", "status=none"], timeout=60)
            return client_epoch(lab, node) >= epoch
        until(knows_full, 60, f"{node}'s ceph-fuse did not learn OSD map {epoch}")
    return f"{cfs.DATA_POOL} full at OSD map {epoch}"


def test_a_data_pool_full_mid_write_is_invalid_with_enospc(lab, tmp_path,
                                                           ior_writes_preload):
    """The data pool's quota reached mid-write (``ceph osd pool set-quota``): ceph-fuse
    refuses the next writes with ENOSPC rather than blocking; the quota is cleared
    whatever happens."""
    data_dir = None
    try:
        output, cases, data_dir, said = lab.run_with_fault(
            tmp_path, lambda d: fill_the_data_pool(lab, d), ior_writes_preload,
            lab.reference(tmp_path, held_write))
        case = cases["IORWriteBandwidth"]
        reason = case["fail_reason"] or ""
        print("reported:", reason, f"({said})")
        assert case["result"] == "fail" and case["fail_phase"] == "sanity", output[-3000:]
        assert "INVALID: " in reason and "No space left on device" in reason, reason
        assert "POOL_FULL" in (case["servers_after"] or ""), case["servers_after"]
    finally:
        lab.ceph.cli("osd", "pool", "set-quota", cfs.DATA_POOL, "max_bytes", "0")
        until(lambda: pool_full_epoch(lab) is None, 60, f"{cfs.DATA_POOL} still full")
    if data_dir is not None and data_dir.exists():
        resume_cleanup(data_dir)
    lab.wait_healed()


# -- down ---------------------------------------------------------------------------------

def test_down_leaves_nothing_running(lab):
    """Last in the module: every daemon and client `up` started is stopped, by pid."""
    pids = {**lab.ceph.running(),
            **{f"client.{n}": lab.ceph.client_pid(n) for n in ("login", "n1", "n2", "n3",
                                                              "n4")}}
    assert len(pids) == 12 and all(pids.values()), pids
    started = time.monotonic()
    said = lab.cluster("down").stdout
    print(f"down: {time.monotonic() - started:.0f} s: {said.strip()}")
    for name in ("mon.a", "mgr.x", "osd.0", "mds.a", "client n1", "client login"):
        assert name in said, said
    alive = [n for n, p in pids.items() if pid_alive(p)]
    assert not alive, alive
    assert cfs.gfs.mount_of(lab.layout.mount_point) is None
    assert "not running" in lab.cluster("status", expect=3).stdout
