"""Is a benchmark figure valid?  The rules that turn a parsed run into
INVALID reasons; an empty list means the figure may be judged PASS/FAIL.

Every reason says what was seen and what to change.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
import re
from typing import Any

import yaml

from fsaccept.ior import IorRun

MIB = 2**20
GIB = 2**30


@dataclass(frozen=True)
class IorExpectation:
    """What a phase was asked to do, to compare with what IOR reports."""

    operation: str  #: "write" or "read"
    tasks: int
    nodes: int
    deadline_s: int | None = None  #: the phase must run at least this long
    direct_io: bool = False
    node_memory_bytes: int | None = None
    min_cache_ratio: float = 1.5
    generation_deadline_s: int | None = None  #: for advice on an exhausted dataset
    figure_kind: str = "bandwidth"  #: "bandwidth" or "iops": what a known bug must affect


def ior_invalid_reasons(run: IorRun, exp: IorExpectation) -> list[str]:
    """INVALID reasons for the ``exp.operation`` figure of ``run``."""
    reasons = _first(run.reasons)
    reasons += version_reasons("ior", version_number(run.version), exp.figure_kind)
    row = run.summary_for(exp.operation)
    if row is None:
        if not run.reasons:
            reasons.append(f"no {exp.operation} figure in IOR's summary")
        return reasons
    if row.tasks is not None and row.tasks != exp.tasks:
        reasons.append(f"IOR ran {row.tasks} ranks, {exp.tasks} were requested")
    if exp.deadline_s:
        reasons += _short_run_reasons(run, exp)
    if exp.operation == "read" and not exp.direct_io:
        reasons += _cache_reasons(row.agg_mib, exp)
    return reasons


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
    return [f"tasks {job}ended abnormally: " + "; ".join(_first(died))] if died else []


def _first(lines: list[str], keep: int = 3) -> list[str]:
    """The first few offending lines; a failing run of 10,000 ranks prints one each."""
    if len(lines) <= keep:
        return list(lines)
    return lines[:keep] + [f"(+{len(lines) - keep} more such lines in the output)"]


def _short_run_reasons(run: IorRun, exp: IorExpectation) -> list[str]:
    reasons = []
    for it in run.results:
        if it.access != exp.operation or it.wrrd_s is None or it.wrrd_s >= exp.deadline_s:
            continue
        moved_mib = (it.bw_mib or 0) * it.wrrd_s
        needed_mib = (it.bw_mib or 0) * exp.deadline_s
        text = (f"{exp.operation} iteration {it.iteration} ran {it.wrrd_s:g} s of the "
                f"{exp.deadline_s} s deadline: ")
        if exp.operation == "read":
            text += (f"the dataset ({moved_mib:.0f} MiB) was exhausted, so this is not a "
                     f"sustained {exp.deadline_s} s read. At {it.bw_mib:g} MiB/s it needs "
                     f"at least {needed_mib:.0f} MiB")
            if exp.generation_deadline_s:
                longer = -(-exp.generation_deadline_s * exp.deadline_s // it.wrrd_s)
                text += (f": raise generation_deadline_s from {exp.generation_deadline_s} "
                         f"to at least {longer:.0f}, and segments if the generation ends on "
                         "its size")
        else:
            text += (f"the data ran out first ({moved_mib:.0f} MiB); raise segments so that "
                     f"at least {needed_mib:.0f} MiB fit")
        reasons.append(text)
    return reasons


def _cache_reasons(moved_mib: float | None, exp: IorExpectation) -> list[str]:
    if moved_mib is None or not exp.node_memory_bytes:
        return []
    per_node = moved_mib * MIB / exp.nodes
    if per_node >= exp.min_cache_ratio * exp.node_memory_bytes:
        return []
    return [f"cache-suspect: buffered read of {per_node / GIB:.2f} GiB per node, less than "
            f"{exp.min_cache_ratio:g} x node memory ({exp.node_memory_bytes / GIB:.2f} GiB): "
            "the figure may measure page cache; use direct_io or a larger dataset"]


@cache
def _known_bad() -> dict[str, list[dict[str, Any]]]:
    text = resources.files("fsaccept").joinpath("data/known_bad_versions.yaml").read_text()
    return yaml.safe_load(text)


def version_number(version: str | None) -> str | None:
    """'IOR-4.0.0' → '4.0.0'."""
    return version.split("-", 1)[1] if version and "-" in version else version


def _version_key(version: str) -> tuple:
    # 4.0.0rc1 sorts before 4.0.0.
    parts = []
    for piece in version.replace("rc", ".-1.").split("."):
        parts.append(int(piece) if piece.lstrip("-").isdigit() else 0)
    return tuple(parts + [0] * (6 - len(parts)))


def known_bugs(benchmark: str, version: str) -> list[dict[str, Any]]:
    """Entries of the known-bad list that match ``version``."""
    hits = []
    for entry in _known_bad().get(benchmark, []):
        if version in entry.get("versions", []) or (
                "before" in entry and _version_key(version) < _version_key(entry["before"])):
            hits.append(entry)
    return hits


def version_reasons(benchmark: str, version: str | None, figure_kind: str) -> list[str]:
    """INVALID reasons: an unknown version, or a known bug that affects ``figure_kind``."""
    if not version:
        return [f"{benchmark} version not found in its output: cannot certify the figure"]
    return [f"{benchmark} {version} has a known bug affecting {figure_kind}: {e['reason']}"
            for e in known_bugs(benchmark, version) if figure_kind in e["affects"]]
