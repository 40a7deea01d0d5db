"""Scaling sweeps: write bandwidth, read bandwidth and the mdtest-easy create rate at
each point of a dimension: client nodes, ranks per node, IOR transfer sizes; on Lustre,
the shared-file tests at each stripe count x stripe size.

Run only when asked (``scripts/acceptance --scaling``, which adds ``-c checks/scaling``
and selects these, the healthy tests they sweep and the preflight checks; ``-t scaling``
selects these alone): a plain ``reframe -c checks -r`` does not load this folder.  Each class is
its healthy test's (``checks/ior_acceptance.py``, ``checks/mdtest_metadata.py``) with a
point before it (``fsaccept/rfm/scaling.py``) and one parameter whose values are the
points of the reference file's ``sweeps:`` section (defaults without one), registered
only when the section sweeps its test (``swept_test``); ReFrame names each test by its
point (``ScalingIORWriteBandwidthNodes %nodes=4``).  A point beyond what the partition
allows is skipped with the reason.  The sign-off judges each curve by its shape:
``sweeps.min_efficiency`` at the largest point against linear scaling from the smallest,
and each point's own threshold if the section gives one.
"""

from reframe.core.builtins import fixture, parameter

from fsaccept.rfm.ior import IORDataset, IORReadTest, IORTest
from fsaccept.rfm.mdtest import MdtestTest
from fsaccept.rfm.scaling import SweepPoint, SweptRead, points, swept_test


# Client nodes: each test at the entry's ranks per node and sizes.

@swept_test
class ScalingIORWriteBandwidthNodes(SweepPoint, IORTest):
    """Aggregate write bandwidth (MiB/s) on 1, 2, 4 ... client nodes."""

    nodes = parameter(points("ScalingIORWriteBandwidthNodes"))


class ScalingIORReadDatasetGenerationNodes(SweepPoint, IORDataset):
    """The read's dataset, written on as many nodes as it is read on."""

    nodes = parameter(points("ScalingIORReadDatasetGenerationNodes"))


@swept_test
class ScalingIORStonewalledReadNodes(SweptRead, IORReadTest):
    """Aggregate read bandwidth (MiB/s) on 1, 2, 4 ... client nodes."""

    dataset = fixture(ScalingIORReadDatasetGenerationNodes, scope='environment')


@swept_test
class ScalingMdtestEasyNodes(SweepPoint, MdtestTest):
    """mdtest "easy" rates (the create rate judged) on 1, 2, 4 ... client nodes."""

    nodes = parameter(points("ScalingMdtestEasyNodes"))


# Ranks per node: each test on the entry's node fraction.

@swept_test
class ScalingIORWriteBandwidthRanks(SweepPoint, IORTest):
    """Aggregate write bandwidth (MiB/s) with 1, 2, 4 ... ranks per node."""

    ranks = parameter(points("ScalingIORWriteBandwidthRanks"))


class ScalingIORReadDatasetGenerationRanks(SweepPoint, IORDataset):
    """The read's dataset, written with as many ranks as read it."""

    ranks = parameter(points("ScalingIORReadDatasetGenerationRanks"))


@swept_test
class ScalingIORStonewalledReadRanks(SweptRead, IORReadTest):
    """Aggregate read bandwidth (MiB/s) with 1, 2, 4 ... ranks per node."""

    dataset = fixture(ScalingIORReadDatasetGenerationRanks, scope='environment')


@swept_test
class ScalingMdtestEasyRanks(SweepPoint, MdtestTest):
    """mdtest "easy" rates with 1, 2, 4 ... ranks per node."""

    ranks = parameter(points("ScalingMdtestEasyRanks"))


# IOR transfer sizes: the same data per rank, in larger or smaller transfers.

@swept_test
class ScalingIORWriteBandwidthTransfer(SweepPoint, IORTest):
    """Aggregate write bandwidth (MiB/s) with transfers of 64 KiB ... 16 MiB."""

    transfer = parameter(points("ScalingIORWriteBandwidthTransfer"))


class ScalingIORReadDatasetGenerationTransfer(SweepPoint, IORDataset):
    """The read's dataset, written with the transfer size it is read with."""

    transfer = parameter(points("ScalingIORReadDatasetGenerationTransfer"))


@swept_test
class ScalingIORStonewalledReadTransfer(SweptRead, IORReadTest):
    """Aggregate read bandwidth (MiB/s) with transfers of 64 KiB ... 16 MiB."""

    dataset = fixture(ScalingIORReadDatasetGenerationTransfer, scope='environment')


# Lustre: the shared-file tests over a matrix of stripe counts and sizes (a Lustre
# target only: elsewhere these are not registered).

@swept_test
class ScalingIORSharedFileWriteStripes(SweepPoint, IORTest):
    """Shared-file write bandwidth (MiB/s) at each stripe count x stripe size."""

    stripe = parameter(points("ScalingIORSharedFileWriteStripes"))


class ScalingIORSharedReadDatasetGenerationStripes(SweepPoint, IORDataset):
    """The shared file the read reads, striped as the point says."""

    stripe = parameter(points("ScalingIORSharedReadDatasetGenerationStripes"))


@swept_test
class ScalingIORSharedFileReadStripes(SweptRead, IORReadTest):
    """Shared-file read bandwidth (MiB/s) at each stripe count x stripe size."""

    dataset = fixture(ScalingIORSharedReadDatasetGenerationStripes, scope='environment')
