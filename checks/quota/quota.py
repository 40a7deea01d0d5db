"""A quota, as the contract promises it: the site's own command (``extras.quota`` in the
system configuration) sets a quota of ``limit_mib`` on the test's directory; one node
writes irreducible data into it, a MiB at a time, each flushed, until EDQUOT; the write
must be refused within ``slack_mib`` of the limit, and the usage the site's command
reports must follow the data within ``usage_within_s``.  The quota is cleared in every
exit path (``reference/<system>.yaml``: ``quota``; ``docs/user/quota.md``).
"""

import reframe as rfm

from fsaccept.rfm.quota import QuotaTest
from fsaccept.rfm.targets import on_targets


@rfm.simple_test
@on_targets
class QuotaEnforcement(QuotaTest):
    """EDQUOT within the slack of the quota, and the usage reported following the data."""
