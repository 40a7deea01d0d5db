"""AI checkpoint and restore: how long a checkpoint of the reference file's size takes to
save, and to restore.

A checkpoint is a fixed volume (``checkpoint_size``), not stonewalled: every rank writes
its shard once with large transfers and fsync at close, with data the file system cannot
reduce.  Its restore drops the caches (the reference's ``drop_caches``), reads each shard
on another node than wrote it and verifies every transfer.  Figures (MLPerf Storage's
definitions): the slowest rank's open-to-close time, the volume over it, and the fastest
rank's time, from IOR's per-rank times.  Phases: ``fsaccept/benchmarks/ior/command.py``.
"""

import reframe as rfm
from reframe.core.builtins import fixture

from fsaccept.rfm.ior import IORBurstDataset, IORCheckpointTest, IORRestoreTest
from fsaccept.rfm.targets import on_targets


@rfm.simple_test
@on_targets
class IORCheckpointWrite(IORCheckpointTest):
    """Time to save a checkpoint, a file per rank (``checkpoint_time_s``)."""


@on_targets
class IORCheckpointDataset(IORBurstDataset):
    """The checkpoint the restore reads (its own: the restore runs and is judged alone)."""


@rfm.simple_test
@on_targets
class IORCheckpointRestore(IORRestoreTest):
    """Time to restore a checkpoint on other nodes (``restore_time_s``); a shard read back
    wrong is a FAIL."""

    dataset = fixture(IORCheckpointDataset, scope='test')


@rfm.simple_test
@on_targets
class IORCheckpointSharedWrite(IORCheckpointTest):
    """Time to save a checkpoint into one shared file (N-to-1; MPI-IO collective as the
    reference entry says)."""


@on_targets
class IORCheckpointSharedDataset(IORBurstDataset):
    """The shared-file checkpoint the shared restore reads."""


@rfm.simple_test
@on_targets
class IORCheckpointSharedRestore(IORRestoreTest):
    """Time to restore a shared-file checkpoint on other nodes; a wrong transfer is a FAIL."""

    dataset = fixture(IORCheckpointSharedDataset, scope='test')
