"""Shared pytest fixtures.

Integration tests use the real emulated Slurm cluster (scripts/local-cluster).
They skip with the reason when Slurm or munge is not installed on a
developer machine; under CI (CI=true) that is an error instead, so that CI
never passes by skipping them.
"""

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
import yaml

from lab.cluster import OPENMPI_ENV, slurm_conf_path
from lab.endpoints import IPERF3_PORTS
from fsaccept.suite.spack import view_bin

REPO = Path(__file__).resolve().parent.parent
LOCAL_CLUSTER = REPO / "scripts" / "local-cluster"

#: The Spack view scripts/setup built for the system `local-spack`.  The system
#: `local` runs the benchmarks on PATH: the view goes last on it, so that IOR and
#: mdtest come from Spack while the fio tests keep Debian's fio.
SPACK_VIEW_BIN = view_bin("local-spack")
if (SPACK_VIEW_BIN / "ior").exists():
    os.environ["PATH"] += os.pathsep + str(SPACK_VIEW_BIN)


def require_benchmark(name):
    """Skip a test whose benchmark is not on PATH, saying how to build it; under CI
    with the offline Spack kit (FSACCEPT_SPACK) fail instead: set-up must have built
    it there, and CI never passes by skipping."""
    if shutil.which(name):
        return
    reason = (f"{name} is not on PATH (IOR and mdtest are in no package registry): build "
              "them with `scripts/setup --spack <Spack tarball or checkout> "
              "[--spack-mirror DIR]`")
    if os.environ.get("CI") and os.environ.get("FSACCEPT_SPACK"):
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture
def ior_available():
    require_benchmark("ior")


@pytest.fixture
def mdtest_available():
    require_benchmark("mdtest")


def require_gluster_tools():
    """GlusterFS and Slurm installed (scripts/setup), and IOR built: else skip, or fail
    in CI, where set-up installs them."""
    require_lab_tools("glusterd", "slurmd", "srun")


def require_lab_tools(*tools):
    """``tools`` installed (scripts/setup), and IOR built: else skip, or fail in CI,
    where set-up installs them."""
    from tests.integration.test_gluster import require_benchmark_spack
    for tool in tools:
        if not shutil.which(tool):
            reason = f"{tool} not installed: run scripts/setup"
            if os.environ.get("CI"):
                pytest.fail(reason)
            pytest.skip(reason)
    require_benchmark_spack()


def capture_with_reference(name: str, directory: Path) -> dict:
    """The run-report capture ``tests/data/reframe/<name>.json``, its reference file
    copied beside it into ``directory`` (the same bytes: its SHA-256 still verifies) and
    its test cases pointing there."""
    data_dir = REPO / "tests" / "data" / "reframe"
    ref = directory / "reference.yaml"
    shutil.copyfile(data_dir / f"{name}.reference.yaml", ref)
    data = json.loads((data_dir / f"{name}.json").read_text())
    for case in (c for r in data["runs"] for c in r["testcases"]):
        if case.get("reference_path"):
            case["reference_path"] = str(ref)
    return data


def run(argv, env=None, timeout=300, **kw):
    """Run a command, capturing text output (no shell)."""
    return subprocess.run(argv, env=env, capture_output=True, text=True,
                          timeout=timeout, **kw)


def _missing_tools():
    return [t for t in ("slurmctld", "slurmd", "munged", "srun", "mpicc")
            if shutil.which(t) is None]


@pytest.fixture(scope="session")
def cluster_env():
    """Environment for talking to the emulated cluster; brings it up if needed."""
    missing = _missing_tools()
    if missing:
        reason = f"{', '.join(missing)} not installed: run scripts/setup"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    proc = run([str(LOCAL_CLUSTER), "up"], timeout=180)
    assert proc.returncode == 0, f"local-cluster up failed:\n{proc.stdout}{proc.stderr}"
    return dict(os.environ, SLURM_CONF=str(slurm_conf_path()), **OPENMPI_ENV)


