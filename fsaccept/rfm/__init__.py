"""The only layer that imports ReFrame: one ``BenchmarkTest`` template (``base.py``), the
session fixture that provides the binaries (``binaries.py``), and one module per benchmark
whose tests supply only what differs."""
