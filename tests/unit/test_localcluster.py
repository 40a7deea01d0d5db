
import pytest

from lab import cluster
from lab.cluster import (ClusterError, ClusterLayout, directories, node_count_in_conf,
                         parse_sinfo_states, record_fs, recorded_fs, render_slurm_conf)


def conf_lines(layout):
    return render_slurm_conf(layout).splitlines()


def test_conf_declares_nodes_with_distinct_ports_on_loopback(tmp_path):
    lines = conf_lines(ClusterLayout(tmp_path, nodes=4, port_base=17000))
    assert ("NodeName=n[1-4] NodeHostname=localhost NodeAddr=127.0.0.1 "
            "Port=[17001-17004] CPUs=4 RealMemory=2000 State=UNKNOWN") in lines
    assert "PartitionName=compute Nodes=n[1-4] Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO" in lines
    assert "SlurmctldPort=17000" in lines


def test_conf_has_per_node_spool_and_tmpfs_and_the_settings_pmix_needs(tmp_path):
    lines = conf_lines(ClusterLayout(tmp_path))
    for expected in [f"SlurmdSpoolDir={tmp_path}/spool/%n", f"TmpFS={tmp_path}/tmp/%n",
                     f"SlurmdPidFile={tmp_path}/slurmd-%n.pid",
                     "MpiDefault=pmix", "SlurmdParameters=config_overrides",
                     "ProctrackType=proctrack/pgid", "SelectType=select/cons_tres",
                     "AuthType=auth/munge"]:
        assert expected in lines


def test_conf_runs_an_epilog_so_that_a_held_job_starts_when_the_one_ahead_ends(tmp_path):
    # Slurm 22.05 schedules at once on a node's epilog-complete message, sent only when
    # an epilog runs; otherwise on its once-a-second pass (docs/dev/emulated-cluster.md).
    lines = conf_lines(ClusterLayout(tmp_path))
    assert "Epilog=/bin/true" in lines and "SchedulerParameters=batch_sched_delay=0" in lines


def test_single_node_conf_uses_plain_names(tmp_path):
    text = render_slurm_conf(ClusterLayout(tmp_path, nodes=1, port_base=20000))
    assert "NodeName=n1 " in text and "Port=20001 " in text
    assert node_count_in_conf(text) == 1


@pytest.mark.parametrize("nodes", [1, 4, 10])
def test_node_count_round_trips_through_the_conf(tmp_path, nodes):
    assert node_count_in_conf(render_slurm_conf(ClusterLayout(tmp_path, nodes=nodes))) == nodes


@pytest.mark.parametrize("nodes", [0, -1, 65])
def test_bad_node_count_is_refused_with_the_value(tmp_path, nodes):
    with pytest.raises(ClusterError, match=f"--nodes must be between 1 and 64, got {nodes}"):
        ClusterLayout(tmp_path, nodes=nodes)


def test_bad_port_base_is_refused(tmp_path):
    with pytest.raises(ClusterError, match="--port-base"):
        ClusterLayout(tmp_path, port_base=80)


@pytest.mark.parametrize("fs", ["none", "gluster"])
def test_a_port_base_is_refused_where_cephs_ports_would_pass_65535(tmp_path, fs):
    # Every cluster has Ceph's layout (`down` stops what an `up --fs cephfs` started).
    ClusterLayout(tmp_path, fs=fs, port_base=65535 - 399)
    with pytest.raises(ClusterError, match="^--port-base must be between 1024 and 65136, "
                                           "got 65137$"):
        ClusterLayout(tmp_path, fs=fs, port_base=65535 - 398)


def test_ports_name_their_daemons(tmp_path):
    assert ClusterLayout(tmp_path, nodes=2, port_base=17000).ports == {
        17000: "slurmctld", 17001: "slurmd n1", 17002: "slurmd n2",
        17100: "slurmdbd", 17101: "mariadbd"}
    assert ClusterLayout(tmp_path, nodes=2, port_base=17000, accounting="none").ports == {
        17000: "slurmctld", 17001: "slurmd n1", 17002: "slurmd n2"}


