"""``local-cluster up --fs gluster,cephfs`` (lab/cluster.py): every node's slurmd behind
GlusterFS's wrapper, then CephFS's, each mounting the node's own client in a mount
namespace of its own.  The chained wrappers run here for real, with stubs for
``unshare`` and the mount tools; the orchestration runs with the daemons stubbed.  No
test here starts a daemon or makes a mount namespace."""

import os
import subprocess
from types import SimpleNamespace
import sys
from pathlib import Path

import pytest

from lab import ceph as cfs
from lab import cluster
from lab import gluster as gfs

BOTH = "gluster,cephfs"
PORT_BASE = 19000
GLUSTER_MP = "/mnt/fsaccept-gluster-19000"
CEPH_MP = "/mnt/fsaccept-cephfs-19000"
#: subprocess's own Popen: _cluster replaces the module's (start_slurmd's) by a recorder.
POPEN = subprocess.Popen


def _sh(argv, env=None):
    """``argv`` run to its end (by POPEN): its exit code, stdout and stderr."""
    with POPEN(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
               env=env) as proc:
        out, err = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def _cluster(tmp_path, monkeypatch, fs=BOTH, nodes=4):
    """A LocalCluster whose slurmds are not started: Popen records each argv."""
    layout = cluster.ClusterLayout(tmp_path / "state dir" / "cluster", nodes=nodes,
                                   port_base=PORT_BASE, fs=fs, accounting="none")
    (layout.state_dir / "log").mkdir(parents=True)
    started = []
    monkeypatch.setattr(cluster.subprocess, "Popen", lambda argv, **kw: started.append(argv))
    # start_slurmd's wait for the pid file (never stop_slurmd: it would signal that pid).
    monkeypatch.setattr(cluster.LocalCluster, "_live_pid", staticmethod(lambda f, e: 1))
    return cluster.LocalCluster(layout), started


def _slurmd(name):
    return [sys.executable, str(Path(cluster.__file__).resolve()), cluster.REAP_COMMAND,
            "slurmd", "-D", "-N", name]


def _stub_clients(lc, monkeypatch, said):
    """Each file system's stop_client records its node in ``said``."""
    monkeypatch.setattr(lc.gluster, "stop_client", lambda n: said.append(f"gluster {n}"))
    monkeypatch.setattr(lc.ceph, "stop_client", lambda n: said.append(f"ceph {n}"))


# -- the chained prefix -----------------------------------------------------------------

def test_the_gluster_wrapper_comes_first_then_cephs_then_the_slurmd(tmp_path, monkeypatch):
    lc, started = _cluster(tmp_path, monkeypatch)
    stopped = []
    _stub_clients(lc, monkeypatch, stopped)
    lc.start_slurmd("n2")
    gluster = lc.gluster.layout.node_wrapper("n2")
    ceph = lc.ceph.layout.node_wrapper("n2")
    assert started == [gluster + ceph + _slurmd("n2")]
    assert gluster[0] == ceph[0] == "unshare" and len(started[0]) == len(gluster) + len(
        ceph) + 7
    assert (lc.gluster.layout.mount_point, lc.ceph.layout.mount_point) == (
        Path(GLUSTER_MP), Path(CEPH_MP))
    assert stopped == ["gluster n2", "ceph n2"]  # both, before the node starts again


@pytest.mark.parametrize("fs, wrappers", [("gluster", ["gluster"]), ("cephfs", ["ceph"]),
                                          ("none", [])])
def test_a_single_file_system_keeps_its_own_prefix(tmp_path, monkeypatch, fs, wrappers):
    lc, started = _cluster(tmp_path, monkeypatch, fs=fs)
    stopped = []
    _stub_clients(lc, monkeypatch, stopped)
    lc.start_slurmd("n1")
    prefix = {"gluster": lc.gluster.layout.node_wrapper("n1"),
              "ceph": lc.ceph.layout.node_wrapper("n1")}
    assert started == [sum((prefix[w] for w in wrappers), []) + _slurmd("n1")]
    assert stopped == [f"{w} n1" for w in wrappers]


def _scripts(argv):
    """The ``sh -c`` script of each wrapper in ``argv``, in order."""
    return [argv[i + 2] for i in range(len(argv) - 1) if argv[i:i + 2] == ["sh", "-c"]]


