"""Spack cannot be installed here, so the Spack path is checked with
``reframe --dry-run`` on the system ``local-spack`` (the emulated cluster
with partition extras ``benchmarks: spack-build``): the generated build
script must install the environment, and every benchmark job must activate
it before IOR runs."""

import pytest

from fsaccept.benchmarks import DEFAULT_SPACK_ENV
from tests.conftest import REPO, reframe_command, run

pytestmark = pytest.mark.integration


def test_dry_run_builds_with_spack_and_activates_before_ior(cluster_env, tmp_path):
    prefix = tmp_path / "rfm"
    proc = run(reframe_command("-c", str(REPO / "checks" / "ior_acceptance.py"),
                               "--system", "local-spack", "-t", "acceptance", "--dry-run",
                               prefix=prefix), env=cluster_env, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    [build] = list(prefix.rglob("BenchmarkBinaries*/rfm_build.sh"))
    lines = build.read_text().splitlines()
    assert lines.index("export FSACCEPT_SYSTEM=local-spack") < \
        lines.index(f"spack -e {DEFAULT_SPACK_ENV} install")
    assert "spack add" not in build.read_text()  # the environment pins its own specs
    jobs = [p for p in prefix.rglob("rfm_job.sh") if "BenchmarkBinaries" not in str(p)]
    assert len(jobs) == 6  # four checks, two dataset fixtures
    for job in jobs:
        lines = job.read_text().splitlines()
        activate = lines.index(f'eval "$(spack env activate --sh -d {DEFAULT_SPACK_ENV})"')
        ior = next(i for i, l in enumerate(lines) if l.startswith("srun") and " ior " in l)
        recorded = next(i for i, l in enumerate(lines) if "fsaccept-info binary_path" in l)
        assert activate < recorded < ior, job
    # Slurm time limit = deadlines (2 s -> 1 min) + local.yaml's 2 min margin.
    [write] = [j for j in jobs if j.parent.name == "IORWriteBandwidth"]
    assert "#SBATCH --time=0:3:0" in write.read_text().splitlines()
