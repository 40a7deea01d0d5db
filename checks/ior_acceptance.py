"""IOR acceptance tests: bandwidth and random 4 KiB IOPS.

Sizes, deadlines, node fractions and thresholds come from
``reference/<system>.yaml`` (key given by ``reference_key``); the IOR flags
of each phase are in ``fsaccept/benchmarks/ior/command.py``; validity rules (INVALID with a
reason) in ``fsaccept/benchmarks/ior/validity.py``.  Published practice these follow:
1 MiB transfers, file per process, fsync, task reordering (-C) and a 45 s
stonewall at 90 % of the compute nodes; a read sustained for 30 s over a
dataset generated beforehand; random 4 KiB I/O at 15 % of the nodes.
"""

import reframe as rfm
from reframe.core.builtins import fixture

from fsaccept.rfm.ior import IORDataset, IORIntegrityTest, IORReadTest, IORTest
from fsaccept.rfm.targets import on_targets


@rfm.simple_test
@on_targets
class IORWriteBandwidth(IORTest):
    """Aggregate write bandwidth (MiB/s): IOR stonewalled at the deadline, then
    wear-out so every rank writes as much as the fastest.  Also reports the
    bandwidth up to the stonewall (``write_bandwidth_stonewall``)."""


@on_targets
class IORReadDatasetGeneration(IORDataset):
    """Stonewalled write of the read test's dataset; the pair count goes to a
    status file so the read reads exactly what was written."""


@rfm.simple_test
@on_targets
class IORStonewalledRead(IORReadTest):
    """Aggregate read bandwidth (MiB/s) sustained for the whole deadline.  A read
    that ends earlier exhausted its dataset and is INVALID."""

    dataset = fixture(IORReadDatasetGeneration, scope='test')


@rfm.simple_test
@on_targets
class IORRandomWriteIOPS(IORTest):
    """Random 4 KiB write IOPS, stonewalled at the deadline."""


@on_targets
class IORRandomReadDatasetGeneration(IORDataset):
    """Full blocks written with large sequential transfers for the random read."""


@rfm.simple_test
@on_targets
class IORRandomReadIOPS(IORReadTest):
    """Random 4 KiB read IOPS over a pre-written dataset, stonewalled."""

    dataset = fixture(IORRandomReadDatasetGeneration, scope='test')


@on_targets
class IORIntegrityDataset(IORDataset):
    """Full blocks written with this session's data pattern (-G)."""


@rfm.simple_test
@on_targets
class IORDataIntegrity(IORIntegrityTest):
    """Every transfer read back on another node and verified (-R): FAIL on any
    transfer read back wrong, with the count."""

    dataset = fixture(IORIntegrityDataset, scope='test')


@rfm.simple_test
@on_targets
class IORSharedFileWrite(IORTest):
    """Aggregate write bandwidth (MiB/s) into one shared file (N-to-1), stonewalled with
    wear-out; API (POSIX or MPI-IO), collective or independent I/O, hints and Lustre
    striping as the reference entry says."""


@on_targets
class IORSharedReadDatasetGeneration(IORDataset):
    """Stonewalled write of the shared file the shared read reads."""


@rfm.simple_test
@on_targets
class IORSharedFileRead(IORReadTest):
    """Aggregate read bandwidth (MiB/s) from one shared file, sustained for the deadline
    over the dataset its fixture wrote (read back on other nodes, -C)."""

    dataset = fixture(IORSharedReadDatasetGeneration, scope='test')
