"""md-workbench: IO500's interleaved create/stat/read/delete of small objects, with
per-operation latency statistics: what interactive users of a file system feel."""
