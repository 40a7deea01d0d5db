"""Parse fio's per-interval logs (``--write_bw_log``, ``--write_lat_log``, fio 3.37).

A soak run (:mod:`fsaccept.benchmarks.fio.soak`) has every client record its figures at a
fixed interval: ``--write_bw_log=NAME --write_lat_log=NAME --log_avg_msec=1000`` makes one
file per job and kind, ``NAME_bw.N.log``, ``NAME_clat.N.log``, ``NAME_lat.N.log``,
``NAME_slat.N.log`` (``N``: the job's index from 1; no ``.N`` with ``per_job_logs=0``).

fio's HOWTO ("Log File Formats") and ``flush_samples`` in its ``iolog.c`` give each line
as ``time, value, direction, block size[, offset], priority``:

* ``time``: milliseconds since the job started (or since the Unix epoch with
  ``log_unix_epoch``), a whole number;
* ``value``: bandwidth in KiB/s, a latency in ns, or IOPS; with ``log_avg_msec`` the
  mean over the window, rounded (fio writes a line for a window only when I/O completed
  in it: an interval without progress has no line);
* ``direction``: 0 read, 1 write, 2 trim;
* ``block size`` (0 with windowed logging), ``offset`` only with ``log_offset=1``;
* ``priority``: a number, or ``0x....`` with ``log_prio=1``.

``log_window_value=both`` (a second value) is not read: the soak's command never sets it.

Each direction's times rise.  fio's HOWTO says the final flush may repeat the last
timestamp ("there may even be duplicate timestamps"): a repeated time on a direction's
last line is dropped with a note; anywhere else it is an error.

Pure: :func:`parse_log` takes the text and the name to give in messages; :func:`read_log`
reads a file, bounded (:mod:`fsaccept.core.inputs`).  Anything that is not such a log
(empty, binary, a line cut short, a number that is not a whole number, a negative value,
time going backwards) raises :class:`LogError`, ``FILE: line N: what``.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from fsaccept.benchmarks.fio import soak
from fsaccept.core.findings import clip
from fsaccept.core.inputs import read_text

#: The kinds of log and what their value is.
KINDS = {"bw": ("bandwidth", "KiB/s"), "iops": ("IOPS", "IOPS"),
         "clat": ("completion latency", "ns"), "slat": ("submission latency", "ns"),
         "lat": ("latency", "ns")}
#: fio's data directions.
DIRECTIONS = {0: "read", 1: "write", 2: "trim"}
#: A day at 1 s, three directions, at most ~40 bytes a line is 10 MB: 256 MiB leaves room.
MAX_LOG_BYTES = 256 << 20
#: Largest time or value: fio prints them as 64-bit integers.
_MAX_INT = 2**63 - 1

_NAME = re.compile(r"^(?P<prefix>.+)_(?P<kind>bw|iops|clat|slat|lat)(?:\.(?P<job>\d+))?\.log$")
_INT = re.compile(r"^[0-9]{1,19}$")
_PRIO = re.compile(r"^(?:[0-9]{1,10}|0x[0-9a-fA-F]{1,8})$")


class LogError(ValueError):
    """Not a fio interval log; the message names the file and the line."""


@dataclass(frozen=True)
class LogName:
    prefix: str
    kind: str
    #: The job's index (1..N); None with ``per_job_logs=0``.
    job: int | None


def log_name(path: str | Path) -> LogName:
    """What a log's file name says (``soak_bw.2.log``: prefix soak, kind bw, job 2);
    LogError when it is not a name fio gives its interval logs."""
    match = _NAME.match(Path(path).name)
    if not match:
        raise LogError(f"{path}: not a fio interval log's name (PREFIX_KIND[.N].log, KIND "
                       f"one of {', '.join(KINDS)})")
    job = match.group("job")
    return LogName(match.group("prefix"), match.group("kind"),
                   int(job) if job is not None else None)


@dataclass
class IntervalLog:
    """One job's log: a line each, in the file's order."""

    path: str
    kind: str
    times_ms: array = field(default_factory=lambda: array("q"))
    values: array = field(default_factory=lambda: array("q"))
    directions: array = field(default_factory=lambda: array("b"))
    #: What was read but not kept (a repeated last timestamp), with its line.
    notes: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.times_ms)

    def direction(self, ddir: int) -> tuple[array, array]:
        """(times in ms, values) of one direction, in time order."""
        times, values = array("q"), array("q")
        for t, v, d in zip(self.times_ms, self.values, self.directions):
            if d == ddir:
                times.append(t)
                values.append(v)
        return times, values

    def seen_directions(self) -> list[int]:
        return sorted(set(self.directions))


def _number(token: str, what: str, where: str) -> int:
    if not _INT.match(token):
        raise LogError(f"{where}: {what} {clip(token, 40)!r} is not a whole number of at "
                       "least 0 (fio prints whole numbers)")
    n = int(token)
    if n > _MAX_INT:
        raise LogError(f"{where}: {what} {token} is beyond fio's 64-bit range")
    return n


def parse_log(text: str, path: str | Path, kind: str | None = None) -> IntervalLog:
    """The lines of one interval log (``kind``: bw, clat...; None: from the file name).
    LogError, naming the file and line, for anything that is not fio's format."""
    path = str(path)
    kind = kind or log_name(path).kind
    if kind not in KINDS:
        raise LogError(f"{path}: unknown kind of log {kind!r} (one of {', '.join(KINDS)})")
    if "\0" in text:
        line = text.count("\n", 0, text.index("\0")) + 1
        raise LogError(f"{path}: line {line}: binary data (a NUL byte): not a fio log")
    if not text.strip():
        raise LogError(f"{path}: empty: no interval logged (fio writes a line for each "
                       "interval in which I/O completed; none did, or this is not the log)")
    if not text.endswith("\n"):
        last = text.count("\n") + 1
        raise LogError(f"{path}: line {last}: cut short (no line end: fio ends every "
                       "line; the file was truncated or is still being written)")
    out = IntervalLog(path, kind)
    last: dict[int, tuple[int, int]] = {}  # direction -> (time, line)
    repeated: dict[int, int] = {}  # direction -> line of a repeated time
    lines = text.split("\n")
    lines.pop()  # after the final "\n"
    for lineno, line in enumerate(lines, 1):
        where = f"{path}: line {lineno}"
        if not line.strip():
            raise LogError(f"{where}: empty line (fio writes none)")
        fields = [f.strip() for f in line.split(",")]
        if len(fields) not in (5, 6):
            raise LogError(f"{where}: {len(fields)} fields in {clip(line, 80)!r}: fio "
                           "writes 5 (time, value, direction, block size, priority) or "
                           "6 (with log_offset=1)")
        t = _number(fields[0], "time", where)
        v = _number(fields[1], "value", where) if not fields[1].startswith("-") else None
        if v is None:
            raise LogError(f"{where}: value {clip(fields[1], 40)} is negative: no "
                           f"{KINDS[kind][0]} is")
        d = _number(fields[2], "direction", where)
        if d not in DIRECTIONS:
            raise LogError(f"{where}: direction {d} is none of fio's (0 read, 1 write, "
                           "2 trim)")
        for i in range(3, len(fields) - 1):
            _number(fields[i], "block size" if i == 3 else "offset", where)
        if not _PRIO.match(fields[-1]):
            raise LogError(f"{where}: priority {clip(fields[-1], 40)!r} is not fio's (a "
                           "whole number, or 0x.... with log_prio=1)")
        if d in repeated:  # a repeated time was not the direction's last line
            raise LogError(f"{path}: line {repeated[d]}: time {last[d][0]} ms repeats "
                           f"line {last[d][1]}'s ({DIRECTIONS[d]}), and is not the last "
                           "line of its direction (fio repeats only its final flush)")
        if d in last and t < last[d][0]:
            raise LogError(f"{where}: time {t} ms goes back from {last[d][0]} ms at line "
                           f"{last[d][1]} ({DIRECTIONS[d]})")
        if d in last and t == last[d][0]:
            repeated[d] = lineno
            continue
        last[d] = (t, lineno)
        out.times_ms.append(t)
        out.values.append(v)
        out.directions.append(d)
    out.notes = [f"line {n}: time {last[d][0]} ms repeats line {last[d][1]}'s "
                 f"({DIRECTIONS[d]}): fio's final flush, not kept"
                 for d, n in sorted(repeated.items())]
    return out


