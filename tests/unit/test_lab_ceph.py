"""The pure parts of lab/ceph.py: the layout and its configuration, the parsing of what
Ceph 16.2 said (tests/data/ceph/, captured on the lab), the judgement of what is not
up, and the bad input ``up`` refuses before anything is created or started.  No test
here starts a daemon."""

import json
import os
import re
import socket
import subprocess
from pathlib import Path

import pytest

from lab.ceph import (MON_PORT, Ceph, CephError, CephLayout, healed, health_of,
                      parse_fs_status,
                      parse_status, problems)

DATA = Path(__file__).resolve().parents[1] / "data" / "ceph"


def text(name: str) -> str:
    return (DATA / name).read_text()


def captured(moment: str):
    return health_of(text(f"{moment}.status.json"), text(f"{moment}.fs-status.json"))


# -- the layout -------------------------------------------------------------------------

def test_the_default_layout_has_its_ports_after_glusters(tmp_path):
    lay = CephLayout(tmp_path)
    assert (lay.mon_port, lay.daemon_ports) == (17300, (17301, 17399))
    assert lay.mon_addr == "v2:127.0.0.1:17300"
    assert lay.mount_point == Path("/mnt/fsaccept-cephfs")
    assert (lay.osds, lay.osd_size, lay.replicas, lay.mds_ids) == (3, "2G", 3, ("a", "b"))
    assert lay.ports_needed == 1 + 4 * 3 + 2
    assert lay.daemons == [("mon", "a"), ("mgr", "x"), ("osd", "0"), ("osd", "1"),
                           ("osd", "2"), ("mds", "a"), ("mds", "b")]


def test_another_port_base_has_its_own_ports_and_mount_point(tmp_path):
    lay = CephLayout.for_port_base(tmp_path, 18000)
    assert (lay.mon_port, lay.daemon_ports) == (18300, (18301, 18399))
    assert lay.mount_point == Path("/mnt/fsaccept-cephfs-18000")
    assert CephLayout.for_port_base(tmp_path, 17000).mount_point == Path("/mnt/fsaccept-cephfs")


def test_every_daemon_has_its_data_and_pid_file_under_the_state_dir(tmp_path):
    lay = CephLayout(tmp_path)
    assert lay.data_dir("osd", 2) == tmp_path / "osd" / "osd.2"
    assert lay.pidfile("mds", "b") == tmp_path / "run" / "mds.b.pid"
    assert lay.pidfile("client", "n3") == tmp_path / "run" / "client.n3.pid"
    assert lay.daemon_argv("osd", 1) == ["ceph-osd", "-c", str(tmp_path / "ceph.conf"),
                                         "-i", "1"]


@pytest.mark.parametrize("kw, said", [
    (dict(port_base=80), "port base must be between 1024 and 65136, got 80"),
    (dict(port_base=65300), "port base must be between 1024 and 65136, got 65300"),
    (dict(osds=0), "osds must be between 1 and 8, got 0"),
    (dict(osds=9), "osds must be between 1 and 8, got 9"),
    (dict(osds=2), r"replicas must be between 1 and the number of OSDs \(2\), got 3"),
    (dict(replicas=0), r"replicas must be between 1 and the number of OSDs \(3\), got 0"),
    (dict(osd_size="512M"), "osd_size 512M is below 1G"),
    (dict(osd_size="2GB"), "osd_size '2GB' is not a size like 64M or 2G"),
    (dict(osd_size="2G; rm -rf /"), "osd_size '2G; rm -rf /' is not a size"),
    (dict(mds_cache=""), "mds_cache '' is not a size"),
    (dict(osd_memory_target="256M"), "osd_memory_target 256M is below Ceph 16.2's minimum"),
    (dict(data_pgs=12), "data_pgs must be a power of two up to 128, got 12"),
    (dict(metadata_pgs=0), "metadata_pgs must be a power of two up to 128, got 0"),
    (dict(mds_ids=("a", "a")), "MDS ids must be distinct single letters"),
    (dict(mds_ids=()), "MDS ids must be distinct single letters"),
    (dict(mds_ids=("a", "b;c")), "MDS ids must be distinct single letters")])
