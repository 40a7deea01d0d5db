"""Generated job scripts, run for real with ``srun``, ``rm`` and the benchmarks
replaced by recorders: no path escapes its quoting, and cleanup removes only a
directory this run created.

The target has a space, ``;``, ``$(...)``, backquotes and both quotes in its
name; ReFrame writes the job scripts (``--dry-run``: nothing is submitted), and
each script then runs under bash with recorders first on PATH.
"""

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from fsaccept.core.guards import filesystem_type
from tests.conftest import REPO, reframe_command, run

pytestmark = pytest.mark.integration
NASTY = "tgt dir;$(touch PWNED)'q\"`touch PWNED2`"

RECORDER = """#!/usr/bin/env python3
import json, os, sys
with open(os.environ["REC_LOG"], "a") as log:
    log.write(json.dumps([os.path.basename(sys.argv[0]), *sys.argv[1:]]) + "\\n")
if os.path.basename(sys.argv[0]) == "srun":  # run what srun would launch, once
    args = sys.argv[1:]
    while args and args[0].startswith("-"):
        args = args[1:]
    os.environ.setdefault("SLURMD_NODENAME", "n1")
    os.environ.setdefault("SLURM_PROCID", "0")
    os.execvp(args[0], args)
"""


@pytest.fixture
def recorders(tmp_path):
    bin_dir = tmp_path / "recorders"
    bin_dir.mkdir()
    for name in ("srun", "rm", "ior", "mdtest", "fio"):
        (bin_dir / name).write_text(RECORDER)
        (bin_dir / name).chmod(0o755)
    return bin_dir


