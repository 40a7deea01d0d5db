"""The system local-gluster on a real GlusterFS volume (scripts/local-cluster up --fs
gluster): one FUSE client per emulated node, a node without its mount, and the
storage-side faults of issue 20, each through ReFrame on the real volume.

The volume, its address and mount point come from the running cluster's layout
(FSACCEPT_PORT_BASE moves them), never from a hard-coded path.  Faults are injected
once the job's benchmark has started writing (its data directory holds a file beside
the owner marker), whatever the machine's speed.
"""

import json
import os
import re
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from fsaccept.suite import owned
from lab import gluster as gfs
from lab.cluster import (DEFAULT_PORT_BASE, OPENMPI_ENV, ClusterLayout, default_state_dir,
                         gluster_layout, slurm_conf_path)
from tests.conftest import (LOCAL_CLUSTER, REPO, gluster_reference_file, reframe_command,
                            require_benchmark, require_gluster_tools, run)

pytestmark = [pytest.mark.integration, pytest.mark.main_cluster]

IOR_CHECKS = REPO / "checks" / "ior_acceptance.py"


def layout(volume_type="distribute"):
    return gluster_layout(ClusterLayout(default_state_dir(), port_base=DEFAULT_PORT_BASE,
                                        fs="gluster", gluster_volume_type=volume_type))


def up(*args, expect=0):
    proc = run([str(LOCAL_CLUSTER), "up", "--fs", "gluster", *args], timeout=300)
    assert proc.returncode == expect, proc.stdout + proc.stderr
    return proc


@pytest.fixture(scope="module")
def gluster_volumes():
    """The cluster with its distributed volume (brought up if needed)."""
    require_gluster_tools()
    up("--gluster-volume-type", "distribute")
    return dict(os.environ, SLURM_CONF=str(slurm_conf_path()), **OPENMPI_ENV)


def require_benchmark_spack():
    from fsaccept.suite.spack import view_bin
    if not (view_bin("local-spack") / "ior").exists():
        require_benchmark("ior")


def gluster_reference(tmp_path, lay, edit=lambda d: None):
    return str(gluster_reference_file(tmp_path, lay, edit))


def small_write(data, **more):
    """IORWriteBandwidth small: a few seconds of IOR at most."""
    data["tests"]["ior_write_bandwidth"].update(
        dict(segments=64, deadline_s=2) | more)
    data["time_limit_margin_min"] = 1


def reframe(tmp_path, env, reference, names, extra=()):
    """(argv, prefix) of a ReFrame run of ``names`` on local-gluster."""
    prefix = tmp_path / "rfm"
    cmd = reframe_command("-c", str(IOR_CHECKS), "--system", "local-gluster",
                          "-n", f"^({'|'.join(names)})$", *extra, "-r", prefix=prefix)
    return cmd, dict(env, FSACCEPT_REFERENCE=reference), prefix


def cases_of(prefix):
    report = prefix / "report.json"
    cases = json.loads(report.read_text())["runs"][-1]["testcases"] if report.exists() else []
    return {c["name"].split()[0]: c for c in cases}


def run_reframe(tmp_path, env, reference, names, timeout=600):
    cmd, env, prefix = reframe(tmp_path, env, reference, names)
    proc = run(cmd, env=env, timeout=timeout)
    return proc, cases_of(prefix)


def srun(env, *args, timeout=60):
    return run(["srun", *args], env=env, timeout=timeout)


# -- one client per node -------------------------------------------------------------

def test_srun_N4_shows_four_distinct_fuse_clients(gluster_volumes):
    lay = layout()
    proc = srun(gluster_volumes, "-N4", "--ntasks-per-node=1", "--label", "sh", "-c",
                f'echo $SLURMD_NODENAME $(readlink /proc/self/ns/mnt) '
                f'$(findmnt -n -o FSTYPE,SOURCE -M {lay.mount_point})')
    assert proc.returncode == 0, proc.stderr
    rows = {f[1]: f[2:] for f in (l.split() for l in proc.stdout.splitlines())}
    assert sorted(rows) == ["n1", "n2", "n3", "n4"], proc.stdout
    assert len({ns for ns, *_ in rows.values()}) == 4, rows  # four mount namespaces
    assert os.readlink("/proc/self/ns/mnt") not in {ns for ns, *_ in rows.values()}
    assert all(r[1:] == ["fuse.glusterfs", lay.source] for r in rows.values()), rows
    pids = {n: gfs.Gluster(lay).client_pid(n) for n in [*rows, "login"]}
    assert all(pids.values()) and len(set(pids.values())) == 5, pids
    # Each node's client lives in that node's namespace.
    for node, (ns, *_) in rows.items():
        assert os.readlink(f"/proc/{pids[node]}/ns/mnt") == ns, node


