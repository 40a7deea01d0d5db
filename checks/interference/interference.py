"""A noisy neighbour: a victim's read latency alone, then beside an aggressor, in one job.

Opt-in (``checks/interference``): ``scripts/acceptance`` loads it when the reference file
has ``tests.fio_interference`` (``fsaccept reference FILE --check-dirs``); by hand:
``reframe -c checks/interference -r``.  The first ``victim_nodes`` nodes of the job read
4 KiB blocks with O_DIRECT, one at a time, for ``runtime_s``: alone, then while the job's
other nodes write 1 MiB blocks as fast as they can.  The overlap is proven from the
steps' own clocks, else INVALID ("did not overlap").  FAIL when a victim's p99 latency
under load is more than ``max_p99_ratio`` times its p99 alone
(``docs/user/interference.md``).
"""

import reframe as rfm

from fsaccept.rfm.interference import InterferenceTest
from fsaccept.rfm.targets import on_targets


@rfm.simple_test
@on_targets
class FioInterference(InterferenceTest):
    """The victims' p99 read latency beside the aggressors over their p99 alone
    (``victim_p99_ratio``, ``victim_p99_alone_us``, ``victim_p99_loaded_us``,
    ``aggressor_shared_bw``, ``interference_overlap_pct``)."""
