"""The IOR checks on the emulated cluster, for real.

Tests that run IOR skip when it is not on PATH (Spack builds it: see
tests/conftest.py); the guards that act before any job (bad reference, too few nodes,
missing binary) run everywhere.
"""

import os
import re
import time
from pathlib import Path

import pytest

from fsaccept.suite import sites
from tests.conftest import corrupting_drop_caches, reference_copy, run_checks, run

pytestmark = pytest.mark.integration
CHECKS = "ior_acceptance.py"
needs_ior = pytest.mark.usefixtures("ior_available")


def ior_summary_means(job_out: Path) -> dict[str, tuple[float, float]]:
    """(Mean(MiB), Mean(OPs)) per operation, read straight off IOR's summary table."""
    means = {}
    for line in job_out.read_text().splitlines():
        cols = line.split()
        if len(cols) > 20 and cols[0] in ("write", "read") and re.match(r"^[\d.]+$", cols[3]):
            means[cols[0]] = (float(cols[3]), float(cols[7]))
    return means


@needs_ior
def test_the_four_checks_pass_with_figures_equal_to_iors_own(cluster_env, tmp_path):
    proc, cases = run_checks(CHECKS, tmp_path, "-t", "acceptance")
    figures = {"IORWriteBandwidth": ("write", "write_bandwidth", 0, 4),
               "IORStonewalledRead": ("read", "read_bandwidth", 0, 4),
               "IORRandomWriteIOPS": ("write", "write_iops", 1, 1),
               "IORRandomReadIOPS": ("read", "read_iops", 1, 1)}
    assert proc.returncode == 0, proc.stdout[-4000:]
    for name, (op, pvar, column, nodes) in figures.items():
        case = cases[name]
        assert case["result"] == "pass", (name, case["fail_reason"])
        # 0.9 of 4 nodes rounds up to 4; 0.15 of 4 rounds up to 1.
        assert case["num_nodes"] == nodes and len(case["job_nodelist"]) == nodes
        own = ior_summary_means(Path(case["outputdir"]) / "rfm_job.out")[op][column]
        assert case["perfvalues"][f"local:compute:{pvar}"][0] == own
        assert case["benchmark_version"] == "IOR-4.0.0" and case["version_note"] == "tested"
        assert case["benchmark_command"].startswith(case["binary_path"] + " ")
        assert case["target_fstype"] and case["reference_sha256"]
    assert cases["IORWriteBandwidth"]["rank_map"] == "n1:0,n2:1,n3:2,n4:3"
    assert cases["IORRandomWriteIOPS"]["rank_map"] == "n1:0-3"
    leftovers = [c["target_dir"] for c in cases.values()
                 if c.get("target_dir") and os.path.exists(c["target_dir"])]
    assert leftovers == [], f"files left behind: {leftovers}"


@needs_ior
def test_a_too_small_dataset_makes_the_read_invalid(cluster_env, tmp_path):
    def small_dataset(data):
        read = data["tests"]["ior_read_bandwidth"]
        read.update(segments=16, deadline_s=3)  # 16 MiB per rank: gone long before 3 s
    proc, cases = run_checks(CHECKS, tmp_path, "-n", "IORStonewalledRead",
                             env=reference_copy(tmp_path, small_dataset))
    case = cases["IORStonewalledRead"]
    assert proc.returncode != 0 and case["result"] == "fail"
    assert case["fail_phase"] == "sanity"
    assert re.search(r"INVALID: read iteration 0 ran [\d.]+ s of the 3 s deadline: the dataset "
                     r"\(\d+ MiB\) was exhausted, so this is not a sustained 3 s read",
                     case["fail_reason"]), case["fail_reason"]


def test_a_bad_reference_file_stops_before_any_job(cluster_env, tmp_path):
    env = reference_copy(tmp_path, lambda d: d["tests"]["ior_write_bandwidth"].update(
        node_fraction=1.5, transfer_size="1MB"))
    proc, cases = run_checks(CHECKS, tmp_path, "-n", "IORWriteBandwidth", env=env)
    case = cases["IORWriteBandwidth"]
    assert proc.returncode != 0 and case["fail_phase"] == "setup" and case["jobid"] is None
    path = env["FSACCEPT_REFERENCE"]
    assert (f"{path}: tests.ior_write_bandwidth.node_fraction: 1.5 is greater than the "
            "maximum of 1") in case["fail_reason"]
    assert f"{path}: tests.ior_write_bandwidth.transfer_size: '1MB' is not a binary size" \
        in case["fail_reason"]


def test_too_few_usable_nodes_skips_with_required_and_available(cluster_env, tmp_path):
    drain = ["scontrol", "update", "nodename=n4", "state=drain", "reason=fsaccept-test"]
    assert run(drain, env=cluster_env).returncode == 0
    try:
        proc, cases = run_checks(CHECKS, tmp_path, "-n", "IORWriteBandwidth", env=cluster_env)
    finally:
        run(["scontrol", "update", "nodename=n4", "state=resume"], env=cluster_env)
        # The next tests need all 4 nodes: wait until Slurm lists n4 as usable again.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and run(
                ["sinfo", "-h", "-n", "n4", "-o", "%t"], env=cluster_env
        ).stdout.strip() not in ("idle", "alloc", "mix"):
            time.sleep(0.5)
    assert "needs 4 nodes (0.9 of 4 total nodes, rounded up) but only 3 are usable" \
        in proc.stdout, proc.stdout[-3000:]