@pytest.mark.parametrize("kw", [{}, {"mount": False}, {"options": ("entry-timeout=10",)}])
def test_each_chained_script_is_valid_sh(tmp_path, monkeypatch, kw):
    lc, started = _cluster(tmp_path, monkeypatch)
    _stub_clients(lc, monkeypatch, [])
    lc.start_slurmd("n2", **kw)
    scripts = _scripts(started[0])
    assert len(scripts) == 2 and all('exec "$@"' in s for s in scripts)
    for script in scripts:
        proc = _sh(["sh", "-n", "-c", script])
        assert proc.returncode == 0, (script, proc.stderr)


def _run(tmp_path, argv, fail=""):
    """``argv`` run as start_slurmd would, with stubs on PATH that record their arguments
    (one line each) for unshare (it then runs what follows ``--``, in this namespace),
    umount, glusterfs, ceph-fuse, findmnt (the FUSE type of the mount point asked) and
    slurmd; ``fail``: the stub that exits 1."""
    calls = tmp_path / "calls"
    stubs = tmp_path / "bin"
    stubs.mkdir()
    bodies = {
        "unshare": 'opts=""; while [ "$1" != "--" ]; do opts="$opts $1"; shift; done\n'
                   f'shift; echo "unshare$opts -- $1 $2" >> "{calls}"; exec "$@"\n',
        "findmnt": f'echo "findmnt $*" >> "{calls}"\n'
                   f'for a; do mp="$a"; done\n'
                   f'case "$mp" in {GLUSTER_MP}) echo fuse.glusterfs;; '
                   f'{CEPH_MP}) echo {cfs.FUSE_FSTYPE};; esac\n'}
    for name in ("unshare", "umount", "glusterfs", "ceph-fuse", "findmnt", "slurmd"):
        body = bodies.get(name, f'echo "{name} $*" >> "{calls}"\n')
        if name == fail:
            body += "exit 1\n"
        (stubs / name).write_text("#!/bin/sh\n" + body)
        (stubs / name).chmod(0o755)
    proc = _sh(argv, env=dict(os.environ, PATH=f"{stubs}:{os.environ['PATH']}"))
    return proc, calls.read_text().splitlines() if calls.exists() else []


UNSHARE = "unshare -m --propagation slave -- sh -c"


def test_the_chain_mounts_glusterfs_then_ceph_fuse_then_runs_slurmd(tmp_path, monkeypatch):
    lc, started = _cluster(tmp_path, monkeypatch)
    _stub_clients(lc, monkeypatch, [])
    lc.start_slurmd("n2")
    proc, calls = _run(tmp_path, started[0])
    assert proc.returncode == 0, proc.stderr
    assert calls == [
        UNSHARE,
        f"umount -l {GLUSTER_MP}",  # the login node's GlusterFS client, copied in
        " ".join(lc.gluster.layout.client_argv("n2", gfs.CLIENT_OPTIONS)),
        f"findmnt -n -o FSTYPE -M {GLUSTER_MP}",
        UNSHARE,  # nested: a slave of the GlusterFS namespace, whose mount it keeps
        f"umount -l {CEPH_MP}",  # the login node's ceph-fuse, copied in: not GlusterFS's
        " ".join(lc.ceph.layout.client_argv("n2")),
        f"findmnt -n -o FSTYPE -M {CEPH_MP}",
        "slurmd -D -N n2"]


def test_a_node_without_mount_drops_both_clients_and_still_runs_slurmd(tmp_path,
                                                                      monkeypatch):
    lc, started = _cluster(tmp_path, monkeypatch)
    _stub_clients(lc, monkeypatch, [])
    lc.start_slurmd("n3", mount=False)
    proc, calls = _run(tmp_path, started[0])
    assert proc.returncode == 0, proc.stderr
    assert calls == [UNSHARE, f"umount -l {GLUSTER_MP}", UNSHARE, f"umount -l {CEPH_MP}",
                     "slurmd -D -N n3"]


def test_client_options_go_to_the_glusterfs_client_only(tmp_path, monkeypatch):
    lc, started = _cluster(tmp_path, monkeypatch)
    _stub_clients(lc, monkeypatch, [])
    lc.start_slurmd("n2", options=("attribute-timeout=10", "entry-timeout=10"))
    proc, calls = _run(tmp_path, started[0])
    assert proc.returncode == 0, proc.stderr
    glusterfs = [c for c in calls if c.startswith("glusterfs ")]
    assert glusterfs == [" ".join(lc.gluster.layout.client_argv(
        "n2", ("attribute-timeout=10", "entry-timeout=10")))]
    assert [c for c in calls if c.startswith("ceph-fuse ")] == [
        " ".join(lc.ceph.layout.client_argv("n2"))]


