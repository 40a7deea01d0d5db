"""Data-reduction probe: does the target compress or deduplicate what it is written?

Runs before the bandwidth tests (this file sorts first in ``checks/``; see
``fsaccept/rfm/probe.py`` for how later tests read its result).  Its figures are the
ratios (space written / space taken) of zeros, IOR's default pattern and random data;
a bandwidth or IOPS figure measured with reducible data on a file system it finds
reducing data is INVALID with the ratio in the reason.
"""

import reframe as rfm

from fsaccept.rfm.probe import DataReductionProbe as _Probe
from fsaccept.rfm.targets import on_targets


@rfm.simple_test
@on_targets
class DataReductionProbe(_Probe):
    """Preflight: it runs before the benchmarks, and its ratios are findings that decide
    other tests' validity, never figures judged against a threshold."""
