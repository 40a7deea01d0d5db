"""The pure parts of lab/gluster.py (the volume's layout), and the bad input
`local-cluster up --fs gluster` refuses before anything is created or started."""

import os
import socket
from pathlib import Path

import pytest

from lab import cluster
from lab.gluster import Gluster, GlusterError, GlusterLayout


def test_the_default_port_base_has_the_pinned_address_and_mount_point(tmp_path):
    lay = GlusterLayout.for_port_base(tmp_path, 17000)
    assert (lay.address, lay.mount_point) == ("127.0.0.2", Path("/mnt/fsaccept-gluster"))
    assert lay.source == "127.0.0.2:fsaccept"


@pytest.mark.parametrize("port_base, address", [(18000, "127.0.70.80"),
                                                (17152, "127.0.67.1")])
def test_another_port_base_has_its_own_address_and_mount_point(tmp_path, port_base,
                                                               address):
    lay = GlusterLayout.for_port_base(tmp_path, port_base)
    assert lay.address == address
    assert lay.mount_point == Path(f"/mnt/fsaccept-gluster-{port_base}")
    assert lay.source == f"{address}:fsaccept"


def test_glusterd_vol_keeps_every_directory_and_port_its_own(tmp_path):
    lay = GlusterLayout.for_port_base(tmp_path, 18000)
    lines = [line.strip() for line in lay.glusterd_vol().splitlines()]
    for expected in ["type mgmt/glusterd",
                     f"option working-directory {tmp_path / 'glusterd'}",
                     f"option run-directory {tmp_path / 'run'}",
                     f"option glusterd-sockfile {tmp_path / 'run' / 'glusterd.socket'}",
                     "option transport.socket.bind-address 127.0.70.80",
                     "option transport.socket.listen-port 24007",
                     "option base-port 18200", "option max-port 18299"]:
        assert expected in lines


def test_create_args_of_a_distributed_volume(tmp_path):
    lay = GlusterLayout(tmp_path, 17000)
    assert lay.create_args() == ["volume", "create", "fsaccept",
                                 *[f"127.0.0.2:{tmp_path}/bricks/b{i}" for i in range(1, 5)],
                                 "force"]


@pytest.mark.parametrize("kind", ["replica", "disperse"])
def test_each_volume_type_has_its_own_volume_and_bricks(tmp_path, kind):
    lay = GlusterLayout(tmp_path, 17000, bricks=3, volume_type=kind)
    assert lay.volume == f"fsaccept-{kind}"
    assert lay.brick_dirs == [tmp_path / "bricks" / kind / f"b{i}" for i in (1, 2, 3)]
    assert lay.create_args() == ["volume", "create", f"fsaccept-{kind}", kind, "3",
                                 *[f"127.0.0.2:{b}" for b in lay.brick_dirs], "force"]


@pytest.mark.parametrize("kw, said", [
    (dict(volume_type="stripe"), "unknown volume type 'stripe'"),
    (dict(bricks=0), "bricks must be between 1 and 16, got 0"),
    (dict(bricks=1, volume_type="replica"), "a replica volume needs at least 2 bricks"),
    (dict(brick_size="256"), "brick size '256' is not a size like 256M or 1G"),
    (dict(brick_size="32M"), "brick size 32M is below 64M")])
def test_a_bad_layout_is_refused_in_one_line(tmp_path, kw, said):
    with pytest.raises(GlusterError, match=said):
        GlusterLayout(tmp_path, 17000, **kw)


def test_small_bricks_are_a_volume_of_their_own_on_images(tmp_path):
    lay = GlusterLayout(tmp_path, 17000, volume_type="replica", brick_size="256M")
    assert lay.volume == "fsaccept-replica-256M"
    assert lay.brick_dirs[0] == tmp_path / "bricks" / "replica-256M" / "b1"
    assert lay.brick_image(lay.brick_dirs[0]) == tmp_path / "images" / \
        "fsaccept-replica-256M-b1.img"