# -- a node without its mount --------------------------------------------------------

def test_a_node_without_its_mount_is_named_and_nothing_is_written_there(gluster_volumes,
                                                                        tmp_path):
    lay = layout()
    try:
        proc = run([str(LOCAL_CLUSTER), "unmount", "n3"], timeout=120)
        assert proc.returncode == 0, proc.stderr
        before = srun(gluster_volumes, "-w", "n3", "ls", "-A", str(lay.mount_point))
        assert before.returncode == 0 and before.stdout == "", before
        proc, cases = run_reframe(tmp_path, gluster_volumes,
                                  gluster_reference(tmp_path, lay, small_write),
                                  ["IORWriteBandwidth"])
        case = cases["IORWriteBandwidth"]
        assert case["result"] == "fail", proc.stdout[-3000:]
        reason = case["fail_reason"]
        assert "INVALID: the job refused to run the benchmark: node n3: " in reason, reason
        assert f"is not on fuse.glusterfs ({lay.mount_point})" in reason, reason
        assert "node n1" not in reason and "node n2" not in reason, reason
        after = srun(gluster_volumes, "-w", "n3", "ls", "-A", str(lay.mount_point))
        assert after.returncode == 0 and after.stdout == "", after.stdout
    finally:
        up()
    back = srun(gluster_volumes, "-w", "n3", "findmnt", "-n", "-o", "FSTYPE", "-M",
                str(lay.mount_point))
    assert back.stdout.strip() == "fuse.glusterfs", back


# -- faults in the middle of a write -------------------------------------------------

def long_write(data):
    """A write that outlasts the fault's injection, however fast the host: every rank
    is held after its first transfer until the fault is in (:func:`run_with_fault`).
    O_DIRECT: every write reaches the bricks before it returns.  Buffered, the client's
    write-behind acknowledges writes from memory, and a brick killed mid-write was seen
    by IOR in some runs and not at all in others (the data then silently incomplete)."""
    small_write(data, segments=1024, deadline_s=3, direct_io=True)


def wait_until_writing(lay, test, suite, writers, timeout=300, earlier=frozenset()):
    """The data directory of ``test`` once ``writers`` of its benchmark's files hold
    data (each rank has made its first write, and is held there), never one of
    ``earlier``: what an earlier run may have left."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if suite.poll() is not None:
            raise AssertionError("ReFrame ended before the benchmark wrote anything:\n"
                                 + suite.stdout.read()[-3000:])
        for d in set((lay.mount_point / "fsaccept").glob(f"{test}.*")) - earlier:
            try:
                written = [f for f in d.iterdir()
                           if not f.name.startswith(".fsaccept") and f.stat().st_size > 0]
            except OSError:
                continue
            if len(written) >= writers:
                return d
        time.sleep(0.1)
    raise AssertionError(f"{test} never started writing under {lay.mount_point}")


def run_with_fault(tmp_path, env, lay, inject, preload, names=("IORWriteBandwidth",),
                   edit=long_write, writers=4):
    """Run ``names`` on local-gluster, IOR's writes held after each rank's first
    (tests/integration/src/ior_writes.c); once ``writers`` ranks have written,
    ``inject(data directory)``, then release the writes: every rank's next write meets
    the fault.  Returns (ReFrame's output, cases, the data directory, what inject
    printed)."""
    release = tmp_path / "release-writes"
    cmd, env, prefix = reframe(tmp_path, dict(env, LD_PRELOAD=str(preload),
                                              FSACCEPT_TEST_HOLD_FILE=str(release)),
                               gluster_reference(tmp_path, lay, edit), list(names))
    earlier = frozenset((lay.mount_point / "fsaccept").glob(f"{names[0]}.*"))
    suite = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True)
    try:
        data_dir = wait_until_writing(lay, names[0], suite, writers, earlier=earlier)
        injected = inject(data_dir)
        release.touch()
        output, _ = suite.communicate(timeout=600)  # within the job's time limit
    finally:
        release.touch()
        if suite.poll() is None:
            suite.terminate()
            try:
                suite.wait(timeout=60)
            except subprocess.TimeoutExpired:
                suite.kill()
    return output, cases_of(prefix), data_dir, injected


def brick_writing(lay, data_dir):
    """The brick (b1...) holding the largest data file being written (a distributed
    volume places each file on one brick: killing another one would change nothing)."""
    sizes = {}
    for brick in lay.brick_dirs:
        for f in (brick / "fsaccept" / data_dir.name).glob("*"):
            if not f.name.startswith(".") and f.is_file():
                sizes[brick.name] = max(sizes.get(brick.name, 0), f.stat().st_size)
    assert sizes, "no data file on any brick"
    return max(sizes, key=sizes.get)


def fail(what, name):
    proc = run([str(LOCAL_CLUSTER), what, name])
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


IO_ERRORS = re.compile(r"Transport endpoint is not connected|Input/output error|"
                       r"Software caused connection abort|"
                       r"No space left on device|Stale file handle")


def ranks_on(brick, data_dir):
    """IOR's ranks whose files (testfile.0000000R) are on ``brick`` (a directory)."""
    return [int(f.name.rsplit(".", 1)[1])
            for f in (brick / "fsaccept" / data_dir.name).glob("testfile.*")]


