"""Where fsaccept's own files are: the checkout, its state directory, its reference files."""

from __future__ import annotations

import os
from pathlib import Path

#: The repository (fsaccept is installed editable from it; scripts run from it).  A wheel
#: carries no checks/, config/, reference/ or spack-env/: installed from one, this is
#: site-packages, and `fsaccept parse`, `reference` and `report` work (tests/unit/test_wheel.py).
REPO_ROOT = Path(__file__).resolve().parents[2]
#: Everything a run or set-up creates outside the results: Spack, the emulated cluster.
STATE_DIR = Path(os.environ.get("FSACCEPT_STATE_DIR", REPO_ROOT / ".state"))
#: ``reference/<system>.yaml``.
REFERENCE_DIR = REPO_ROOT / "reference"
#: The owned-data ledger: the data directories this harness's jobs create, one file per
#: run (``fsaccept.suite.owned.record_owned``).
OWNED_DATA_DIR = STATE_DIR / "owned-data"
