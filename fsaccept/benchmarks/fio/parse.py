"""Parse fio's JSON report (``--output-format=json``), fio 3.x.

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
  messages; a ``time_based`` job that ran shorter than its ``runtime``.
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

import json
import os
import re
import shlex
from dataclasses import asdict, dataclass, field
from typing import Any

from fsaccept.core.findings import (INVALID, WARNING, Finding, Findings, Judged, clip,
                               figure_problem, json_safe as _finite)

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
    "format_settings",
    "parse_fio",
    "parse_fio_size",
    "parse_fio_time",
    "job_file_options",
]

NOTE = "note"

#: Job options that change what a figure means; recorded with every figure.
#: ``None`` in :meth:`FioJob.settings`: not given, fio's default applied.
MEANINGFUL_SETTINGS = ("rw", "bs", "direct", "ioengine", "iodepth", "numjobs", "fallocate",
                       "time_based", "runtime", "size", "filesize", "nrfiles", "fsync",
                       "end_fsync", "invalidate", "group_reporting")
#: Settings whose fio default silently changes a figure's meaning (warned about when absent).
_MUST_BE_EXPLICIT = ("direct", "ioengine", "iodepth", "numjobs", "fallocate")
#: Options fio takes as bare flags (``time_based`` alone on a line, ``--time_based``) and
#: then leaves out of its JSON report (verified with fio 3.33): absent there is not "not set".
BARE_FLAGS = ("time_based", "group_reporting")
#: Options that make a job move more than ``size`` without ``time_based``.
_MORE_THAN_SIZE = ("loops", "io_size", "io_limit", "number_ios")
#: fio lines kept in ``FioRun.messages`` (the rest are counted): a file that is not
#: fio's output at all must not be echoed back whole.
MAX_MESSAGES = 100

_DIRECTIONS = ("read", "write", "trim")

# --------------------------------------------------------------------------- data


@dataclass
class Latency:
    """One of fio's ``*_ns`` latency blocks (``clat_ns``, ``lat_ns``, ``sync.lat_ns``)."""

    min_ns: int
    max_ns: int
    mean_ns: float
    stddev_ns: float
    samples: int  #: fio's ``N``
    percentiles: dict[str, int] = field(default_factory=dict)
    """fio's keys as printed (``"99.000000"``) → ns; empty when fio printed none."""

    def percentile_ns(self, p: float) -> int | None:
        return self.percentiles.get(f"{p:.6f}")


@dataclass
class Direction:
    """``read``, ``write`` or ``trim`` of one job (group) as fio reported it."""

    io_bytes: int
    bw_bytes: int  #: B/s
    bw_kib: int  #: fio's ``bw``: KiB/s
    iops: float
    runtime_ms: int
    total_ios: int
    short_ios: int
    drop_ios: int
    clat: Latency | None
    lat: Latency | None


@dataclass
class FioJob:
    """One entry of ``jobs[]``: a job, or with ``group_reporting`` a whole group."""

    index: int  #: position in ``jobs[]``
    name: str
    groupid: int
    error: int  #: errno of the first error, 0 when none
    elapsed_s: int
    job_runtime_ms: int | None
    """fio's ``job_runtime``; with ``group_reporting`` the *sum* over the group's jobs."""
    job_options: dict[str, str]  #: as fio printed them for this job
    options: dict[str, str]  #: effective: ``global options`` overridden by ``job options``
    read: Direction
    write: Direction
    trim: Direction
    sync_total_ios: int
    sync_lat: Latency | None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
    global_options: dict[str, str] = field(default_factory=dict, repr=False)

    def direction(self, name: str) -> Direction:
        return {"read": self.read, "write": self.write, "trim": self.trim}[name]

    @property
    def runtime_ms(self) -> int:
        """Measured time of the job: the longest direction (for a group, the slowest job)."""
        return max(self.read.runtime_ms, self.write.runtime_ms, self.trim.runtime_ms)

    @property
    def io_bytes(self) -> int:
        return self.read.io_bytes + self.write.io_bytes + self.trim.io_bytes

    def settings(self) -> dict[str, str | None]:
        """The settings that change a figure's meaning, as fio received them."""
        return {k: self.options.get(k) for k in MEANINGFUL_SETTINGS}

    def flag(self, name: str) -> bool:
        """A boolean option (``direct``, ``time_based``...) as fio reads it."""
        return _truthy(self.options.get(name))

    @property
    def direct_io(self) -> bool:
        """O_DIRECT: ``direct=1``, or ``buffered=0`` (fio's inverse of direct)."""
        if "direct" in self.options:
            return self.flag("direct")
        return "buffered" in self.options and not self.flag("buffered")

    def option_bytes(self, name: str) -> int | None:
        """A size option in bytes, read with the ``kb_base`` fio used for it: the one of
        the section it was given in (``[global]`` or the job's own; fio 3.33 applies a
        section's kb_base to that section's sizes whatever their order)."""
        if name in self.job_options:
            kb_base = self.job_options.get("kb_base", self.global_options.get("kb_base"))
        else:
            kb_base = self.global_options.get("kb_base")
        try:
            base = int(kb_base or 1024)
        except ValueError:
            return None
        return parse_fio_size(self.options.get(name), base)


