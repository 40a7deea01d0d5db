"""Degraded-mode acceptance: the contract's high-availability clause.

Run only when asked (``scripts/acceptance --degraded``, which adds ``-c checks/degraded``
and runs one test at a time): each test's job proves every node healthy, has the login
node's fault agent run the site's degrade command (``extras.degraded`` of its system in
``config/systems/``), proves on every node that the fault is seen, measures, has the
file system restored and times its recovery.  Figures are judged against the reference
file's ``degraded:`` fraction of their healthy thresholds; ``recovery_s`` against
``degraded.max_recovery_s``.  With several fault scenarios (the system's
``extras.degraded.scenarios``, the reference's ``degraded.scenarios``), each test runs
once per scenario (``@on_scenarios``: ``%fault_scenario=NAME``), judged by its
scenario's clause.  How the fault is run: ``fsaccept/rfm/degraded.py``; the user guide:
``docs/user/degraded.md``.
"""

import reframe as rfm
from reframe.core.builtins import fixture

from fsaccept.rfm.degraded import DegradedMode, on_scenarios
from fsaccept.rfm.ior import IORDataset, IORIntegrityTest, IORReadTest, IORTest
from fsaccept.rfm.mdtest import MdtestTest


@rfm.simple_test
@on_scenarios
class DegradedIORWriteBandwidth(DegradedMode, IORTest):
    """Aggregate write bandwidth (MiB/s) while a storage server is down."""


@on_scenarios
class DegradedIORReadDatasetGeneration(IORDataset):
    """The degraded read's dataset, written while the file system is healthy."""


@rfm.simple_test
@on_scenarios
class DegradedIORStonewalledRead(DegradedMode, IORReadTest):
    """Aggregate read bandwidth (MiB/s) sustained while a storage server is down."""

    dataset = fixture(DegradedIORReadDatasetGeneration, scope='environment')


@on_scenarios
class DegradedIORIntegrityDataset(IORDataset):
    """Full blocks with this session's pattern, written before the fault."""


@rfm.simple_test
@on_scenarios
class DegradedIORDataIntegrity(DegradedMode, IORIntegrityTest):
    """The data written before the fault, read back and verified once the file system
    has recovered: FAIL on any transfer read back wrong."""

    dataset = fixture(DegradedIORIntegrityDataset, scope='environment')


@rfm.simple_test
@on_scenarios
class DegradedMdtestEasy(DegradedMode, MdtestTest):
    """mdtest "easy" metadata rates while a storage server is down."""
