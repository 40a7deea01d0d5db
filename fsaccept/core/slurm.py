"""Slurm, as every benchmark's jobs meet it: the job name they share (so that Slurm
runs one at a time), and what Slurm says went wrong with a job (node failures,
cancellations, tasks that died, nodes it reports down), read from the job's stderr
and ``sinfo``."""

from __future__ import annotations

import re


def benchmark_job_name(system: str) -> str:
    """Slurm job name of every benchmark job of ``system``: with
    ``--dependency=singleton`` Slurm runs one such job at a time (per user)."""
    return f"fsaccept-{system}"


_NODE_FAILURE = re.compile(r"srun: error: Node failure on (\S+)")
_CANCELLED = re.compile(r"\*\*\* JOB (\d+) ON \S+ CANCELLED AT (\S+)(?: DUE TO ([A-Z ]+[A-Z]))?")
_TASK_DIED = re.compile(r"srun: error: (\S+): tasks? ([\d,-]+): (.+)")


def slurm_job_failures(stderr: str) -> list[str]:
    """What Slurm says ended the job (node failure, time limit, cancellation),
    naming the job and the node, from the job's stderr."""
    reasons: list[str] = []
    nodes = sorted(set(_NODE_FAILURE.findall(stderr)))
    cancelled = _CANCELLED.search(stderr)
    if cancelled:
        job, when, cause = cancelled.groups()
        text = f"Slurm cancelled job {job} at {when}"
        text += f" due to {cause.lower()}" if cause else ""
        if nodes:
            text += f": node {', '.join(nodes)} failed during the run"
        reasons.append(text)
    elif nodes:
        reasons.append(f"node {', '.join(nodes)} failed during the run")
    return reasons


def down_nodes(sinfo: str) -> list[str]:
    """Nodes that ``sinfo -h -N -o '%N %t'`` shows down, failed, or not responding (``*``)."""
    out = []
    for line in sinfo.splitlines():
        parts = line.split()
        if len(parts) == 2 and (parts[1].endswith("*") or
                                parts[1].rstrip("*~#$@%") in ("down", "fail", "failg", "drain")):
            out.append(parts[0])
    return sorted(set(out))


def slurm_task_failures(stderr: str, job_id: str | None = None) -> list[str]:
    """Tasks that srun saw end abnormally, by node (usually the aftermath of an
    error the benchmark printed first)."""
    died = [f"{node} task {task}: {what}" for node, task, what in _TASK_DIED.findall(stderr)]
    job = f"of job {job_id} " if job_id else ""
    return [f"tasks {job}ended abnormally: " + "; ".join(first_lines(died))] if died else []


def first_lines(lines: list[str], keep: int = 3) -> list[str]:
    """The first few offending lines; a failing run of 10,000 ranks prints one each."""
    if len(lines) <= keep:
        return list(lines)
    return lines[:keep] + [f"(+{len(lines) - keep} more such lines in the output)"]