@dataclass
class FioRun(Judged):
    """Everything parsed from one fio run (one node)."""

    version: str | None = None  #: e.g. ``fio-3.33``
    timestamp: int | None = None
    time: str | None = None
    global_options: dict[str, str] = field(default_factory=dict)
    jobs: list[FioJob] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    """fio's lines outside the JSON report (non-empty ones), in order: the first
    :data:`MAX_MESSAGES`, each cut to a few hundred characters, then how many more."""
    findings: list[Finding] = field(default_factory=Findings)

    @property
    def reasons(self) -> list[str]:
        """Why the run is not valid (one line per ``invalid`` finding)."""
        return [f.text for f in self.findings if f.severity == INVALID]

    @property
    def notes(self) -> list[str]:
        """Warnings and notes: what the reader of a figure must know."""
        return [f.text for f in self.findings if f.severity != INVALID]

    @property
    def version_number(self) -> str | None:
        """``fio-3.33`` → ``3.33``."""
        return self.version.split("-", 1)[1] if self.version and "-" in self.version \
            else self.version

    def job(self, name: str) -> FioJob:
        for job in self.jobs:
            if job.name == name:
                return job
        have = ", ".join(repr(j.name) for j in self.jobs) or "none"
        raise KeyError(f"no fio job named {name!r} in the report (jobs: {have})")

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for job in d["jobs"]:
            job.pop("raw", None)
            job.pop("global_options", None)
        for job, parsed in zip(d["jobs"], self.jobs):
            job["settings"] = parsed.settings()
        d["valid"] = self.valid
        d["reasons"] = self.reasons
        d["notes"] = self.notes
        return _finite(d)


# --------------------------------------------------------------------------- helpers


def _truthy(value: str | None) -> bool:
    return value is not None and value.strip().lower() not in ("0", "false", "off", "no", "")


_FIO_SIZE = re.compile(r"^\s*(?:0x([0-9a-f]+)|(\d+)\s*(?:([kmgtp])(i?)(b?)|b)?)\s*$", re.I)
_FIO_POWER = {"k": 1, "m": 2, "g": 3, "t": 4, "p": 5}


def parse_fio_size(text: str | None, kb_base: int = 1024) -> int | None:
    """Bytes of a fio size option as fio 3.33 reads it (verified with ``fio
    --debug=parse``): ``4k``, ``4K``, ``4kb``, ``4Ki`` are ``kb_base`` units; the IEC
    spelling ``4KiB`` is the *other* base (with fio's default ``kb_base=1024``,
    ``1MiB`` is 1,000,000 bytes; with ``kb_base=1000`` it is 1,048,576). ``None`` for
    what is not a plain size (``50%``, ranges, decimals, which fio truncates)."""
    if text is None:
        return None
    m = _FIO_SIZE.match(text)
    if not m:
        return None
    hexa, number, prefix, iec_i, iec_b = m.groups()
    if hexa:
        return int(hexa, 16)
    if not prefix:
        return int(number)
    base = kb_base
    if iec_i and iec_b:
        base = 1000 if kb_base == 1024 else 1024
    return int(number) * base ** _FIO_POWER[prefix.lower()]


_FIO_TIME = re.compile(r"^\s*(\d+)\s*(us|ms|s|m|h|d)?\s*$", re.I)
_FIO_TIME_UNIT = {"us": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_fio_time(text: str | None) -> float | None:
    """Seconds of a fio time option (``runtime=10``, ``10s``, ``1m``: a minute, not a
    MiB; ``500ms``, ``2h``, ``1d``; seconds without a unit), as fio 3.33 reads them;
    ``None`` for anything else (fio reads ``1min`` as 1 us and ``1.5`` as 1 s)."""
    if text is None:
        return None
    m = _FIO_TIME.match(text)
    if not m:
        return None
    return int(m.group(1)) * _FIO_TIME_UNIT[(m.group(2) or "s").lower()]


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
        sync_lat=_latency(sync.get("lat_ns"), f"{where}.sync.lat_ns"), raw=raw)


# Lines of fio that make a run untrustworthy.
_BAD_MESSAGE = re.compile(
    r"error|err=|terminating on signal|killed|failed|No such file|Permission denied|"
    r"is not a directory|"
    r"No space left|Read-only file system|Input/output error|Segmentation fault|"
    r"srun: error|slurmstepd: error|CANCELLED|exited with",
    re.I)