def test_a_brick_killed_mid_write_on_a_distributed_volume(gluster_volumes, tmp_path,
                                                          ior_writes_preload):
    lay = layout()
    killed = {}

    def kill_brick(data_dir):
        killed["brick"] = brick_writing(lay, data_dir)
        killed["ranks"] = ranks_on(
            next(b for b in lay.brick_dirs if b.name == killed["brick"]), data_dir)
        return fail("fail-brick", killed["brick"])

    try:
        output, cases, data_dir, _ = run_with_fault(tmp_path, gluster_volumes, lay,
                                                     kill_brick, ior_writes_preload)
        case = cases["IORWriteBandwidth"]
        reason = case["fail_reason"] or ""
        print("reported:", reason, killed)
        assert case["result"] == "fail" and case["fail_phase"] == "sanity", output[-3000:]
        assert "INVALID: " in reason, reason
        assert IO_ERRORS.search(reason), reason  # the I/O error the benchmark saw
        # The node whose rank wrote to the dead brick (one rank per node, in blocks).
        assert any(f"n{r + 1} task {r}: " in reason for r in killed["ranks"]), (killed, reason)
        # What every node's client said of the bricks once the benchmark had ended.
        assert (f"the file system was degraded when the benchmark ended: node n1,n2,n3,n4: "
                f"GlusterFS client not connected to brick {lay.address}:"
                f"{lay.brick_dirs[int(killed['brick'][1:]) - 1]}") in reason, reason
        # The run's directory: removed, or what was left said (the brick was down).
        assert not data_dir.exists() or str(data_dir) in (case.get("data_left") or ""), \
            (case.get("data_left"), reason)
    finally:
        up()
    # Once the brick is back (the clients reconnect within seconds), the cleanup can be
    # resumed: the owner marker is still there, and nothing else is left.
    resume_cleanup(data_dir)
    assert list((lay.mount_point / "fsaccept").iterdir()) == []


def resume_cleanup_if_left(data_dir):
    if data_dir.exists():
        resume_cleanup(data_dir)


def resume_cleanup(data_dir, timeout=120):
    """Remove what a run left while a server was down, as the harness would (only with
    its owner marker), once the clients have reconnected."""
    run_id = data_dir.name.split(".", 1)[1]
    deadline = time.monotonic() + timeout
    left = "?"
    while time.monotonic() < deadline:
        removal = owned.remove_owned(str(data_dir), run_id)
        left = removal.left
        if removal.gone and not data_dir.exists():
            return
        time.sleep(1)
    raise AssertionError(f"the run's directory could not be removed: {left}")


def test_a_node_whose_client_dies_mid_run_is_named(gluster_volumes, tmp_path,
                                                    ior_writes_preload):
    lay = layout()
    try:
        output, cases, data_dir, _ = run_with_fault(
            tmp_path, gluster_volumes, lay, lambda _: fail("fail-client", "n2"),
            ior_writes_preload, names=("IORWriteBandwidth", "IORRandomWriteIOPS"))
        case = cases["IORWriteBandwidth"]
        reason = case["fail_reason"] or ""
        print("reported:", reason)
        assert case["result"] == "fail" and case["fail_phase"] == "sanity", output[-3000:]
        # An open file on the dead client: ECONNABORTED; a new open: ENOTCONN.
        assert re.search("Software caused connection abort|Transport endpoint is not "
                         "connected", reason), reason
        # Killed between n2's first write and its next (held until then): n2's task.
        assert "n2 task 1: " in reason, reason
        # The next test of the session: runs without n2's client, or refuses naming n2.
        other = cases["IORRandomWriteIOPS"]
        print("next test:", other["result"], other["fail_reason"])
        assert other["result"] == "pass" or "node n2: " in (other["fail_reason"] or ""), \
            other["fail_reason"]
    finally:
        up()
    assert gfs.Gluster(lay).client_pid("n2")
    resume_cleanup(data_dir)


