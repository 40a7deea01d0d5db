"""Parse fio's JSON report (``--output-format=json``), fio 3.x.

The typed run and fio's size/time syntax: :mod:`.run`; the rules applied to each job:
:mod:`.validity`; what is done with the figures (several nodes, outliers): :mod:`.figures`.

Pure functions, standard library only.  Every figure is fio's own number,
read from its JSON and only scaled by an exact factor with the unit named:

* IOPS: ``<dir>.iops`` as fio printed it;
* MiB/s: ``<dir>.bw_bytes / 1048576`` (fio's ``bw`` is KiB/s rounded down;
  ``bw_bytes`` is the same rate in B/s, so this is the exact MiB/s);
* us: a ``*_ns`` latency (``clat_ns``, ``sync.lat_ns``, a percentile) / 1000.

The text parsed is what one fio run left: its JSON report, optionally with
fio's messages (stdout/stderr lines such as ``fio: io_u error ...``) before
or after it.  Anything that makes a run untrustworthy is a :class:`Finding`:

* ``invalid``: empty output; no JSON report; truncated or malformed JSON; a
  job whose ``error`` is not 0; ``fio: ... error``/``terminating on signal``
  messages; a ``time_based`` job that ran shorter than its ``runtime`` (unless fio
  ended it because its steady-state criterion, ``ss=``, was attained: a note says so).
* ``warning``: other ``fio:`` messages, short or dropped I/Os, settings that
  change a figure's meaning left to fio's defaults, rates measured over
  less than a second (fio's runtime resolution is 1 ms).
* ``note``: the figure means something particular, e.g. ``time_based`` on a
  file smaller than what the runtime moved (fio wraps and re-reads or
  overwrites the same blocks: cache-inflated), a buffered read of files
  that fit in the node's memory (the cache regime).

A run is ``valid`` when it has no ``invalid`` finding.  Valid JSON that is
not a fio report (no ``jobs`` list, a job without ``read``...) raises
``ValueError`` naming the key.

Several nodes: see :mod:`.figures`.

Entry point: :func:`parse_fio` → :class:`FioRun` (``to_dict()`` for JSON).
"""

from __future__ import annotations

import itertools
import json
import re
import shlex
from collections.abc import Iterable
from typing import Any

from fsaccept.benchmarks.fio.run import (BARE_FLAGS, MAX_MESSAGES, MEANINGFUL_SETTINGS,
                                         MUST_BE_EXPLICIT, NOTE, Direction, FioJob, FioRun,
                                         Latency, SteadyState, parse_fio_size,
                                         parse_fio_time)
from fsaccept.benchmarks.fio.validity import flag_findings, job_findings
from fsaccept.core.findings import INVALID, WARNING, Finding, clip

__all__ = [
    "INVALID",
    "MEANINGFUL_SETTINGS",
    "NOTE",
    "WARNING",
    "Direction",
    "FioJob",
    "FioRun",
    "Finding",
    "Latency",
    "SteadyState",
    "format_settings",
    "parse_fio",
    "parse_fio_size",
    "parse_fio_time",
    "job_file_options",
]

def job_file_options(text: str) -> dict[str, dict[str, str]]:
    """Section -> options of a fio job file (``[global]`` included), or of a fio command
    line (``fio --name=x --time_based ...``: options before the first ``--name`` are
    global). Bare flags get the value ``"1"``, as fio gives them."""
    sections: dict[str, dict[str, str]] = {"global": {}}
    if re.search(r"^\s*\[[^\]]+\]\s*$", text, re.M):
        current = None
        for raw in text.splitlines():
            line = raw.strip()
            if not line or line.startswith(("#", ";")):
                continue
            if line.startswith("[") and line.endswith("]"):
                current = sections.setdefault(line[1:-1].strip(), {})
                continue
            if current is not None:
                key, sep, value = line.partition("=")
                current[key.strip()] = value.strip() if sep else "1"
        return sections
    current = sections["global"]
    for arg in shlex.split(text, comments=True):
        if not arg.startswith("--"):
            continue
        key, sep, value = arg[2:].partition("=")
        if key == "name":
            current = sections.setdefault(value, {})
        current[key] = value if sep else "1"
    return sections


def _get(obj: Any, path: tuple[str | int, ...], where: str) -> Any:
    """obj[path...]; ValueError naming the missing key path."""
    cur = obj
    walked = where
    for key in path:
        walked += f"[{key}]" if isinstance(key, int) else f".{key}"
        try:
            cur = cur[key]
        except (KeyError, IndexError, TypeError):
            raise ValueError(f"{walked}: missing (not fio --output-format=json output?)") \
                from None
    return cur


