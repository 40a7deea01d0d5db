"""``Logged``: what ReFrame logs of every fsaccept test, without the one attribute whose
reading costs more than the rest together."""

from __future__ import annotations

import reframe as rfm

#: Why each test of this session skipped (unique name -> (class name, reason)): ReFrame
#: skips a test whose fixture skipped before any hook of that test runs ("skipped due
#: to skipped dependencies"), so the test records its fixture's reason from here.
SKIPPED: dict[str, tuple[str, str]] = {}

#: ReFrame's deprecated alias of ``env_vars`` (logged and reported as ``env_vars``).
DEPRECATED_ALIAS = "variables"


class Logged(rfm.RegressionTestPlugin):
    """ReFrame 4.10 reads every loggable attribute of a test for each of its log records
    and run-report entries.  Reading ``variables`` walks the whole call stack, with
    source-file lookups, to place a deprecation warning it then suppresses: ~2 ms a
    read, ~0.1 s of every test's set-up here, and CPU taken from the benchmark a
    job on the same host runs meanwhile.  Its value is ``env_vars``', logged anyway."""

    @classmethod
    def loggable_attrs(cls):
        # Before ReFrame's own (its metaclass's): a class attribute is found first.
        return [(name, alt) for name, alt in type(cls).loggable_attrs(cls)
                if name != DEPRECATED_ALIAS]
