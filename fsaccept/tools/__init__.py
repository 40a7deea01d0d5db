"""Operational tools: the emulated Slurm cluster and the Spack set-up."""