def test_a_bad_layout_is_refused_in_one_line(tmp_path, kw, said):
    port_base = kw.pop("port_base", 17000)
    with pytest.raises(CephError, match=f"^{said}"):
        CephLayout(tmp_path, port_base, **kw)


# -- the configuration --------------------------------------------------------------------

def conf_of(lay: CephLayout, fsid: str = "0c5c8a0e-7c2f-4b4f-9a57-8f2b8cf5e6a1") -> dict:
    """section -> {key: value} of the rendered ceph.conf."""
    sections: dict[str, dict[str, str]] = {}
    section = None
    for line in lay.render_conf(fsid).splitlines():
        if line.startswith("[") and line.endswith("]"):
            section = sections.setdefault(line[1:-1], {})
        elif "=" in line and not line.startswith("#"):
            key, value = (part.strip() for part in line.split("=", 1))
            assert key not in section, f"{key} set twice in [{section}]"
            section[key] = value
    return sections


def test_conf_keeps_the_monitor_and_daemons_on_ports_of_their_own(tmp_path):
    conf = conf_of(CephLayout.for_port_base(tmp_path, 18000))["global"]
    assert conf["fsid"] == "0c5c8a0e-7c2f-4b4f-9a57-8f2b8cf5e6a1"
    assert conf["mon host"] == "[v2:127.0.0.1:18300]"
    assert (conf["ms bind port min"], conf["ms bind port max"]) == ("18301", "18399")
    assert (conf["ms bind msgr1"], conf["public addr"]) == ("false", "127.0.0.1")


def test_conf_has_auth_none_and_no_path_outside_the_state_dir(tmp_path):
    lay = CephLayout(tmp_path / "ceph")
    conf = conf_of(lay)
    for key in ("auth cluster required", "auth service required", "auth client required"):
        assert conf["global"][key] == "none"
    paths = [v.split()[0] for s in conf.values() for v in s.values() if v.startswith("/")]
    assert len(paths) >= 10
    assert all(p.startswith(f"{tmp_path / 'ceph'}/") for p in paths), paths
    assert "/etc/ceph" not in lay.render_conf("x") and "/var/" not in lay.render_conf("x")


def test_conf_has_small_memory_targets_in_bytes(tmp_path):
    conf = conf_of(CephLayout(tmp_path, mds_cache="64M"))
    assert conf["osd"]["osd memory target"] == str(896 << 20)
    assert conf["osd"]["bluestore cache autotune"] == "false"
    assert conf["osd"]["bluestore cache size"] == str(64 << 20)
    assert conf["osd"]["bluestore block size"] == str(2 << 30)
    assert conf["osd"]["bluestore block create"] == "true"
    assert conf["mds"]["mds cache memory limit"] == str(64 << 20)
    assert conf["mon"]["mon memory target"] == str(256 << 20)
    assert conf["global"]["rocksdb cache size"] == str(64 << 20)


def test_conf_places_replicas_on_osds_of_one_host(tmp_path):
    conf = conf_of(CephLayout(tmp_path, osds=4, replicas=2))["global"]
    assert conf["osd crush chooseleaf type"] == "0"
    assert conf["osd pool default size"] == "2"
    assert conf["osd pool default pg autoscale mode"] == "off"


# -- clients ----------------------------------------------------------------------------

def test_client_argv_names_the_node_and_its_pid_file(tmp_path):
    lay = CephLayout(tmp_path)
    assert lay.client_argv("n2") == [
        "ceph-fuse", "-c", str(tmp_path / "ceph.conf"), "--id", "n2",
        f"--pid-file={tmp_path / 'run' / 'client.n2.pid'}",
        f"--admin-socket={tmp_path / 'run' / 'client.n2.asok'}", "/mnt/fsaccept-cephfs"]
    assert lay.client_argv("login", Path("/tmp/x"))[-1] == "/tmp/x"


@pytest.mark.parametrize("node", ["", "n1;rm -rf /", "../n1", "n 1", "-n1", "x" * 33, "n1\n"])
def test_a_client_name_that_is_no_node_name_is_refused(tmp_path, node):
    with pytest.raises(CephError, match="is not a node name"):
        CephLayout(tmp_path).client_argv(node)