def test_accounting_ports_stay_clear_of_the_largest_cluster_and_the_bricks(tmp_path):
    layout = ClusterLayout(tmp_path, nodes=64, port_base=17000)
    assert len(layout.ports) == 1 + 64 + 2
    assert max(p for p, who in layout.ports.items() if who.startswith("slurmd ")) < 17100
    assert max(layout.ports) < 17000 + 200  # GlusterFS's bricks: port_base + 200...


def test_conf_sends_job_records_to_slurmdbd_and_starts_past_the_last_job(tmp_path):
    layout = ClusterLayout(tmp_path / "cluster", port_base=17000)
    lines = render_slurm_conf(layout, first_job_id=242).splitlines()
    for expected in ["AccountingStorageType=accounting_storage/slurmdbd",
                     "AccountingStorageHost=localhost", "AccountingStoragePort=17100",
                     "AccountingStorageEnforce=associations", "FirstJobId=242",
                     "JobAcctGatherType=jobacct_gather/linux"]:
        assert expected in lines
    assert layout.accounting_layout.state_dir == tmp_path / "accounting"
    assert layout.accounting_layout.dbd_conf == tmp_path / "cluster" / "slurmdbd.conf"


def test_conf_without_accounting_has_none(tmp_path):
    lines = conf_lines(ClusterLayout(tmp_path, accounting="none"))
    assert "AccountingStorageType=accounting_storage/none" in lines
    assert not [line for line in lines if line.startswith(("FirstJobId", "AccountingStorageHost"))]


def test_unknown_accounting_is_refused_with_the_choices(tmp_path):
    with pytest.raises(ClusterError, match="--accounting 'mysql' is not known: one of "
                                           "slurmdbd, none"):
        ClusterLayout(tmp_path, accounting="mysql")


def test_every_per_node_directory_is_created_before_start(tmp_path):
    dirs = directories(ClusterLayout(tmp_path, nodes=2))
    for name in ["n1", "n2"]:
        assert tmp_path / "spool" / name in dirs
        assert tmp_path / "tmp" / name in dirs
    assert tmp_path / "log" in dirs and tmp_path / "ctld" in dirs


def test_sinfo_states_are_parsed_per_node():
    assert parse_sinfo_states("n1 idle\nn2 allocated\n\nn3 down*\n") == {
        "n1": "idle", "n2": "allocated", "n3": "down*"}


# -- --fs: one file system, or a set of them ------------------------------------------

@pytest.mark.parametrize("given, canonical, file_systems", [
    ("none", "none", ()),
    ("gluster", "gluster", ("gluster",)),
    ("cephfs", "cephfs", ("cephfs",)),
    ("gluster,cephfs", "gluster,cephfs", ("gluster", "cephfs")),
    ("cephfs,gluster", "gluster,cephfs", ("gluster", "cephfs")),
    ("cephfs, gluster", "gluster,cephfs", ("gluster", "cephfs"))])
def test_fs_is_a_set_kept_in_one_order(tmp_path, given, canonical, file_systems):
    layout = ClusterLayout(tmp_path, fs=given)
    assert (layout.fs, layout.file_systems) == (canonical, file_systems)
    assert layout == ClusterLayout(tmp_path, fs=canonical)  # the same cluster


@pytest.mark.parametrize("given, said", [
    ("lustre", "--fs 'lustre' is not known: one of none, gluster, cephfs"),
    ("gluster,lustre", "--fs 'lustre' is not known: one of none, gluster, cephfs "
                       "(in --fs 'gluster,lustre')"),
    ("gluster,", "--fs '' is not known: one of none, gluster, cephfs (in --fs 'gluster,')"),
    ("", "--fs '' is not known: one of none, gluster, cephfs"),
    ("gluster,gluster", "--fs 'gluster,gluster' names 'gluster' twice"),
    ("cephfs,gluster,cephfs", "--fs 'cephfs,gluster,cephfs' names 'cephfs' twice"),
    ("none,none", "--fs 'none,none' names 'none' twice"),
    ("none,gluster", "--fs 'none,gluster': none cannot be combined with a file system"),
    ("cephfs,none", "--fs 'cephfs,none': none cannot be combined with a file system")])
