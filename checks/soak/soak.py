"""The soak: hours of fio at a site, minutes in CI, judged on its time series.

Opt-in (``checks/soak``): ``scripts/acceptance`` loads it when the reference file has
``tests.fio_soak`` (``fsaccept reference FILE --check-dirs``); by hand:
``reframe -c checks/soak -r``.  One fio per node writes 1 MiB blocks with O_DIRECT for
``runtime_s`` and logs its bandwidth and latency every ``interval_s``.  FAIL when a client
went more than ``max_stall_s`` without progress (when, and on which nodes), when the
bandwidth drifted more than ``max_drift`` over the run, or when a node lay more than
``max_node_shortfall`` below the others (``docs/user/soak.md``).
"""

import reframe as rfm

from fsaccept.rfm.soak import FioSoakTest
from fsaccept.rfm.targets import on_targets


@rfm.simple_test
@on_targets
class FioSoak(FioSoakTest):
    """fio's time series on every node (``soak_longest_stall_s``, ``soak_drift_pct``,
    ``soak_node_shortfall_pct``, ``seq_write_1m_direct_bw``)."""
