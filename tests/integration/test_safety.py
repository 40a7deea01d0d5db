"""Safety guards and faults, for real: real mounts (size-limited and read-only
tmpfs), real Slurm jobs, real IOR where it is installed."""

import contextlib
import json
import os
import re
import subprocess

import pytest
import yaml

from tests.conftest import REPO, reframe_command, run

pytestmark = pytest.mark.integration
LOCAL_REFERENCE = REPO / "reference" / "local.yaml"
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")


@contextlib.contextmanager
def tmpfs(path, size="64m", readonly=False):
    path.mkdir(parents=True, exist_ok=True)
    opts = f"size={size}" + (",ro" if readonly else "")
    subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(path)], check=True)
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def reference_env(tmp_path, edit):
    data = yaml.safe_load(LOCAL_REFERENCE.read_text())
    edit(data)
    path = tmp_path / "local.yaml"
    path.write_text(yaml.safe_dump(data))
    return dict(os.environ, FSACCEPT_REFERENCE=str(path)), path


def run_check(tmp_path, name, env, *extra, check_file="ior_acceptance.py"):
    proc = run(reframe_command("-c", str(REPO / "checks" / check_file), "--system", "local",
                               "-n", name, *extra, "-r", prefix=tmp_path / "rfm"),
               env=env, timeout=900)
    report = json.loads((tmp_path / "rfm" / "report.json").read_text())
    # The checks themselves, not the fixture that locates the benchmarks.
    return proc, [c for c in report["runs"][-1]["testcases"]
                  if not c["name"].startswith("BenchmarkBinaries")]


def target(data, path, fstype, **extra):
    data["target"] = {"path": str(path), "fstype": fstype, **extra}


def test_target_on_the_wrong_file_system_type_is_refused_before_any_job(cluster_env, tmp_path):
    env, ref = reference_env(tmp_path, lambda d: target(d, tmp_path, "lustre"))
    proc, [case] = run_check(tmp_path, "IORWriteBandwidth", env)
    assert case["fail_phase"] == "setup" and case["jobid"] is None
    assert re.search(rf"target {tmp_path} \(from {ref}\) is on a \S+ file system, but the "
                     r"reference file expects lustre", case["fail_reason"])


def test_missing_target_is_refused_before_any_job(cluster_env, tmp_path):
    env, ref = reference_env(tmp_path, lambda d: target(d, tmp_path / "typo", "ext4"))
    proc, [case] = run_check(tmp_path, "IORWriteBandwidth", env)
    assert case["fail_phase"] == "setup" and case["jobid"] is None
    assert f"target {tmp_path}/typo (from {ref}) does not exist" in case["fail_reason"]


@needs_root
def test_read_only_target_is_refused(cluster_env, tmp_path):
    with tmpfs(tmp_path / "ro", readonly=True) as mnt:
        env, ref = reference_env(tmp_path, lambda d: target(d, mnt, "tmpfs"))
        proc, [case] = run_check(tmp_path, "IORWriteBandwidth", env)
    assert case["fail_phase"] == "setup" and case["jobid"] is None
    assert f"target {mnt} (from {ref}) is not writable" in case["fail_reason"]


@needs_root
def test_capacity_guard_refuses_a_test_that_could_fill_the_target(cluster_env, tmp_path):
    with tmpfs(tmp_path / "small", size="64m") as mnt:
        env, _ = reference_env(tmp_path, lambda d: target(d, mnt, "tmpfs"))
        proc, [case] = run_check(tmp_path, "IORWriteBandwidth", env)
        assert os.listdir(mnt) == []
    assert case["fail_phase"] == "setup" and case["jobid"] is None
    # 4 ranks x 1 MiB x 4096 segments (no bandwidth cap declared for this target).
    assert (f"target {mnt}: the test plans to write up to 16.00 GiB, more than 0.5 of the "
            "0.06 GiB free (0.03 GiB)") in case["fail_reason"]