def test_a_brick_killed_mid_write_on_a_replicated_volume(gluster_volumes, tmp_path,
                                                         ior_writes_preload):
    """Switching the volume type gives another volume (its own bricks).  A replica
    survives one brick, and IOR sees nothing; the nodes' clients, asked after the
    benchmark, know the brick is down: INVALID, a degraded file system's figure."""
    lay = layout("replica")
    try:
        said = up("--gluster-volume-type", "replica").stdout
        assert "gluster (distribute), 4 and gluster (replica) requested" in said, said
        proc = srun(gluster_volumes, "-N4", "--ntasks-per-node=1", "findmnt", "-n", "-o",
                    "SOURCE", "-M", str(lay.mount_point))
        assert proc.stdout.split() == [lay.source] * 4, proc.stdout + proc.stderr
        output, cases, data_dir, _ = run_with_fault(
            tmp_path, gluster_volumes, lay, lambda _: fail("fail-brick", "b2"),
            ior_writes_preload)
        case = cases["IORWriteBandwidth"]
        reason = case["fail_reason"] or ""
        print("reported:", case["result"], reason)
        assert case["result"] == "fail" and case["fail_phase"] == "sanity", output[-3000:]
        # The only reason: the run itself survived (no I/O error, no task failed).
        assert reason == (
            "sanity error: INVALID: the file system was degraded when the benchmark ended: "
            f"node n1,n2,n3,n4: GlusterFS client not connected to brick {lay.address}:"
            f"{lay.brick_dirs[1]}"), reason
        assert case["servers_after"] == ("n1,n2,n3,n4: down GlusterFS client not connected "
                                         f"to brick {lay.address}:{lay.brick_dirs[1]}")
    finally:
        up("--gluster-volume-type", "distribute")
    # Switching back restarted the cluster: the replica's self-heal daemon went too.
    assert gfs.Gluster(lay).self_heal_pids() == {}
    resume_cleanup_if_left(data_dir)


def test_a_full_brick_makes_the_write_invalid_with_enospc(gluster_volumes, tmp_path):
    """Bricks of 256 MiB (loop-mounted ext4 images): one IOR file of 300 MiB fits in the
    volume's free space (the sum of the bricks, what the capacity guard sees) but not
    in the one brick that holds it."""
    lay = gluster_layout(ClusterLayout(default_state_dir(), port_base=DEFAULT_PORT_BASE,
                                       fs="gluster", gluster_brick_size="256M"))
    try:
        up("--gluster-brick-size", "256M")
        images = sorted(p.name for p in lay.image_dir.glob("*.img"))
        assert images == [f"fsaccept-256M-b{i}.img" for i in range(1, 5)], images
        proc, cases = run_reframe(tmp_path, gluster_volumes, gluster_reference(
            tmp_path, lay, lambda d: small_write(d, node_fraction=0.25, segments=300,
                                                 deadline_s=60, direct_io=True)),
            ["IORWriteBandwidth"])
        case = cases["IORWriteBandwidth"]
        print("reported:", case["result"], case["fail_reason"])
        assert case["result"] == "fail", proc.stdout[-3000:]
        assert "INVALID: " in case["fail_reason"], case["fail_reason"]
        assert "No space left on device" in case["fail_reason"], case["fail_reason"]
    finally:
        up("--gluster-brick-size", "")
    # Back on directories: the images were unmounted and removed.
    assert not list(lay.image_dir.glob("*.img"))
    assert gfs.mount_of(lay.brick_dirs[0]) is None


def test_a_brick_down_before_the_job_is_refused_naming_it(gluster_volumes, tmp_path):
    """The client of the node where the batch script runs, asked before anything is
    created, knows a brick is down: the job refuses, naming the node and the brick, and
    nothing is written (on a distributed volume the data would half land, on a
    replicated one the figure would be a degraded one's).  Every node's client is asked
    again in the per-node check (a brick only some clients lost)."""
    lay = layout()
    try:
        fail("fail-brick", "b3")
        proc, cases = run_reframe(tmp_path, gluster_volumes,
                                  gluster_reference(tmp_path, lay, small_write),
                                  ["IORWriteBandwidth"])
        case = cases["IORWriteBandwidth"]
        reason = case["fail_reason"] or ""
        print("reported:", reason)
        assert case["result"] == "fail" and case["fail_phase"] == "sanity", proc.stdout[-3000:]
        assert reason == ("sanity error: INVALID: the job refused to run the benchmark: "
                          "node n1: the file system is degraded: GlusterFS client not "
                          f"connected to brick {lay.address}:{lay.brick_dirs[2]}"), reason
        assert not case["benchmark_version"] and not case["node_mounts"], reason
    finally:
        up()
    assert list((lay.mount_point / "fsaccept").iterdir()) == []
