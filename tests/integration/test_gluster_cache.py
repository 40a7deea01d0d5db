"""The cache rule on a real distributed file system: every emulated node reads through
its own GlusterFS client (its own page cache), so IOR's -C really moves a read to
another client.  The same buffered read, from another node and from the node that
wrote the data, judged by the same rule: the first is a figure, the second INVALID as
cache-suspect (the reader's own page cache held what it had just written)."""

import pytest

from tests.conftest import gluster_reference, run_gluster_checks

pytestmark = [pytest.mark.integration, pytest.mark.main_cluster, pytest.mark.usefixtures("ior_available")]


def small_read(data, other_node):
    # The reference's dataset: 4 ranks x 320 MiB (at least 2 s of reading here), read
    # for 1 s; each node's memory (Slurm: 2000 MB) is far larger than its 320 MiB.
    data["tests"]["ior_read_bandwidth"]["read_other_node"] = other_node


@pytest.mark.parametrize("other_node", [True, False], ids=["other-node", "writing-node"])
def test_a_buffered_read_is_judged_by_where_it_ran(gluster_env, tmp_path, other_node):
    env, layout = gluster_env
    proc, cases = run_gluster_checks(
        "ior_acceptance.py", tmp_path, "-n", "IORStonewalledRead",
        env=gluster_reference(tmp_path, layout, lambda d: small_read(d, other_node)))
    case = cases["IORStonewalledRead"]
    assert case["job_fstype"] == "fuse.glusterfs"
    assert case["node_mounts"] == f"n1,n2,n3,n4: fuse.glusterfs {layout.mount_point} " \
                                  f"{layout.source} (4 of 4 bricks connected)", case["node_mounts"]
    assert ("-C" in case["benchmark_command"].split()) == other_node
    assert not case["direct_io"]
    if other_node:
        assert case["result"] == "pass", case["fail_reason"]
    else:
        assert case["result"] == "fail" and case["fail_phase"] == "sanity"
        assert "cache-suspect: buffered read of 0.31 GiB per node, less than 1.5 x node " \
               "memory" in case["fail_reason"], case["fail_reason"]
