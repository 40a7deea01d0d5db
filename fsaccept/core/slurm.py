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


# -- accounting: each job's record in sacct ---------------------------------------------

#: The fields of a job's accounting record, as ``job_accounting`` holds them (sacct's
#: ``-P`` line, in this order).
SACCT_FIELDS = ("JobIDRaw", "State", "ExitCode", "ElapsedRaw", "NodeList", "Start")
#: Job states in which Slurm, not the job script, ended the job, and what they mean.
ENDED_BY_SLURM = {
    "TIMEOUT": "its time limit", "NODE_FAIL": "a node failure",
    "CANCELLED": "a cancellation", "OUT_OF_MEMORY": "running out of memory",
    "BOOT_FAIL": "a node that failed to boot", "DEADLINE": "its deadline",
    "PREEMPTED": "preemption",
}


def sacct_command(jobid: str) -> list[str]:
    """``sacct`` for job ``jobid``'s allocation (``-X``: no step lines), one ``-P`` line."""
    return ["sacct", "-n", "-P", "-X", "-j", jobid, "-o", ",".join(SACCT_FIELDS)]


def sacct_record(text: str, jobid: str) -> str:
    """Job ``jobid``'s line of :func:`sacct_command` output ("" when sacct has none)."""
    lines = [line for line in text.splitlines()
             if line.split("|", 1)[0] == jobid and line.count("|") == len(SACCT_FIELDS) - 1]
    return lines[-1] if lines else ""


def accounting_fields(record: str) -> dict[str, str]:
    """A ``job_accounting`` line by field ({} when it is not one)."""
    parts = record.split("|") if isinstance(record, str) else []
    return dict(zip(SACCT_FIELDS, parts)) if len(parts) == len(SACCT_FIELDS) else {}


def accounting_text(record: str) -> str:
    """A ``job_accounting`` line for people: 'job 12: COMPLETED, exit 0:0, 41 s on n[1-4]'."""
    f = accounting_fields(record)
    if not f:
        return record
    if never_started(record):
        return f"job {f['JobIDRaw']}: {f['State']} before it started"
    return (f"job {f['JobIDRaw']}: {f['State']}, exit {f['ExitCode']}, "
            f"{f['ElapsedRaw']} s on {f['NodeList'] or 'no node'} from {f['Start']}")


def settled(record: str, nodes: str) -> bool:
    """Whether a job's accounting line is final as far as slurmctld can tell: sacct has a
    record and, where slurmctld still knows the job's ``nodes``, the same nodes (slurmdbd
    may record them after the job's end)."""
    f = accounting_fields(record)
    return bool(f) and (not nodes or f["NodeList"] == nodes)


def never_started(record: str) -> bool:
    """Whether the job ended without ever starting (cancelled while it waited: ReFrame's
    ``max_pending_time``, ``ReqNodeNotAvail``, or an administrator)."""
    f = accounting_fields(record)
    return bool(f) and f["Start"] in ("None", "Unknown", "") and f["ElapsedRaw"] == "0"


#: ReFrame's scheduler backend that reads Slurm's accounting: a job it ran has a record.
ACCOUNTED_SCHEDULER = "slurm"


def accounting_reasons(record: str, jobid: str, time_limit_note: str = "",
                       scheduler: str = "") -> list[str]:
    """Why a job's accounting record makes its figures doubtful: a record of another job,
    one that is not sacct's, or a job that Slurm ended (time limit, node failure...).  A
    time limit noted after the benchmark had ended well (``time_limit_after_benchmark``)
    is no reason.  No record says nothing where the job ran without accounting (the
    ``squeue`` backend); a job ``scheduler`` ``slurm`` ran must have one."""
    if record is None or record == "":
        if scheduler == ACCOUNTED_SCHEDULER and jobid:
            return [f"evidence missing: job {jobid} ran through ReFrame's slurm backend, "
                    "which reads Slurm's accounting, and no job_accounting was recorded "
                    "(sacct had no record of it)"]
        return []
    f = accounting_fields(record)
    if not f or not f["ElapsedRaw"].isdigit():
        return [f"job_accounting is not a record of sacct's ({'|'.join(SACCT_FIELDS)}): "
                f"{str(record)[:200]!r}"]
    if f["JobIDRaw"] != jobid:
        return [f"job_accounting is the record of job {f['JobIDRaw']}, not of this test's "
                f"job {jobid or '(none)'}"]
    state = f["State"].split()[0] if f["State"].split() else ""
    if never_started(record):
        return [f"Slurm's accounting: job {jobid} never started ({f['State']} while it "
                "waited in the queue: ReFrame's max_pending_time, a node Slurm could not "
                "give, or an administrator): nothing was measured"]
    if state not in ENDED_BY_SLURM or (state == "TIMEOUT" and time_limit_note):
        return []
    return [f"Slurm's accounting: job {jobid} ended {state} ({ENDED_BY_SLURM[state]}) after "
            f"{f['ElapsedRaw']} s, exit {f['ExitCode']}, on {f['NodeList'] or 'no node'}"]
