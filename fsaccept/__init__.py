"""fsaccept: acceptance tests for HPC parallel file systems.

All logic that checks, scripts and tests share lives here as small, pure,
typed functions; the ReFrame checks in ``checks/`` only wire them together.
"""

__version__ = "0.1.0"
