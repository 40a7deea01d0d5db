"""The data-reduction probe through ReFrame on the emulated cluster (issue 23): on a
btrfs mounted ``compress-force=zstd`` the probe finds reduction, an IOR write with IOR's
default pattern is INVALID with the ratio in its reason, and the same write with the
irreducible pattern (the default) is valid; on a plain btrfs the probe finds none."""

from __future__ import annotations

import json

import pytest

from tests.btrfs_mounts import btrfs_loop_mounts
from tests.conftest import REPO, reference_copy, reframe_command, run


@pytest.fixture(scope="module")
def btrfs(tmp_path_factory):
    # 6 GiB sparse files: room for a 2 s stonewalled write of random data.
    with btrfs_loop_mounts(tmp_path_factory.mktemp("btrfs"), size="6G") as mounts:
        yield mounts


def on_target(mount, pattern=None):
    """Reference edit: the target is ``mount``; IOR's write on one node, one rank, sized
    so that the 2 s stonewall ends it; ``pattern`` asked when given."""
    def edit(d):
        d["target"] = {"path": str(mount), "fstype": "btrfs", "max_bandwidth_mib_s": 4096}
        entry = d["tests"]["ior_write_bandwidth"]
        entry.update(node_fraction=0.25, segments=2048, direct_io=False,
                     threshold={"value": 1, "unit": "MiB/s", "tolerance": 0.1})
        if pattern:
            entry["data_pattern"] = pattern
    return edit


def with_reference(cluster_env, where, edit):
    return dict(cluster_env, FSACCEPT_REFERENCE=reference_copy(where, edit)["FSACCEPT_REFERENCE"])


def session(tmp_path, env, names):
    proc = run(reframe_command("-c", str(REPO / "checks" / "data_reduction.py"),
                               "-c", str(REPO / "checks" / "ior_acceptance.py"),
                               "--system", "local", "-n", f"^({'|'.join(names)})$",
                               "--exec-order", "name", "-r", prefix=tmp_path / "rfm"),
               env=env, timeout=1200)
    report = tmp_path / "rfm" / "report.json"
    assert report.exists(), proc.stdout + proc.stderr
    cases = json.loads(report.read_text())["runs"][-1]["testcases"]
    return proc, {c["name"].split()[0]: c for c in cases}


def test_probe_and_rule_on_compressing_btrfs(cluster_env, ior_available, btrfs, tmp_path):
    where = btrfs["compressing"]
    (tmp_path / "ts").mkdir()
    env = with_reference(cluster_env, tmp_path / "ts", on_target(where, "timestamp"))
    proc, cases = session(tmp_path / "ts", env, ["DataReductionProbe", "IORWriteBandwidth"])
    probe, ior = cases["DataReductionProbe"], cases["IORWriteBandwidth"]
    print(probe.get("reduction_summary"))
    assert probe["result"] == "pass", probe.get("fail_reason")
    assert probe["reduction_verdict"] == "reduces"
    assert "ior timestamp (reducible; asked by the reference)" == ior["data_pattern"]
    assert ior["result"] == "fail" and ior["fail_phase"] == "sanity"
    assert "reducible data, on a file system that reduces it" in ior["fail_reason"]
    assert "IOR's default pattern" in ior["fail_reason"] and ":1" in ior["fail_reason"]
    # The default, irreducible pattern: the same write is valid.
    (tmp_path / "rand").mkdir()
    env = with_reference(cluster_env, tmp_path / "rand", on_target(where))
    proc, cases = session(tmp_path / "rand", env, ["DataReductionProbe", "IORWriteBandwidth"])
    ior = cases["IORWriteBandwidth"]
    assert ior["data_pattern"] == "ior random (irreducible)"
    assert ior["result"] == "pass", (ior.get("fail_reason"), proc.stdout[-3000:])
    assert " -l random " in ior["benchmark_command"]
    # Nothing left behind: the probe's files and the benchmark's data directory are gone.
    assert [p.name for p in where.iterdir()] in ([], ["fsaccept"])
    assert not (where / "fsaccept").exists() or not any((where / "fsaccept").iterdir())


def test_probe_finds_no_reduction_on_plain_btrfs(cluster_env, btrfs, tmp_path):
    (tmp_path / "plain").mkdir()
    env = with_reference(cluster_env, tmp_path / "plain", on_target(btrfs["plain"]))
    proc, cases = session(tmp_path / "plain", env, ["DataReductionProbe"])
    probe = cases["DataReductionProbe"]
    assert probe["result"] == "pass", (probe.get("fail_reason"), proc.stdout[-3000:])
    assert probe["reduction_verdict"] == "does not reduce", probe["reduction_summary"]
