"""mdtest metadata acceptance tests: file create, stat, read and remove rates.

Two variants, as the field runs them (files only, ``-F``):

- **easy**: every rank works in a directory of its own (``-u``);
- **hard**: all ranks create their files in one shared directory.

Both stat and read the files that the ranks of the *next node* created
(``-N 1`` with block placement), so no client cache can answer; the create
phase may be stonewalled (``stonewall_s``: ``-W`` with its status file ``-x``).

Node fraction, ranks per node, files per rank, optional file sizes
(``write_bytes``/``read_bytes``, ``-w``/``-e``) and one threshold per figure
come from ``reference/<system>.yaml`` (``mdtest_easy``, ``mdtest_hard``).
Figures are mdtest's own ``SUMMARY rate`` means in ops/s (``file_creation``,
``file_stat``, ``file_read``, ``file_removal``, ``tree_creation``,
``tree_removal``), plus the derived ``file_creation_stonewall`` under a
stonewall; how they are run and judged is in ``fsaccept/rfm/mdtest.py``.
"""

import reframe as rfm

from fsaccept.rfm.mdtest import MdtestTest
from fsaccept.rfm.targets import on_targets


@rfm.simple_test
@on_targets
class MdtestEasy(MdtestTest):
    """mdtest "easy": a directory per rank, so no two ranks share a directory."""


@rfm.simple_test
@on_targets
class MdtestHard(MdtestTest):
    """mdtest "hard": every rank creates its files in one shared directory."""
