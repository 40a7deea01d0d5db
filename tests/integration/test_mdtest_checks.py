"""The mdtest checks on the emulated cluster, for real.

Tests that run mdtest skip when it is not on PATH (it comes with IOR, which
no package registry has); the guards that act before any job (bad reference,
missing binary) run everywhere.
"""

import os
import re
from pathlib import Path

import pytest

from fsaccept.suite import sites
from tests.conftest import reference_copy, run_checks

pytestmark = pytest.mark.integration
CHECKS = "mdtest_metadata.py"
needs_mdtest = pytest.mark.usefixtures("mdtest_available")


def mdtest_summary_means(job_out: Path) -> dict[str, float]:
    """Mean rate per operation, read straight off mdtest's SUMMARY rate table."""
    means, in_rate = {}, False
    for line in job_out.read_text().splitlines():
        if line.startswith("SUMMARY rate"):
            in_rate = True
        elif not line.strip():
            in_rate = False
        elif in_rate and re.match(r"^   (File|Tree|Directory) ", line):
            cols = line.split()
            means[f"{cols[0]}_{cols[1]}".lower()] = float(cols[4])
    return means


def stonewall_rate(job_out: Path) -> float:
    """Files created until the stonewall (per-rank lines) / time until it."""
    text = job_out.read_text()
    items = sum(int(n) for n in re.findall(r"stonewall hit with (\d+) items", text))
    [seconds] = re.findall(r"File creation \(stonewall\):\s+([\d.]+) sec", text)
    return round(items / float(seconds), 3)


@needs_mdtest
def test_both_checks_pass_with_figures_equal_to_mdtests_own(cluster_env, tmp_path):
    proc, cases = run_checks(CHECKS, tmp_path, "-t", "metadata")
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert {"MdtestEasy", "MdtestHard"} <= set(cases)  # (and the binaries fixture)
    for name, nodes in (("MdtestEasy", 4), ("MdtestHard", 2)):
        case = cases[name]
        assert case["result"] == "pass", (name, case["fail_reason"])
        assert case["num_nodes"] == nodes
        # 2 ranks per node in blocks, on whichever nodes Slurm gave (mdtest's -N 1 shift: 2)
        blocks = case["rank_map"].split(",")
        assert [b.split(":")[1] for b in blocks] == ["0-1", "2-3", "4-5", "6-7"][:nodes]
        assert len({b.split(":")[0] for b in blocks}) == nodes and case["rank_shift"] == 2
        own = mdtest_summary_means(Path(case["outputdir"]) / "rfm_job.out")
        figures = {k.split(":")[-1]: v for k, v in case["perfvalues"].items()}
        assert {"file_creation", "file_stat", "file_read", "file_removal", "tree_creation",
                "tree_removal"} <= set(figures)
        for figure, mean in own.items():
            value, ref, lower, _, unit, verdict = figures[figure]
            assert (value, unit, verdict) == (mean, "ops/s", "pass")
            assert mean > 0
        assert figures["file_stat"][1:3] == [1, -0.1]  # threshold from the reference file
        assert case["benchmark_version"] == "mdtest-4.0.0"
        assert case["benchmark_command"].startswith(case["binary_path"] + " -F -P -v -N 1 -n ")
        assert case["target_fstype"] == case["job_fstype"] == "ext4"
        assert case["reference_sha256"] and case["invalid_reasons"] == ""
        assert re.match(r"file_creation=[\d.]+s, file_stat=", case["phase_times"])
        assert "file_creation: max " in case["rate_statistics"]
        assert not os.path.exists(case["target_dir"]), "files left behind"
    easy, hard = cases["MdtestEasy"], cases["MdtestHard"]
    assert easy["variant"] == "easy" and " -u " in easy["benchmark_command"]
    assert hard["variant"] == "hard" and " -u " not in hard["benchmark_command"]
    assert " -w 3901 -e 3901 -W 3 -x " in hard["benchmark_command"]
    derived = hard["perfvalues"]["local:compute:file_creation_stonewall"]
    assert derived[0] == stonewall_rate(Path(hard["outputdir"]) / "rfm_job.out")
    assert "(derived; stonewall hit" in hard["stonewall_create"]
    assert "local:compute:file_creation_stonewall" not in easy["perfvalues"]


@needs_mdtest
def test_short_phases_are_invalid_and_a_missed_threshold_fails(cluster_env, tmp_path):
    def edit(tests):
        tests["mdtest_easy"]["min_phase_s"] = 30
        tests["mdtest_hard"]["thresholds"]["file_stat"]["value"] = 1e12
    env = reference_copy(tmp_path, lambda d: edit(d["tests"]))
    proc, cases = run_checks(CHECKS, tmp_path, "-t", "metadata", env=env)
    assert proc.returncode != 0
    easy, hard = cases["MdtestEasy"], cases["MdtestHard"]
    assert easy["result"] == "fail" and easy["fail_phase"] == "sanity"
    assert re.search(r"INVALID: file_creation: the phase took [\d.]+ s \(mean over 1 "
                     r"iteration\(s\)\), less than min_phase_s 30 s: too short to measure; "
                     r"raise items_per_rank from 1000 to at least \d+", easy["fail_reason"])
    assert hard["result"] == "fail" and hard["fail_phase"] == "performance"
    assert "file_stat" in hard["fail_reason"]
    assert not os.path.exists(easy["target_dir"]) and not os.path.exists(hard["target_dir"])


def test_a_bad_mdtest_entry_stops_before_any_job(cluster_env, tmp_path):
    env = reference_copy(tmp_path, lambda d: d["tests"]["mdtest_easy"].update(
        items_per_rank="2k", thresholds={"file_create": {"value": 1, "unit": "IOPS"}}))
    proc, cases = run_checks(CHECKS, tmp_path, "-n", "MdtestEasy", env=env)
    case = cases["MdtestEasy"]
    assert proc.returncode != 0 and case["fail_phase"] == "setup" and case["jobid"] is None
    path = env["FSACCEPT_REFERENCE"]
    assert f"{path}: tests.mdtest_easy.items_per_rank: '2k' is not of type 'integer'" \
        in case["fail_reason"]
    assert f"{path}: tests.mdtest_easy.thresholds: 'file_create' is not one of" \
        in case["fail_reason"]


def test_missing_mdtest_binary_skips_with_how_to_build(cluster_env, tmp_path):
    env = dict(cluster_env, PATH="/usr/sbin:/usr/bin:/sbin:/bin")
    proc, _ = run_checks(CHECKS, tmp_path, "-n", "MdtestEasy", env=env)
    assert proc.returncode == 0
    # What to do follows what set-up built: add --system local-spack, or build with Spack.
    assert f"mdtest not found on PATH: {sites.ior_fix(emulated=True)[:60]}" in proc.stdout, \
        proc.stdout[-3000:]
