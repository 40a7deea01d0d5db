"""The layer of ReFrame's tests (with ``reporting.results_db``, the only code that imports
ReFrame), from the bottom up: what a check is, from the catalogue (``catalogued.py``);
the acceptance template (``acceptance.py``); the job script's text and the owned-data
ledger (``jobscript.py``); the benchmark template (``benchmark.py``); the session fixture
that provides the binaries (``binaries.py``); and one module per benchmark whose tests
supply only what differs (``ior.py``, ``mdtest.py``, ``md_workbench.py``, ``fio.py``,
``probe.py``)."""

from fsaccept.rfm.site import warn_when_no_system

# Loaded by `reframe -c checks`: a user whose ReFrame selected no fsaccept system is
# told what to do, not only "Found 0 check(s)".
warn_when_no_system()
