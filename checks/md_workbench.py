"""md-workbench: IO500's interleaved small-object workload (create, stat, read, delete),
rate and per-operation latency as interactive users feel them.

Node fraction, ranks per node, data sets, objects, object size, iterations, the optional
stonewall and the thresholds (``rate`` in ops/s, a floor; ``<op>_latency_<stat>`` in s, a
ceiling) come from ``reference/<system>.yaml`` (``md_workbench``); how it is run and
judged is in ``fsaccept/rfm/md_workbench.py`` and ``fsaccept/benchmarks/md_workbench/``.
"""

import reframe as rfm

from fsaccept.rfm.md_workbench import MdWorkbenchTest
from fsaccept.rfm.targets import on_targets


@rfm.simple_test
@on_targets
class MdWorkbench(MdWorkbenchTest):
    """Objects written by one rank are read by a rank on the next node (-O)."""
