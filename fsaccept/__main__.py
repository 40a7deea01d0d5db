"""``python -m fsaccept``: the ``fsaccept`` command (before the console script exists)."""

import sys

from fsaccept.cli import main

sys.exit(main())