def test_a_bad_fs_is_refused_naming_it(tmp_path, given, said):
    with pytest.raises(ClusterError) as caught:
        ClusterLayout(tmp_path, fs=given)
    assert str(caught.value) == said


def test_a_bad_fs_set_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FSACCEPT_STATE_DIR", str(tmp_path / "state"))
    assert cluster.main(["status", "--fs", "gluster,gluster"]) == 2
    assert capsys.readouterr().err == ("local-cluster: error: --fs 'gluster,gluster' "
                                       "names 'gluster' twice\n")


@pytest.mark.parametrize("given, recorded", [("none", "none"), ("gluster", "gluster"),
                                             ("cephfs", "cephfs"),
                                             ("cephfs,gluster", "gluster,cephfs")])
def test_the_recorded_fs_is_the_canonical_set(tmp_path, given, recorded):
    record_fs(tmp_path, given)
    assert (tmp_path / "fs").read_text() == recorded + "\n"
    assert recorded_fs(tmp_path) == recorded
    assert ClusterLayout(tmp_path, fs=recorded_fs(tmp_path)).fs == recorded


def test_a_recorded_fs_written_in_another_order_reads_canonical(tmp_path):
    assert recorded_fs(tmp_path) == "none"  # nothing recorded yet
    (tmp_path / "fs").write_text("cephfs,gluster\n")
    assert recorded_fs(tmp_path) == "gluster,cephfs"
    (tmp_path / "fs").write_text("lustre\n")  # as it is: the layout refuses it
    assert recorded_fs(tmp_path) == "lustre"


@pytest.mark.parametrize("fs, said", [
    ("none", "none"), ("cephfs", "cephfs"), ("gluster", "gluster (replica, 256M bricks)"),
    ("gluster,cephfs", "gluster (replica, 256M bricks) and cephfs")])
def test_a_restart_names_each_file_system(fs, said):
    assert cluster.LocalCluster.fs_name(fs, "replica", "256M") == said


# -- ports: every owner's, for the same port base ----------------------------------------

def test_every_owner_of_a_port_is_listed_with_both_file_systems(tmp_path):
    layout = ClusterLayout(tmp_path / "cluster", nodes=64, port_base=17000, fs="gluster,cephfs")
    assert layout.port_ranges == {
        "slurmctld": (17000, 17000), "slurmd": (17001, 17064), "slurmdbd": (17100, 17100),
        "mariadbd": (17101, 17101), "GlusterFS bricks": (17200, 17299), "iperf3 servers": (17136, 17199),
        "ceph-mon": (17300, 17300), "Ceph daemons": (17301, 17399)}
    # `up` finds Slurm's free first; GlusterFS and Ceph check their own.
    assert set(layout.ports.values()) == {"slurmctld", "slurmdbd", "mariadbd",
                                          *(f"slurmd n{i}" for i in range(1, 65))}


def test_no_port_base_gives_two_owners_one_port(tmp_path):
    """Port bases Ceph takes (its ports end at + 399: up to 65136), the largest cluster
    with both file systems: refused only where glusterd's fixed port would be a Slurm
    daemon's.  Every range follows the port base; only that port does not (all near it)."""
    refused = []
    for port_base in sorted({*range(1024, 65136, 97), 65136, *range(23500, 24500)}):
        try:
            layout = ClusterLayout(tmp_path, nodes=64, port_base=port_base, fs="gluster,cephfs")
        except ClusterError as err:
            assert "port 24007 would be" in str(err), err
            refused.append(port_base)
            continue
        ranges = sorted(layout.port_ranges.values())
        assert all(a[1] < b[0] for a, b in zip(ranges, ranges[1:])), port_base
        assert ranges[-1][1] <= 65535
    assert refused == [24007 - 101, 24007 - 100, *range(24007 - 64, 24007 + 1)]


@pytest.mark.parametrize("port_base, owner", [(24007 - 3, "slurmd n3"), (24007, "slurmctld"),
                                              (24007 - 100, "slurmdbd")])
