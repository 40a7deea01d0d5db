"""The per-file-system probe of storage servers (fsaccept/core/servers.py): GlusterFS's
bash function run on a directory laid out as its client's ``.meta`` (the real one is
exercised on the volume by tests/integration/test_gluster.py), and the reading of the
nodes' answers."""

import subprocess

import pytest

from fsaccept.core import servers


def meta(mount, bricks, extra=()):
    """``mount/.meta/graphs/active`` as GlusterFS's client shows it: one protocol/client
    translator per brick (name -> connected), and other translators beside them."""
    active = mount / ".meta" / "graphs" / "active"
    for i, (brick, connected) in enumerate(bricks.items()):
        x = active / f"vol-client-{i}"
        (x / "options").mkdir(parents=True)
        (x / "type").write_text("protocol/client\n")
        (x / "private").write_text(f"[xlator.protocol.client.vol-client-{i}.priv]\n"
                                   f"connected = {int(connected)}\ntotal_bytes_read = 10\n")
        (x / "options" / "remote-host").write_text("10.0.0.1\n")
        (x / "options" / "remote-subvolume").write_text(f"{brick}\n")
    for name in ("vol-dht", *extra):
        (active / name).mkdir(parents=True)
        (active / name / "type").write_text("cluster/distribute\n")
    (active / "volfile").write_text("volume vol-client-0\n")


def probe(mount):
    proc = subprocess.run(["bash", "-c", servers.after_script("fuse.glusterfs"), "probe",
                           str(mount)], capture_output=True, text=True, timeout=30,
                          env={"SLURMD_NODENAME": "n7", "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    return proc.stdout


def test_every_brick_connected(tmp_path):
    meta(tmp_path, {"/b1": True, "/b2": True})
    assert probe(tmp_path) == "fsaccept-servers n7 ok 2 of 2 bricks connected\n"


def test_each_brick_not_connected_is_named(tmp_path):
    meta(tmp_path, {"/b 1": False, "/b2": True, "/b;3": False})
    assert probe(tmp_path) == ("fsaccept-servers n7 down GlusterFS client not connected to "
                               "brick 10.0.0.1:/b 1, 10.0.0.1:/b;3\n")


def test_a_client_without_meta_cannot_tell(tmp_path):
    assert probe(tmp_path / "gone") == (
        f"fsaccept-servers n7 unknown cannot read the GlusterFS client's state in "
        f"{tmp_path}/gone/.meta: No such file or directory\n")


def test_a_client_that_cannot_answer_is_down_with_why(tmp_path):
    (tmp_path / ".meta").mkdir()
    (tmp_path / ".meta" / "graphs").write_text("not a directory")
    assert probe(tmp_path) == (
        f"fsaccept-servers n7 down cannot read the GlusterFS client's state in "
        f"{tmp_path}/.meta: Not a directory\n")


def test_a_graph_without_bricks_is_unknown(tmp_path):
    (tmp_path / ".meta" / "graphs" / "active").mkdir(parents=True)
    assert probe(tmp_path) == (f"fsaccept-servers n7 unknown no brick in "
                               f"{tmp_path}/.meta/graphs/active\n")


def test_a_private_dump_without_connected_counts_as_not_connected(tmp_path):
    meta(tmp_path, {"/b1": True})
    private = tmp_path / ".meta/graphs/active/vol-client-0/private"
    private.write_text("garbage\x00\xff\n")
    assert "down GlusterFS client not connected to brick 10.0.0.1:/b1" in probe(tmp_path)


@pytest.mark.parametrize("fstype", ["nfs", "ext4", "", "fuse.glusterfs "])
def test_types_without_a_probe_are_not_asked(fstype):
    assert servers.probe(fstype) == ""


def test_answers_are_grouped_and_only_down_degrades():
    out = "\n".join([
        "fsaccept-servers n2 down GlusterFS client not connected to brick h:/b2",
        "fsaccept-servers n1 down GlusterFS client not connected to brick h:/b2",
        "fsaccept-servers n3 down cannot read the GlusterFS client's state in /m/.meta: x",
        "fsaccept-servers n4 ok 4 of 4 bricks connected",
        "fsaccept-servers n5 unknown no brick in /m/.meta/graphs/active",
        "a fsaccept-servers n6 down not a line of the probe",
        "fsaccept-servers",
    ])
    assert servers.degraded(servers.node_answers(out)) == [
        "n1,n2: GlusterFS client not connected to brick h:/b2",
        "n3: cannot read the GlusterFS client's state in /m/.meta: x"]
    assert servers.grouped(servers.node_answers(out)) == [
        "n1,n2: down GlusterFS client not connected to brick h:/b2",
        "n3: down cannot read the GlusterFS client's state in /m/.meta: x",
        "n4: ok 4 of 4 bricks connected",
        "n5: unknown no brick in /m/.meta/graphs/active"]
    assert servers.degraded(servers.node_answers("")) == [] and servers.node_answers("") == {}


def test_a_node_that_answered_again_counts_with_its_last_answer():
    # The benchmark's step checks the nodes; a launch retried after an MPI start-up
    # crash checks them again: each node once, as it answered last.
    out = "\n".join(["fsaccept-node-check n1 ok ext4 / /dev/vda",
                     "fsaccept-node-check n2 ok ext4 / /dev/vda",
                     "fsaccept-retry the benchmark step ended with exit 139 ...",
                     "fsaccept-node-check n2 bad /t is not on ext4 (/) but on tmpfs (/t)",
                     "fsaccept-node-check n1 ok ext4 / /dev/vda"])
    assert servers.node_answers(out, "fsaccept-node-check") == {
        "bad /t is not on ext4 (/) but on tmpfs (/t)": ["n2"], "ok ext4 / /dev/vda": ["n1"]}


def test_after_the_benchmark_a_node_unheard_or_unknown_is_missing_evidence():
    """Issue 49: only "down" counted; a job node with no answer, or every node "unknown",
    passed.  The live check (BenchmarkTest.degraded_reasons) and the sign-off judge by
    servers.after_reasons."""
    from types import SimpleNamespace

    from fsaccept.rfm.benchmark import BenchmarkTest
    out = "\n".join(["fsaccept-servers n1 ok 4 of 4 bricks connected",
                     "fsaccept-servers n2 unknown no brick in /m/.meta/graphs/active",
                     "fsaccept-servers n3 unknown the server probe did not answer"])
    test = SimpleNamespace(_stdout_text=lambda: out, servers_after_cmds=lambda: ["srun ..."],
                           job=SimpleNamespace(nodelist=["n1", "n2", "n3", "n4"]))
    reasons = BenchmarkTest.degraded_reasons(test)
    assert reasons == [
        "evidence missing: the server probe could not tell whether every storage server "
        "was reached after the benchmark: node n2: unknown no brick in "
        "/m/.meta/graphs/active",
        "evidence missing: the server probe could not tell whether every storage server "
        "was reached after the benchmark: node n3: unknown the server probe did not answer",
        "evidence missing: node n4 of the job gave no answer of the server probe after the "
        "benchmark"]
    assert test.servers_after == ("n1: ok 4 of 4 bricks connected; n2: unknown no brick in "
                                  "/m/.meta/graphs/active; n3: unknown the server probe did "
                                  "not answer")
    healthy = "\n".join(f"fsaccept-servers n{i} ok 4 of 4 bricks connected" for i in (1, 2))
    assert servers.after_reasons(servers.node_answers(healthy), ["n1", "n2"]) == []
    # No probe asked after the benchmark (no srun, no probe): nothing is missing.
    test.servers_after_cmds = list
    assert BenchmarkTest.degraded_reasons(test) == []
