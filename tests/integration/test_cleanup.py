"""A job's time limit hits in the middle of the removal of its data (issue 20: on a slow
GlusterFS volume, FioMetadata's EXIT trap was killed by Slurm after `rm -rf` had deleted
the owner marker, and 18,371 files stayed, unreported).  Here the removal is slow by
construction, not by the machine: a stand-in for `find` (first on the job's PATH)
deletes exactly half of what the trap asks it to, logging each path, then waits until
the time limit kills the job.  Then: the marker survived (never among the deleted
paths), the sanity stage resumed and finished the removal; when it cannot (a file held
by a mount), it says exactly what is left, with path and count, and the next session
resumes it.

The target is a parameter: ``FSACCEPT_CLEANUP_TARGET`` (and
``FSACCEPT_CLEANUP_TARGET_FSTYPE``, default: what findmnt says), e.g. a GlusterFS
mount; by default a directory on this host's disk.
"""

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from fsaccept.core.guards import filesystem_type
from fsaccept.suite.owned import owner_marker
from tests.conftest import REPO, reframe_command, run

pytestmark = [pytest.mark.integration, pytest.mark.volume_cluster]
CHECK = REPO / "tests" / "integration" / "src" / "cleanup_check.py"
FILES_PER_NODE = 2000

SLOW_FIND = """#!/usr/bin/env python3
# Stands for find in the job: `find DIR ... -delete` (the job's cleanup) deletes exactly
# half of what it would, logging each path, then waits (the time limit ends the job).
import os, subprocess, sys, time
REAL = "/usr/bin/find"
args = sys.argv[1:]
if "-delete" not in args:
    os.execv(REAL, [REAL, *args])
expr = [a if a != "-delete" else "-print0" for a in args]
out = subprocess.run([REAL, expr[0], "-depth", *expr[1:]], capture_output=True).stdout
entries = [os.fsdecode(e) for e in out.split(b"\\0") if e]
with open(os.environ["SLOW_FIND_LOG"], "a") as log:
    log.write(f"total {len(entries)}\\n")
    for e in entries[:len(entries) // 2]:
        (os.rmdir if os.path.isdir(e) and not os.path.islink(e) else os.unlink)(e)
        log.write("deleted " + os.path.join(os.getcwd(), e) + "\\n")
    log.write("waiting\\n")
time.sleep(3600)
"""


@pytest.fixture
def target(tmp_path):
    """The directory the jobs write below (FSACCEPT_CLEANUP_TARGET, else one on disk)."""
    given = os.environ.get("FSACCEPT_CLEANUP_TARGET")
    if given:
        path = Path(given) / f"cleanup-test-{os.getpid()}-{time.time_ns()}"
        path.mkdir()
        yield path
        shutil.rmtree(path, ignore_errors=True)
    else:
        path = tmp_path / "target"
        path.mkdir()
        yield path


def session_env(cluster_env, tmp_path, target, slow):
    """The ReFrame session's environment: the target, a reference whose time limit is
    one minute, and (``slow``) the stand-in for find first on PATH."""
    data = yaml.safe_load((REPO / "reference" / "local.yaml").read_text())
    data["time_limit_margin_min"] = 1
    ref = tmp_path / "local.yaml"
    ref.write_text(yaml.safe_dump(data))
    env = dict(cluster_env, FSACCEPT_REFERENCE=str(ref), FSACCEPT_TARGET=str(target),
               FSACCEPT_TARGET_FSTYPE=os.environ.get("FSACCEPT_CLEANUP_TARGET_FSTYPE")
               or filesystem_type(target))
    if slow:
        bin_dir = tmp_path / "slow-bin"
        bin_dir.mkdir(exist_ok=True)
        (bin_dir / "find").write_text(SLOW_FIND)
        (bin_dir / "find").chmod(0o755)
        env.update(PATH=f"{bin_dir}:{env['PATH']}", SLOW_FIND_LOG=str(tmp_path / "find.log"))
    return env


def start_session(env, tmp_path, name, files=FILES_PER_NODE, sleep_s=0):
    prefix = tmp_path / name
    cmd = reframe_command("-c", str(CHECK), "--system", "local", "-n", "^ManySmallFiles$",
                          "-S", f"files={files}", "-S", f"sleep_s={sleep_s}", "-r",
                          prefix=prefix)
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True), prefix


def finish(session, prefix):
    output, _ = session.communicate(timeout=900)
    report = json.loads((prefix / "report.json").read_text())
    [case] = [c for c in report["runs"][-1]["testcases"]
              if c["name"].startswith("ManySmallFiles")]
    return output, case


def wait_for(path, text, timeout=600):
    """Until ``path`` holds a line ``text`` (the stand-in reached it)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and text in path.read_text().splitlines():
            return
        time.sleep(0.5)
    raise AssertionError(f"{path}: no line {text!r}")


def check_cut_short(log, data_dir, nodes):
    """The trap's removal was cut in the middle, and never reached the marker."""
    lines = log.read_text().splitlines()
    [total] = [int(li.split()[1]) for li in lines if li.startswith("total ")]
    deleted = [li.split(" ", 1)[1] for li in lines if li.startswith("deleted ")]
    # Every file and node directory but the marker was asked for; half was deleted.
    assert total == nodes * (FILES_PER_NODE + 1)
    assert len(deleted) == total // 2 and "waiting" in lines
    assert not any(Path(p).name.startswith(".fsaccept-owner-") for p in deleted)
    assert all(p.startswith(str(data_dir) + "/") for p in deleted)
    return total - len(deleted)


