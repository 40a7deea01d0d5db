"""The Spack path for real.

``scripts/setup`` builds IOR, mdtest and fio with the Spack it is given
(``FSACCEPT_SPACK``, ``FSACCEPT_SPACK_MIRROR``: CI hands it the offline kit
that lies beside the repository), and the system ``local-spack`` runs them
through Slurm.  Without a Spack set-up these tests skip saying how to get one;
under CI with the kit they fail instead.  CI's main build uses Spack 1.x; the
other Spack of the kit (``FSACCEPT_OTHER_SPACK``: 0.23) builds IOR here too, in
a state directory of its own, and runs it with mpirun.  Also here: the main job
without the benchmarks ends INCOMPLETE, naming each missing one and the fix.
"""

import fcntl
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from fsaccept.suite import spack as spackenv
from fsaccept.suite.provision import SPACK_STATE, rendered_env_dir
from fsaccept.suite import sites
from tests.conftest import REPO, run, why_not_accepted

pytestmark = [pytest.mark.integration, pytest.mark.main_cluster]
SYSTEM = "local-spack"


@pytest.fixture(scope="module")
def spack_root():
    """The Spack scripts/setup used, unpacked (skip, or fail under CI with the kit)."""
    inputs = spackenv.inputs_file(SPACK_STATE)
    built = (spackenv.view_bin(SYSTEM) / "ior").exists()
    if not (inputs.is_file() and built):
        reason = ("no Spack set-up in .state/spack: run `scripts/setup --spack <Spack tarball "
                  "or checkout> [--spack-mirror DIR]` (or FSACCEPT_SPACK=...) first")
        if os.environ.get("CI") and os.environ.get("FSACCEPT_SPACK"):
            pytest.fail(reason)
        pytest.skip(reason)
    return Path(yaml.safe_load(inputs.read_text())["root"])


def spack_hash(package):
    proc = run([str(spackenv.wrapper_path()), "-e", str(rendered_env_dir(SYSTEM)), "find",
                "--format", "{hash}", package])
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()[-1]


def test_the_acceptance_suite_on_local_spack_is_accepted_with_spack_provenance(
        cluster_env, spack_root, results_dirs):
    proc = run([str(REPO / "scripts" / "acceptance"), "--system", SYSTEM, "--no-ceilings",
                "--signed-by", "CI"], env=cluster_env, timeout=1500)
    out = proc.stdout + proc.stderr
    results_dirs.extend(Path(p) for p in re.findall(r"acceptance: results in (\S+)", out))
    assert proc.returncode == 0 and "overall verdict: ACCEPTED" in out, \
        why_not_accepted(proc)
    [run_dir] = results_dirs
    report = (run_dir / "report.md").read_text()
    ior, fio = spack_hash("ior"), spack_hash("fio")
    assert f"ior spack:ior@4.0.0/{ior}" in report and f"fio spack:fio@3.37/{fio}" in report
    cases = {c["name"].split()[0]: c for c in
             __import__("json").loads((run_dir / "run-report.json").read_text())
             ["runs"][-1]["testcases"]}
    # Which Spack and package repository built them, beside each spec and hash.
    origin = (rendered_env_dir(SYSTEM) / spackenv.ORIGIN_FILE).read_text().strip()
    assert origin.startswith("Spack "), origin
    for name in ("IORWriteBandwidth", "IORStonewalledRead", "IORRandomWriteIOPS",
                 "IORRandomReadIOPS", "MdtestEasy", "MdtestHard"):
        case = cases[name]
        assert case["result"] == "pass", (name, case["fail_reason"])
        assert f"spack:ior@4.0.0/{ior} ({origin})" in case["benchmark_provenance"], name
        # The binary the job ran is the environment's view, activated in the job.
        assert case["binary_path"].startswith(str(spackenv.view_bin(SYSTEM))), name
        script = (Path(case["outputdir"]) / "rfm_job.sh").read_text()
        assert re.search(r"^\. \S*/spack-activate\.sh$", script, re.M), name
        assert not os.path.exists(case["target_dir"]), f"{name} left {case['target_dir']}"
    # The fio client checks too, with the fio Spack built (3.37 +libaio), not Debian's.
    fio_cases = [c for n, c in cases.items() if n.startswith("Fio")]
    assert len(fio_cases) == 6, sorted(cases)
    for case in fio_cases:
        assert case["result"] == "pass", (case["name"], case["fail_reason"])
        assert f"spack:fio@3.37/{fio} ({origin})" in case["benchmark_provenance"], case["name"]
        assert case["binary_path"].startswith(str(spackenv.view_bin(SYSTEM))), case["name"]


