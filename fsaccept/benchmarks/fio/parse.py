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
* ``warning``: other ``fio:`` messages, short or dropped I/Os, a job file that gives an
  option another value than fio's JSON (which is what is read), settings that
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
    "JobFileError",
    "Latency",
    "SteadyState",
    "format_settings",
    "parse_fio",
    "parse_fio_size",
    "parse_fio_time",
    "job_file_options",
]

class JobFileError(ValueError):
    """The job file (``--job-file``) cannot be read: the message is about that file, not
    the report (``in_job_file`` tells the CLI which file to name)."""

    in_job_file = True


#: A command line longer than this cannot have been run: Linux's ARG_MAX with the default
#: 8 MiB stack is 2 MiB for all arguments and the environment together.
_MAX_COMMAND_LINE = 2 * 1024 * 1024
#: C0 control characters other than tab, newline, vertical tab, form feed, carriage return:
#: a text job file or command line has none, a binary file many (checked first, in C, so
#: that a binary is refused at once rather than tokenised).
_NOT_TEXT = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")


def _fio_line(raw: str) -> str:
    """A job-file line as fio 3.33 reads it (``strip_blank_end`` in fio's ``parse.c``): cut
    at the first ``;`` or ``#`` wherever it is, blanks stripped. ``fio --showcmd FILE``
    shows the result: ``time_based=0 ; note`` is ``time_based=0``, ``[global] ; x`` is
    ``[global]``, ``description=a#b`` is ``description=a``."""
    semicolon, hash_ = raw.find(";"), raw.find("#")
    cut = min((i for i in (semicolon, hash_) if i >= 0), default=len(raw))
    return raw[:cut].strip()


def _job_file_sections(text: str) -> dict[str, dict[str, str | None]]:
    """Section -> {option: value, or ``None`` for a bare flag}; JobFileError naming the
    line for what is not a job file or command line."""
    bad = _NOT_TEXT.search(text)
    if bad:
        line = text.count("\n", 0, bad.start()) + 1
        raise JobFileError(f"line {line}: control character {bad.group()!r}: not a text file "
                           "(give the fio job file, or a file holding fio's command line)")
    sections: dict[str, dict[str, str | None]] = {"global": {}}
    # fio reads lines with fgets: only "\n" ends one (str.splitlines would also split
    # at \x0b, \x0c, \x85, \u2028...)
    lines = [_fio_line(raw) for raw in text.split("\n")]
    if any(line.startswith("[") for line in lines):
        current = None
        for lineno, line in enumerate(lines, 1):
            if not line:
                continue
            if line.startswith("["):
                if len(line) < 2:
                    raise JobFileError(f"line {lineno}: {line!r} names no section")
                # fio takes what lies between '[' and the line's last character, and any
                # name starting with "global" as [global] (strncmp(name, "global", 6))
                name = line[1:-1]
                current = sections.setdefault("global" if name.startswith("global") else name,
                                              {})
                continue
            if current is None:
                raise JobFileError(f"line {lineno}: {clip(line)!r} before any [section] "
                                   "(fio refuses it: \"option outside of [] job section\")")
            key, sep, value = line.partition("=")
            current[key.strip()] = value.strip() if sep else None
        return sections
    if len(text) > _MAX_COMMAND_LINE:
        raise JobFileError(f"{len(text):,} characters and no [section]: neither a job file "
                           "nor a command line Linux could have run")
    try:
        args = shlex.split(text, comments=True)
    except ValueError as e:  # e.g. an unclosed quote
        raise JobFileError(f"not a fio job file (no [section]) nor a command line: {e}") \
            from None
    current = sections["global"]
    for arg in args:
        if not arg.startswith("--"):
            continue
        key, sep, value = arg[2:].partition("=")
        if key == "name":
            current = sections.setdefault(value, {})
        current[key] = value if sep else None
    return sections


def job_file_options(text: str) -> dict[str, dict[str, str]]:
    """Section -> options of a fio job file (``[global]`` included), read as fio reads it
    (comments cut, see :func:`_fio_line`), or of a fio command line (``fio --name=x
    --time_based ...``: options before the first ``--name`` are global). Bare flags get
    the value ``"1"``, as fio gives them. :class:`JobFileError` (a ValueError naming the
    line) for a file that is neither, e.g. a binary."""
    return {section: {k: "1" if v is None else v for k, v in options.items()}
            for section, options in _job_file_sections(text).items()}


def _effective_options(name: str, json_global: dict[str, str], json_job: dict[str, str],
                       declared: dict[str, dict[str, str | None]]) -> dict[str, str]:
    """The job's options: fio's JSON, plus the bare flags it leaves out, from the job file.

    A value in fio's JSON is what ran and is never overridden: its ``job options`` win;
    a bare flag in the job's own section of the job file comes next (fio applies it over
    ``[global]``: a ``time_based`` there runs time-based under ``time_based=0`` in
    ``[global]``); then the JSON's ``global options``; a bare flag in ``[global]`` last.
    Options the job file gives a value are in fio's JSON when it is the file that ran,
    so only its bare flags are read."""
    own, common = declared.get(name, {}), declared.get("global", {})
    flags = {}
    for flag in BARE_FLAGS:
        if flag in json_job:
            continue
        if flag in own and own[flag] is None:
            flags[flag] = "1"
        elif flag not in own and flag not in json_global and flag in common \
                and common[flag] is None:
            flags[flag] = "1"
    return {**json_global, **flags, **json_job}


def _job_file_disagreements(run: FioRun, declared: dict[str, dict[str, str | None]]
                            ) -> list[Finding]:
    """Options the job file gives a value that fio's JSON shows with another value at
    the same level: not the job file this run used (fio's JSON is what is read)."""
    seen = [("global", k, v, run.global_options.get(k))
            for k, v in declared.get("global", {}).items()]
    for job in run.jobs:
        seen += [(job.name, k, v, job.job_options.get(k))
                 for k, v in declared.get(job.name, {}).items()]
    differ = [f"[{section}] {k}={v} (fio's JSON: {shown})" for section, k, v, shown in seen
              if v is not None and shown is not None and v != shown.strip()]
    if not differ:
        return []
    return [Finding(WARNING, "job-file-mismatch", None, clip(
        f"the job file disagrees with fio's JSON, which is what ran and what is read: "
        f"{'; '.join(differ[:5])}" + (f" (and {len(differ) - 5} more)" if len(differ) > 5
                                      else "") + ": is it the job file of this run?"))]


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
         declared: dict[str, dict[str, str | None]]) -> FioJob:
    where = f"jobs[{index}]"
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: not an object")
    if not isinstance(raw.get("job options", {}), dict):
        raise ValueError(f"{where}.job options: not an object")
    job_options = {str(k): str(v) for k, v in raw.get("job options", {}).items()}
    name = str(_get(raw, ("jobname",), where))
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
        job_options=job_options,
        options=_effective_options(name, global_options, job_options, declared),
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
    (options given as bare flags, see :data:`BARE_FLAGS`; never a value the JSON has);
    :class:`JobFileError` when it is not one (a binary, an unclosed quote...).
    """
    # The job file first: one that cannot be read is refused at once (JobFileError).
    declared = _job_file_sections(job_file) if job_file else {}
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
    run.jobs = [_job(raw, i, run.global_options, declared)
                for i, raw in enumerate(report["jobs"])]
    run.findings += _job_file_disagreements(run, declared)
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
