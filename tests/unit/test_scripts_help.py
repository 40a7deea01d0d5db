"""Every script of scripts/ and bench/ answers ``-h``/``--help`` with its own usage and
exit 0, running nothing; an option it does not know gives that usage and exit 2 (issue
41: ``scripts/acceptance --help`` ran the set-up, measured the disk's ceilings and then
printed ReFrame's help).

Each script runs in a copy of the repository's scripts (a sandbox), where what a script
would start is a stub that records it: the set-up, the emulated cluster, ReFrame, and
any use of ``.venv`` but the two that only parse arguments (``fsaccept system
--reframe-options``, pytest's ``--collect-only`` of nothing).  The test asserts that none
ran and that the sandbox has no ``.state`` (the real ``.state`` is not compared: the
integration tests beside it, on the other pytest worker, run the set-up)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(p.name for p in (REPO / "scripts").iterdir()
                 if p.is_file() and os.access(p, os.X_OK))
BENCH = sorted(p.name for p in (REPO / "bench").glob("*.py"))
REAL_VENV = Path(sys.executable).parent

#: What each script's usage starts with (the first line of its header comment, or
#: argparse's usage line).
FIRST_LINE = {"acceptance": "The main job: run the acceptance suite",
              "local-cluster": "usage: local-cluster",
              "nightly": "Nightly regression:",
              "repeat-acceptance": "Runs the main job (scripts/acceptance) N times",
              "setup": "Idempotent set-up on a fresh Debian 12 machine",
              "test": "The test command:"}


def _stub(path: Path, marks: Path, allow: str = "", real: str = "") -> None:
    """An executable that records its call in ``marks`` and exits 3; with ``allow`` (a
    shell pattern of its arguments) it runs ``real`` instead for those."""
    path.parent.mkdir(parents=True, exist_ok=True)
    run_real = (f'case "$*" in {allow}) exec {real} "$@" ;; esac\n' if allow else "")
    path.write_text(f"#!/bin/bash\n{run_real}echo \"{path.name} $*\" >> {marks}\nexit 3\n")
    path.chmod(0o755)


def _sandbox(tmp_path: Path, script: str) -> tuple[Path, Path, dict[str, str]]:
    """(the sandbox's repository, the file of recorded calls, the environment)."""
    repo, marks = tmp_path / "repo", tmp_path / "calls"
    marks.write_text("")
    shutil.copytree(REPO / "scripts", repo / "scripts")
    (repo / "lab").symlink_to(REPO / "lab")  # local-cluster's own parser
    for dep in ("setup", "local-cluster"):
        if dep != script:
            _stub(repo / "scripts" / dep, marks)
    bin_ = repo / ".venv" / "bin"
    _stub(bin_ / "fsaccept", marks, "'system --reframe-options'*", str(REAL_VENV / "fsaccept"))
    _stub(bin_ / "python", marks, "'-m pytest --collect-only -q'*|'-m lab.cluster'*",
          str(REAL_VENV / "python"))
    _stub(bin_ / "reframe", marks)
    path = tmp_path / "path"
    for cmd in ("apt-get", "dpkg-query", "mungekey", "srun", "sbatch", "git", "python3",
                "sudo", "systemctl"):
        _stub(path / cmd, marks)
    env = dict(os.environ, PATH=f"{path}:{os.environ['PATH']}", PYTHONPATH=str(REPO),
               FSACCEPT_STATE_DIR=str(repo / ".state"))
    return repo, marks, env


def _run(tmp_path: Path, script: str, *args: str) -> tuple[subprocess.CompletedProcess, str]:
    repo, marks, env = _sandbox(tmp_path, script)
    proc = subprocess.run([str(repo / "scripts" / script), *args], capture_output=True,
                          text=True, env=env, timeout=120, cwd=tmp_path)
    assert marks.read_text() == "", f"{script} {args} ran: {marks.read_text()}"
    assert not (repo / ".state").exists(), f"{script} {args} wrote .state"
    return proc, marks.read_text()


@pytest.mark.parametrize("option", ["--help", "-h"])
@pytest.mark.parametrize("script", SCRIPTS)
def test_each_script_answers_help_with_its_own_usage_running_nothing(script, option,
                                                                     tmp_path):
    proc, _ = _run(tmp_path, script, option)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(FIRST_LINE[script]), proc.stdout[:300]
    assert "-h" in proc.stdout and proc.stderr == ""


@pytest.mark.parametrize("script", ["acceptance", "nightly", "test"])
def test_help_after_other_arguments_is_still_the_scripts_own(script, tmp_path):
    """Never ReFrame's (or pytest's) help: it says where to find theirs."""
    proc, _ = _run(tmp_path, script, "-n", "IORWriteBandwidth", "--", "--help")
    assert proc.returncode == 0 and proc.stdout.startswith(FIRST_LINE[script])
    assert ("reframe --help" if script != "test" else "pytest --help") in proc.stdout


@pytest.mark.parametrize("args", [["--bogus"], ["--system"], ["--signed-by", "A", "--bogus"],
                                  ["-n", "IORWriteBandwidth", "--bogus"],
                                  ["--degraded", "--scaling"]], ids=" ".join)
def test_acceptance_refuses_an_unknown_option_before_anything_runs(args, tmp_path):
    proc, _ = _run(tmp_path, "acceptance", *args)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stderr.startswith("acceptance: error: ") or "reframe: error:" in proc.stderr
    assert FIRST_LINE["acceptance"] in proc.stderr and proc.stdout == ""


@pytest.mark.parametrize("script", SCRIPTS)
def test_each_script_refuses_a_bogus_option_with_its_usage(script, tmp_path):
    proc, _ = _run(tmp_path, script, "--bogus-option")
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    # local-cluster's parser names the command it misses first.
    assert "--bogus-option" in proc.stderr or "required: command" in proc.stderr
    assert FIRST_LINE[script].removeprefix("usage: ") in proc.stderr


def test_repeat_acceptance_stops_at_once_on_arguments_acceptance_refuses(tmp_path):
    proc, _ = _run(tmp_path, "repeat-acceptance", "3", "--bogus-option")
    assert proc.returncode == 2
    assert proc.stderr.count("acceptance: error: not an option of this script nor of "
                             "ReFrame: --bogus-option") == 1
    assert "run 1/3" not in proc.stdout


def test_ReFrames_own_options_still_pass_through(tmp_path):
    """Known to ReFrame, they pass the check (the sandbox's set-up stub then stops the
    script: exit 3, before any cluster or job)."""
    repo, marks, env = _sandbox(tmp_path, "acceptance")
    proc = subprocess.run([str(repo / "scripts" / "acceptance"), "--signed-by", "A",
                           "-n", "IORWriteBandwidth", "-t", "client", "--repeat", "3"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 3 and marks.read_text() == "setup \n", proc.stderr


@pytest.mark.parametrize("script", BENCH)
def test_each_bench_script_answers_help_without_running(script, tmp_path):
    proc = subprocess.run([sys.executable, str(REPO / "bench" / script), "--help"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert proc.returncode == 0 and proc.stdout.startswith("usage: "), proc.stderr
    assert list(tmp_path.iterdir()) == []
    bogus = subprocess.run([sys.executable, str(REPO / "bench" / script), "--bogus-option"],
                           capture_output=True, text=True, timeout=120, cwd=tmp_path,
                           env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert bogus.returncode == 2 and "usage: " in bogus.stderr