def _message_findings(lines: list[tuple[int | None, str]]) -> list[Finding]:
    findings = []
    for lineno, line in lines:
        where = f"line {lineno}: " if lineno else ""
        if _BAD_MESSAGE.search(line):
            findings.append(Finding(INVALID, "message", lineno, f"{where}fio said: {line}"))
        elif line.startswith("fio:") or line.lower().startswith(("warning", "note:")):
            findings.append(Finding(WARNING, "message", lineno, f"{where}fio said: {line}"))
    return findings


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
    outside: list[tuple[int | None, str]] = []
    start = _locate_json(text)
    if start is None:
        outside += [(n, line) for n, line in enumerate(text.splitlines(), 1)]
    else:
        outside += [(n, line) for n, line in enumerate(text[:start].splitlines(), 1)]
    extra = [(None, line) for line in messages.splitlines()]

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
            outside += [(first + n, line)
                        for n, line in enumerate(after.splitlines()) if n or line.strip()]
    said = [(n, line.strip()) for n, line in outside + extra if line.strip()]
    run.messages = [clip(line) for _, line in said[:MAX_MESSAGES]]
    if len(said) > MAX_MESSAGES:
        run.messages.append(f"(and {len(said) - MAX_MESSAGES:,} more lines, not listed)")
    run.findings += _message_findings(said)
    if report is None:
        return run

    if not isinstance(report, dict) or not isinstance(report.get("jobs"), list):
        raise ValueError("jobs: missing or not a list (not fio --output-format=json output?)")
    run.version = report.get("fio version")
    run.timestamp = report.get("timestamp")
    run.time = report.get("time")
    run.global_options = {str(k): str(v) for k, v in report.get("global options", {}).items()}
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
        run.findings += _flag_findings(job, reports[job.name], bool(job_file))
        run.findings += _job_findings(job, node_memory_bytes)
    return run


def _flag_findings(job: FioJob, reports: int, have_job_file: bool) -> list[Finding]:
    """Infer the bare flags fio left out of its JSON where its figures show them,
    and say so; say it when they stay unknown."""
    out = []
    label = f"job {job.name!r} (jobs[{job.index}])"
    numjobs = parse_fio_size(job.options.get("numjobs")) or 1
    if "group_reporting" not in job.options and numjobs > 1 and reports == 1:
        job.options["group_reporting"] = "1"
        out.append(Finding(NOTE, "inferred", None,
                           f"{label}: group_reporting in effect (one report for numjobs="
                           f"{numjobs}), although fio's JSON omits it (given as a bare flag)"))
    size = job.option_bytes("size")
    if "time_based" not in job.options and size and "runtime" in job.options \
            and not any(k in job.options for k in _MORE_THAN_SIZE) \
            and job.io_bytes > size * (numjobs if job.flag("group_reporting") else 1):
        job.options["time_based"] = "1"
        out.append(Finding(NOTE, "inferred", None,
                           f"{label}: time_based in effect (it moved {job.io_bytes} bytes, more "
                           f"than its size), although fio's JSON omits it (a bare flag)"))
    if "time_based" not in job.options and "runtime" in job.options and not have_job_file:
        out.append(Finding(NOTE, "flags-unknown", None,
                           f"{label}: runtime={job.options['runtime']} but no time_based in "
                           "fio's JSON: fio leaves out options given as bare flags; pass the "
                           "job file to know (fsaccept parse fio --job-file)"))
    return out


