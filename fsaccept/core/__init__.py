"""Pure building blocks every benchmark shares; nothing here imports ReFrame or another
floor: findings and verdict reasons, units and sizes, versions, Slurm failure reading,
placement, guards, strict YAML, the reference file's data model."""