def data_dirs(target):
    root = target / "fsaccept"
    return sorted(root.iterdir()) if root.is_dir() else []


def test_a_time_limit_in_the_middle_of_the_removal_is_resumed_by_the_sanity_stage(
        cluster_env, tmp_path, target):
    env = session_env(cluster_env, tmp_path, target, slow=True)
    session, prefix = start_session(env, tmp_path, "rfm")
    output, case = finish(session, prefix)
    # The benchmark had ended (exit 0) when the time limit came: it cut short only the
    # removal, which is said, and is no reason to doubt a figure.
    assert case["result"] == "pass", output[-3000:]
    assert re.fullmatch(r"Slurm cancelled job \d+ at \S+ due to time limit, after the "
                        r"benchmark had ended \(exit 0\), while the job removed its data",
                        case["time_limit_after_benchmark"]), case["time_limit_after_benchmark"]
    assert f"ManySmallFiles: {case['time_limit_after_benchmark']}" in output
    data_dir = Path(case["target_dir"])
    check_cut_short(tmp_path / "find.log", data_dir, case["num_nodes"])
    # The marker survived the cut (else the sanity stage would have left it all alone
    # and said so): the sanity stage removed the rest, and nothing is left to report.
    assert not data_dir.exists() and data_dirs(target) == []
    assert case["data_left"] == ""
    assert "data left on the target" not in output


@pytest.mark.skipif(os.geteuid() != 0, reason="holding a file with a bind mount needs root")
def test_what_the_sanity_stage_cannot_remove_is_reported_and_the_next_session_resumes_it(
        cluster_env, tmp_path, target):
    env = session_env(cluster_env, tmp_path, target, slow=True)
    log = tmp_path / "find.log"
    session, prefix = start_session(env, tmp_path, "rfm")
    held = None
    try:
        wait_for(log, "waiting")
        # One file the trap did not reach is held by a mount: nobody can unlink it
        # (EBUSY), so the sanity stage cannot finish either.
        [data_dir] = data_dirs(target)
        held = next(Path(root) / f for root, _, files in os.walk(data_dir) for f in files
                    if not f.startswith(".fsaccept-owner-"))
        subprocess.run(["mount", "--bind", "/dev/null", str(held)], check=True)
        output, case = finish(session, prefix)
    finally:
        if session.poll() is None:
            session.kill()
        if held is not None:
            subprocess.run(["umount", str(held)], check=False)
    check_cut_short(log, data_dir, case["num_nodes"])
    # Exactly what is left: its path, its count (the held file), why.
    line = case["data_left"]
    assert line.startswith(f"{data_dir}: 1 file could not be removed ({held}: "), line
    assert "busy" in line, line
    assert f"ManySmallFiles: data left on the target: {line}" in output
    # The marker is still there: the proof the next session needs, with the ledger.
    assert (data_dir / owner_marker(data_dir.name.split(".", 1)[1])).is_file()
    assert held.parent.is_dir()
    # The sign-off report says so too, in both files.
    proc = run([str(REPO / ".venv" / "bin" / "fsaccept"), "report", str(prefix / "report.json"),
                "--out", str(tmp_path / "report")], env=env)
    assert f"data left on the target: ManySmallFiles: {line}" in proc.stdout, proc.stdout
    assert str(held) in (tmp_path / "report" / "report.html").read_text()
    assert "Data left on the target" in (tmp_path / "report" / "report.md").read_text()

    # The next session (the file no longer held, find the real one) resumes it first.
    env = session_env(cluster_env, tmp_path, target, slow=False)
    session, prefix = start_session(env, tmp_path, "rfm2", files=10)
    output, case = finish(session, prefix)
    assert case["result"] == "pass", output[-3000:]
    assert f"fsaccept: removed {data_dir}, left by an earlier run" in output
    assert not data_dir.exists() and data_dirs(target) == []


def test_a_time_limit_in_the_middle_of_the_benchmark_makes_it_invalid(cluster_env, tmp_path,
                                                                       target):
    """Issue 20's FioMetadata: the benchmark itself ran into the time limit."""
    env = session_env(cluster_env, tmp_path, target, slow=False)
    session, prefix = start_session(env, tmp_path, "rfm", files=10, sleep_s=3600)
    output, case = finish(session, prefix)
    assert case["fail_phase"] == "sanity", output[-3000:]
    assert re.search(r"INVALID: Slurm cancelled job \d+ .*due to time limit",
                     case["fail_reason"]), case["fail_reason"]
    assert case["time_limit_after_benchmark"] == ""
    # Slurm's accounting (the `slurm` backend) recorded the same end, beside the figures.
    assert re.fullmatch(rf"{case['jobid']}\|TIMEOUT\|0:0\|\d+\|n\S*\|\S+",
                        case["job_accounting"]), case["job_accounting"]
    assert not Path(case["target_dir"]).exists() and data_dirs(target) == []
