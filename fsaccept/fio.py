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

Several nodes: :func:`combine` sums throughput figures over nodes, takes the
worst node's latency, the slowest node's throughput, and names the nodes
below a fraction of the median (:func:`find_outliers`).

Entry points: :func:`parse_fio` → :class:`FioRun` (``to_dict()`` for JSON),
:func:`figure_value`, :func:`combine`, :func:`find_outliers`.
"""

from __future__ import annotations

import json
import math
import os
import re
import statistics
from dataclasses import asdict, dataclass, field
from typing import Any

from fsaccept.findings import INVALID, WARNING, Finding, Judged, json_safe as _finite

__all__ = [
    "INVALID",
    "MEANINGFUL_SETTINGS",
    "NOTE",
    "WARNING",
    "Combined",
    "Direction",
    "FigureSpec",
    "FioJob",
    "FioRun",
    "Finding",
    "Latency",
    "Outlier",
    "combine",
    "figure_value",
    "find_outliers",
    "format_per_node",
    "format_settings",
    "summarize_by_node",
    "parse_fio",
    "parse_fio_size",
]

NOTE = "note"
MIB = 2**20

#: Job options that change what a figure means; recorded with every figure.
#: ``None`` in :meth:`FioJob.settings`: not given, fio's default applied.
MEANINGFUL_SETTINGS = ("rw", "bs", "direct", "ioengine", "iodepth", "numjobs", "fallocate",
                       "time_based", "runtime", "size", "filesize", "nrfiles", "fsync",
                       "end_fsync", "invalidate", "group_reporting")
#: Settings whose fio default silently changes a figure's meaning (warned about when absent).
_MUST_BE_EXPLICIT = ("direct", "ioengine", "iodepth", "numjobs", "fallocate")

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


@dataclass
class FioRun(Judged):
    """Everything parsed from one fio run (one node)."""

    version: str | None = None  #: e.g. ``fio-3.33``
    timestamp: int | None = None
    time: str | None = None
    global_options: dict[str, str] = field(default_factory=dict)
    jobs: list[FioJob] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    """fio's lines outside the JSON report (non-empty ones), in order."""
    findings: list[Finding] = field(default_factory=list)

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
        for job, parsed in zip(d["jobs"], self.jobs):
            job["settings"] = parsed.settings()
        d["valid"] = self.valid
        d["reasons"] = self.reasons
        d["notes"] = self.notes
        return _finite(d)


# --------------------------------------------------------------------------- helpers


def _truthy(value: str | None) -> bool:
    return value is not None and value.strip().lower() not in ("0", "false", "off", "no", "")


_FIO_SIZE = re.compile(r"^\s*(\d+)\s*([kmgtp]?)(?:i?b)?\s*$", re.I)
_FIO_MULT = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40, "p": 2**50}


def parse_fio_size(text: str | None) -> int | None:
    """Bytes of a fio size option (``268435456``, ``256m``, ``4k``, ``1GiB``), with fio's
    default ``kb_base=1024``; ``None`` for what is not a plain size (``50%``, ranges)."""
    if text is None:
        return None
    m = _FIO_SIZE.match(text)
    if not m:
        return None
    return int(m.group(1)) * _FIO_MULT[m.group(2).lower()]


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


def _num(obj: Any, path: tuple[str | int, ...], where: str) -> Any:
    value = _get(obj, path, where)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        joined = where + "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in path)
        raise ValueError(f"{joined}: {value!r} is not a number")
    return value


def _latency(block: Any, where: str) -> Latency | None:
    if not isinstance(block, dict):
        return None
    percentiles = block.get("percentile", {})
    return Latency(min_ns=_num(block, ("min",), where), max_ns=_num(block, ("max",), where),
                   mean_ns=_num(block, ("mean",), where),
                   stddev_ns=_num(block, ("stddev",), where),
                   samples=_num(block, ("N",), where),
                   percentiles={str(k): v for k, v in percentiles.items()}
                   if isinstance(percentiles, dict) else {})


def _direction(job: dict[str, Any], name: str, where: str) -> Direction:
    d = _get(job, (name,), where)
    at = f"{where}.{name}"
    return Direction(io_bytes=_num(d, ("io_bytes",), at), bw_bytes=_num(d, ("bw_bytes",), at),
                     bw_kib=_num(d, ("bw",), at), iops=_num(d, ("iops",), at),
                     runtime_ms=_num(d, ("runtime",), at),
                     total_ios=_num(d, ("total_ios",), at),
                     short_ios=d.get("short_ios", 0), drop_ios=d.get("drop_ios", 0),
                     clat=_latency(d.get("clat_ns"), f"{at}.clat_ns"),
                     lat=_latency(d.get("lat_ns"), f"{at}.lat_ns"))


