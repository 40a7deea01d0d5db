"""Acceptance at a declared fill level: the contract's "at 80 % of its capacity, each
figure at least 70 % of its empty figure" (issue 39 §1).

Run only when asked (``scripts/acceptance --fill``, which adds ``-c checks/fill``, selects
the tests the reference file's ``fill.tests`` names and runs one test at a time): the
tests run on the empty target (``checks/``), then ``FillTarget`` writes irreducible
filler until df shows the reference's ``fill.fraction`` (and ages it:
``fill.churn``), then the same tests run again (``Filled<Check>``), each figure its
empty test was judged by compared with its empty figure (``fill.max_degradation``).
The filler is removed whatever ends the session (``fsaccept fill remove``).  Refused
unless the reference says ``fill.allowed: true`` and ``target.dedicated: true``.  How
it is run: ``fsaccept/rfm/fill.py``; the user guide: ``docs/user/fill.md``.
"""

import reframe as rfm
from reframe.core.builtins import fixture

from fsaccept.rfm.fill import FillTarget as _FillTarget
from fsaccept.rfm.fill import Filled, FilledDataset
from fsaccept.rfm.fio import FioTest
from fsaccept.rfm.ior import (IORBurstDataset, IORCheckpointTest, IORDataset, IORReadTest,
                              IORRestoreTest, IORTest)
from fsaccept.rfm.md_workbench import MdWorkbenchTest
from fsaccept.rfm.mdtest import MdtestTest


@rfm.simple_test
class FillTarget(_FillTarget):
    """Irreducible filler, written by every node below the stop line until df shows the
    declared level, then aged; kept until the session ends."""


@rfm.simple_test
class FilledIORWriteBandwidth(Filled, IORTest):
    """Aggregate write bandwidth (MiB/s) at the declared fill level."""


class FilledIORReadDatasetGeneration(FilledDataset, IORDataset):
    """The filled read's dataset, written on the filled target."""


@rfm.simple_test
class FilledIORStonewalledRead(Filled, IORReadTest):
    """Aggregate read bandwidth (MiB/s) at the declared fill level, over a dataset
    written there."""

    dataset = fixture(FilledIORReadDatasetGeneration, scope='environment')


@rfm.simple_test
class FilledIORRandomWriteIOPS(Filled, IORTest):
    """Random 4 KiB write IOPS at the declared fill level."""


class FilledIORRandomReadDatasetGeneration(FilledDataset, IORDataset):
    """The filled random read's dataset, written on the filled target."""


@rfm.simple_test
class FilledIORRandomReadIOPS(Filled, IORReadTest):
    """Random 4 KiB read IOPS at the declared fill level."""

    dataset = fixture(FilledIORRandomReadDatasetGeneration, scope='environment')


@rfm.simple_test
class FilledIORSharedFileWrite(Filled, IORTest):
    """Shared-file (N-to-1) write bandwidth at the declared fill level."""


class FilledIORSharedReadDatasetGeneration(FilledDataset, IORDataset):
    """The filled shared read's file, written on the filled target."""


@rfm.simple_test
class FilledIORSharedFileRead(Filled, IORReadTest):
    """Shared-file read bandwidth at the declared fill level."""

    dataset = fixture(FilledIORSharedReadDatasetGeneration, scope='environment')


@rfm.simple_test
class FilledIORCheckpointWrite(Filled, IORCheckpointTest):
    """Time to save a checkpoint, a file per rank, at the declared fill level."""


class FilledIORCheckpointDataset(FilledDataset, IORBurstDataset):
    """The checkpoint the filled restore reads, written on the filled target."""


@rfm.simple_test
class FilledIORCheckpointRestore(Filled, IORRestoreTest):
    """Time to restore a checkpoint at the declared fill level; a wrong transfer is a
    FAIL."""

    dataset = fixture(FilledIORCheckpointDataset, scope='environment')


@rfm.simple_test
class FilledIORCheckpointSharedWrite(Filled, IORCheckpointTest):
    """Time to save a shared-file checkpoint at the declared fill level."""


class FilledIORCheckpointSharedDataset(FilledDataset, IORBurstDataset):
    """The shared-file checkpoint the filled restore reads, written on the filled
    target."""


@rfm.simple_test
class FilledIORCheckpointSharedRestore(Filled, IORRestoreTest):
    """Time to restore a shared-file checkpoint at the declared fill level."""

    dataset = fixture(FilledIORCheckpointSharedDataset, scope='environment')


@rfm.simple_test
class FilledMdtestEasy(Filled, MdtestTest):
    """mdtest "easy" metadata rates at the declared fill level."""


@rfm.simple_test
class FilledMdtestHard(Filled, MdtestTest):
    """mdtest "hard" metadata rates at the declared fill level."""


@rfm.simple_test
class FilledMdWorkbench(Filled, MdWorkbenchTest):
    """md-workbench's rate and latencies at the declared fill level."""


@rfm.simple_test
class FilledFioRandomReadDirect(Filled, FioTest):
    """4 KiB direct random read IOPS per client at the declared fill level."""


@rfm.simple_test
class FilledFioSequentialWrite(Filled, FioTest):
    """1 MiB direct sequential write bandwidth per client at the declared fill level."""


@rfm.simple_test
class FilledFioSequentialRead(Filled, FioTest):
    """1 MiB direct sequential read bandwidth per client at the declared fill level."""


@rfm.simple_test
class FilledFioFsync(Filled, FioTest):
    """4 KiB writes each fsynced at the declared fill level."""


@rfm.simple_test
class FilledFioMetadata(Filled, FioTest):
    """File create, stat and delete rates per client at the declared fill level."""