@pytest.mark.parametrize("fail, ran", [("glusterfs", 3), ("ceph-fuse", 7)])
def test_a_client_that_fails_to_mount_stops_the_chain_before_slurmd(tmp_path, monkeypatch,
                                                                   fail, ran):
    lc, started = _cluster(tmp_path, monkeypatch)
    _stub_clients(lc, monkeypatch, [])
    lc.start_slurmd("n2")
    proc, calls = _run(tmp_path, started[0], fail=fail)
    assert proc.returncode == 97  # the wrapper's own code for a client that did not mount
    assert len(calls) == ran and calls[-1].startswith(fail)
    assert not [c for c in calls if c.startswith("slurmd")]


# -- restarting one node ------------------------------------------------------------------

def _restartable(tmp_path, monkeypatch, fs=BOTH):
    lc, started = _cluster(tmp_path, monkeypatch, fs=fs)
    said = []
    monkeypatch.setattr(lc, "stop_slurmd", lambda name: said.append(f"slurmd {name}"))
    monkeypatch.setattr(lc, "wait_ready", lambda timeout: said.append("wait_ready"))
    _stub_clients(lc, monkeypatch, said)
    lc.endpoints = SimpleNamespace(up=lambda: said.append("iperf3 up") or "",
                                   down=lambda: said.append("iperf3 down") or [])
    return lc, started, said


def test_unmount_restarts_a_node_without_either_client_and_says_so(tmp_path, monkeypatch):
    lc, started, said = _restartable(tmp_path, monkeypatch)
    assert lc.node_without_mount("n3") == (
        f"node n3: restarted without its GlusterFS and ceph-fuse clients ({GLUSTER_MP} "
        f"and {CEPH_MP} are bare directories there)")
    assert said[:3] == ["slurmd n3", "gluster n3", "ceph n3"] and said[-1] == "wait_ready"
    assert started == [lc.gluster.layout.node_wrapper("n3", mount=False)
                       + lc.ceph.layout.node_wrapper("n3", mount=False) + _slurmd("n3")]


@pytest.mark.parametrize("options, shown, given", [
    (("attribute-timeout=10",), "attribute-timeout=10", ("attribute-timeout=10",)),
    (None, "attribute-timeout=0,acl", gfs.CLIENT_OPTIONS),
    ((), "the defaults", ())])
def test_remount_sets_the_glusterfs_clients_options_and_keeps_ceph_fuse(
        tmp_path, monkeypatch, options, shown, given):
    lc, started, said = _restartable(tmp_path, monkeypatch)
    assert lc.node_remounted("n2", options) == (
        f"node n2: restarted with its GlusterFS client mounted with {shown}; its ceph-fuse "
        "as every node's")
    assert said[:3] == ["slurmd n2", "gluster n2", "ceph n2"]
    assert started == [lc.gluster.layout.node_wrapper("n2", options=given)
                       + lc.ceph.layout.node_wrapper("n2") + _slurmd("n2")]


def test_remount_still_needs_glusterfs(tmp_path, monkeypatch):
    lc, started, said = _restartable(tmp_path, monkeypatch, fs="cephfs")
    with pytest.raises(cluster.ClusterError, match="^remount needs a cluster brought up "
                                                   "with --fs gluster$"):
        lc.node_remounted("n2", None)
    assert started == [] and said == []


# -- up ---------------------------------------------------------------------------------

def _recorded(lc, fs=BOTH):
    s = lc.layout.state_dir
    cluster.record_fs(s, fs)
    (s / "accounting").write_text("none\n")
    (s / "gluster-volume-type").write_text("distribute\n")
    (s / "gluster-brick-size").write_text("\n")
    lc.conf.write_text(cluster.render_slurm_conf(lc.layout))


