"""Repetitions on the emulated cluster (issue 51 §3): IORWriteBandwidth run 3 times
(``--repeat 3``), one repetition or every one made slow on purpose, judged by the
product's own functions (fsaccept/reporting/repetitions.py, ``fsaccept compare``).

The slowdown is a fixture's, never the machine's: tests/integration/src/ior_writes.c
makes every write of the slow job sleep 5 s, so that its ranks stop at the 2 s
stonewall after one transfer each (4 MiB in about 5 s, under 1 MiB/s), while a run at
full speed moves hundreds of MiB/s on this host's disk, loaded or not.  The thresholds
are floors of 1 (tests/conftest.py ``any_load_thresholds``).  The assertions are on the
verdicts, on significance and on direction, never on a speed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from fsaccept.reporting import runreport
from fsaccept.suite.reference import load_reference
from tests.conftest import REPO, any_load_thresholds, run_checks

pytestmark = pytest.mark.integration
needs_ior = pytest.mark.usefixtures("ior_available")
CHECKS = "ior_acceptance.py"
KEY = "ior_write_bandwidth"


def reference(directory: Path, **entry) -> Path:
    """reference/local.yaml, thresholds no load misses, IORWriteBandwidth's entry with
    3 repetitions and ``entry``."""
    data = any_load_thresholds(yaml.safe_load((REPO / "reference" / "local.yaml").read_text()))
    data["tests"][KEY].update(repetitions=3, **entry)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "local.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def repeated(tmp_path: Path, name: str, preload: Path, slow: str | None) -> Path:
    """IORWriteBandwidth 3 times; ``slow``: FSACCEPT_TEST_SLOW_JOB (a path: the first
    job to claim it is slow; "every": each is).  ReFrame's run report."""
    env = {"FSACCEPT_REFERENCE": str(reference(tmp_path / name)),
           "LD_PRELOAD": str(preload)}
    if slow:
        env.update(FSACCEPT_TEST_SLOW_JOB=slow, FSACCEPT_TEST_SLOW_DELAY_MS="5000",
                   FSACCEPT_TEST_SLOW_TOTAL_S="60")
    proc, _ = run_checks(CHECKS, tmp_path / name, "-n", "^IORWriteBandwidth$", "--repeat", "3",
                         env=dict(os.environ, **env))
    report = tmp_path / name / "rfm" / "report.json"
    assert report.is_file(), proc.stdout[-4000:]
    return report


def judged(report: Path, directory: Path, **entry) -> runreport.Test:
    """The test as the report and the sign-off judge it, against the entry ``entry``."""
    tests = runreport.tests_of(json.loads(report.read_text()),
                               reference=load_reference(reference(directory, **entry)))
    return next(t for t in tests if t.name == "IORWriteBandwidth")


@needs_ior
def test_one_slow_repetition_fails_on_min_is_too_noisy_or_passes_on_the_mean(
        cluster_env, tmp_path, ior_writes_preload):
    report = repeated(tmp_path, "one-slow", ior_writes_preload, str(tmp_path / "slow-job"))
    values = [tc["perfvalues"]["local:compute:write_bandwidth"][0]
              for tc in json.loads(report.read_text())["runs"][-1]["testcases"]
              if tc["name"].startswith("IORWriteBandwidth")]
    print("write_bandwidth of each repetition (MiB/s):", values)
    assert len(values) == 3 and sum(v < 1 for v in values) == 1, values
    # judge: min, a guarantee: the slow run fails the test.
    t = judged(report, tmp_path / "min", judge="min")
    assert t.verdict == "FAIL", t.reason
    assert re.search(r"^run \d: write_bandwidth [\d.]+ MiB/s below the threshold 0\.9 MiB/s",
                     t.reason), t.reason
    # judge: mean, the noise bounded: too noisy to judge.
    t = judged(report, tmp_path / "noisy", judge="mean", max_cov=0.5)
    assert t.verdict == "INVALID", t.reason
    assert "write_bandwidth: too noisy to judge (CoV" in t.reason, t.reason
    # judge: mean alone: the mean is above the floor.
    t = judged(report, tmp_path / "mean", judge="mean")
    print("judge: mean:", t.verdict, t.figures[0].stats.text("MiB/s"))
    assert t.verdict == "PASS", t.reason
    assert t.figures[0].stats.n == 3


@needs_ior
def test_a_slowed_run_compared_with_a_full_speed_one_is_significantly_worse(
        cluster_env, tmp_path, ior_writes_preload):
    a = repeated(tmp_path, "a", ior_writes_preload, None)
    b = repeated(tmp_path, "b", ior_writes_preload, "every")
    out = tmp_path / "comparison"
    proc = subprocess.run([sys.executable, "-m", "fsaccept", "compare", str(a), str(b),
                           "--out", str(out), "--min-ratio", "0.9"],
                          capture_output=True, text=True, cwd=REPO, timeout=300)
    said = proc.stdout + proc.stderr
    assert proc.returncode == 1, said
    line = next(l for l in said.splitlines() if "IORWriteBandwidth write_bandwidth" in l)
    print(line)
    assert re.search(r": 0\.\d+ ± [\d.]+ × \(95 % CI [\d.]+ … [\d.]+: B is lower; "
                     r"significant\): B is worse", line), line
    assert (out / "comparison.md").is_file() and (out / "plots" / "forest-plot.png").is_file()
