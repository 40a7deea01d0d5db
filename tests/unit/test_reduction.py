"""Data reduction (issue 23): the patterns IOR and fio write really are irreducible, the
probe tells a compressing file system (btrfs compress-force=zstd on a loop file) from a
plain one, and a reducible figure on the compressing one is INVALID.

The btrfs tests need root, ``mkfs.btrfs`` (btrfs-progs, in scripts/setup) and loop
devices; the IOR ones the Spack-built IOR (skipped, saying so, without them)."""

from __future__ import annotations

import hashlib
import lzma
import os
import shutil
import signal
import subprocess
import sys
import time
import zlib
from pathlib import Path
from types import SimpleNamespace

import pytest
from reframe.core.exceptions import SanityError

from fsaccept.benchmarks.fio import command as fiocmd
from fsaccept.benchmarks.ior import command as iorcmd
from fsaccept.benchmarks.ior.parse import parse_ior
from fsaccept.core import reduction
from fsaccept.core.paths import REPO_ROOT
from fsaccept.core.units import KIB, MIB
from fsaccept.rfm.probe import DataReductionProbe
from fsaccept.suite.spack import view_bin
from tests.btrfs_mounts import btrfs_loop_mounts

DATA = Path(__file__).resolve().parents[1] / "data" / "ior"
VIEW_BIN = view_bin("local-spack")  # the Spack view scripts/setup built
MPI_ENV = {"OMPI_MCA_btl": "self,tcp", "OMPI_MCA_btl_tcp_if_include": "lo",
           "OMPI_MCA_oob_tcp_if_include": "lo", "PMIX_MCA_gds": "hash"}


def ior_binary() -> str:
    found = shutil.which("ior", path=f"{VIEW_BIN}:{os.environ.get('PATH', '')}")
    if not found or not shutil.which("mpirun"):
        pytest.skip("IOR 4.0.0 and mpirun needed: scripts/setup --spack ... builds IOR")
    return found


def run_ior(args: list[str], cwd: Path) -> str:
    cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "2", ior_binary(),
           *args]
    proc = subprocess.run(cmd, cwd=cwd, env={**os.environ, **MPI_ENV}, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def ratio(data: bytes) -> tuple[float, float]:
    """(gzip-level, xz-level) compression ratios."""
    return len(data) / len(zlib.compress(data, 9)), len(data) / len(lzma.compress(data))


def distinct(data: bytes, unit: int) -> float:
    """Fraction of ``unit``-byte pieces that are unique."""
    pieces = [hashlib.sha256(data[i:i + unit]).digest() for i in range(0, len(data), unit)]
    return len(set(pieces)) / len(pieces)


# --------------------------------------------------------------- what IOR and fio write

def ior_files(tmp_path: Path, pattern: str | None) -> bytes:
    opts = ["-w", "-a", "POSIX", "-F", "-e", "-k", "-t", "64k", "-b", "1m", "-s", "2",
            "-o", str(tmp_path / "testfile")]
    out = run_ior(opts + (["-l", pattern] if pattern else []), tmp_path)
    assert iorcmd.data_pattern_of(opts + (["-l", pattern] if pattern else [])) == (
        pattern or "timestamp")
    assert "Command line" in out
    return b"".join(p.read_bytes() for p in sorted(tmp_path.glob("testfile.*")))


def test_ior_random_pattern_neither_compresses_nor_repeats(tmp_path):
    data = ior_files(tmp_path, "random")
    assert len(data) == 2 * 2 * MIB
    gz, xz = ratio(data)
    assert gz < 1.01 and xz < 1.01, (gz, xz)
    assert distinct(data, 64 * KIB) == 1.0  # every transfer of both ranks differs
    assert distinct(data, 4 * KIB) == 1.0  # and every 4 KiB block (dedup granularity)


def test_ior_default_and_incompressible_patterns_are_reducible(tmp_path):
    # The check above would see reducible data: IOR's own default repeats every transfer,
    # and its "incompressible" pattern is one 8-byte value repeated.
    default = ior_files(tmp_path, None)
    assert ratio(default)[1] > 20 and distinct(default, 64 * KIB) <= 0.5
    for f in tmp_path.glob("testfile.*"):
        f.unlink()
    assert ratio(ior_files(tmp_path, "incompressible"))[1] > 100


def test_ior_random_pattern_verifies_with_the_integrity_seed_and_reorder(tmp_path):
    common = ["-a", "POSIX", "-F", "-e", "-k", "-G", "4242", "-l", "random", "-t", "64k",
              "-b", "1m", "-o", str(tmp_path / "testfile")]
    run_ior(["-w", "-C", *common], tmp_path)
    out = run_ior(["-r", "-R", "-C", *common], tmp_path)
    run = parse_ior(out)
    assert run.valid and not run.data_errors, run.reasons
    wrong = subprocess.run(
        ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "2", ior_binary(), "-r",
         "-R", "-C", *[("4243" if a == "4242" else a) for a in common]],
        cwd=tmp_path, env={**os.environ, **MPI_ENV}, capture_output=True, text=True,
        timeout=300)
    assert parse_ior(wrong.stdout).data_errors  # another seed: every transfer wrong


