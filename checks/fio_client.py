"""fio client acceptance tests: what each client node gets from the file system.

One fio per node on the node fraction of ``reference/<system>.yaml`` (key
``reference_key``); the fio settings of each test are in
``fsaccept/benchmarks/fio/command.py`` (every setting that changes a figure's meaning is
passed explicitly and recorded), figures and outliers in ``fsaccept/benchmarks/fio/``.

Every figure is reported per node (``per_node_figures``) and over all nodes:
throughput summed, with the slowest node as ``<figure>_node_min``; latency as
the worst node's.  A node below ``outlier_fraction`` x the median node FAILs
the test and is named (``outlier_nodes_named``): finding bad clients is part
of acceptance.

Tags: ``acceptance`` and ``client`` for all; the fio metadata test is also
tagged ``metadata`` (a per-client metadata rate; the parallel metadata
figures are mdtest's), so ``-t client`` runs all of them, also on a single
host (``--system workstation``).
"""

import reframe as rfm

from fsaccept.rfm.fio import FioTest
from fsaccept.rfm.targets import on_targets


@rfm.simple_test
@on_targets
class FioRandomReadDirect(FioTest):
    """4 KiB random read IOPS with O_DIRECT (direct=1), asynchronous, deep queue:
    the client-limited regime (``randread_4k_direct_iops``)."""


@rfm.simple_test
@on_targets
class FioRandomReadBuffered(FioTest):
    """4 KiB random read IOPS through the page cache (direct=0): the cache regime
    (``randread_4k_buffered_iops``).  Files smaller than the node's memory are
    noted: the figure then measures the cache, not the file system."""


@rfm.simple_test
@on_targets
class FioSequentialWrite(FioTest):
    """1 MiB sequential write bandwidth with O_DIRECT, fsync at the end
    (``seq_write_1m_direct_bw``, MiB/s)."""


@rfm.simple_test
@on_targets
class FioSequentialRead(FioTest):
    """1 MiB sequential read bandwidth with O_DIRECT (``seq_read_1m_direct_bw``, MiB/s)."""


@rfm.simple_test
@on_targets
class FioFsync(FioTest):
    """4 KiB writes, each followed by fsync, queue depth 1: IOPS
    (``fsync_4k_iops``), the writes' completion latency
    (``fsync_4k_write_clat_{p50,p99,max}_us``) and the fsync calls' latency
    (``fsync_4k_sync_lat_{p50,p99,max}_us``); latency thresholds are upper bounds."""


@rfm.simple_test
@on_targets
class FioMetadata(FioTest):
    """File create, stat and delete rates per client with fio's filecreate,
    filestat and filedelete engines (``filecreate_ops``, ``filestat_ops``,
    ``filedelete_ops``, ops/s): a metadata check that needs no mdtest."""
