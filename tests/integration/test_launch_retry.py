"""An MPI start-up crash (a rank that dies before the benchmark printed or wrote
anything, as Open MPI 4.1.4's TCP BTL now and then does in ``MPI_Init`` here) ends
the step at once instead of leaving its peers waiting until the job's time limit; the
step is launched again (up to twice) and the retry is recorded; a crash of every
attempt is INVALID with the crash as its reason."""

import shutil
import stat
import time

import pytest

from tests.conftest import require_benchmark, run_checks

pytestmark = pytest.mark.integration

#: mdtest whose rank 0 dies of SIGSEGV, printing nothing, in its first ``crashes``
#: launches (counted in a file: the job runs other steps before it, e.g. the per-node
#: mount check); the other ranks run the real mdtest and wait in MPI_Init for it.
FAKE_MDTEST = """#!/bin/bash
if [ "$SLURM_PROCID" = 0 ]; then
  n=$(cat '{counter}' 2>/dev/null || echo 0); echo $((n + 1)) > '{counter}'
  [ "$n" -lt {crashes} ] && kill -SEGV $$
fi
exec {real} "$@"
"""


def run_mdtest_easy(cluster_env, tmp_path, crashes):
    require_benchmark("mdtest")
    fake = tmp_path / "fake bin" / "mdtest"
    fake.parent.mkdir()
    fake.write_text(FAKE_MDTEST.format(crashes=crashes, real=shutil.which("mdtest"),
                                       counter=tmp_path / "launches"))
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    env = dict(cluster_env, PATH=f"{fake.parent}:{cluster_env['PATH']}")
    proc, cases = run_checks("mdtest_metadata.py", tmp_path, "-n", "^MdtestEasy$", env=env)
    assert "MdtestEasy" in cases, proc.stdout[-3000:]
    return proc, cases["MdtestEasy"]


def job_output(tmp_path) -> str:
    """The job's stdout and stderr as the run kept them (for an assertion's message)."""
    found = sorted((tmp_path / "rfm").rglob("MdtestEasy/rfm_job.*"))
    return "\n".join(f"== {p}\n{p.read_text(errors='replace')[-2500:]}" for p in found
                     if p.suffix in (".out", ".err"))


def test_a_launch_that_crashed_before_the_benchmark_ran_is_retried_and_recorded(
        cluster_env, tmp_path):
    proc, case = run_mdtest_easy(cluster_env, tmp_path, crashes=1)
    assert case["result"] == "pass", (case["fail_reason"], job_output(tmp_path))
    # Twice; or 3 times when Open MPI's own start-up crash hit the first retry too (seen
    # in CI: the second retry then ran the benchmark).
    assert case["launch_retry"].startswith(("the benchmark step was launched twice",
                                            "the benchmark step was launched 3 times")), \
        case["launch_retry"]
    assert "Segmentation fault" in case["launch_retry"], case["launch_retry"]
    # One rank map, the one of the attempt that counts (each rank once).
    ranks = case["rank_map"]
    assert ranks and ranks.count("n1") <= 2, ranks


def test_a_launch_that_crashes_every_time_is_invalid_and_ends_at_once(cluster_env, tmp_path):
    started = time.monotonic()
    proc, case = run_mdtest_easy(cluster_env, tmp_path, crashes=99)
    assert case["result"] == "fail" and case["fail_phase"] == "sanity", proc.stdout[-3000:]
    assert "INVALID: " in case["fail_reason"], case["fail_reason"]
    assert "Segmentation fault" in case["fail_reason"], case["fail_reason"]
    assert case["launch_retry"].startswith("the benchmark step was launched 3 times: the "
                                           "first 2 attempts failed"), case["launch_retry"]
    assert int((tmp_path / "launches").read_text()) == 3
    # Bounded by the crash, not by the job's time limit (minutes): srun ends a step
    # whose task died (--kill-on-bad-exit), and the last retry is not retried again.
    job_s = float(case["job_completion_time_unix"]) - float(case["job_submit_time"])
    assert job_s < 120, (job_s, time.monotonic() - started)