def test_fio_random_buffers_neither_compress_nor_repeat(tmp_path):
    fio = shutil.which("fio", path=f"{VIEW_BIN}:{os.environ.get('PATH', '')}")
    if not fio:
        pytest.skip("fio needed")
    entry = {"node_fraction": 1, "file_size": "4MiB", "runtime_s": 5, "time_based": False,
             "block_size": "64KiB"}
    results = {}
    for pattern in ("random", "scrambled"):
        p = fiocmd.parameters("fio_seq_write", "seq_write", {**entry, "data_pattern": pattern})
        opts = [o for o in fiocmd.fio_options(p, str(tmp_path))
                if not o.startswith(("--direct=", "--ioengine=", "--iodepth="))]
        subprocess.run([fio, *opts, "--ioengine=psync", f"--output={tmp_path / 'o.json'}"],
                       check=True, capture_output=True, timeout=300)
        (written,) = [f for f in tmp_path.iterdir() if f.name.startswith("seq_write")]
        data = written.read_bytes()
        written.unlink()
        results[pattern] = (ratio(data), distinct(data, 4 * KIB))
    (gz, xz), unique = results["random"]
    assert gz < 1.01 and xz < 1.01 and unique == 1.0, results
    assert results["scrambled"][0][1] > 10, results  # fio's default: near-duplicates


def test_parse_reads_the_pattern_from_the_command_line():
    run = parse_ior((DATA / "data-pattern-random.txt").read_text())
    assert run.valid and run.to_dict()["data_pattern"] == "random"
    old = parse_ior((DATA / "read-check-generate.txt").read_text())
    assert old.to_dict()["data_pattern"] == "timestamp"  # no -l: IOR's default
    assert iorcmd.data_pattern_of(["-O", "dataPacketType=i"]) == "incompressible"
    assert iorcmd.data_pattern_of(["--dataPacketType=o", "-l", "r"]) == "random"
    assert iorcmd.data_pattern_of(["-l", "x"]).startswith("unknown")


# --------------------------------------------------------------- the probe, pure parts

def result(zeros_space: int, default_space: int, random_space: int, noise=4096):
    vol = 64 * MIB
    return reduction.ProbeResult("/t", noise, vol, {
        p: reduction.Measurement(p, vol, [s] * 3, noise)
        for p, s in (("zeros", zeros_space), ("ior-default", default_space),
                     ("random", random_space))})


def test_ratios_are_bounded_and_undecided_when_the_noise_is_as_large_as_the_data():
    r = result(2 * MIB, 11 * MIB, 64 * MIB + 300 * KIB)
    assert r.verdict == "reduces" and r.reduces
    assert "zeros 32:1" in r.summary() and "IOR's default pattern 5.82:1" in r.summary()
    assert r.measurements["random"].verdict == "not reduced"
    assert result(64 * MIB, 64 * MIB, 64 * MIB).verdict == "does not reduce"
    noisy = result(60 * MIB, 60 * MIB, 60 * MIB, noise=40 * MIB)
    assert noisy.verdict.startswith("could not decide")
    back = reduction.ProbeResult.from_dict(r.to_dict())
    assert back.summary() == r.summary()


def test_reducible_figures_on_a_reducing_file_system_are_invalid_with_the_ratio():
    r = result(2 * MIB, 11 * MIB, 64 * MIB)
    (why,) = reduction.reducible_data_reasons("IOR's timestamp pattern", True, r)
    assert "zeros 32:1" in why and "IOR's default pattern 5.82:1" in why
    assert reduction.reducible_data_reasons("IOR's random pattern", False, r) == []
    assert reduction.reducible_data_reasons("x", True, result(*[64 * MIB] * 3)) == []
    assert reduction.reducible_data_reasons("x", True, None) == []