def json_number(obj: Any, path: tuple[str | int, ...], where: str) -> Any:
    value = _get(obj, path, where)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        joined = where + "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in path)
        raise ValueError(f"{joined}: {value!r} is not a number")
    return value


def _latency(block: Any, where: str) -> Latency | None:
    if not isinstance(block, dict):
        return None
    percentiles = block.get("percentile", {})
    return Latency(min_ns=json_number(block, ("min",), where), max_ns=json_number(block, ("max",), where),
                   mean_ns=json_number(block, ("mean",), where),
                   stddev_ns=json_number(block, ("stddev",), where),
                   samples=json_number(block, ("N",), where),
                   percentiles={str(k): v for k, v in percentiles.items()}
                   if isinstance(percentiles, dict) else {})


def _direction(job: dict[str, Any], name: str, where: str) -> Direction:
    d = _get(job, (name,), where)
    at = f"{where}.{name}"
    return Direction(io_bytes=json_number(d, ("io_bytes",), at), bw_bytes=json_number(d, ("bw_bytes",), at),
                     bw_kib=json_number(d, ("bw",), at), iops=json_number(d, ("iops",), at),
                     runtime_ms=json_number(d, ("runtime",), at),
                     total_ios=json_number(d, ("total_ios",), at),
                     short_ios=d.get("short_ios", 0), drop_ios=d.get("drop_ios", 0),
                     clat=_latency(d.get("clat_ns"), f"{at}.clat_ns"),
                     lat=_latency(d.get("lat_ns"), f"{at}.lat_ns"))


def _job(raw: Any, index: int, global_options: dict[str, str],
         declared: dict[str, dict[str, str]]) -> FioJob:
    where = f"jobs[{index}]"
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: not an object")
    if not isinstance(raw.get("job options", {}), dict):
        raise ValueError(f"{where}.job options: not an object")
    job_options = {str(k): str(v) for k, v in raw.get("job options", {}).items()}
    name = str(_get(raw, ("jobname",), where))
    # Bare flags are missing from fio's JSON: take them from the job file, if given.
    flags = {flag: value for flag in BARE_FLAGS
             if (value := declared.get(name, {}).get(flag,
                                                     declared.get("global", {}).get(flag)))}
    sync = raw.get("sync", {}) if isinstance(raw.get("sync"), dict) else {}
    ss = raw.get("steadystate")
    steady = SteadyState(criterion=str(ss.get("ss")), duration_s=ss.get("duration"),
                         # 1 exactly: anything else is not fio saying it was attained
                         attained=type(ss.get("attained")) is int and ss["attained"] == 1,
                         measured=ss.get("criterion")) if isinstance(ss, dict) else None
    return FioJob(
        index=index, name=name,
        groupid=raw.get("groupid", 0), error=json_number(raw, ("error",), where),
        elapsed_s=raw.get("elapsed", 0), job_runtime_ms=raw.get("job_runtime"),
        job_options=job_options, options={**global_options, **flags, **job_options},
        global_options=global_options,
        read=_direction(raw, "read", where), write=_direction(raw, "write", where),
        trim=_direction(raw, "trim", where) if "trim" in raw else Direction(
            0, 0, 0, 0.0, 0, 0, 0, 0, None, None),
        sync_total_ios=sync.get("total_ios", 0),
        sync_lat=_latency(sync.get("lat_ns"), f"{where}.sync.lat_ns"), raw=raw,
        steady_state=steady)


# Lines of fio that make a run untrustworthy.
# ``err= 0:`` is the clean status line of fio's normal output (``--output-format=json,normal``):
# only a non-zero ``err=`` is bad (a failed job's line also says ``error=...``).
_BAD_MESSAGE = re.compile(
    r"error|err=(?!\s*0(?!\d))|terminating on signal|killed|failed|No such file|"
    r"Permission denied|"
    r"is not a directory|"
    r"No space left|Read-only file system|Input/output error|Segmentation fault|"
    r"srun: error|slurmstepd: error|CANCELLED|exited with",
    re.I)


def _message_finding(lineno: int | None, line: str) -> Finding | None:
    where = f"line {lineno}: " if lineno else ""
    if _BAD_MESSAGE.search(line):
        return Finding(INVALID, "message", lineno, clip(f"{where}fio said: {line}"))
    if line.startswith("fio:") or line.lower().startswith(("warning", "note:")):
        return Finding(WARNING, "message", lineno, clip(f"{where}fio said: {line}"))
    return None


