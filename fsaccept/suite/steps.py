"""How fsaccept's own component programs (``fsaccept survey``, ``fsaccept network``) reach
the job's nodes: the allocation's node names, the launcher of one step on one node, and
the error such a program exits 2 with.

A program runs once, on the job's first node, and starts one job step per node and
measurement (``srun -N1 -n1 --exact -w NODE``).
"""

from __future__ import annotations

import os
import re
import subprocess

#: How a step runs on its node: a job step of the allocation, one task.
LAUNCHER = ("srun", "-N1", "-n1", "--exact")

#: A node's name as Slurm prints it.  It becomes a file name (``r<round>-<node>.json``)
#: and an ``srun -w`` argument.
NODE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


class ProgramError(RuntimeError):
    """A component program that cannot be run or judged; the message names the option,
    path or node (exit 2)."""


def job_nodes(text: str | None) -> list[str]:
    """The nodes named by ``--nodes`` (``text``, comma-separated), else the Slurm
    allocation's (``SLURM_JOB_NODELIST``, expanded by ``scontrol show hostnames``)."""
    if text:
        nodes = [n for n in text.split(",") if n]
    else:
        nodelist = os.environ.get("SLURM_JOB_NODELIST", "")
        if not nodelist:
            raise ProgramError("no --nodes and no Slurm allocation (SLURM_JOB_NODELIST): "
                               "run it inside salloc/sbatch, or name the nodes")
        proc = subprocess.run(["scontrol", "show", "hostnames", nodelist],
                              capture_output=True, text=True, timeout=60)
        if proc.returncode != 0:
            raise ProgramError(f"scontrol show hostnames {nodelist}: {proc.stderr.strip()}")
        nodes = proc.stdout.split()
    if not nodes or len(set(nodes)) != len(nodes):
        raise ProgramError(f"--nodes {text!r}: no node, or a node named twice")
    bad = [n for n in nodes if not NODE_NAME.fullmatch(n)]
    if bad:
        raise ProgramError(f"--nodes: {bad[0][:80]!r} is not a node name (letters, digits, "
                           "'.', '_', '-')")
    return nodes