def _job_findings(job: FioJob, node_memory_bytes: int | None) -> list[Finding]:
    out: list[Finding] = []
    label = f"job {job.name!r} (jobs[{job.index}])"
    if job.error:
        out.append(Finding(INVALID, "job-error", None,
                           f"{label} failed: error={job.error} ({os.strerror(job.error)})"))
    out += _bogus_figures(job, label)
    time_based = job.flag("time_based")
    runtime = job.options.get("runtime")
    runtime_s = parse_fio_time(runtime)
    numjobs = parse_fio_size(job.options.get("numjobs")) or 1
    size = job.option_bytes("size")
    if size and job.flag("group_reporting"):
        size *= numjobs
    if runtime is not None and runtime_s is None:
        out.append(Finding(WARNING, "runtime", None,
                           f"{label}: runtime={runtime} is not a time fio reads as meant (use "
                           "whole seconds, or 10s, 5m, 2h): whether it ran its course is "
                           "not checked"))
    elif runtime_s and job.runtime_ms < 0.99 * runtime_s * 1000:
        if time_based:
            out.append(Finding(INVALID, "short", None,
                               f"{label} ran {job.runtime_ms / 1000:g} s of its time_based "
                               f"runtime of {runtime_s:g} s: it was stopped early"))
        elif size and job.io_bytes < size and job.error == 0:
            out.append(Finding(INVALID, "short", None,
                               f"{label} ran {job.runtime_ms / 1000:g} s of its runtime of "
                               f"{runtime_s:g} s and moved {job.io_bytes} of its {size} bytes:"
                               " it was stopped early"))
    for name in _DIRECTIONS:
        d = job.direction(name)
        if d.short_ios or d.drop_ios:
            out.append(Finding(WARNING, "short-ios", None,
                               f"{label} {name}: {d.short_ios} short and {d.drop_ios} dropped "
                               "I/Os"))
        if d.total_ios and 0 < d.runtime_ms < 1000:
            out.append(Finding(WARNING, "brief", None,
                               f"{label} {name}: rate measured over {d.runtime_ms} ms (fio "
                               "counts whole ms): imprecise, give it more work"))
    missing = [k for k in _MUST_BE_EXPLICIT if k not in job.options]
    if missing:
        out.append(Finding(WARNING, "defaults", None,
                           f"{label}: {', '.join(missing)} not set: fio's defaults applied"))
    out += _meaning_notes(job, label, time_based, node_memory_bytes)
    return out


def _meaning_notes(job: FioJob, label: str, time_based: bool,
                   node_memory_bytes: int | None) -> list[Finding]:
    out: list[Finding] = []
    size = job.option_bytes("size")
    jobs = parse_fio_size(job.options.get("numjobs")) or 1
    if size and job.flag("group_reporting"):
        size *= jobs  # one file set per job, all reported together
    if time_based and size and job.io_bytes > size:
        verb = {(True, False): "re-read", (False, True): "overwrote"}.get(
            (job.read.io_bytes > 0, job.write.io_bytes > 0), "re-read and overwrote")
        out.append(Finding(
            NOTE, "wrapped", None,
            f"{label}: time_based moved {job.io_bytes} bytes, {job.io_bytes / size:.2f} x its "
            f"{size}-byte file(s): fio wrapped around and {verb} the same blocks "
            "(cache-inflated)"))
    reads = job.read.total_ios > 0
    if reads and not job.direct_io and "file" not in job.options.get("ioengine", ""):
        if node_memory_bytes and size and size < node_memory_bytes:
            out.append(Finding(
                NOTE, "cache", None,
                f"{label}: buffered read of {size} bytes per node, less than the node's "
                f"memory ({node_memory_bytes} bytes): the cache regime (page-cache hits), "
                "not the file system's"))
        elif not node_memory_bytes:
            out.append(Finding(
                NOTE, "cache", None,
                f"{label}: buffered read (direct=0) of {size or 'unknown'} bytes: compare with "
                "the node's memory; if it fits, this is the cache regime"))
    return out


def _bogus_figures(job: FioJob, label: str) -> list[Finding]:
    """Numbers fio cannot have measured: not finite or negative anywhere, or a rate
    of 0 for a direction that did I/O (fio's JSON carries 1e400 as infinity)."""
    problems = []
    for name in _DIRECTIONS:
        d = job.direction(name)
        io_done = d.io_bytes > 0 and d.runtime_ms > 0
        for key in ("io_bytes", "bw_bytes", "iops", "runtime_ms", "total_ios"):
            why = figure_problem(getattr(d, key), io_done=io_done and key in ("bw_bytes",
                                                                           "iops"))
            if why:
                problems.append(f"{name}.{key} {why}")
        for lat_name, lat in (("clat_ns", d.clat), ("lat_ns", d.lat)):
            problems += _latency_problems(f"{name}.{lat_name}", lat)
    problems += _latency_problems("sync.lat_ns", job.sync_lat)
    if not problems:
        return []
    return [Finding(INVALID, "bogus-figure", None,
                    f"{label}: numbers fio cannot have measured: {'; '.join(problems[:5])}"
                    + (f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""))]


def _latency_problems(where: str, lat: Latency | None) -> list[str]:
    if lat is None:
        return []
    values = {"min": lat.min_ns, "max": lat.max_ns, "mean": lat.mean_ns,
              **{f"percentile[{k}]": v for k, v in lat.percentiles.items()}}
    return [f"{where}.{k} {why}" for k, v in values.items()
            if (why := figure_problem(v, io_done=False))]


def format_settings(job: FioJob) -> str:
    """``rw=randread bs=4096 direct=1 ...``: the meaningful settings fio received; the
    ones that must be explicit are shown as ``(fio default)`` when they were not."""
    return " ".join(f"{k}={'(fio default)' if v is None else v}"
                    for k, v in job.settings().items()
                    if v is not None or k in _MUST_BE_EXPLICIT)
