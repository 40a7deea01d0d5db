"""Pure building blocks every benchmark shares; nothing here imports ReFrame or a benchmark:
findings and verdict reasons, units and sizes, versions, Slurm failure reading, placement,
guards, strict YAML, reference files, where binaries come from."""
