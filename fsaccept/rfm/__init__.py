"""The only layer that imports ReFrame: one ``BenchmarkTest`` template (``base.py``), the
session fixture that provides the binaries (``binaries.py``), and one module per benchmark
whose tests supply only what differs."""

from fsaccept.rfm.site import warn_when_no_system

# Loaded by `reframe -c checks`: a user whose ReFrame selected no fsaccept system is
# told what to do, not only "Found 0 check(s)".
warn_when_no_system()
