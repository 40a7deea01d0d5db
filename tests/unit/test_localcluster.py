
import pytest

from lab.cluster import (ClusterError, ClusterLayout, directories, node_count_in_conf,
                         parse_sinfo_states, render_slurm_conf)


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