def test_missing_ior_binary_skips_with_how_to_build(cluster_env, tmp_path):
    env = dict(cluster_env, PATH="/usr/sbin:/usr/bin:/sbin:/bin")
    proc, _ = run_checks(CHECKS, tmp_path, "-n", "IORWriteBandwidth", env=env)
    assert proc.returncode == 0
    # What to do follows what set-up built: add --system local-spack, or build with Spack.
    assert f"ior not found on PATH: {sites.ior_fix(emulated=True)[:60]}" in proc.stdout, \
        proc.stdout[-3000:]


@needs_ior
def test_a_failing_cache_drop_makes_the_read_invalid_and_a_good_one_is_recorded(cluster_env,
                                                                                  tmp_path):
    # A "drop" that records where it ran, then fails on one node only.
    log = tmp_path / "drops"
    log.mkdir()
    command = (f'touch {log}/"$SLURMD_NODENAME"; '
               '[ "$SLURMD_NODENAME" != n3 ] || exit 7')
    proc, cases = run_checks(CHECKS, tmp_path / "bad", "-n", "IORStonewalledRead",
                             env=reference_copy(tmp_path, lambda d: d.update(drop_caches=command)))
    case = cases["IORStonewalledRead"]
    assert case["result"] == "fail" and case["fail_phase"] == "sanity", case["fail_reason"]
    assert "INVALID: the cache drop before the read" in case["fail_reason"]
    assert "exited 7 on the job's nodes: the read may have been served from client caches" \
        in case["fail_reason"]
    assert case["drop_caches_command"] == command and case["drop_caches_status"] == "7"
    assert sorted(p.name for p in log.iterdir()) == ["n1", "n2", "n3", "n4"]  # every node
    # The dataset's write did not drop anything: only the read test asks for it.
    assert cases["IORReadDatasetGeneration"]["drop_caches_command"] == ""

    good = tmp_path / "good"
    good.mkdir()
    proc, cases = run_checks(CHECKS, good, "-n", "IORStonewalledRead",
                             env=reference_copy(good, lambda d: d.update(drop_caches="sync")))
    case = cases["IORStonewalledRead"]
    assert case["result"] == "pass", case["fail_reason"]
    assert case["drop_caches_command"] == "sync" and case["drop_caches_status"] == "0"


@needs_ior
def test_integrity_passes_and_a_file_corrupted_between_write_and_read_fails(
        cluster_env, tmp_path, own_target, ior_writes_preload):
    proc, cases = run_checks(CHECKS, tmp_path / "clean", "-n", "IORDataIntegrity")
    case = cases["IORDataIntegrity"]
    assert case["result"] == "pass", case["fail_reason"]
    assert case["perfvalues"]["local:compute:incorrect_transfers"][0] == 0
    assert " -R " in case["benchmark_command"] and " -C " in case["benchmark_command"]

    # Between the patterned write and the verified read, 1 MiB (one transfer) of one
    # rank's file is overwritten: the hook that runs right before the read does it.
    # Every rank then exits with IOR's count (1), and rank 0 exits last, 5 s late (as
    # on a loaded host): its summary must still reach the output (CI once lost it).
    env = dict(reference_copy(tmp_path, lambda d: corrupting_drop_caches(
        d, own_target, "IORIntegrityDataset", "1M", 3)),
        LD_PRELOAD=str(ior_writes_preload), FSACCEPT_TEST_LATE_EXIT_S="5")
    proc, cases = run_checks(CHECKS, tmp_path / "bad", "-n", "IORDataIntegrity", env=env)
    case = cases["IORDataIntegrity"]
    assert case["result"] == "fail" and case["fail_phase"] == "performance", case["fail_reason"]
    assert case["perfvalues"]["local:compute:incorrect_transfers"][0] == 1
    assert case["integrity_errors"].startswith("1 transfer read back wrong from ")
    assert case["drop_caches_status"] == "0"
    leftovers = [c["target_dir"] for c in cases.values()
                 if c.get("target_dir") and os.path.exists(c["target_dir"])]
    assert leftovers == []


@needs_ior
def test_write_bandwidth_names_each_nodes_figure_and_fails_on_slow_clients(
        cluster_env, tmp_path, ior_writes_preload):
    def strict(data):
        data["tests"]["ior_write_bandwidth"]["outlier_fraction"] = 0.5
    # n3's IOR sleeps 100 ms before each write for its first 3 s of writes: at most
    # 21 transfers before the 2 s stonewall, while every other node moves hundreds.
    env = dict(reference_copy(tmp_path, strict), LD_PRELOAD=str(ior_writes_preload),
               FSACCEPT_TEST_SLOW_NODE="n3", FSACCEPT_TEST_SLOW_DELAY_MS="100",
               FSACCEPT_TEST_SLOW_TOTAL_S="3")
    proc, cases = run_checks(CHECKS, tmp_path, "-n", "IORWriteBandwidth", env=env)
    case = cases["IORWriteBandwidth"]
    # Logged as data: {figure: {node: value}}.
    per_node = case["per_node_figures"]["write_bandwidth"]
    assert sorted(per_node) == ["n1", "n2", "n3", "n4"], case["per_node_figures"]
    assert case["slowest_nodes"].split()[0] == "n3", case["slowest_nodes"]
    assert case["result"] == "fail" and case["fail_phase"] == "performance", case["fail_reason"]
    outliers = case["perfvalues"]["local:compute:outlier_nodes"][0]
    named = case["outlier_nodes_named"]
    assert outliers >= 1 and named.count("x the median") == outliers
    assert named.startswith("n3 ") or "; n3 " in named, named