def test_node_wrapper_mounts_the_file_system_in_a_namespace_of_its_own(tmp_path):
    lay = CephLayout.for_port_base(tmp_path, 18000)
    argv = lay.node_wrapper("n2")
    assert argv[:7] == ["unshare", "-m", "--propagation", "slave", "--", "sh", "-c"]
    assert argv[8:] == ["fsaccept-node", "/mnt/fsaccept-cephfs-18000",
                        *lay.client_argv("n2")[:-1]]
    assert "fuse.ceph-fuse" in argv[7]


def _run_wrapper(tmp_path, argv):
    """The wrapper's shell script, run with stubs for umount, ceph-fuse and findmnt that
    record their arguments (one line each), then the node's command (echo)."""
    calls = tmp_path / "calls"
    stubs = tmp_path / "bin"
    stubs.mkdir()
    for name, out in (("umount", ""), ("ceph-fuse", ""), ("findmnt", "fuse.ceph-fuse")):
        echo = f'echo "{out}"\n' if out else ""
        (stubs / name).write_text(f'#!/bin/sh\necho "{name} $*" >> {calls}\n{echo}')
        (stubs / name).chmod(0o755)
    proc = subprocess.run(["sh", "-c", *argv[7:], "echo", "slurmd", "-N", "n2; x"],
                          capture_output=True, text=True, timeout=30,
                          env=dict(os.environ, PATH=f"{stubs}:{os.environ['PATH']}"))
    return proc, calls.read_text().splitlines()