def read_log(path: str | Path, kind: str | None = None) -> IntervalLog:
    """:func:`parse_log` of a file, read bounded (a device, FIFO or huge file is refused);
    InputError or LogError, each naming the file."""
    text = read_text(path, MAX_LOG_BYTES, "a fio interval log", binary=False)
    return parse_log(text, path, kind)


# --------------------------------------------------------------------------- a soak's record

#: The logs a soak reads, and the figure each gives: (kind of figure, unit, factor from
#: fio's unit: KiB/s / 1024 is MiB/s exactly, ns / 1000 is us).
SOAK_FIGURES = {"bw": (soak.BANDWIDTH, "bandwidth", "MiB/s", 1024.0),
                "clat": (soak.LATENCY, "completion latency", "us", 1000.0)}


@dataclass
class ClientLogs:
    """One client's logs (one fio job): its name, its node, and its origin (ms): 0 when
    times are from its job's start, else the run's start in the logs' clock (with
    ``log_unix_epoch``)."""

    client: str
    node: str
    logs: list[IntervalLog]
    origin_ms: int = 0


def soak_evidence(clients: Iterable[ClientLogs], settings: soak.Settings) -> soak.Evidence:
    """The soak's record from its clients' logs, taken one client at a time (an iterable
    that reads each client's files when asked holds one client's logs at once): a figure
    per kind of :data:`SOAK_FIGURES` and direction seen, each client's stalls on all its
    logs together, then the judges' named clients' bucket series kept."""
    builders: dict[str, soak.SeriesBuilder] = {}
    seen: list[tuple[str, str]] = []
    stalls: list[soak.Stall] = []
    not_kept = 0
    for c in clients:
        found = soak.stalls_of((t for log in c.logs for t in log.times_ms),
                               settings.interval_s, settings.duration_s, c.client, c.node,
                               c.origin_ms)
        stalls += found.stalls
        not_kept += found.count - len(found.stalls)
        rows: dict[str, np.ndarray] = {}
        for log in c.logs:
            if log.kind not in SOAK_FIGURES:
                continue
            kind, what, unit, factor = SOAK_FIGURES[log.kind]
            for d in log.seen_directions():
                name = f"{DIRECTIONS[d]} {what}"
                if name not in builders:
                    b = builders[name] = soak.SeriesBuilder(
                        name, kind, unit, settings.interval_s, settings.duration_s)
                    for client, node in seen:  # clients before it had none
                        b.add(client, node, np.full(b.n, np.nan))
                times, values = log.direction(d)
                rows[name] = builders[name].per_interval(
                    times, np.frombuffer(values, dtype=np.int64) / factor, c.origin_ms)
        for name, b in builders.items():
            b.add(c.client, c.node, rows.get(name, np.full(b.n, np.nan)))
        seen.append((c.client, c.node))
    evidence = soak.Evidence(settings, [b.series() for b in builders.values()], stalls,
                             not_kept)
    named = [n for j in soak.judge(evidence) for n in j.named]
    for s, b in zip(evidence.series, builders.values()):
        s.kept = b.rows_of(named)
    return evidence
