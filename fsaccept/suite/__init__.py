"""The suite: what a site runs around the benchmarks, one floor above them: reading and
validating reference files against the benchmarks' schemas and rules (``reference``),
and where the benchmark binaries come from (``provision``).  It imports the benchmarks
(their registry); ``fsaccept.core`` imports nothing of it."""
