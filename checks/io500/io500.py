"""IO500 with the site's own ``io500`` binary: opt-in, never loaded by a plain
``reframe -c checks -r`` (add ``-c checks/io500 -t io500``).

fsaccept does not build IO500 (its sources are in no package registry): a site builds
it with IO500's own ``prepare.sh`` and declares it in its partition's ``extras``
(``'io500_binary': '/path/to/io500'``) or puts it on PATH; without one the check skips,
saying so.  Its config file is generated from the reference file's ``io500:`` entry
(node fraction, ranks per node, datadir below the test's own directory, stonewall time,
extended mode, IOR data pattern (random by default), sizes); its result directory is
kept with the test's outputs.  Figures: IO500's ``total``, ``bw`` (GiB/s), ``md``
(kIOPS) and each scored phase, judged against the entry's thresholds; a run IO500 or
fsaccept finds invalid is INVALID with the reasons (``fsaccept/rfm/io500.py``).
"""

import reframe as rfm

from fsaccept.rfm.io500 import Io500Test
from fsaccept.rfm.targets import on_targets


@rfm.simple_test
@on_targets
class IO500(Io500Test):
    """IO500: its score (TOTAL, BW, MD) and phases, with the site's own binary."""