def test_random_ior_data_that_repeats_is_invalid_where_the_file_system_deduplicates():
    vol = 64 * MIB
    dedup = result(64 * MIB, 64 * MIB, 64 * MIB)
    dedup.measurements["duplicates"] = reduction.Measurement("duplicates", vol, [MIB] * 3, 4096)
    assert dedup.verdict == "reduces" and dedup.deduplicates
    big = iorcmd.random_pattern_repeats("random", 5 * 2**30, 8, MIB)
    assert "every 4 GiB" in big and "wrote 5GiB" in big
    assert iorcmd.random_pattern_repeats("random", 2**32, 4096, 4096) == ""
    assert "more ranks (4097)" in iorcmd.random_pattern_repeats("random", MIB, 4097, 4096)
    (why,) = reduction.reducible_data_reasons("IOR's random pattern", False, dedup, big)
    assert "deduplicates" in why and "repeated random data 64:1" in why
    assert reduction.reducible_data_reasons("IOR's random pattern", False, dedup, "") == []
    # A file system that compresses but does not deduplicate: repeats do not matter.
    assert reduction.reducible_data_reasons(
        "IOR's random pattern", False, result(2 * MIB, 11 * MIB, 64 * MIB), big) == []


def test_probe_refuses_a_target_without_room_before_writing(tmp_path):
    probe = reduction.Probe(tmp_path, volume=2**50)
    with pytest.raises(reduction.ProbeError, match="no room"):
        probe.run()
    assert list(tmp_path.iterdir()) == []


def test_an_interrupted_probe_removes_its_own_files_only(tmp_path):
    (tmp_path / "someone-elses").write_bytes(b"keep")
    proc = subprocess.Popen([sys.executable, "-m", "fsaccept.core.reduction", str(tmp_path),
                             "--volume", str(256 * MIB), "--repeats", "50"],
                            env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
                            stdout=subprocess.PIPE, text=True)
    try:
        for _ in range(600):  # until it has started writing (no timing asserted)
            if any(p.name.startswith("fsaccept-reduction.") and any(p.iterdir())
                   for p in tmp_path.iterdir() if p.is_dir()):
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=300) == 128 + signal.SIGTERM
    finally:
        proc.kill() if proc.poll() is None else None
    assert [p.name for p in tmp_path.iterdir()] == ["someone-elses"]
    assert (tmp_path / "someone-elses").read_bytes() == b"keep"


# --------------------------------------------------------------- on the real thing: btrfs

@pytest.fixture(scope="module")
def btrfs(tmp_path_factory):
    """{"compressing": mount, "plain": mount}: two 1 GiB btrfs loop mounts."""
    with btrfs_loop_mounts(tmp_path_factory.mktemp("btrfs")) as mounts:
        yield mounts


@pytest.fixture(scope="module")
def probed(btrfs):
    return {name: reduction.Probe(mnt).run() for name, mnt in btrfs.items()}


def test_probe_finds_reduction_on_compressing_btrfs_and_none_on_plain(probed, btrfs):
    comp, plain = probed["compressing"], probed["plain"]
    print(comp.summary(), plain.summary(), sep="\n")  # the ratios, in pytest -s output
    assert comp.verdict == "reduces", comp.to_dict()
    assert comp.measurements["zeros"].verdict == "reduced"
    assert comp.measurements["ior-default"].verdict == "reduced"
    assert comp.measurements["random"].verdict == "not reduced"
    assert comp.measurements["duplicates"].verdict == "not reduced"  # btrfs: no dedup
    assert not comp.deduplicates
    assert plain.verdict == "does not reduce", plain.to_dict()
    assert all(list(m.iterdir()) == [] for m in btrfs.values())  # nothing left behind


