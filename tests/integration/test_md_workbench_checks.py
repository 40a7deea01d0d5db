"""The md-workbench check on the emulated cluster, for real (md-workbench is built with
IOR by Spack: the test needs it, as the IOR tests do)."""

import os
from pathlib import Path

import pytest

from tests.conftest import reference_copy, run_checks

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("ior_available")]


def test_md_workbench_passes_with_its_own_figures_and_leaves_nothing(cluster_env, tmp_path):
    proc, cases = run_checks("md_workbench.py", tmp_path, "-n", "^MdWorkbench$")
    case = cases["MdWorkbench"]
    assert case["result"] == "pass", (case["fail_reason"], proc.stdout[-3000:])
    out = (Path(case["outputdir"]) / "rfm_job.out").read_text()
    rates = [float(line.split(" rate:")[1].split()[0]) for line in out.splitlines()
             if line.startswith("benchmark process max:")]
    assert len(rates) == 2  # -R 2
    assert case["perfvalues"]["local:compute:rate"][0] == min(rates)
    assert case["perfvalues"]["local:compute:read_latency_q99"][2:4] == [None, 0]  # a ceiling
    assert case["benchmark_version"] == "4.0.0" and case["version_note"] == "tested"
    assert " -O 2 " in case["benchmark_command"] and " -X " in case["benchmark_command"]
    assert case["rank_map"] == "n1:0-1,n2:2-3,n3:4-5,n4:6-7"
    assert not os.path.exists(case["target_dir"])


def test_md_workbench_that_ran_out_of_objects_before_its_stonewall_is_invalid(cluster_env,
                                                                            tmp_path):
    def short(data):
        data["tests"]["md_workbench"].update(stonewall_s=30, iterations=1)
    proc, cases = run_checks("md_workbench.py", tmp_path, "-n", "^MdWorkbench$",
                             env=reference_copy(tmp_path, short))
    case = cases["MdWorkbench"]
    assert case["result"] == "fail" and case["fail_phase"] == "sanity", case["fail_reason"]
    assert "INVALID: benchmark iteration 0 ended before the 30 s stonewall" \
        in case["fail_reason"]
