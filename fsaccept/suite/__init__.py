"""The suite: what a site runs around the benchmarks, one floor above them: reading and
validating reference files against the benchmarks' schemas and rules (``reference``),
where the benchmark binaries come from (``provision``) and building them with Spack
(``spack``: ``fsaccept spack``, what ``scripts/setup --spack`` runs), and how ReFrame
finds fsaccept's configuration and selects a site's system (``sites``: used by
``config/settings.py``, ``fsaccept system`` and the ReFrame templates), and what writes
and removes a run's data on the target: the data a run owns, its ledger and its removal
(``owned``), the filler the nodes run (``filler``) and its remover (``fillrun``).  It
imports the benchmarks (their registry); ``fsaccept.core`` imports nothing of it.  The
cluster emulated on one host is not here: it is the lab (``lab/``, outside the package)."""
