"""The network check: iperf3 from each client node to the file system's servers, each
node alone (a server takes one node at a time), then all at once.  A node below
(1 - max_spread) x the median node, below the entry's least bandwidth or above its
greatest round-trip time FAILs, named with its server; a node not measured makes the test
INVALID (``reference/<system>.yaml``: ``tests.network_survey``;
``docs/user/components.md``).
"""

import reframe as rfm

from fsaccept.rfm.network import NetworkTest
from fsaccept.rfm.targets import on_targets


@rfm.simple_test
@on_targets
class NetworkSurvey(NetworkTest):
    """Each node's link to the servers, alone and all at once; the slow one named."""
