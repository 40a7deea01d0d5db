"""AI checkpoint and restore (checks/checkpoint.py) on the emulated cluster, for real: the
figures are IOR's own per-rank times, a restore that reads back a corrupted shard fails,
and nothing is left behind."""

import csv
import os
from pathlib import Path

import pytest

from tests.conftest import corrupting_drop_caches, reference_copy, run_checks

pytestmark = pytest.mark.integration
CHECKS = "checkpoint.py"
needs_ior = pytest.mark.usefixtures("ior_available")


def _rank_times(job_out: Path) -> dict[int, float]:
    """Each rank's open-to-close seconds, read off IOR's per-rank CSV in the job's output."""
    lines = job_out.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("access,rank,"))
    rows = [row for row in csv.reader(lines[start + 1:]) if row and row[0] in ("write", "read")]
    return {int(row[1]): float(row[2]) for row in rows}


def _leftovers(cases):
    return [c["target_dir"] for c in cases.values()
            if c.get("target_dir") and os.path.exists(c["target_dir"])]


@needs_ior
def test_checkpoint_and_restore_figures_are_iors_per_rank_times(cluster_env, tmp_path):
    proc, cases = run_checks(CHECKS, tmp_path, "-n", "^IORCheckpoint(Write|Restore)$")
    assert proc.returncode == 0, proc.stdout[-4000:]
    for name, prefix in (("IORCheckpointWrite", "checkpoint"),
                         ("IORCheckpointRestore", "restore")):
        case = cases[name]
        assert case["result"] == "pass", (name, case["fail_reason"])
        times = _rank_times(Path(case["outputdir"]) / "rfm_job.out")
        assert sorted(times) == list(range(case["num_tasks"]))
        perf = {k.split(":")[-1]: v[0] for k, v in case["perfvalues"].items()}
        assert perf[f"{prefix}_time_s"] == max(times.values())
        assert perf["first_rank_done_s"] == min(times.values())
        assert perf[f"{prefix}_bandwidth"] == case["burst_bytes"] / 2**20 / max(times.values())
        assert case["burst_bytes"] == 256 * 2**20
        assert case["slowest_rank"].startswith("rank ") and " on n" in case["slowest_rank"]
        assert " -g " not in case["benchmark_command"]
    assert cases["IORCheckpointRestore"]["perfvalues"][
        "local:compute:incorrect_transfers"][0] == 0
    assert " -R " in cases["IORCheckpointRestore"]["benchmark_command"]
    assert _leftovers(cases) == []


@needs_ior
def test_a_restore_that_reads_back_a_corrupted_shard_fails(cluster_env, tmp_path, own_target):
    # Between the checkpoint and its restore, one transfer (4 MiB) of rank 1's shard is
    # overwritten: the hook that runs right before the read does it, on n1 only.
    proc, cases = run_checks(CHECKS, tmp_path, "-n", "^IORCheckpointRestore$",
                             env=reference_copy(tmp_path, lambda d: corrupting_drop_caches(
                                 d, own_target, "IORCheckpointDataset", "4M", 2)))
    case = cases["IORCheckpointRestore"]
    assert case["result"] == "fail" and case["fail_phase"] == "performance", case["fail_reason"]
    assert case["perfvalues"]["local:compute:incorrect_transfers"][0] == 1
    assert "incorrect_transfers" in case["fail_reason"]
    assert case["integrity_errors"].startswith("1 transfer read back wrong from ")
    assert case["drop_caches_status"] == "0"
    assert _leftovers(cases) == []
