"""The data model and pure helpers the benchmarks and conditions share; nothing here
imports ReFrame or another floor: findings and verdict reasons, units and sizes, figure
formatting, versions, Slurm failure reading, placement, per-node figures, the guards
before any job (``guards``), bounded file reading, strict YAML, the reference file's data
model, repository paths, and the records and judges of the conditions every benchmark can
run under (degraded mode, scaling sweeps, fill).  Besides them, the probes a node runs
with this Python (``mountopts``, ``servers``; ``reduction``, the data-reduction probe,
writes and removes its own directory).  What writes or removes a
run's data is the suite's (``fsaccept.suite.owned``, ``filler``); what serves one
benchmark alone is in its folder (fio's ``soak``, ``interference_judge``)."""