def _locate_json(text: str) -> int | None:
    """Offset of the report: the first line that starts with ``{`` (fio prints it alone
    on its line; its messages never start with it)."""
    m = re.search(r"^\{", text, re.M)
    return m.start() if m else None


# --------------------------------------------------------------------------- parser


def parse_fio(text: str, messages: str = "", node_memory_bytes: int | None = None,
              job_file: str | None = None) -> FioRun:
    """Parse one fio run.

    ``text``: the JSON report (``--output=F``), or fio's whole stdout+stderr with the
    report in it.  ``messages``: fio's stdout+stderr kept apart from the report, if any.
    ``node_memory_bytes``: memory of the node fio ran on, to tell whether a buffered
    read fits in its page cache (the cache note says so when it is unknown).
    ``job_file``: the job file (or command line) fio ran, for what its JSON leaves out
    (options given as bare flags, see :data:`BARE_FLAGS`).
    """
    run = FioRun()
    # Lines outside the report, (line number, line), read lazily: a huge log of
    # messages costs one pass, and only the first MAX_MESSAGES are kept.
    outside: list[Iterable[tuple[int | None, str]]] = []
    start = _locate_json(text)
    outside.append(enumerate((text if start is None else text[:start]).splitlines(), 1))

    report: Any = None
    if not text.strip():
        run.findings.append(Finding(INVALID, "empty", None, "empty output: fio wrote no report "
                                    "(killed, or it refused its options: see its messages)"))
    elif start is None:
        run.findings.append(Finding(INVALID, "no-json", None,
                                    "no JSON report in the output (fio refused its options or "
                                    "was not run with --output-format=json)"))
    else:
        try:
            report, end = json.JSONDecoder().raw_decode(text, start)
        except json.JSONDecodeError as err:
            what = "truncated" if err.pos >= len(text.rstrip()) else "malformed"
            run.findings.append(Finding(
                INVALID, "truncated", err.lineno,
                f"{what} JSON report at line {err.lineno} column {err.colno}: {err.msg} "
                "(fio killed while writing it, or other output mixed into it)"))
        except RecursionError:
            run.findings.append(Finding(INVALID, "truncated", None,
                                        "malformed JSON report: nested too deeply"))
        else:
            first = text.count("\n", 0, end) + 1
            after = text[end:]
            second = _locate_json(after)
            if second is not None:
                line = first + after.count("\n", 0, second)
                run.findings.append(Finding(
                    INVALID, "two-runs", line,
                    f"line {line}: a second fio report starts here: the output holds more "
                    "than one run (parse each apart)"))
                after = after[:second]
            outside.append((first + n, line) for n, line in enumerate(after.splitlines()))
    outside.append((None, line) for line in messages.splitlines())
    said = 0
    for lineno, line in itertools.chain.from_iterable(outside):
        line = line.strip()
        if not line:
            continue
        said += 1
        if said <= MAX_MESSAGES:
            run.messages.append(clip(line))
        finding = _message_finding(lineno, line)
        if finding:
            run.findings.append(finding)
    if said > MAX_MESSAGES:
        run.messages.append(f"(and {said - MAX_MESSAGES:,} more lines, not listed)")
    if report is None:
        return run

    if not isinstance(report, dict) or not isinstance(report.get("jobs"), list):
        raise ValueError("jobs: missing or not a list (not fio --output-format=json output?)")
    run.version = report.get("fio version")
    run.timestamp = report.get("timestamp")
    run.time = report.get("time")
    if not isinstance(report.get("global options", {}), dict):
        raise ValueError("global options: not an object")
    run.global_options = {str(k): str(v) for k, v in report.get("global options", {}).items()}
    declared = job_file_options(job_file) if job_file else {}
    run.jobs = [_job(raw, i, run.global_options, declared)
                for i, raw in enumerate(report["jobs"])]
    if not run.jobs:
        run.findings.append(Finding(INVALID, "no-jobs", None, "the report has no jobs"))
    reports = {}
    for job in run.jobs:
        reports[job.name] = reports.get(job.name, 0) + 1
    for job in run.jobs:
        run.findings += flag_findings(job, reports[job.name], bool(job_file))
        run.findings += job_findings(job, node_memory_bytes)
    return run


def format_settings(job: FioJob) -> str:
    """``rw=randread bs=4096 direct=1 ...``: the meaningful settings fio received; the
    ones that must be explicit are shown as ``(fio default)`` when they were not."""
    return " ".join(f"{k}={'(fio default)' if v is None else v}"
                    for k, v in job.settings().items()
                    if v is not None or k in MUST_BE_EXPLICIT)