def job_scripts(tmp_path, cluster_env, target, check_file, names):
    env = dict(cluster_env, FSACCEPT_TARGET=str(target),
               FSACCEPT_TARGET_FSTYPE=filesystem_type(target))
    prefix = tmp_path / "rfm"
    proc = run(reframe_command("-c", str(REPO / "checks" / check_file), "--system", "local",
                               "-n", f"^({'|'.join(names)})$", "--dry-run", prefix=prefix),
               env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    return {p.parent.name.split("_")[0] if "~" not in p.parent.name else p.parent.name: p
            for p in prefix.rglob("rfm_job.sh")}


def run_script(script, recorders, log):
    # One node: the recorder standing for srun runs one task of the per-node mount check.
    env = dict(os.environ, PATH=f"{recorders}:{os.environ['PATH']}", REC_LOG=str(log),
               SLURM_JOB_NUM_NODES="1")
    proc = subprocess.run(["bash", script.name], cwd=script.parent, env=env,
                          capture_output=True, text=True, timeout=120)
    calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    log.unlink(missing_ok=True)
    return proc, calls


def data_dir_of(script):
    [line] = [l for l in script.read_text().splitlines() if l.startswith("fsaccept_data=")]
    return subprocess.run(["bash", "-c", f"{line}; printf %s \"$fsaccept_data\""],
                          capture_output=True, text=True).stdout


def no_injection(tmp_path):
    return [str(p) for p in tmp_path.rglob("PWNED*")]


@pytest.mark.parametrize("check_file, name, binary, flag", [
    ("ior_acceptance.py", "IORWriteBandwidth", "ior", "-o"),
    ("mdtest_metadata.py", "MdtestEasy", "mdtest", "-d"),
    ("fio_client.py", "FioSequentialWrite", "fio", "--directory"),
])
def test_paths_reach_the_benchmark_whole_and_cleanup_removes_only_its_own_directory(
        cluster_env, tmp_path, recorders, check_file, name, binary, flag):
    target = tmp_path / "t" / NASTY
    target.mkdir(parents=True)
    script = job_scripts(tmp_path, cluster_env, target, check_file, [name])[name]
    data = data_dir_of(script)
    assert data.startswith(str(target / "fsaccept") + "/"), data
    log = tmp_path / "calls.jsonl"

    proc, calls = run_script(script, recorders, log)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert no_injection(tmp_path) == []
    # One step: the benchmark's, whose tasks check their node first (the mount check
    # is no step of its own: a step launch is most of a small job's overhead).
    assert [c[0] for c in calls].count("srun") == 1, calls
    assert re.search(r"^fsaccept-node-check n1 ok ", proc.stdout, re.M), proc.stdout
    [bench] = [c for c in calls if c[0] == binary and any(a.startswith(flag) for a in c)]
    if flag == "--directory":  # fio: one directory per node below the data directory
        assert f"--directory={data}/n1" in bench, bench
    else:
        value = bench[bench.index(flag) + 1]
        assert value.startswith(data + "/"), (value, data)
    # The trap removes everything in the data directory but the owner marker, then the
    # marker by its exact path (the recorder standing for rm leaves it: the marker is
    # the last thing removed, and rmdir then fails on it), and nothing beside it.
    [owner] = [subprocess.run(["bash", "-c", f'{l}; printf %s "$fsaccept_owner"'],
                              capture_output=True, text=True).stdout
               for l in script.read_text().splitlines() if l.startswith("fsaccept_owner=")]
    assert [c for c in calls if c[0] == "rm" and c[-1].startswith(data)
            and ".fsaccept-odirect-probe." not in c[-1]] == [["rm", "-f", "--", f"{data}/{owner}"]]
    assert os.listdir(data) == [owner] and target.is_dir()
    assert sorted(os.listdir(target / "fsaccept")) == [Path(data).name]

    # A data directory this run did not create (no owner marker) is never removed:
    # the job refuses to run, and the trap leaves it alone.
    shutil.rmtree(data)
    Path(data).mkdir()
    (Path(data) / "someone-elses-file").write_text("keep me")
    proc, calls = run_script(script, recorders, log)
    assert proc.returncode == 3
    assert re.search(r"^fsaccept-abort (node \S*: )?cannot create a new .*" + re.escape(data), proc.stdout,
                     re.M), proc.stdout
    assert [c for c in calls if c[0] in ("rm", binary)] == []
    assert (Path(data) / "someone-elses-file").read_text() == "keep me"


def test_a_symlink_planted_after_the_guard_cannot_send_writes_elsewhere(
        cluster_env, tmp_path, recorders):
    target = tmp_path / "t" / NASTY
    target.mkdir(parents=True)
    script = job_scripts(tmp_path, cluster_env, target, "ior_acceptance.py",
                         ["IORWriteBandwidth"])["IORWriteBandwidth"]
    elsewhere = Path("/dev/shm") / f"fsaccept-test-{os.getpid()}"  # a tmpfs
    elsewhere.mkdir()
    try:
        (target / "fsaccept").rmdir() if (target / "fsaccept").exists() else None
        (target / "fsaccept").symlink_to(elsewhere)
        proc, calls = run_script(script, recorders, tmp_path / "calls.jsonl")
        assert proc.returncode == 3
        assert "is on the mount /dev/shm, not on" in proc.stdout, proc.stdout
        assert [c for c in calls if c[0] in ("rm", "ior")] == []
        assert list(elsewhere.iterdir()) == []
    finally:
        shutil.rmtree(elsewhere)


@pytest.mark.parametrize("check_file, name, char", [
    ("fio_client.py", "FioSequentialWrite", ":"),
    ("mdtest_metadata.py", "MdtestEasy", "@"),
    ("ior_acceptance.py", "IORWriteBandwidth", "@"),
])
def test_a_target_the_benchmark_would_split_is_refused_before_any_job(
        cluster_env, tmp_path, check_file, name, char):
    target = tmp_path / f"a{char}b"
    target.mkdir()
    env = dict(cluster_env, FSACCEPT_TARGET=str(target),
               FSACCEPT_TARGET_FSTYPE=filesystem_type(target))
    prefix = tmp_path / "rfm"
    proc = run(reframe_command("-c", str(REPO / "checks" / check_file), "--system", "local",
                               "-n", f"^{name}$", "--dry-run", prefix=prefix), env=env)
    assert proc.returncode != 0
    assert f"holds {char!r}" in proc.stdout and str(target) in proc.stdout, proc.stdout[-3000:]
    assert not list(prefix.rglob("rfm_job.sh"))


def test_mpiio_hint_values_reach_ior_whole_and_run_nothing(cluster_env, tmp_path, recorders):
    # A hint value becomes `export IOR_HINT__MPI__<key>=<value>` in the job script: quoted
    # once, it is one value, never a command, neither in the job nor in ReFrame (which runs
    # $(...) in the values of a test's env_vars, where hints are therefore not given).
    from tests.conftest import reference_copy
    value = "disable; touch PWNED3 $(touch PWNED4) `touch PWNED5` 'q\" x"

    def edit(data):
        data["tests"]["ior_shared_write"].update(api="MPIIO", hints={"romio_cb_write": value})

    env = dict(cluster_env, FSACCEPT_REFERENCE=reference_copy(tmp_path, edit)[
        "FSACCEPT_REFERENCE"])
    target = tmp_path / "t"
    target.mkdir()
    script = job_scripts(tmp_path, env, target, "ior_acceptance.py",
                         ["IORSharedFileWrite"])["IORSharedFileWrite"]
    [export] = [l for l in script.read_text().splitlines()
                if l.startswith("export IOR_HINT__MPI__romio_cb_write=")]
    seen = subprocess.run(["bash", "-c", f'{export}; printf %s "$IOR_HINT__MPI__romio_cb_write"'],
                          cwd=tmp_path, capture_output=True, text=True).stdout
    assert seen == value
    proc, calls = run_script(script, recorders, tmp_path / "calls.jsonl")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert no_injection(tmp_path) == [] and any(c[0] == "ior" for c in calls)