def test_node_wrapper_mounts_the_volume_in_a_namespace_of_its_own(tmp_path):
    lay = GlusterLayout.for_port_base(tmp_path, 18000)
    argv = lay.node_wrapper("n2")
    assert argv[:5] == ["unshare", "-m", "--propagation", "slave", "--"]
    assert argv[5:7] == ["sh", "-c"]
    script, args = argv[7], argv[8:]
    assert args == ["fsaccept-node", "/mnt/fsaccept-gluster-18000", "glusterfs",
                    "--volfile-server=127.0.70.80", "--volfile-id=fsaccept",
                    f"--pid-file={tmp_path / 'run' / 'client-n2.pid'}",
                    f"--log-file={tmp_path / 'log' / 'client-n2.log'}",
                    "--attribute-timeout=0 --acl"]
    assert '"$2" "$3" "$4" "$5" "$6" $7 "$1" || exit 97' in script
    assert "fuse.glusterfs" in script and script.endswith('shift 7; exec "$@"')


def test_a_node_client_takes_mount_options_and_refuses_shell_characters(tmp_path):
    lay = GlusterLayout(tmp_path, 17000)
    argv = lay.node_wrapper("n2", options=("attribute-timeout=10", "acl"))
    assert argv[-1] == "--attribute-timeout=10 --acl"
    assert lay.client_argv("n2", ("acl",))[-2:] == ["--acl", str(lay.mount_point)]
    for bad in ("a b", "x=$(reboot)", "x=*", "-o", "", "x='1'"):
        with pytest.raises(GlusterError, match="mount option"):
            lay.node_wrapper("n2", options=(bad,))


def test_node_wrapper_without_mount_leaves_the_bare_directory(tmp_path):
    script = GlusterLayout(tmp_path, 17000).node_wrapper("n3", mount=False)[7]
    assert script == 'umount -l "$1" 2>/dev/null; shift 7; exec "$@"'


# -- bad input: refused before anything is created or started -------------------------

def fresh(tmp_path, port_base=18900):
    return GlusterLayout.for_port_base(tmp_path / "gluster", port_base)


def test_no_dev_fuse_is_refused_and_nothing_is_created(tmp_path):
    lay = fresh(tmp_path)
    with pytest.raises(GlusterError, match=f"^{tmp_path / 'nofuse'} does not exist: "
                                           "GlusterFS clients need FUSE"):
        Gluster(lay, fuse_device=tmp_path / "nofuse").up()
    assert not lay.state_dir.exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="trusted.* extended attributes need root")
def test_a_brick_of_another_volume_is_refused_naming_it(tmp_path):
    lay = fresh(tmp_path)
    brick = lay.brick_dirs[2]
    brick.mkdir(parents=True)
    os.setxattr(brick, "trusted.glusterfs.volume-id", bytes.fromhex("ab" * 16))
    before = sorted(p for p in tmp_path.rglob("*"))
    gluster = Gluster(lay)
    gluster.check_address_free = lambda: None  # not the point here
    with pytest.raises(GlusterError, match=f"^{brick} already holds another GlusterFS "
                                           f"volume's data \\(volume-id {'ab' * 16}\\)"):
        gluster.up()
    assert sorted(p for p in tmp_path.rglob("*")) == before  # nothing created
    assert os.getxattr(brick, "trusted.glusterfs.volume-id") == bytes.fromhex("ab" * 16)