def test_a_slurm_port_on_glusterds_is_refused_naming_both(tmp_path, port_base, owner):
    with pytest.raises(ClusterError) as caught:
        ClusterLayout(tmp_path, port_base=port_base, fs="gluster")
    assert str(caught.value) == (f"--port-base {port_base}: port 24007 would be {owner}'s, "
                                 "and it is glusterd's on every port base: choose another "
                                 "port base")
    ClusterLayout(tmp_path, port_base=port_base, fs="cephfs")  # no glusterd there


def test_file_systems_whose_ports_would_overlap_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(cluster.cfs, "MON_PORT", 250)  # inside the bricks' range
    ClusterLayout(tmp_path, fs="cephfs")
    with pytest.raises(ClusterError, match=r"^--port-base 17000: the ports of GlusterFS "
                                           r"bricks and ceph-mon overlap \(17250-17299\)$"):
        ClusterLayout(tmp_path, fs="gluster,cephfs")


def test_a_running_munged_that_answers_late_is_waited_for_never_started_twice(tmp_path,
                                                                               monkeypatch):
    """A loaded host (or many clusters' daemons asking at once) made one `munge -n` fail
    while munged ran: `up` started a second munged, which failed on the first's lock."""
    lc = cluster.LocalCluster(ClusterLayout(tmp_path / "state", port_base=17000))
    answers = iter([False, False, True])
    ran = []
    monkeypatch.setattr(lc, "_munge_works", lambda: next(answers))
    monkeypatch.setattr(lc, "_live_pid", lambda pidfile, name: 4242
                        if str(pidfile) == "/run/munge/munged.pid" else None)
    monkeypatch.setattr(lc, "_run", lambda argv, **kw: ran.append(argv))
    monkeypatch.setattr(cluster.time, "sleep", lambda s: None)
    lc.ensure_munge()
    assert ran == []
    # One that never answers: named, still never started twice.
    monkeypatch.setattr(lc, "_munge_works", lambda: False)
    monkeypatch.setattr(lc, "MUNGE_ANSWER_S", 0)
    with pytest.raises(ClusterError, match=r"^munged \(pid 4242\) runs but `munge -n \| "
                                           r"unmunge` failed for 0 s"):
        lc.ensure_munge()
    assert ran == []


def test_a_munged_handed_over_is_stopped_by_the_last_cluster_down(tmp_path, monkeypatch):
    """A cluster whose `up` started munged leaves it to the others' Slurm daemons on
    `down`, its pid handed over; the `down` that finds no Slurm daemon left stops it
    (CI: the lane that started munged went down first, and munged outlived the run)."""
    handover = tmp_path / "fsaccept-munged.pid"
    monkeypatch.setattr(cluster.LocalCluster, "MUNGED_HANDOVER", handover)
    first = cluster.LocalCluster(ClusterLayout(tmp_path / "a", port_base=17000))
    last = cluster.LocalCluster(ClusterLayout(tmp_path / "b", port_base=18000))
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "munged.pid").write_text("4242\n")
    stopped = []
    for lc in (first, last):
        monkeypatch.setattr(lc, "running_daemons", lambda: {})
        monkeypatch.setattr(lc, "_live_pid", lambda pidfile, name:
                            4242 if pidfile.is_file() and
                            pidfile.read_text().split()[0] == "4242" else None)
        monkeypatch.setattr(lc.accounting, "down", lambda timeout: [])
    monkeypatch.setattr(cluster, "_stop_pid", lambda pid, timeout: stopped.append(pid))
    monkeypatch.setattr(cluster, "slurm_daemon_pids", lambda: [7, 8])
    msg = first.down()
    assert msg.endswith("munged left running (started by an up, still used by Slurm "
                        "daemons 7, 8: the last cluster down stops it)"), msg
    assert handover.read_text() == "4242\n" and stopped == []
    assert not (tmp_path / "a" / "munged.pid").exists()
    monkeypatch.setattr(cluster, "slurm_daemon_pids", lambda: [])
    assert last.down() == "local cluster down: stopped munged (started by up)"
    assert stopped == [4242] and not handover.exists()