def test_up_of_a_running_cluster_restarts_a_node_whose_either_client_died(tmp_path,
                                                                         monkeypatch):
    lc, started, said = _restartable(tmp_path, monkeypatch)
    _recorded(lc)
    monkeypatch.setattr(lc, "running_daemons", lambda: {
        "slurmctld": 10, **{f"slurmd n{i}": 10 + i for i in range(1, 5)}})
    dead = {"gluster": {"n3"}, "ceph": {"n1", "n3"}}
    monkeypatch.setattr(lc.gluster, "up", lambda: said.append("gluster up") or "gluster: ok")
    monkeypatch.setattr(lc, "ceph_up", lambda: said.append("ceph up") or ("ceph: ok", False))
    monkeypatch.setattr(lc.gluster, "client_pid", lambda n: n not in dead["gluster"])
    monkeypatch.setattr(lc.ceph, "client_pid", lambda n: n not in dead["ceph"])
    assert lc.up() == "local cluster: restarted slurmd of n3, n1"
    assert said == ["gluster up", "iperf3 up", "slurmd n3", "ceph up", "slurmd n1",
                    "gluster n3", "ceph n3", "gluster n1", "ceph n1", "wait_ready"]
    assert [argv[-1] for argv in started] == ["n3", "n1"]
    assert all(len(_scripts(argv)) == 2 for argv in started)


def test_up_of_a_whole_running_cluster_changes_nothing(tmp_path, monkeypatch):
    lc, started, said = _restartable(tmp_path, monkeypatch)
    _recorded(lc, "cephfs,gluster")  # recorded canonical: the same cluster
    monkeypatch.setattr(lc, "running_daemons", lambda: {
        "slurmctld": 10, **{f"slurmd n{i}": 10 + i for i in range(1, 5)}})
    monkeypatch.setattr(lc.gluster, "up", lambda: said.append("gluster up") or "gluster: ok")
    monkeypatch.setattr(lc, "ceph_up", lambda: said.append("ceph up") or ("ceph: ok", False))
    monkeypatch.setattr(lc.gluster, "client_pid", lambda n: 1)
    monkeypatch.setattr(lc.ceph, "client_pid", lambda n: 1)
    assert lc.up() == "local cluster already running with 4 nodes (no change)"
    assert said == ["gluster up", "iperf3 up", "ceph up", "wait_ready"] and started == []


def _fresh(tmp_path, monkeypatch):
    """A cluster brought up from nothing, every daemon stubbed: ``said`` records."""
    lc, started, said = _restartable(tmp_path, monkeypatch)
    monkeypatch.setattr(lc, "running_daemons", lambda: {})
    for step in ("check_tools", "check_ports_free", "ensure_munge"):
        monkeypatch.setattr(lc, step, lambda: None)
    monkeypatch.setattr(lc, "_run", lambda argv, **kw: said.append(" ".join(argv)))
    monkeypatch.setattr(lc.gluster, "up", lambda: said.append("gluster up") or "gluster: up")
    monkeypatch.setattr(lc.gluster, "down", lambda: said.append("gluster down") or [])
    return lc, started, said


def test_up_brings_glusterfs_up_then_cephfs_then_the_nodes(tmp_path, monkeypatch):
    lc, started, said = _fresh(tmp_path, monkeypatch)
    monkeypatch.setattr(lc, "ceph_up", lambda: said.append("ceph up") or ("ceph: up", True))
    assert lc.up().splitlines() == ["gluster: up", "ceph: up",
                                    f"local cluster up: 4 idle nodes (SLURM_CONF={lc.conf})"]
    assert said[:4] == ["gluster up", "iperf3 up", "ceph up", "slurmctld -c"]
    assert said[-1] == "wait_ready"
    assert [argv[-1] for argv in started] == ["n1", "n2", "n3", "n4"]
    assert cluster.recorded_fs(lc.layout.state_dir) == BOTH


def test_up_whose_cephfs_fails_stops_the_glusterfs_it_brought_up(tmp_path, monkeypatch):
    lc, started, said = _fresh(tmp_path, monkeypatch)

    def ceph_fails():
        said.append("ceph up")
        raise cluster.ClusterError("ceph-mon did not answer within 60 s")
    monkeypatch.setattr(lc, "ceph_up", ceph_fails)
    with pytest.raises(cluster.ClusterError, match="^ceph-mon did not answer"):
        lc.up()
    assert said == ["gluster up", "iperf3 up", "ceph up", "iperf3 down", "gluster down"] and started == []
    assert not (lc.layout.state_dir / "fs").exists()


def test_wait_ready_waits_for_the_glusterfs_clients(tmp_path, monkeypatch):
    lc, _ = _cluster(tmp_path, monkeypatch, nodes=2)
    monkeypatch.setattr(lc, "node_states", lambda: {"n1": "idle", "n2": "idle"})
    asked = []
    monkeypatch.setattr(lc.gluster, "wait_connected", lambda nodes: asked.append(nodes))
    lc.wait_ready(5)
    assert asked == [["n1", "n2"]]


