"""The IO500 check on the emulated cluster, without an io500 binary: its job script and
generated config by ReFrame's --dry-run, and the check end to end with a *replay* of a
real io500 capture in place of the binary (a script that copies the capture's result
directory and prints its stdout: IO500's files, never a measurement of this cluster)."""

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO, reference_copy, reframe_command, run
from tests.unit.test_io500 import CAPTURES

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(CAPTURES is None, reason="the IO500 captures are absent")]

REPLAY = """#!/bin/bash
# A replay of the real io500 capture {capture}, standing in for the io500 binary: it
# copies the capture's result directory to io500's resultdir and prints its stdout.
[ "${{SLURM_PROCID:-0}}" = 0 ] || exit 0
mkdir -p io500-results && cp -r {result}/. io500-results/
cat {stdout}
"""

ENTRY = {"node_fraction": 0.5, "ranks_per_node": 1, "stonewall_s": 5,
         "ior_easy_block_size": "256MiB", "ior_hard_segments": 2000,
         "mdtest_easy_files_per_rank": 5000, "mdtest_hard_files_per_rank": 2000,
         "thresholds": {"total": {"value": 0.1, "unit": "score"}}}


def _replay(tmp_path, capture="standard-2rank"):
    path = tmp_path / "bin" / "io500"
    path.parent.mkdir()
    path.write_text(REPLAY.format(capture=capture, result=CAPTURES / capture / "result",
                                  stdout=CAPTURES / capture / "stdout.txt"))
    path.chmod(0o755)
    return path.parent


def _env(cluster_env, tmp_path, bin_dir):
    env = reference_copy(tmp_path, lambda d: d["tests"].update(io500=ENTRY))
    return dict(cluster_env, FSACCEPT_REFERENCE=env["FSACCEPT_REFERENCE"],
                PATH=f"{bin_dir}:{cluster_env['PATH']}")


def test_the_job_script_and_config_by_dry_run(cluster_env, tmp_path):
    env = _env(cluster_env, tmp_path, _replay(tmp_path))
    prefix = tmp_path / "rfm"
    proc = run(reframe_command("-c", str(REPO / "checks" / "io500"), "--system", "local",
                               "-t", "io500", "--dry-run", prefix=prefix), env=env)
    assert proc.returncode == 0, proc.stdout[-3000:]
    [script] = [p for p in prefix.rglob("rfm_job.sh") if "IO500" in str(p)]
    [ini] = list(script.parent.glob("io500.ini"))
    text = script.read_text()
    assert "srun" in text and "io500.ini" in text and "--distribution=block" in text
    assert "fsaccept_remove_data" in text and 'mkdir -p -- ' in text
    config = ini.read_text()
    assert "dataPacketType = random" in config and "stonewall-time = 5" in config
    assert "resultdir = io500-results" in config and "blockSize = 256m" in config
    datadir = next(l.split(" = ", 1)[1] for l in config.splitlines()
                   if l.startswith("datadir = "))
    assert "/fsaccept/IO500." in datadir and datadir.endswith("/io500")


def test_a_replayed_capture_is_judged_invalid_and_its_results_kept(cluster_env, tmp_path):
    env = _env(cluster_env, tmp_path, _replay(tmp_path))
    prefix = tmp_path / "rfm"
    proc = run(reframe_command("-c", str(REPO / "checks" / "io500"), "--system", "local",
                               "-t", "io500", "-r", prefix=prefix), env=env, timeout=600)
    [case] = [c for c in json.loads((prefix / "report.json").read_text())["runs"][-1]["testcases"]
              if c["name"].split()[0] == "IO500"]
    assert case["result"] == "fail", proc.stdout[-3000:]
    assert "stonewall time 5 s (from config.ini)" in case["fail_reason"]
    assert json.loads(case["io500_result"])["version"] == "io500-isc26_v1"
    # A test that did not pass keeps its stage directory (ReFrame copies a passing test's
    # kept files to its output directory).
    kept = Path(case["stagedir"]) / "io500-results" / "result.txt"
    assert kept.is_file()
    shutil.rmtree(prefix, ignore_errors=True)


def test_without_a_binary_it_is_skipped_naming_the_fix(cluster_env, tmp_path):
    env = _env(cluster_env, tmp_path, tmp_path)
    env["PATH"] = ":".join(p for p in env["PATH"].split(":") if not shutil.which("io500", path=p))
    prefix = tmp_path / "rfm"
    proc = run(reframe_command("-c", str(REPO / "checks" / "io500"), "--system", "local",
                               "-t", "io500", "-r", prefix=prefix), env=env)
    assert "prepare.sh" in proc.stdout and "io500_binary" in proc.stdout, proc.stdout[-3000:]