@pytest.fixture
def results_dirs():
    """Run directories a test's scripts/acceptance or scripts/nightly made under
    results/ (the test appends them); removed afterwards, and nothing else."""
    made: list[Path] = []
    yield made
    for d in made:
        if d.is_dir() and d.parent == REPO / "results":
            shutil.rmtree(d)


def why_not_accepted(proc) -> str:
    """What a failed assertion on a scripts/acceptance run shows: its verdict's reasons
    (from "not accepted because:" on, in its stdout), then the end of its stderr.  Not
    the end of stdout + stderr, where a long table hides the reasons."""
    start = proc.stdout.rfind("not accepted because:")
    said = proc.stdout[start:] if start >= 0 else proc.stdout[-3000:]
    return f"{said[-6000:]}\n--- stderr:\n{proc.stderr[-3000:]}"


def reframe_command(*args, prefix):
    """The ReFrame command line docs/user/quickstart.md documents, with a private prefix."""
    return [str(REPO / ".venv" / "bin" / "reframe"), "-C", str(REPO / "config" / "settings.py"),
            "--prefix", str(prefix), "--report-file", str(prefix / "report.json"), *args]


def run_checks(check_file, tmp_path, *args, env=None, timeout=1200):
    """Run a check file on the local system; (process, {check name: report case})."""
    proc = run(reframe_command("-c", str(REPO / "checks" / check_file), "--system", "local",
                               *args, "-r", prefix=tmp_path / "rfm"), env=env, timeout=timeout)
    report = tmp_path / "rfm" / "report.json"
    cases = json.loads(report.read_text())["runs"][-1]["testcases"] if report.exists() else []
    return proc, {c["name"].split()[0]: c for c in cases}


def any_load_thresholds(data: dict) -> dict:
    """``data`` (a reference) with thresholds no load on this host can miss: floors of 1,
    latency ceilings of 100 s, no outlier rule.  For tests about a flow (a report, a
    fault, a restore), not about this host's speed; returns ``data``."""
    for entry in data["tests"].values():
        if "outlier_fraction" in entry:
            entry["outlier_fraction"] = 0  # nor one node slowed by the load
        thresholds = list((entry.get("thresholds") or {}).values())
        thresholds += [entry["threshold"]] if "threshold" in entry else []
        for threshold in thresholds:
            threshold["value"] = 100_000_000 if threshold["unit"] == "us" else 1
    return data


def reference_copy(tmp_path, edit):
    """Environment selecting a copy of reference/local.yaml changed by ``edit(data)``."""
    data = yaml.safe_load((REPO / "reference" / "local.yaml").read_text())
    edit(data)
    path = tmp_path / "local.yaml"
    path.write_text(yaml.safe_dump(data))
    return dict(os.environ, FSACCEPT_REFERENCE=str(path))


@pytest.fixture
def own_target():
    """A directory of this test's own beneath reference/local.yaml's target (the same
    file system), removed after it: a hook that corrupts files finds only this test's
    there, never those of the other lane's runs, which share the target."""
    base = yaml.safe_load((REPO / "reference" / "local.yaml").read_text())["target"]["path"]
    root = Path(tempfile.mkdtemp(prefix="fsaccept-test-", dir=base))
    yield root
    shutil.rmtree(root, ignore_errors=True)


def corrupting_drop_caches(data, root: Path, fixture_class: str, block: str,
                           seek: int) -> None:
    """Make the reference's target ``root`` (:func:`own_target`) and its ``drop_caches``
    (run on every node right before a read) overwrite one transfer (``block`` bytes at
    block ``seek``) of rank 1's file that ``fixture_class`` wrote there, on n1 only: data
    corrupted between its write and its verified read."""
    data["target"]["path"] = str(root)
    data["drop_caches"] = (
        f'[ "$SLURMD_NODENAME" != n1 ] || find {root}/fsaccept -path '
        f'"*{fixture_class}*" -name testfile.00000001 -exec dd if=/dev/zero of={{}} '
        f'bs={block} count=1 seek={seek} conv=notrunc,fsync status=none \\;')