@needs_root
def test_capacity_guard_counts_every_dataset_kept_for_a_later_read(cluster_env, tmp_path):
    # Each read test's dataset alone fits in half of the tmpfs (512 MiB), both do not:
    # 4 ranks x 75 x 1 MiB = 300 MiB and 4 ranks x 64 MiB = 256 MiB.  Dry run: the
    # guards run, no job does; `ior` need only be found on PATH.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "ior").write_text("#!/bin/sh\nexit 99\n")
    (bin_dir / "ior").chmod(0o755)

    def edit(data):
        target(data, mnt, "tmpfs")
        data["tests"]["ior_read_bandwidth"]["segments"] = 75
        data["tests"]["ior_random_read_iops"]["block_size"] = "64MiB"

    with tmpfs(tmp_path / "small", size="1g") as mnt:
        env, _ = reference_env(tmp_path, edit)
        env["PATH"] = f"{bin_dir}:{env['PATH']}"
        proc = run(reframe_command("-c", str(REPO / "checks" / "ior_acceptance.py"),
                                   "--system", "local", "-n",
                                   "^(IORStonewalledRead|IORRandomReadIOPS)$", "--dry-run",
                                   prefix=tmp_path / "rfm"), env=env, timeout=300)
        assert os.listdir(mnt) == []
    # The dataset set up second is refused, naming the first; nothing else is.
    refused = re.findall(r"^  \* Reason: (.*)$", proc.stdout, re.M)
    assert len(refused) == 1, proc.stdout[-4000:]
    sizes = {"IORReadDatasetGeneration": "0.29", "IORRandomReadDatasetGeneration": "0.25"}
    found = re.search(rf"guard error: target {mnt}: the test plans to write up to (0.\d\d) GiB "
                      r"while this run keeps up to (0.\d\d) GiB of datasets for later reads "
                      r"\((\w+)_\w+ (0.\d\d) GiB\): together more than 0.5 of the 1.00 GiB "
                      r"free before those datasets \(0.50 GiB\)", refused[0])
    assert found, refused[0]
    planned, kept, first, first_size = found.groups()
    assert kept == first_size == sizes[first]
    assert {planned, kept} == set(sizes.values())


@needs_root
@pytest.mark.usefixtures("ior_available")
def test_a_full_target_gives_iors_error_line_and_is_cleaned(cluster_env, tmp_path):
    # The declared cap (1 MiB/s x 2 s) lets the guard pass; the real disk fills 64 MiB at once.
    def full_tmpfs(d):
        target(d, mnt, "tmpfs", max_bandwidth_mib_s=1)
        # tmpfs is page cache: O_DIRECT means nothing there (the job's probe refuses it).
        d["tests"]["ior_write_bandwidth"]["direct_io"] = False
    with tmpfs(tmp_path / "full", size="64m") as mnt:
        env, _ = reference_env(tmp_path, full_tmpfs)
        proc, [case] = run_check(tmp_path, "IORWriteBandwidth", env)
        left = [str(p) for p in mnt.rglob("*") if p.is_file()]
    assert case["fail_phase"] == "sanity"
    assert case["fail_reason"].startswith("sanity error: INVALID: line ")
    assert re.search(r"line \d+: WARNING: write\(\d+, 0x[0-9a-f]+, \d+\) failed No space "
                     r"left on device", case["fail_reason"]), case["fail_reason"]
    assert "more such lines in the output" in case["fail_reason"]
    assert left == [], f"files left on the full target: {left}"


def test_o_direct_that_is_not_honoured_makes_the_test_invalid(cluster_env, tmp_path):
    """A test that asks for O_DIRECT on a file system that does not give it (tmpfs keeps
    every page in the page cache) is INVALID before IOR runs, never a buffered figure."""
    with tmpfs(tmp_path / "cache", size="64m") as mnt:
        env, _ = reference_env(tmp_path, lambda d: target(d, mnt, "tmpfs",
                                                          max_bandwidth_mib_s=1))
        proc, [case] = run_check(tmp_path, "IORWriteBandwidth", env)
        left = [str(p) for p in mnt.rglob("*") if p.is_file()]
    assert case["direct_io"] and case["fail_phase"] == "sanity"
    assert re.search(r"INVALID: the job refused to run the benchmark: node n\d: O_DIRECT is "
                     r"not honoured on \S+: a direct write left \d+ pages in the page cache",
                     case["fail_reason"]), case["fail_reason"]
    assert left == [], f"files left on the target: {left}"


def test_benchmark_jobs_never_overlap(cluster_env, tmp_path):
    proc, cases = run_check(tmp_path, "MPILaunchSanity", dict(os.environ), "--repeat", "3",
                            check_file="launch_sanity.py")
    # Whether each launch passed is not the point (on a loaded host Open MPI 4.1.4's TCP
    # BTL now and then segfaults in MPI_Init; that check does not retry): every job ran.
    assert len(cases) == 3 and all(case.get("jobid") for case in cases), proc.stdout[-3000:]
    spans = []
    for case in cases:
        info = run(["scontrol", "show", "job", "-o", str(case["jobid"])], env=cluster_env).stdout
        start = re.search(r"StartTime=(\S+)", info).group(1)
        end = re.search(r"EndTime=(\S+)", info).group(1)
        assert "OverSubscribe=NO" in info, info  # exclusive allocation
        spans.append((start, end, case["jobid"]))
    spans.sort()
    for (s1, e1, j1), (s2, e2, j2) in zip(spans, spans[1:]):
        assert e1 <= s2, f"job {j1} ({s1}..{e1}) overlaps job {j2} ({s2}..{e2})"
