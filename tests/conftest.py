"""Shared pytest fixtures.

Integration tests use the real emulated Slurm cluster (scripts/local-cluster).
They skip with the reason when Slurm or munge is not installed on a
developer machine; under CI (CI=true) that is an error instead, so that CI
never passes by skipping them.
"""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from fsaccept.localcluster import OPENMPI_ENV, slurm_conf_path

REPO = Path(__file__).resolve().parent.parent
LOCAL_CLUSTER = REPO / "scripts" / "local-cluster"


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


def reframe_command(*args, prefix):
    """The ReFrame command line the README documents, with a private prefix."""
    return [str(REPO / ".venv" / "bin" / "reframe"), "-C", str(REPO / "config" / "settings.py"),
            "--prefix", str(prefix), "--report-file", str(prefix / "report.json"), *args]