def test_status_adds_cephs_part(tmp_path, monkeypatch):
    lc, _ = _cluster(tmp_path, monkeypatch)
    monkeypatch.setattr(lc, "running_daemons", lambda: {"slurmctld": 10})
    monkeypatch.setattr(lc, "_run", lambda argv, **kw: subprocess.CompletedProcess(
        argv, 0, "n1 compute idle 4 2000\n", ""))
    monkeypatch.setattr(lc, "ceph_status", lambda: "ceph: mon.a (pid 5)")
    assert lc.status() == (0, "daemons: slurmctld (pid 10)\nn1 compute idle 4 2000\n"
                              "ceph: mon.a (pid 5)")


# -- the commands of one file system on a cluster with both ----------------------------

def _state(tmp_path, monkeypatch, fs=BOTH):
    monkeypatch.setenv("FSACCEPT_STATE_DIR", str(tmp_path / "state"))
    (tmp_path / "state" / "cluster").mkdir(parents=True)
    (tmp_path / "state" / "cluster" / "fs").write_text(fs + "\n")


def test_a_ceph_command_accepts_a_cluster_with_both(tmp_path, monkeypatch, capsys):
    _state(tmp_path, monkeypatch)
    assert cluster.main(["fail-osd", "7", "--port-base", str(PORT_BASE)]) == 2
    assert capsys.readouterr().err == "local-cluster: error: no OSD '7' in this lab (0-2)\n"


def test_the_quota_commands_accept_a_cluster_with_both(tmp_path, monkeypatch, capsys):
    _state(tmp_path, monkeypatch)
    monkeypatch.setenv("FSACCEPT_QUOTA_DIR", f"{GLUSTER_MP}/q")
    monkeypatch.setattr(gfs.Gluster, "quota_usage", lambda self, d: f"{len(d)} bytes")
    assert cluster.main(["quota-usage", "--port-base", str(PORT_BASE)]) == 0
    assert capsys.readouterr().out == f"{len(GLUSTER_MP) + 2} bytes\n"
    (tmp_path / "state" / "cluster" / "fs").write_text("cephfs\n")
    assert cluster.main(["quota-usage", "--port-base", str(PORT_BASE)]) == 2
    assert capsys.readouterr().err == (
        "local-cluster: error: quota-usage: the lab has quota commands for its GlusterFS "
        "volume only (this cluster: cephfs)\n")


@pytest.mark.parametrize("gluster, ceph, code", [(True, True, 0), (True, False, 1),
                                                 (False, True, 1)])
def test_healed_wants_both_healed_and_says_each(tmp_path, monkeypatch, capsys, gluster, ceph,
                                                code):
    _state(tmp_path, monkeypatch)
    monkeypatch.setattr(gfs.Gluster, "healed", lambda self: (gluster, f"gluster {gluster}"))
    monkeypatch.setattr(cluster.LocalCluster, "ceph_healed", lambda self: (ceph, f"ceph {ceph}"))
    assert cluster.main(["healed", "--port-base", str(PORT_BASE)]) == code
    assert capsys.readouterr().out == f"gluster {gluster}\nceph {ceph}\n"


@pytest.mark.parametrize("fs, killed", [(BOTH, ["gluster n2", "ceph n2"]),
                                        ("gluster", ["gluster n2"]), ("cephfs", ["ceph n2"]),
                                        ("none", ["gluster n2"])])
def test_fail_client_kills_the_nodes_client_of_each_file_system(tmp_path, monkeypatch, capsys,
                                                               fs, killed):
    _state(tmp_path, monkeypatch, fs)
    monkeypatch.setattr(gfs.Gluster, "kill_client", lambda self, n: f"gluster {n}")
    monkeypatch.setattr(cfs.Ceph, "kill_client", lambda self, n: f"ceph {n}")
    assert cluster.main(["fail-client", "n2", "--port-base", str(PORT_BASE)]) == 0
    assert capsys.readouterr().out.splitlines() == killed


def test_help_says_how_to_bring_up_both(capsys):
    with pytest.raises(SystemExit) as done:
        cluster.main(["--help"])
    assert done.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert out.startswith("usage: local-cluster")
    assert "`gluster,cephfs` both (every node mounts each, by a client of each" in out