def test_a_volume_kept_for_another_port_base_is_refused_naming_both_addresses(tmp_path):
    """A state directory used on port base 21000, then brought up on 25000: glusterd
    could never start bricks on 127.0.82.8 there (seen: "brick daemons did not start
    within 3 s" after 120 s).  Refused at once, naming both addresses; nothing is
    started, created or removed."""
    old = GlusterLayout.for_port_base(tmp_path, 21000)
    info = tmp_path / "glusterd" / "vols" / old.volume / "info"
    info.parent.mkdir(parents=True)
    info.write_text("type=0\nvolume-id=0a0b\n" + "".join(
        f"brick-{i}={old.address}:-{str(b).replace('/', '-')}\n"
        for i, b in enumerate(old.brick_dirs)))
    before = sorted(p for p in tmp_path.rglob("*"))
    lay = GlusterLayout.for_port_base(tmp_path, 25000)
    with pytest.raises(GlusterError, match=(
            f"^{info}: the volume {lay.volume} kept here has its bricks on 127.0.82.8, "
            "made on another port base; this cluster \\(port base 25000\\) serves "
            "127.0.97.168: give this port base a state directory of its own")):
        Gluster(lay).up()
    assert sorted(p for p in tmp_path.rglob("*")) == before
    Gluster(old).check_volume_host()  # its own port base: no refusal


def test_a_glusterd_not_ours_on_the_address_is_refused_and_left_running(tmp_path):
    lay = fresh(tmp_path)
    with socket.socket() as theirs:  # stands for a glusterd fsaccept did not start
        theirs.bind((lay.address, 24007))
        theirs.listen()
        with pytest.raises(GlusterError, match=f"^port 24007 on {lay.address} is already "
                                               "in use \\(a glusterd not started by "
                                               "fsaccept\\?\\): fsaccept never uses or stops"):
            Gluster(lay).up()
        assert theirs.fileno() != -1 and theirs.getsockname() == (lay.address, 24007)
    assert not lay.state_dir.exists()


def test_slurm_ports_in_use_are_refused_naming_the_port(tmp_path):
    layout = cluster.ClusterLayout(tmp_path, port_base=18950)
    with socket.socket() as theirs:
        theirs.bind(("0.0.0.0", 18952))
        theirs.listen()
        with pytest.raises(cluster.ClusterError, match="^port 18952 \\(for slurmd n2\\) is "
                                                       "already in use; choose another"):
            cluster.LocalCluster(layout).check_ports_free()


def test_an_unknown_file_system_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FSACCEPT_STATE_DIR", str(tmp_path / "state"))
    assert cluster.main(["status", "--fs", "lustre"]) == 2
    err = capsys.readouterr().err
    assert err == "local-cluster: error: --fs 'lustre' is not known: one of none, gluster, cephfs\n"


def _client_state(root: Path, connected: dict[str, bool]) -> Path:
    """A client's .meta as GlusterFS shows it: one protocol/client graph entry per brick."""
    for brick, up in connected.items():
        d = root / ".meta" / "graphs" / "active" / brick
        d.mkdir(parents=True)
        (d / "type").write_text("protocol/client\n")
        (d / "private").write_text(f"[xlator.protocol.client.{brick}.priv]\n"
                                   f"connected = {int(up)}\n")
    return root


def test_a_client_cut_off_from_running_bricks_is_named_and_only_then(tmp_path):
    lay = fresh(tmp_path)
    gluster = Gluster(lay)
    bricks = {f"fsaccept-client-{i}": True for i in range(lay.bricks)}
    mounts = {"login": _client_state(tmp_path / "login", bricks),
              "n1": _client_state(tmp_path / "n1", bricks),
              "n4": _client_state(tmp_path / "n4", dict(bricks, **{"fsaccept-client-1": False})),
              "n2": tmp_path / "n2-unreadable"}
    gluster._client_mounts = lambda nodes: [(n, mounts[n]) for n in ["login", *nodes]]
    gluster.brick_pids = lambda: {f"b{i}": 100 + i for i in range(lay.bricks)}
    assert gluster.cut_off_clients(["n1", "n2", "n4"]) == ["n2", "n4"]
    # A brick daemon down: the clients are right not to reach it (a fault, not a stuck
    # client); nobody is restarted.
    gluster.brick_pids = lambda: {f"b{i}": 100 + i for i in range(lay.bricks - 1)}
    assert gluster.cut_off_clients(["n1", "n2", "n4"]) == []