def test_ior_default_pattern_on_compressing_btrfs_is_invalid_random_is_valid(probed, btrfs):
    where = btrfs["compressing"]
    for pattern, reducible in ((None, True), ("random", False)):
        args = ["-w", "-a", "POSIX", "-F", "-e", "-k", "-t", "1m", "-b", "16m",
                *(["-l", pattern] if pattern else []), "-o", str(where / "testfile")]
        run = parse_ior(run_ior(args, where))
        for f in where.glob("testfile*"):
            f.unlink()
        assert run.valid, run.reasons
        reasons = reduction.reducible_data_reasons(
            f"IOR's {run.data_pattern} pattern", iorcmd.pattern_reducible(run.data_pattern),
            probed["compressing"])
        assert bool(reasons) == reducible, reasons
        if reducible:
            assert "timestamp" in reasons[0] and "IOR's default pattern" in reasons[0]
        # The plain file system reduces nothing: the same figure is valid there.
        assert reduction.reducible_data_reasons("x", True, probed["plain"]) == []


# --------------------------------------------------------------- the report's section

def test_report_shows_the_probe_ratio_and_each_reducible_figure():
    import copy
    import json as _json

    from fsaccept.reporting import report as signoff

    data = Path(__file__).resolve().parents[1] / "data" / "reframe" / "ior-pass.json"
    report = _json.loads(data.read_text())
    cases = report["runs"][0]["testcases"]
    for tc in cases:
        if tc["name"].startswith("IOR"):
            tc["data_pattern"] = "ior random (irreducible)"
    ctx = signoff.build_context(copy.deepcopy(report), plots=False)
    assert ctx["data_reduction"][0].startswith("Data-reduction probe: not run")
    assert "Every IOR and fio figure was measured with irreducible data" in \
        signoff.render(ctx, "report.md.j2")
    # Derived here from the real capture: a probe case, and one figure asked reducible.
    probe = copy.deepcopy(next(tc for tc in cases if tc["name"] == "MPILaunchSanity"))
    probe.update(name="DataReductionProbe", display_name="DataReductionProbe",
                 reduction_summary=result(2 * MIB, 11 * MIB, 64 * MIB).summary())
    cases.append(probe)
    cases[0]["data_pattern"] = "ior timestamp (reducible; asked by the reference)"
    lines = signoff.build_context(report, plots=False)["data_reduction"]
    assert lines[0] == ("Data-reduction probe: the file system of /t reduces data: zeros "
                        "32:1, IOR's default pattern 5.82:1, random data 1:1.")
    assert any("timestamp (reducible; asked by the reference)" in line for line in lines)
    html = signoff.render(signoff.build_context(report, plots=False), "report.html.j2")
    assert '<ul id="data-reduction">' in html and "zeros 32:1" in html


def test_a_target_too_noisy_for_the_probe_is_undecided_and_nothing_is_written(
        tmp_path, monkeypatch):
    monkeypatch.setattr(reduction, "measure_noise", lambda d: 1024 * MIB)  # moves 1 GiB
    r = reduction.Probe(tmp_path).run()
    assert r.verdict.startswith("could not decide: the free space moved by 1GiB")
    assert not r.reduces and list(tmp_path.iterdir()) == []
    assert reduction.reducible_data_reasons("x", True, r) == []
    assert reduction.ProbeResult.from_dict(r.to_dict()).verdict == r.verdict


@pytest.mark.parametrize("stdout, stderr, said", [
    ("", "slurmstepd: error: *** JOB 7 ON n1 CANCELLED AT 2026-12-02T10:00:00 DUE TO TIME "
     "LIMIT ***\n", "no result in its output (Slurm cancelled job 7 at "
     "2026-12-02T10:00:00 due to time limit)"),
    ("", "Traceback (most recent call last):\n  ...\nOSError: [Errno 28] No space left\n",
     "no result in its output (its stderr ends: OSError: [Errno 28] No space left)"),
    ("fsaccept-info host n1\n", "", "no result in its output, nothing on its stderr"),
])
def test_a_probe_without_a_result_says_what_ended_it(tmp_path, stdout, stderr, said):
    """The probe's job printed no result and no error of its own: the reason names what
    Slurm says ended the job, else the last line on its stderr."""
    (tmp_path / "out").write_text(stdout)
    me = SimpleNamespace(stagedir=str(tmp_path), stdout=SimpleNamespace(evaluate=lambda: "out"),
                         _stderr_text=lambda: stderr)
    me._why_no_result = lambda: DataReductionProbe._why_no_result(me)
    with pytest.raises(SanityError) as err:
        DataReductionProbe.result(me)
    assert str(err.value) == f"INVALID: the data-reduction probe did not measure: {said}"
