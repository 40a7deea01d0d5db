"""The lab: a multi-node Slurm cluster emulated on one host (``cluster``), its GlusterFS
volume (``gluster``), and the ReFrame systems that run the checks on it (``emulated``,
``systems/``), for trying fsaccept and testing it without a site.  Not part of the
product: ``fsaccept`` imports nothing from here (tests/unit/test_layers.py), and the lab
uses the product as a site would.  ``cluster`` and ``gluster`` use the standard library
only: ``python3 -m lab.cluster up`` (``scripts/local-cluster``) runs before any virtual
environment exists."""