def test_node_wrapper_runs_ceph_fuse_then_the_nodes_command_with_its_arguments(tmp_path):
    lay = CephLayout.for_port_base(tmp_path / "state dir", 18000)
    proc, calls = _run_wrapper(tmp_path, lay.node_wrapper("n2"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "slurmd -N n2; x\n"
    assert calls[0] == "umount -l /mnt/fsaccept-cephfs-18000"
    assert calls[1] == " ".join(lay.client_argv("n2"))  # the stub says its name first
    assert calls[2].startswith("findmnt -n -o FSTYPE -M /mnt/fsaccept-cephfs-18000")


def test_node_wrapper_without_mount_leaves_the_bare_directory(tmp_path):
    proc, calls = _run_wrapper(tmp_path, CephLayout(tmp_path).node_wrapper("n3", mount=False))
    assert proc.stdout == "slurmd -N n2; x\n"
    assert calls == ["umount -l /mnt/fsaccept-cephfs"]


# -- what Ceph said (captures of Ceph 16.2.15 on the lab) ------------------------------------

def test_a_whole_cluster_is_read_and_has_no_problem(tmp_path):
    health = captured("healthy")
    assert (health.status, health.checks) == ("HEALTH_OK", {})
    assert (health.osds, health.osds_up, health.osds_in) == (3, 3, 3)
    assert health.pgs == {"active+clean": 25} and health.num_pgs == 25
    assert health.all_pgs_active_clean and health.mgr_available
    assert (health.active_mds, health.standby_mds, health.other_mds) == ({0: "b"}, ["a"], {})
    assert problems(health, CephLayout(tmp_path)) == []


def test_an_osd_down_names_the_osds_and_the_pgs_not_clean(tmp_path):
    health = captured("osd-down")
    assert (health.osds, health.osds_up, health.osds_in) == (3, 2, 3)
    assert health.degraded_ratio == pytest.approx(13 / 135)
    assert not health.all_pgs_active_clean
    said = problems(health, CephLayout(tmp_path))
    assert said[0].startswith("HEALTH_WARN (OSD_DOWN: 1 osds down; PG_DEGRADED: Degraded "
                              "data redundancy: 13/135 objects degraded")
    assert said[1:] == ["OSDs: 2 up and 3 in of 3 (3 expected)",
                        "PGs not all active+clean: 4 active+undersized, 5 "
                        "active+undersized+degraded, 5 stale+active+clean"]


def test_a_restarted_osd_is_up_but_its_pgs_are_not_clean_yet(tmp_path):
    health = captured("osd-recovering")
    assert (health.osds_up, health.degraded_ratio) == (3, pytest.approx(1 / 3))
    assert [p for p in problems(health, CephLayout(tmp_path)) if p.startswith("PGs")] == [
        "PGs not all active+clean: 6 active+undersized, 19 active+undersized+degraded"]


def test_a_killed_mds_still_reads_active_until_the_monitor_misses_its_beacons(tmp_path):
    """1 s after SIGKILL of the active MDS, Ceph still says HEALTH_OK and the MDS active."""
    health = captured("mds-killed")
    assert health.active_mds == {0: "b"} and problems(health, CephLayout(tmp_path)) == []


def test_the_quorum_age_says_when_a_takeover_may_happen():
    """Killed at a quorum 39 s old, the MDS was replaced once it was 60 s old
    (mds_beacon_mon_down_grace), not 15 s after its last beacon."""
    assert captured("mds-killed").quorum_age == 39
    assert captured("mds-replay").quorum_age == 60
    assert captured("mds-failed-over").quorum_age == 69


@pytest.mark.parametrize("moment, state", [("mds-replay", "reconnect"),
                                           ("mds-rejoin", "rejoin")])
def test_a_rank_taken_over_is_named_with_its_state(tmp_path, moment, state):
    health = captured(moment)
    assert (health.active_mds, health.other_mds, health.standby_mds) == ({}, {"a": state}, [])
    said = problems(health, CephLayout(tmp_path))
    assert "0 active MDS, 1 expected" in said and f"MDS a {state}" in said
    assert "0 standby MDS (none), 1 expected" in said


def test_a_laggy_active_mds_is_not_active():
    health = captured("mds-laggy")
    assert health.status == "HEALTH_OK"
    assert (health.active_mds, health.other_mds) == ({}, {"a": "active(laggy)"})


def test_after_a_failover_the_missing_standby_is_named(tmp_path):
    health = captured("mds-failed-over")
    assert health.active_mds == {0: "a"} and health.standby_mds == []
    assert problems(health, CephLayout(tmp_path)) == [
        "HEALTH_WARN (MDS_INSUFFICIENT_STANDBY: insufficient standby MDS daemons available)",
        "0 standby MDS (none), 1 expected"]


def test_the_global_id_warning_of_auth_none_is_a_problem_the_conf_turns_off(tmp_path):
    """Ceph 16.2 raises it with auth none too: the lab's conf turns the warning off."""
    said = parse_status(text("insecure-reclaim.status.json"))
    assert said["checks"] == {"AUTH_INSECURE_GLOBAL_ID_RECLAIM_ALLOWED":
                              "mon is allowing insecure global_id reclaim"}
    conf = conf_of(CephLayout(tmp_path))["global"]
    assert conf["mon warn on insecure global id reclaim allowed"] == "false"


def test_an_older_nested_osdmap_is_read_too():
    data = json.loads(text("healthy.status.json"))
    data["osdmap"] = {"osdmap": data["osdmap"]}
    assert parse_status(json.dumps(data))["osds_up"] == 3


def test_every_capture_reads():
    names = sorted(p.name for p in DATA.glob("*.json"))
    assert len(names) >= 20
    for name in names:
        if name.endswith(".status.json"):
            parse_status(text(name))
        elif name.endswith(".fs-status.json"):
            parse_fs_status(text(name))


# -- hostile input: a clear message naming the command and key ---------------------------------

def _spoiled(edit) -> str:
    data = json.loads(text("osd-down.status.json"))
    edit(data)
    return json.dumps(data)


@pytest.mark.parametrize("spoil, said", [
    ("", "not JSON"),
    ("\x00\xff\xfe binary", "not JSON"),
    ("[]", "not a JSON dict but list"),
    ("null", "not a JSON dict but NoneType"),
    ('{"health": {"status": "HEALTH_OK"}, "health": {}}', "key 'health' given twice"),
    ("[" * 100000, "not JSON"),
    ('{"health": {"status": "HEALTH_OK", "checks": {}}}', "no key 'osdmap'"),
    ('{"health": {"status": "HEALTH_OK", "checks": {}}, "osdmap": {"num_osds": 0, '
     '"num_up_osds": 0, "num_in_osds": 0}, "pgmap": {"pgs_by_state": [], "num_pgs": 0}}',
     "no key 'quorum_age'"),
    ('{"health": {"status": "HEALTH_FINE", "checks": {}}}', "'health.status' is 'HEALTH_FINE'"),
    ('{"health": {"status": 1, "checks": {}}}', "'health.status' is 1, not str")])
def test_what_is_not_ceph_status_is_refused_naming_it(spoil, said):
    with pytest.raises(CephError, match=f"^ceph status --format json: .*{re.escape(said)}"):
        parse_status(spoil)


def test_a_cut_short_capture_is_refused():
    full = text("osd-down.status.json")
    for cut in (1, len(full) // 3, len(full) // 2, len(full) - 2):
        with pytest.raises(CephError, match="not JSON"):
            parse_status(full[:cut])


@pytest.mark.parametrize("edit, said", [
    (lambda d: d["osdmap"].update(num_up_osds=-1), "'osdmap.num_up_osds' is -1, below zero"),
    (lambda d: d["osdmap"].update(num_up_osds=True), "'osdmap.num_up_osds' is True, not int"),
    (lambda d: d["osdmap"].update(num_in_osds=2.5), "'osdmap.num_in_osds' is 2.5, not int"),
    (lambda d: d["osdmap"].update(num_up_osds=4), "4 OSDs up and 3 in of 3"),
    (lambda d: d["pgmap"].update(num_pgs=26), "counts 25 PGs, 'pgmap.num_pgs' 26"),
    (lambda d: d["pgmap"].update(degraded_ratio=float("nan")), "'pgmap.degraded_ratio' is nan"),
    (lambda d: d["pgmap"].update(degraded_ratio=float("inf")), "'pgmap.degraded_ratio' is inf"),
    (lambda d: d["pgmap"].update(degraded_ratio=-0.1), "'pgmap.degraded_ratio' is -0.1"),
    (lambda d: d["pgmap"]["pgs_by_state"].append("x"), "'pgmap.pgs_by_state' holds 'x'"),
    (lambda d: d["pgmap"]["pgs_by_state"][0].pop("count"), "no key 'count'"),
    (lambda d: d.pop("pgmap"), "no key 'pgmap.pgs_by_state'")])
def test_impossible_figures_are_refused_naming_the_key(edit, said):
    with pytest.raises(CephError, match=re.escape(said)):
        parse_status(_spoiled(edit))


@pytest.mark.parametrize("mdsmap, said", [
    ("{}", "no key 'mdsmap'"),
    ('{"mdsmap": {}}', "'mdsmap' is {}, not list"),
    ('{"mdsmap": [1]}', "'mdsmap' holds 1"),
    ('{"mdsmap": [{"name": "a"}]}', "no key 'state'"),
    ('{"mdsmap": [{"state": "standby"}]}', "a standby MDS without a name"),
    ('{"mdsmap": [{"name": "a", "state": "active"}]}', "no key 'rank'"),
    ('{"mdsmap": [{"name": "a", "rank": -1, "state": "active"}]}', "MDS rank -1 is below zero"),
    ('{"mdsmap": [{"rank": 0, "state": "active"}]}', "active rank 0 has no MDS name"),
    ('{"mdsmap": [{"name": "a", "rank": 0, "state": "active"}, '
     '{"name": "b", "rank": 0, "state": "active"}]}', "MDS rank 0 (b) is listed twice")])
def test_what_is_not_ceph_fs_status_is_refused_naming_it(mdsmap, said):
    with pytest.raises(CephError, match=f"^ceph fs status --format json: .*{re.escape(said)}"):
        parse_fs_status(mdsmap)


def test_a_rank_no_mds_holds_is_named_by_its_rank():
    said = parse_fs_status('{"mdsmap": [{"rank": 0, "state": "failed"}]}')
    assert said == {"active_mds": {}, "standby_mds": [], "other_mds": {"rank 0": "failed"}}


# -- bad input to `up`: refused before anything is created or started -------------------------

def test_no_dev_fuse_is_refused_and_nothing_is_created(tmp_path, monkeypatch):
    monkeypatch.setattr("lab.ceph.shutil.which", lambda tool: f"/usr/bin/{tool}")
    lay = CephLayout(tmp_path / "ceph", 18900)
    with pytest.raises(CephError, match=f"^{tmp_path / 'nofuse'} does not exist: ceph-fuse "
                                        "needs FUSE"):
        Ceph(lay, fuse_device=tmp_path / "nofuse").up()
    assert not lay.state_dir.exists()


def test_a_missing_ceph_program_is_refused_naming_its_package(tmp_path, monkeypatch):
    monkeypatch.setattr("lab.ceph.shutil.which",
                        lambda tool: None if tool == "ceph-mds" else f"/usr/bin/{tool}")
    lay = CephLayout(tmp_path / "ceph", 18900)
    with pytest.raises(CephError, match=r"^ceph-mds not found \(Debian package ceph-mds\): "
                                        "run scripts/setup$"):
        Ceph(lay).up()
    assert not lay.state_dir.exists()


def test_a_monitor_port_in_use_is_refused_and_nothing_is_created(tmp_path):
    with socket.socket() as theirs:  # stands for a ceph-mon fsaccept did not start
        # A port the system gives (free now), never a fixed one: a cluster of the
        # integration lanes may hold any fixed port.
        theirs.bind(("127.0.0.1", 0))
        theirs.listen()
        lay = CephLayout(tmp_path / "ceph", theirs.getsockname()[1] - MON_PORT)
        assert lay.mon_port == theirs.getsockname()[1]
        ceph = Ceph(lay)
        ceph.check_prerequisites = lambda: None  # not the point here
        with pytest.raises(CephError, match=f"^port {lay.mon_port} \\(for ceph-mon\\) is "
                                            "already in use"):
            ceph.up()
    assert not lay.state_dir.exists()


def test_a_monitor_this_lab_did_not_make_is_refused_and_left_alone(tmp_path):
    lay = CephLayout(tmp_path / "ceph", 18900)
    theirs = lay.data_dir("mon", "a")
    theirs.mkdir(parents=True)
    (theirs / "store.db").write_text("theirs")
    ceph = Ceph(lay)
    ceph.check_prerequisites = lambda: None
    ceph.check_ports_free = lambda: None
    with pytest.raises(CephError, match=f"^{theirs} exists but {lay.fsid_path} does not"):
        ceph.up()
    assert (theirs / "store.db").read_text() == "theirs"
    assert not lay.conf_path.exists()


def test_down_with_nothing_running_stops_nothing(tmp_path):
    lay = CephLayout(tmp_path / "ceph", 18900)
    lay.run_dir.mkdir(parents=True)
    (lay.pidfile("osd", 0)).write_text(f"{os.getpid()}\n")  # a pid that is not ceph-osd
    assert Ceph(lay).down() == []


@pytest.mark.parametrize("pid, stopped", [(4242, True), (None, False)])
def test_a_client_that_ends_on_its_own_once_unmounted_is_said_stopped(tmp_path, monkeypatch,
                                                                      pid, stopped):
    """ceph-fuse ends by itself once its mount is gone, often before ``stop`` finds it:
    it ran, so `down` names it."""
    ceph = Ceph(CephLayout(tmp_path / "ceph", 18900))
    ceph.layout.run_dir.mkdir(parents=True)
    monkeypatch.setattr(ceph, "client_pid", lambda node: pid)
    monkeypatch.setattr(ceph, "stop", lambda *a, **kw: None)  # gone before it was stopped
    assert ceph.unmount("login") is stopped


# -- healed: the degraded mode's `healed` (scripts/local-cluster healed) -------------------

@pytest.mark.parametrize("moment, done, said", [
    ("healthy", True, "ceph: healed: 25 of 25 PGs active+clean, MDS b active, a standby"),
    # 1 s after the kill the monitor has not noticed: nothing tells it apart from healthy.
    ("mds-killed", True, "ceph: healed: 25 of 25 PGs active+clean, MDS b active, a standby"),
    ("mds-failed-over", False, "ceph: not healed: 0 standby MDS, 1 expected"),
    ("mds-replay", False, "ceph: not healed: MDS a reconnect; 0 standby MDS, 1 expected"),
    ("osd-recovering", False, "ceph: not healed: 0 of 25 PGs active+clean"),
    ("osd-down", False, "ceph: not healed: 11 of 25 PGs active+clean"),
    # Both MDS killed: the map still shows one, laggy, and the other as its standby.
    ("mds-laggy", False, "ceph: not healed: MDS a active(laggy), b standby"),
])
def test_healed_wants_every_pg_clean_and_an_mds_active_with_its_standby(tmp_path, moment,
                                                                         done, said):
    assert healed(captured(moment), CephLayout(tmp_path)) == (done, said)


def test_healed_names_both_the_pgs_and_the_mds_left(tmp_path):
    health = captured("osd-recovering")
    failed_over = captured("mds-failed-over")
    both = type(health)(**{**health.__dict__, "active_mds": {}, "standby_mds": [],
                           "other_mds": failed_over.active_mds and {"a": "replay"}})
    assert healed(both, CephLayout(tmp_path)) == (
        False, "ceph: not healed: 0 of 25 PGs active+clean; MDS a replay; "
               "0 standby MDS, 1 expected")


# -- scripts/local-cluster --fs cephfs (lab/cluster.py) ---------------------------------

def test_the_clusters_ceph_follows_its_port_base_and_state_dir(tmp_path):
    from lab import cluster
    lay = cluster.ceph_layout(cluster.ClusterLayout(tmp_path / "cluster", port_base=19000,
                                                    fs="cephfs"))
    assert lay.state_dir == tmp_path / "ceph" and lay.port_base == 19000
    assert lay.mount_point == Path("/mnt/fsaccept-cephfs-19000")
    default = cluster.ceph_layout(cluster.ClusterLayout(tmp_path / "cluster", port_base=17000,
                                                        fs="cephfs"))
    assert default.mount_point == Path("/mnt/fsaccept-cephfs")


def test_each_nodes_slurmd_starts_behind_its_own_ceph_fuse(tmp_path, monkeypatch):
    from lab import cluster
    layout = cluster.ClusterLayout(tmp_path / "cluster", port_base=19000, fs="cephfs")
    (tmp_path / "cluster" / "log").mkdir(parents=True)
    started = []
    monkeypatch.setattr(cluster.subprocess, "Popen", lambda argv, **kw: started.append(argv))
    monkeypatch.setattr(cluster.LocalCluster, "_live_pid", staticmethod(lambda f, e: 1))
    lc = cluster.LocalCluster(layout)
    lc.start_slurmd("n2")
    lc.start_slurmd("n3", mount=False)
    wrapper = cluster.ceph_layout(layout).node_wrapper
    assert started[0][:len(wrapper("n2"))] == wrapper("n2")
    assert started[1][:len(wrapper("n3", mount=False))] == wrapper("n3", mount=False)
    assert started[0][-4:] == ["slurmd", "-D", "-N", "n2"]


@pytest.mark.parametrize("argv, recorded, said", [
    (["fail-mds"], "none", "fail-mds needs a cluster brought up with --fs cephfs"),
    (["fail-osd", "1"], "gluster", "fail-osd needs a cluster brought up with --fs cephfs"),
    (["restore"], "none", "restore needs a cluster brought up with --fs cephfs"),
    (["fail-osd"], "cephfs", "fail-osd needs an OSD number, e.g. `local-cluster fail-osd 1`"),
    (["fail-osd", "7"], "cephfs", "no OSD '7' in this lab (0-2)"),
    (["fail-osd", "1;rm -rf /"], "cephfs", "no OSD '1;rm -rf /' in this lab (0-2)"),
])
def test_a_ceph_fault_command_that_cannot_apply_is_one_line_and_exit_2(
        tmp_path, monkeypatch, capsys, argv, recorded, said):
    from lab import cluster
    monkeypatch.setenv("FSACCEPT_STATE_DIR", str(tmp_path / "state"))
    (tmp_path / "state" / "cluster").mkdir(parents=True)
    (tmp_path / "state" / "cluster" / "fs").write_text(recorded + "\n")
    assert cluster.main([*argv, "--port-base", "19000"]) == 2
    assert capsys.readouterr().err == f"local-cluster: error: {said}\n"
    assert sorted(p.name for p in (tmp_path / "state" / "cluster").iterdir()) == [
        "fs", "local-cluster.lock"]


def test_down_of_a_cephfs_cluster_that_never_ran_stops_nothing(tmp_path, monkeypatch, capsys):
    from lab import cluster
    monkeypatch.setenv("FSACCEPT_STATE_DIR", str(tmp_path / "state"))
    (tmp_path / "state" / "cluster").mkdir(parents=True)
    (tmp_path / "state" / "cluster" / "fs").write_text("cephfs\n")
    assert cluster.main(["down", "--port-base", "19000"]) == 0
    assert capsys.readouterr().out == "local cluster: nothing running\n"
    assert not (tmp_path / "state" / "ceph").exists()
    assert cluster.main(["status", "--port-base", "19000"]) == 3


def test_fail_client_on_cephfs_names_the_node_whose_ceph_fuse_is_not_running(
        tmp_path, monkeypatch, capsys):
    from lab import cluster
    monkeypatch.setenv("FSACCEPT_STATE_DIR", str(tmp_path / "state"))
    (tmp_path / "state" / "cluster").mkdir(parents=True)
    (tmp_path / "state" / "cluster" / "fs").write_text("cephfs\n")
    assert cluster.main(["fail-client", "n2", "--port-base", "19000"]) == 2
    assert capsys.readouterr().err == ("local-cluster: error: no running ceph-fuse for "
                                       "node 'n2'\n")


def test_down_gives_back_the_osds_block_files_and_the_next_up_makes_them_anew(
        tmp_path, monkeypatch, capsys):
    """BlueStore on a file never returns what is deleted: after two CephFS runs
    .state/ceph/osd held 24 GB and `down` gave none back.  Once every daemon has stopped,
    `down` removes what `up` made to hold data (each daemon's data directory, the fsid);
    the configuration and logs stay, and a directory that is not ours is left alone."""
    from lab import cluster
    monkeypatch.setenv("FSACCEPT_STATE_DIR", str(tmp_path / "state"))
    (tmp_path / "state" / "cluster").mkdir(parents=True)
    (tmp_path / "state" / "cluster" / "fs").write_text("cephfs\n")
    ceph = tmp_path / "state" / "ceph"
    for d in ("mon/mon.a", "osd/osd.0", "osd/osd.1", "osd/osd.2", "run", "log"):
        (ceph / d).mkdir(parents=True)
    for i in range(3):
        with open(ceph / "osd" / f"osd.{i}" / "block", "wb") as f:
            f.write(b"\1" * (1 << 20))  # allocated, as BlueStore leaves it
    (ceph / "fsid").write_text("f\n")
    (ceph / "log" / "osd.0.log").write_text("kept\n")
    (ceph / "osd" / "not-ours").mkdir()
    assert cluster.main(["down", "--port-base", "19000"]) == 0
    out = capsys.readouterr().out
    assert "the CephFS's data (3 MiB given back; the next up makes it anew)" in out, out
    assert sorted(p.relative_to(ceph).as_posix() for p in ceph.rglob("*")) == [
        "log", "log/osd.0.log", "osd", "osd/not-ours", "run"]


def test_down_keeps_the_data_of_a_daemon_still_running(tmp_path):
    layout = CephLayout(tmp_path / "ceph")
    block = layout.data_dir("osd", 0) / "block"
    block.parent.mkdir(parents=True)
    block.write_bytes(b"x")
    lab = Ceph(layout)
    lab.pid = lambda kind, ident: 4242 if (kind, ident) == ("osd", "0") else None
    assert lab.discard() == 0 and block.exists()


def test_the_mds_purges_deleted_files_fast_enough_for_the_next_run(tmp_path):
    """A main job's removed datasets are purged before the next one's capacity guard."""
    conf = conf_of(CephLayout(tmp_path))["mds"]
    assert float(conf["mds max purge ops per pg"]) * CephLayout(tmp_path).data_pgs >= 64
    assert int(conf["mds max purge files"]) >= 1024