def test_the_other_spack_builds_ior_that_runs_beside_the_main_build(spack_root, tmp_path):
    """The kit's other Spack (CI: 0.23, while the main build is 1.x) builds the
    environment in a state directory of its own, re-concretizing over the main
    build's lock (which Spack 1.x would silently reuse), and its IOR runs."""
    other = os.environ.get("FSACCEPT_OTHER_SPACK")
    mirror = os.environ.get("FSACCEPT_SPACK_MIRROR")
    if not (other and mirror):
        pytest.skip("FSACCEPT_OTHER_SPACK and FSACCEPT_SPACK_MIRROR not set (.ci/run sets "
                    "them from the offline kit)")
    main_inputs = spackenv.inputs_file(SPACK_STATE).read_text()
    state = tmp_path / "state"
    env_dir = rendered_env_dir(SYSTEM, state / "spack")
    env_dir.mkdir(parents=True)
    for name in ("spack.yaml", "spack.lock"):  # another Spack's concretization
        shutil.copy(rendered_env_dir(SYSTEM) / name, env_dir / name)
    env = {k: v for k, v in os.environ.items() if k != "FSACCEPT_SPACK_PACKAGES"}
    proc = run([str(REPO / ".venv" / "bin" / "fsaccept"), "spack", "--spack", other,
                "--spack-mirror", mirror], env=dict(env, FSACCEPT_STATE_DIR=str(state)),
               timeout=1500)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    assert "the Spack or the package repository changed: concretizing again" in out, out
    assert re.search(r"built: .*ior@4\.0\.0/\w{7}", out), out
    origin = (env_dir / spackenv.ORIGIN_FILE).read_text().strip()
    version = spackenv.version_of(Path(yaml.safe_load(
        spackenv.inputs_file(state / "spack").read_text())["root"]))
    assert origin.startswith(f"Spack {version}") and version != spackenv.version_of(spack_root)
    # Its IOR runs (2 ranks, tiny sizes) in a directory of its own.
    work = tmp_path / "ior"
    work.mkdir()
    mpi = dict(os.environ, OMPI_MCA_btl="self,tcp", OMPI_MCA_btl_tcp_if_include="lo",
               OMPI_MCA_oob_tcp_if_include="lo", PMIX_MCA_gds="hash",
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    ior = spackenv.view_bin(SYSTEM, state / "spack") / "ior"
    proc = run(["mpirun", "--oversubscribe", "-np", "2", str(ior), "-w", "-r", "-t", "4k",
                "-b", "64k", "-o", str(work / "testfile")], env=mpi, cwd=work, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "IOR-4.0.0" in proc.stdout and re.search(r"^Finished\s*:", proc.stdout, re.M)
    # The main build is untouched.
    assert spackenv.inputs_file(SPACK_STATE).read_text() == main_inputs


def test_an_altered_mirror_tarball_stops_with_spacks_checksum_error(spack_root, tmp_path):
    # A private state directory with the environment already concretized by the same
    # Spack and package repository (its lock and the record of what concretized it
    # copied), so that Spack goes straight to fetching from the altered mirror.
    state = tmp_path / "state"
    env_dir = rendered_env_dir(SYSTEM, state / "spack")
    env_dir.mkdir(parents=True)
    for name in ("spack.yaml", "spack.lock", ".fsaccept-concretized"):
        shutil.copy(rendered_env_dir(SYSTEM) / name, env_dir / name)
    inputs = yaml.safe_load(spackenv.inputs_file(SPACK_STATE).read_text())
    # The main build's index of the recipes (minutes to rebuild for Spack 1.x): the
    # unpacked files keep their archive times, so the index stays valid for them.
    misc = Path("cache") / f"misc-spack-{inputs.get('version')}"
    if (SPACK_STATE / misc).is_dir():
        shutil.copytree(SPACK_STATE / misc, state / "spack" / misc)
    mirror = tmp_path / "mirror"
    for package in ("ior", "fio"):
        (mirror / package).mkdir(parents=True)
    (mirror / "ior" / "ior-4.0.0.tar.gz").write_bytes(b"not the IOR 4.0.0 release\n")
    (mirror / "fio" / "fio-3.37.tar.gz").write_bytes(b"not fio\n")
    packages = ["--spack-packages", inputs["packages"]] if inputs.get("packages") else []
    proc = run([str(REPO / ".venv" / "bin" / "fsaccept"), "spack", "--spack", inputs["spack"],
                *packages, "--spack-mirror", str(mirror)],
               env=dict(os.environ, FSACCEPT_STATE_DIR=str(state)), timeout=600)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert re.search(r"setup: spack: error: `spack -e \S+ install --fail-fast` failed",
                     proc.stderr), proc.stderr
    assert "ChecksumError: sha256 checksum failed" in proc.stderr  # Spack's own words
    log = next((state / "spack" / "logs").glob("install-*.log")).read_text()
    assert re.search(r"sha256 checksum failed|ChecksumError|checksum", log, re.I), log[-3000:]
    assert not (spackenv.view_bin(SYSTEM, state / "spack") / "ior").exists()
    assert not spackenv.inputs_file(state / "spack").exists()


def test_a_second_setup_waits_for_the_first(spack_root, tmp_path):
    state = tmp_path / "state"
    (state / "spack").mkdir(parents=True)
    not_spack = tmp_path / "not-spack"
    not_spack.mkdir()
    with open(state / "spack" / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the first set-up, still running
        second = subprocess.Popen(
            [str(REPO / ".venv" / "bin" / "fsaccept"), "spack", "--spack", str(not_spack)],
            env=dict(os.environ, FSACCEPT_STATE_DIR=str(state)), stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        waiting = second.stdout.readline()
        time.sleep(1)
        assert second.poll() is None, "the second set-up did not wait"
    out, err = second.communicate(timeout=60)
    assert "another set-up holds" in waiting and "waiting for it to finish" in waiting
    # Once the first is done, it goes on (and here refuses its --spack).
    assert second.returncode == 2 and "not a Spack checkout (no bin/spack)" in err


def test_without_the_benchmarks_the_main_job_is_incomplete_naming_each_and_the_fix(
        cluster_env, results_dirs):
    env = dict(cluster_env, PATH="/usr/sbin:/usr/bin:/sbin:/bin")  # no IOR, no mdtest
    proc = run([str(REPO / "scripts" / "acceptance"), "--system", "local", "--no-ceilings",
                "-n", "^(IORWriteBandwidth|MdtestEasy|FioFsync)$"], env=env, timeout=900)
    out = proc.stdout + proc.stderr
    results_dirs.extend(Path(p) for p in re.findall(r"acceptance: results in (\S+)", out))
    assert proc.returncode == 1, out[-4000:]
    # The reasons, one line each, then the verdict line last.
    assert "not accepted because:\n  2 of 3 tests did not run" in out, out[-4000:]
    assert proc.stdout.rstrip().splitlines()[-1] == "overall verdict: INCOMPLETE", out[-4000:]
    # The fix follows what set-up built (here: Spack built IOR, for another system).
    fix = sites.ior_fix(emulated=True)[:60]
    report = (results_dirs[0] / "report.md").read_text()
    html = (results_dirs[0] / "report.html").read_text()
    assert "**Overall verdict: INCOMPLETE**" in report
    for name, binary in (("IORWriteBandwidth", "ior"), ("MdtestEasy", "mdtest")):
        line = next(l for l in out.splitlines() if l.startswith(f"  {name}: SKIPPED"))
        assert f"{binary} not found on PATH" in line and fix in line, line
        row = next(l for l in report.splitlines() if l.startswith(f"| [{name}]"))
        assert "SKIPPED" in row and "not found on PATH" in row, row  # escaped Markdown
        assert f"{binary} not found on PATH" in html