def _job(raw: Any, index: int, global_options: dict[str, str]) -> FioJob:
    where = f"jobs[{index}]"
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: not an object")
    job_options = {str(k): str(v) for k, v in raw.get("job options", {}).items()}
    sync = raw.get("sync", {}) if isinstance(raw.get("sync"), dict) else {}
    return FioJob(
        index=index, name=str(_get(raw, ("jobname",), where)),
        groupid=raw.get("groupid", 0), error=_num(raw, ("error",), where),
        elapsed_s=raw.get("elapsed", 0), job_runtime_ms=raw.get("job_runtime"),
        job_options=job_options, options={**global_options, **job_options},
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
    """Offset of the report: the first line that is just ``{`` (fio prints it so)."""
    m = re.search(r"^\{\s*$", text, re.M)
    return m.start() if m else None


# --------------------------------------------------------------------------- parser


def parse_fio(text: str, messages: str = "",
              node_memory_bytes: int | None = None) -> FioRun:
    """Parse one fio run.

    ``text``: the JSON report (``--output=F``), or fio's whole stdout+stderr with the
    report in it.  ``messages``: fio's stdout+stderr kept apart from the report, if any.
    ``node_memory_bytes``: memory of the node fio ran on, to tell whether a buffered
    read fits in its page cache (the cache note says so when it is unknown).
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
        else:
            first = text.count("\n", 0, end) + 1
            outside += [(first + n, line)
                        for n, line in enumerate(text[end:].splitlines()) if n or line.strip()]
    run.messages = [line.strip() for _, line in outside + extra if line.strip()]
    run.findings += _message_findings([(n, line.strip()) for n, line in outside + extra
                                       if line.strip()])
    if report is None:
        return run

    if not isinstance(report, dict) or not isinstance(report.get("jobs"), list):
        raise ValueError("jobs: missing or not a list (not fio --output-format=json output?)")
    run.version = report.get("fio version")
    run.timestamp = report.get("timestamp")
    run.time = report.get("time")
    run.global_options = {str(k): str(v) for k, v in report.get("global options", {}).items()}
    run.jobs = [_job(raw, i, run.global_options) for i, raw in enumerate(report["jobs"])]
    if not run.jobs:
        run.findings.append(Finding(INVALID, "no-jobs", None, "the report has no jobs"))
    for job in run.jobs:
        run.findings += _job_findings(job, node_memory_bytes)
    return run


def _job_findings(job: FioJob, node_memory_bytes: int | None) -> list[Finding]:
    out: list[Finding] = []
    label = f"job {job.name!r} (jobs[{job.index}])"
    if job.error:
        out.append(Finding(INVALID, "job-error", None,
                           f"{label} failed: error={job.error} ({os.strerror(job.error)})"))
    time_based = job.flag("time_based")
    runtime_s = parse_fio_size(job.options.get("runtime"))  # plain seconds
    if time_based and runtime_s and job.runtime_ms < 0.99 * runtime_s * 1000:
        out.append(Finding(INVALID, "short", None,
                           f"{label} ran {job.runtime_ms / 1000:g} s of its time_based "
                           f"runtime of {runtime_s} s: it was stopped early"))
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
    size = parse_fio_size(job.options.get("size"))
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
    if reads and not job.flag("direct") and "file" not in job.options.get("ioengine", ""):
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


def format_settings(job: FioJob) -> str:
    """``rw=randread bs=4096 direct=1 ...``: the meaningful settings fio received; the
    ones that must be explicit are shown as ``(fio default)`` when they were not."""
    return " ".join(f"{k}={'(fio default)' if v is None else v}"
                    for k, v in job.settings().items()
                    if v is not None or k in _MUST_BE_EXPLICIT)


# --------------------------------------------------------------------------- figures


@dataclass(frozen=True)
class FigureSpec:
    """One figure a test reports, and where it is in fio's report."""

    name: str  #: e.g. ``randread_4k_direct_iops``
    unit: str  #: ``IOPS``, ``MiB/s``, ``ops/s`` or ``us``
    job: str  #: fio job name
    path: tuple[str, ...]  #: keys in the job's JSON, e.g. ``("read", "iops")``
    kind: str = "throughput"
    """``throughput``: higher is better, summed over nodes; ``latency``: lower is better,
    the worst (highest) node is the figure."""

    @property
    def source(self) -> str:
        return f"jobs[{self.job}]." + ".".join(self.path)


def figure_value(run: FioRun, spec: FigureSpec) -> float:
    """fio's own number for ``spec`` in ``run``, scaled exactly to ``spec.unit``."""
    raw = _num(run.job(spec.job).raw, spec.path, f"jobs[{spec.job}]")
    leaf = spec.path[-1]
    if spec.unit == "MiB/s":
        if leaf != "bw_bytes":
            raise ValueError(f"{spec.source}: MiB/s figures come from bw_bytes")
        return raw / MIB
    if spec.unit == "us":
        if not any(str(key).endswith("_ns") for key in spec.path):
            raise ValueError(f"{spec.source}: us figures come from a *_ns latency")
        return raw / 1000
    return float(raw)


@dataclass(frozen=True)
class Outlier:
    node: str
    value: float
    median: float

    @property
    def ratio(self) -> float:
        return self.value / self.median if self.median else 0.0

    def describe(self, figure: str, unit: str) -> str:
        from fsaccept.formatting import format_number
        return (f"{self.node} ({figure} {format_number(self.value)} {unit}, {self.ratio:.2f} x "
                f"the median {format_number(self.median)} {unit})")


def find_outliers(values: dict[str, float], fraction: float) -> list[Outlier]:
    """Nodes whose ``value`` is below ``fraction`` × the median of all nodes (slow clients).
    ``fraction`` 0 turns detection off."""
    if not values or fraction <= 0:
        return []
    median = statistics.median(values.values())
    return [Outlier(node, v, median) for node, v in sorted(values.items())
            if v < fraction * median]


@dataclass
class Combined:
    """Figures of a test over all its nodes."""

    specs: list[FigureSpec]
    per_node: dict[str, dict[str, float]]  #: node → figure → value
    aggregate: dict[str, float]
    """Throughput: sum over nodes (``math.fsum``: exactly rounded, order-free);
    latency: the worst node's value."""
    node_min: dict[str, float]  #: throughput figures: the slowest node's value
    outliers: dict[str, list[Outlier]]  #: throughput figure → nodes below the fraction

    @property
    def outlier_nodes(self) -> list[str]:
        return sorted({o.node for found in self.outliers.values() for o in found})

    def describe_outliers(self) -> str:
        units = {s.name: s.unit for s in self.specs}
        return "; ".join(o.describe(name, units[name])
                         for name, found in self.outliers.items() for o in found)


def combine(per_node: dict[str, dict[str, float]], specs: list[FigureSpec],
            outlier_fraction: float) -> Combined:
    """Aggregate per-node figures (node → figure name → value) of ``specs``."""
    if not per_node:
        raise ValueError("no node reported figures")
    aggregate, node_min, outliers = {}, {}, {}
    for spec in specs:
        values = {node: figs[spec.name] for node, figs in per_node.items()}
        if spec.kind == "latency":
            aggregate[spec.name] = max(values.values())
            continue
        aggregate[spec.name] = math.fsum(values.values())
        node_min[spec.name] = min(values.values())
        found = find_outliers(values, outlier_fraction)
        if found:
            outliers[spec.name] = found
    return Combined(specs=specs, per_node=per_node, aggregate=aggregate, node_min=node_min,
                    outliers=outliers)


def summarize_by_node(per_node: dict[str, list[Finding]]) -> list[str]:
    """One line per kind of finding over many nodes, naming the nodes and quoting the
    first one (a 1,000-node run must not print the same note 1,000 times):
    ``all 4 nodes: n1: job ...`` or ``n2,n3: n2: job ...``."""
    kinds: dict[tuple[str, str], list[tuple[str, Finding]]] = {}
    for node in sorted(per_node):
        for finding in per_node[node]:
            kinds.setdefault((finding.severity, finding.kind), []).append((node, finding))
    lines = []
    for hits in kinds.values():
        nodes = sorted({node for node, _ in hits})
        first_node, first = hits[0]
        if len(per_node) > 1 and len(nodes) == len(per_node):
            who = f"all {len(nodes)} nodes"
        else:
            who = ",".join(nodes)
        text = f"{first_node}: {first.text}"
        if len(hits) > 1:
            text += f" (and {len(hits) - 1} more like it)"
        lines.append(text if who == first_node else f"{who}: {text}")
    return lines


def format_per_node(per_node: dict[str, dict[str, float]], specs: list[FigureSpec]) -> str:
    """``fig=n1:1.5,n2:2.0; fig2=...``: every node's figures (exact, as Python's shortest
    round-trip repr), for the logs."""
    return "; ".join(
        spec.name + "=" + ",".join(f"{node}:{per_node[node][spec.name]!r}"
                                   for node in sorted(per_node))
        for spec in specs)
