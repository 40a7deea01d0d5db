"""What one fio run reported, typed (jobs, directions, latencies, settings), and fio's own
size and time syntax (``kb_base``, ``runtime=1m``)."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from fsaccept.core.findings import INVALID, Finding, Findings, Judged, json_safe as _finite

NOTE = "note"

#: Job options that change what a figure means; recorded with every figure.
#: ``None`` in :meth:`FioJob.settings`: not given, fio's default applied.
MEANINGFUL_SETTINGS = ("rw", "bs", "direct", "ioengine", "iodepth", "numjobs", "fallocate",
                       "time_based", "runtime", "size", "filesize", "nrfiles", "fsync",
                       "end_fsync", "invalidate", "group_reporting")
#: Settings whose fio default silently changes a figure's meaning (warned about when absent).
MUST_BE_EXPLICIT = ("direct", "ioengine", "iodepth", "numjobs", "fallocate")
#: Options fio takes as bare flags (``time_based`` alone on a line, ``--time_based``) and
#: then leaves out of its JSON report (verified with fio 3.33): absent there is not "not set".
BARE_FLAGS = ("time_based", "group_reporting")
#: Options that make a job move more than ``size`` without ``time_based``.
MORE_THAN_SIZE = ("loops", "io_size", "io_limit", "number_ios")
#: fio lines kept in ``FioRun.messages`` (the rest are counted): a file that is not
#: fio's output at all must not be echoed back whole.
MAX_MESSAGES = 100

DIRECTIONS = ("read", "write", "trim")

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
class SteadyState:
    """fio's ``steadystate`` block of a job run with ``ss=`` (``steadystate=``): fio ends
    a job early, by design, once its criterion has held for ``ss_dur``."""

    criterion: str  #: fio's ``ss``, e.g. ``iops:20.000000%``
    duration_s: Any  #: fio's ``duration`` (``ss_dur``)
    attained: bool  #: fio's ``attained`` is 1: the job ended because steady state held
    measured: Any  #: fio's ``criterion``: the value reached over the last window


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
    steady_state: SteadyState | None = None  #: ``None``: no ``ss=`` (no steadystate block)

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


# Matched against the stripped text (fullmatch): a trailing \s* after an optional suffix
# would make a long run of blanks quadratic.
_FIO_SIZE = re.compile(r"0x([0-9a-f]+)|(\d+)\s*(?:([kmgtp])(i?)(b?)|b)?", re.I)
_FIO_POWER = {"k": 1, "m": 2, "g": 3, "t": 4, "p": 5}


def parse_fio_size(text: str | None, kb_base: int = 1024) -> int | None:
    """Bytes of a fio size option as fio 3.33 reads it (verified with ``fio
    --debug=parse``): ``4k``, ``4K``, ``4kb``, ``4Ki`` are ``kb_base`` units; the IEC
    spelling ``4KiB`` is the *other* base (with fio's default ``kb_base=1024``,
    ``1MiB`` is 1,000,000 bytes; with ``kb_base=1000`` it is 1,048,576). ``None`` for
    what is not a plain size (``50%``, ranges, decimals, which fio truncates)."""
    if text is None:
        return None
    m = _FIO_SIZE.fullmatch(text.strip())
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


_FIO_TIME = re.compile(r"(\d+)\s*(us|ms|s|m|h|d)?", re.I)  # fullmatch, stripped: linear
_FIO_TIME_UNIT = {"us": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_fio_time(text: str | None) -> float | None:
    """Seconds of a fio time option (``runtime=10``, ``10s``, ``1m``: a minute, not a
    MiB; ``500ms``, ``2h``, ``1d``; seconds without a unit), as fio 3.33 reads them;
    ``None`` for anything else (fio reads ``1min`` as 1 us and ``1.5`` as 1 s)."""
    if text is None:
        return None
    m = _FIO_TIME.fullmatch(text.strip())
    if not m:
        return None
    return int(m.group(1)) * _FIO_TIME_UNIT[(m.group(2) or "s").lower()]