@pytest.fixture(scope="session")
def ior_writes_preload(tmp_path_factory):
    """A shared object (LD_PRELOAD) that puts IOR's writes under the test's control
    (tests/integration/src/ior_writes.c): one node made slow, or every rank's writes
    held after its first until the test has injected its fault."""
    lib = tmp_path_factory.mktemp("ior-writes") / "ior_writes.so"
    build = run(["gcc", "-shared", "-fPIC", "-O2", "-o", str(lib),
                 str(REPO / "tests" / "integration" / "src" / "ior_writes.c"), "-ldl"])
    assert build.returncode == 0, build.stderr
    return lib


@pytest.fixture(scope="session")
def gluster_env(cluster_env):
    """The emulated cluster with its GlusterFS volume (each node its own FUSE client):
    brought up with it if it runs without (scripts/test starts it so); the environment
    and the volume's layout (address, mount point: they follow the port base)."""
    from lab.cluster import default_state_dir, recorded_fs
    from lab.gluster import GlusterLayout
    if recorded_fs(default_state_dir()) != "gluster":
        proc = run([str(LOCAL_CLUSTER), "up", "--fs", "gluster"], timeout=300)
        assert proc.returncode == 0, f"local-cluster up --fs gluster:\n{proc.stderr}"
    port_base = int(os.environ.get("FSACCEPT_PORT_BASE", "17000"))
    layout = GlusterLayout.for_port_base(default_state_dir().parent / "gluster", port_base)
    return cluster_env, layout


def gluster_reference_file(tmp_path, layout, edit=lambda data: None) -> Path:
    """A copy of reference/local-gluster.yaml whose target is the running volume (its
    mount point and source follow the port base and volume), changed by ``edit``."""
    data = yaml.safe_load((REPO / "reference" / "local-gluster.yaml").read_text())
    data["target"].update(path=str(layout.mount_point), mount_point=str(layout.mount_point),
                          source=layout.source)
    if "network_survey" in data.get("tests", {}):  # the lab's iperf3 servers' ports
        data["tests"]["network_survey"]["port"] = layout.port_base + IPERF3_PORTS[0]
    edit(data)
    path = tmp_path / "local-gluster.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def gluster_reference(tmp_path, layout, edit=lambda data: None):
    """Environment selecting :func:`gluster_reference_file`."""
    return dict(os.environ,
                FSACCEPT_REFERENCE=str(gluster_reference_file(tmp_path, layout, edit)))


def run_gluster_checks(check_file, tmp_path, *args, env=None, timeout=1200):
    """Run a check file on the system local-gluster; (process, {check name: case})."""
    proc = run(reframe_command("-c", str(REPO / "checks" / check_file), "--system",
                               "local-gluster", *args, "-r", prefix=tmp_path / "rfm"),
               env=env, timeout=timeout)
    report = tmp_path / "rfm" / "report.json"
    cases = json.loads(report.read_text())["runs"][-1]["testcases"] if report.exists() else []
    return proc, {c["name"].split()[0]: c for c in cases}


#: scripts/test names a file here: each test's set-up, call and teardown times are added
#: to it, one line each ("<module>\t<seconds>\t<test>"), by the controlling process only
#: (pytest-xdist's workers' reports reach it too), so that the slowest modules and tests
#: of every run can be summed.
TEST_TIMES = os.environ.get("FSACCEPT_TEST_TIMES")


def pytest_runtest_logreport(report):
    if TEST_TIMES and not os.environ.get("PYTEST_XDIST_WORKER"):
        with open(TEST_TIMES, "a") as f:
            f.write(f"{report.nodeid.split('::')[0]}\t{report.duration:.3f}\t"
                    f"{report.nodeid}\n")
