"""A soak run judged on its time series: stalls, drift and a slow node.

Every client of a soak records its figures at a fixed interval (fio's interval logs:
:mod:`fsaccept.benchmarks.fio.logs`).  This module reduces them to a compact record kept
in the evidence, and judges that record.  The live check and the sign-off's re-judgement
call the same judges on the same record.  It is one module, over 600 lines, on purpose:
the record's shape, its reduction and its judges are one contract, and each judge reads
fields the reduction alone defines (split, a judge could change without its record):

* :func:`stalls_of`: a client's intervals without progress, found on its raw times (all
  its logs together: a line is written only for a window in which I/O completed).
* :class:`SeriesBuilder`: one figure (a direction's bandwidth or latency) of every
  client, reduced to the exact aggregate at each interval, each client's mean, and
  fixed-width buckets (min, mean, max of the aggregate; min, median, max over the
  clients) for the plots.  A day at 1 s for 1,000 clients is about 1 MB a figure.
* :func:`judge_stalls`, :func:`judge_drift`, :func:`judge_shortfall`: PASS, FAIL or
  INVALID, with reasons.  A figure that is NaN, infinite or negative is INVALID, never
  judged.

The definitions (also in ``docs/user/soak.md``):

* **stall**: a gap between two consecutive records of one client (or between the run's
  start or end and its first or last record) of ``g`` seconds leaves ``g - interval_s``
  seconds in which no window closed with I/O done: its time without progress, to the
  interval's resolution (the truth lies between ``g - interval_s`` and ``g``: the
  judgement never fails a run for jitter, and may pass a stall within one interval of
  the limit).  Gaps of more than half an interval without progress are kept; FAIL when
  one exceeds ``max_stall_s``.
* **drift**: the least-squares line through the aggregate bandwidth at each interval
  but the last (a partial window fio may or may not log; interval ``k`` at
  ``(k + 1/2) * interval_s``); drift is the line's change from the
  first interval to the last, over the aggregate's mean: ``slope * (t_last - t_first) /
  mean``.  FAIL when ``|drift| > max_drift``.
* **shortfall**: a node's bandwidth is the mean over the run of its clients' means (an
  interval without a record counts 0); its shortfall is ``1 - node / median(the other
  nodes)``.  FAIL when it exceeds ``max_node_shortfall``.  One node: not judged.

Pure: no ReFrame, no file.  numpy (which matplotlib brings) holds the series.
"""

from __future__ import annotations

import base64
import math
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

PASS, FAIL, INVALID = "PASS", "FAIL", "INVALID"
BANDWIDTH, LATENCY = "bandwidth", "latency"
KINDS = (BANDWIDTH, LATENCY)

#: Defaults of the reference file's ``soak:`` section.
#: The soak's compact record as a file of its test's output directory (the check writes
#: it, ReFrame copies it there, the manifest digests it): what the sign-off judges again,
#: in place of the logs, which are not kept (a day of 1,000 clients is gigabytes).
RECORD_FILE = "soak-record.json"
DEFAULT_INTERVAL_S = 1
DEFAULT_MAX_STALL_S = 30.0
DEFAULT_MAX_DRIFT = 0.1
#: The drift no series can reach (the schema's largest ``max_drift``): drift is linear-
#: fractional in the series, so over non-negative series its extremes are series with
#: one non-zero interval, the first or the last: ``±6 (n - 1) / (n + 1)``, below 6.  A
#: limit of 6 judges no drift: what a test of something else sets.
DRIFT_CEILING = 6.0
DEFAULT_MAX_NODE_SHORTFALL = 0.3
#: Buckets a series is drawn with, at most (a day: 288 buckets of 5 min).
MAX_BUCKETS = 288
#: Stalls kept per client: its longest (whether one exceeds a limit stays exact: one not
#: kept is no longer than any kept).
MAX_STALLS_PER_CLIENT = 20
#: Clients whose bucket series the evidence keeps (those the judges name), at most.
MAX_KEPT_CLIENTS = 20
#: Intervals in a soak, at most (a week at 1 s).
MAX_INTERVALS = 7 * 86400
#: Nodes or clients named in one reason, at most.
NAMED = 5
#: Series in a soak's record, at most: a figure per kind (bandwidth, latency) and fio
#: direction (read, write, trim); a record with more is refused before any is decoded.
MAX_SERIES = 2 * 3


class EvidenceError(ValueError):
    """A soak record that is not one; the message names the key."""


@dataclass(frozen=True)
class Settings:
    """The reference file's ``soak:`` section, with its defaults."""

    duration_s: float
    interval_s: float = DEFAULT_INTERVAL_S
    max_stall_s: float = DEFAULT_MAX_STALL_S
    max_drift: float = DEFAULT_MAX_DRIFT
    max_node_shortfall: float = DEFAULT_MAX_NODE_SHORTFALL

    @classmethod
    def of(cls, section: dict[str, Any]) -> "Settings":
        """From a schema-valid ``soak:`` section (``duration_s`` required)."""
        return cls(**{k: section[k] for k in ("duration_s", "interval_s", "max_stall_s",
                                              "max_drift", "max_node_shortfall")
                      if k in section})

    @property
    def intervals(self) -> int:
        return math.ceil(self.duration_s / self.interval_s)


# --------------------------------------------------------------------------- stalls


@dataclass(frozen=True)
class Stall:
    """A span of one client without progress."""

    client: str
    node: str
    #: Seconds from the run's start to the last record before it.
    start_s: float
    #: Seconds in which no window closed with I/O done.
    no_progress_s: float

    @property
    def end_s(self) -> float:
        return self.start_s + self.no_progress_s

    def to_dict(self) -> dict[str, Any]:
        return {"client": self.client, "node": self.node, "start_s": self.start_s,
                "no_progress_s": self.no_progress_s}


@dataclass
class ClientStalls:
    """A client's longest stalls, and how many it had in all."""

    stalls: list[Stall]
    count: int


def stalls_of(times_ms: Iterable[int], interval_s: float, duration_s: float | None,
              client: str, node: str, origin_ms: int = 0) -> ClientStalls:
    """A client's stalls from the times of all its records (any log, any direction; ms
    since ``origin_ms``, the client's start): each gap between consecutive records, and
    from the run's start to the first and from the last to ``duration_s`` (None: the end
    is not known, not looked at), less one interval.  Kept when more than half an
    interval; the longest :data:`MAX_STALLS_PER_CLIENT`, by length."""
    times = np.unique(np.fromiter(times_ms, dtype=np.int64)) - origin_ms
    if len(times) and times[0] < 0:
        raise ValueError(f"{client}: a record at {int(times[0])} ms, before the run's start")
    edges = np.concatenate(([0], times, [round(duration_s * 1000)]
                            if duration_s is not None else []))
    if duration_s is not None and len(times) and times[-1] > edges[-1] + 1000 * interval_s:
        edges = edges[:-1]  # records after the declared end: the end is the last record
    gaps_s = np.diff(edges) / 1000.0 - interval_s
    where = np.nonzero(gaps_s > interval_s / 2)[0]
    order = where[np.argsort(-gaps_s[where], kind="stable")][:MAX_STALLS_PER_CLIENT]
    stalls = [Stall(client, node, float(edges[i]) / 1000.0, round(float(gaps_s[i]), 3))
              for i in sorted(order)]
    return ClientStalls(stalls, int(len(where)))


# --------------------------------------------------------------------------- series


def encode(values: np.ndarray, dtype: str = "float64") -> str:
    """An array as text: its bytes (little-endian ``dtype``), zlib, base64."""
    raw = np.ascontiguousarray(values, dtype=np.dtype(dtype).newbyteorder("<")).tobytes()
    return base64.b64encode(zlib.compress(raw, 6)).decode("ascii")


#: Bytes an encoded array may inflate to: a week at 1 s in float64.
_MAX_DECODED = MAX_INTERVALS * 8


def decode(text: Any, n: int, dtype: str, where: str) -> np.ndarray:
    """The array :func:`encode` made, of ``n`` values; EvidenceError naming ``where``."""
    if not isinstance(text, str):
        raise EvidenceError(f"{where}: not an encoded series")
    try:
        z = zlib.decompressobj()
        raw = z.decompress(base64.b64decode(text, validate=True), _MAX_DECODED + 1)
    except (ValueError, zlib.error) as err:
        raise EvidenceError(f"{where}: cannot be decoded ({err})") from None
    width = np.dtype(dtype).itemsize
    if len(raw) != n * width or z.unconsumed_tail:
        raise EvidenceError(f"{where}: {len(raw):,} bytes, not {n:,} values of {dtype}")
    return np.frombuffer(raw, dtype=np.dtype(dtype).newbyteorder("<")).astype(np.float64)


def bucket_width(interval_s: float, duration_s: float) -> float:
    """Seconds per bucket: a whole number of intervals, at most :data:`MAX_BUCKETS`."""
    per = max(1, math.ceil(math.ceil(duration_s / interval_s) / MAX_BUCKETS))
    return per * interval_s


@dataclass
class ClientLine:
    client: str
    node: str
    #: Over the run (bandwidth: intervals without a record count 0; latency: the mean
    #: of the intervals with one).
    mean: float


@dataclass
class Series:
    """One figure of a soak, compact: what the judges and the plot read."""

    name: str
    kind: str
    unit: str
    interval_s: float
    duration_s: float
    bucket_s: float
    #: At each interval: the clients' sum (bandwidth) or mean (latency; NaN: no record).
    aggregate: np.ndarray
    #: Per bucket: "agg_min", "agg_mean", "agg_max" of the aggregate's intervals;
    #: "clients_min", "clients_median", "clients_max" of the clients' bucket means.
    buckets: dict[str, np.ndarray]
    clients: list[ClientLine]
    #: Bucket means of the clients the judges name.
    kept: dict[str, np.ndarray] = field(default_factory=dict)

    BUCKET_KEYS = ("agg_min", "agg_mean", "agg_max", "clients_min", "clients_median",
                   "clients_max")

    @property
    def n(self) -> int:
        return len(self.aggregate)

    @property
    def n_buckets(self) -> int:
        return math.ceil(self.n / round(self.bucket_s / self.interval_s))

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "unit": self.unit,
                "interval_s": self.interval_s, "duration_s": self.duration_s,
                "bucket_s": self.bucket_s, "intervals": self.n,
                "aggregate": encode(self.aggregate),
                "buckets": {k: encode(v, "float32") for k, v in self.buckets.items()},
                "clients": [[c.client, c.node, _json_number(c.mean)] for c in self.clients],
                "kept": {k: encode(v, "float32") for k, v in self.kept.items()}}

    @classmethod
    def from_dict(cls, data: Any, where: str = "series",
                  max_intervals: int = MAX_INTERVALS) -> "Series":
        """EvidenceError, naming the key, for what is not a record :meth:`to_dict` made.
        ``max_intervals``: the intervals its settings give, at most (its points, its
        buckets and kept series capped before any is decoded)."""
        if not isinstance(data, dict):
            raise EvidenceError(f"{where}: not a series record")
        def get(key: str, types: Any) -> Any:
            v = data.get(key)
            if isinstance(v, bool) or not isinstance(v, types):
                raise EvidenceError(f"{where}.{key}: {str(v)[:40]!r} is missing or of the "
                                    "wrong type")
            return v
        n = get("intervals", int)
        if not 2 <= n <= min(MAX_INTERVALS, max_intervals):
            raise EvidenceError(f"{where}.intervals: {n:,} is not 2 to "
                                f"{min(MAX_INTERVALS, max_intervals):,} (its settings' "
                                "intervals): refused before it is decoded")
        kind = get("kind", str)
        if kind not in KINDS:
            raise EvidenceError(f"{where}.kind: {kind!r} is not one of {', '.join(KINDS)}")
        interval_s, bucket_s = get("interval_s", (int, float)), get("bucket_s", (int, float))
        if not (_positive(interval_s) and _positive(bucket_s)
                and bucket_s / interval_s == round(bucket_s / interval_s)):
            raise EvidenceError(f"{where}: interval_s {interval_s!r} and bucket_s "
                                f"{bucket_s!r} are not positive, a bucket whole intervals")
        kept = get("kept", dict)
        buckets_of = math.ceil(n / round(bucket_s / interval_s))
        if buckets_of > MAX_BUCKETS + 1 or len(kept) > MAX_KEPT_CLIENTS:
            raise EvidenceError(f"{where}: {buckets_of:,} buckets and {len(kept):,} kept "
                                f"clients, more than {MAX_BUCKETS + 1} and "
                                f"{MAX_KEPT_CLIENTS}: refused before it is decoded")
        out = cls(get("name", str), kind, get("unit", str), interval_s,
                  get("duration_s", (int, float)), bucket_s,
                  decode(data.get("aggregate"), n, "float64", f"{where}.aggregate"), {}, [])
        buckets = get("buckets", dict)
        for key in cls.BUCKET_KEYS:
            out.buckets[key] = decode(buckets.get(key), out.n_buckets, "float32",
                                      f"{where}.buckets.{key}")
        for i, row in enumerate(get("clients", list)):
            if not (isinstance(row, list) and len(row) == 3 and isinstance(row[0], str)
                    and isinstance(row[1], str)):
                raise EvidenceError(f"{where}.clients[{i}]: not [client, node, mean]")
            mean = row[2]
            out.clients.append(ClientLine(row[0], row[1], math.nan if mean is None
                                          else mean))
        for key, text in kept.items():
            out.kept[str(key)] = decode(text, out.n_buckets, "float32",
                                        f"{where}.kept.{key}")
        return out


def _positive(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) \
        and v > 0


def _json_number(v: float) -> float | None:
    return float(v) if math.isfinite(v) else None


class SeriesBuilder:
    """One figure of every client, added one client at a time (a client's series is
    never held beside the others': memory is the aggregate and the bucket means)."""

    def __init__(self, name: str, kind: str, unit: str, interval_s: float,
                 duration_s: float) -> None:
        if kind not in KINDS:
            raise ValueError(f"{kind!r} is not one of {', '.join(KINDS)}")
        self.name, self.kind, self.unit = name, kind, unit
        self.interval_s, self.duration_s = interval_s, duration_s
        self.n = math.ceil(duration_s / interval_s)
        if not 2 <= self.n <= MAX_INTERVALS:
            raise ValueError(f"{self.n:,} intervals: a soak has 2 to {MAX_INTERVALS:,}")
        self.bucket_s = bucket_width(interval_s, duration_s)
        self.per = round(self.bucket_s / interval_s)
        self.n_buckets = math.ceil(self.n / self.per)
        self._sum = np.zeros(self.n)
        self._count = np.zeros(self.n, dtype=np.int64)
        self._rows: list[np.ndarray] = []
        self.clients: list[ClientLine] = []

    def per_interval(self, times_ms: Sequence[int], values: Sequence[float],
                     origin_ms: int = 0) -> np.ndarray:
        """A client's values on the interval grid: the record at ``t`` closes interval
        ``round(t / interval) - 1``; several in one interval, their mean; none: NaN."""
        t = np.asarray(times_ms, dtype=np.int64) - origin_ms
        v = np.asarray(values, dtype=np.float64)
        idx = np.clip(np.rint(t / (1000.0 * self.interval_s)).astype(np.int64) - 1, 0,
                      self.n - 1)
        sums = np.bincount(idx, weights=v, minlength=self.n)
        counts = np.bincount(idx, minlength=self.n)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)

    def add(self, client: str, node: str, series: np.ndarray) -> None:
        """One client's per-interval values (:meth:`per_interval`)."""
        if self.kind == BANDWIDTH:
            row = np.nan_to_num(series, nan=0.0)
            self._sum += row
            self._count += 1
            mean = float(row.mean())
        else:
            has = np.isfinite(series)
            self._sum += np.where(has, series, 0.0)
            self._count += has
            mean = float(series[has].mean()) if has.any() else math.nan
        self.clients.append(ClientLine(client, node, mean))
        self._rows.append(self._bucketed(series if self.kind == LATENCY else row)
                          .astype(np.float32))

    def _bucketed(self, values: np.ndarray, how: str = "mean") -> np.ndarray:
        pad = self.n_buckets * self.per - len(values)
        grid = np.concatenate((values, np.full(pad, np.nan))).reshape(self.n_buckets,
                                                                      self.per)
        with np.errstate(all="ignore"), _quiet():
            return {"mean": np.nanmean, "min": np.nanmin, "max": np.nanmax,
                    "median": np.nanmedian}[how](grid, axis=1)

    def series(self, keep: Iterable[str] = ()) -> Series:
        """The compact record; ``keep``: clients whose bucket means it keeps."""
        with np.errstate(invalid="ignore", divide="ignore"):
            agg = (self._sum if self.kind == BANDWIDTH
                   else np.where(self._count > 0, self._sum / np.maximum(self._count, 1),
                                 np.nan))
        kept = self.rows_of(keep)
        rows = np.vstack(self._rows) if self._rows else np.full((1, self.n_buckets), np.nan)
        with np.errstate(all="ignore"), _quiet():
            buckets = {"agg_min": self._bucketed(agg, "min"),
                       "agg_mean": self._bucketed(agg, "mean"),
                       "agg_max": self._bucketed(agg, "max"),
                       "clients_min": np.nanmin(rows, axis=0),
                       "clients_median": np.nanmedian(rows, axis=0),
                       "clients_max": np.nanmax(rows, axis=0)}
        return Series(self.name, self.kind, self.unit, self.interval_s, self.duration_s,
                      self.bucket_s, agg, buckets, list(self.clients), kept)

    def rows_of(self, clients: Iterable[str]) -> dict[str, np.ndarray]:
        """The bucket means of these clients (those the judges named), at most
        :data:`MAX_KEPT_CLIENTS`."""
        index = {c.client: i for i, c in enumerate(self.clients)}
        return {c: self._rows[index[c]] for c in list(dict.fromkeys(clients))
                [:MAX_KEPT_CLIENTS] if c in index}


class _quiet:
    """numpy's "All-NaN slice" and "Mean of empty slice" warnings off: a bucket with no
    record is NaN, as meant."""

    def __enter__(self) -> None:
        import warnings
        self._ctx = warnings.catch_warnings()
        self._ctx.__enter__()
        warnings.simplefilter("ignore", RuntimeWarning)

    def __exit__(self, *exc: Any) -> None:
        self._ctx.__exit__(*exc)


# --------------------------------------------------------------------------- judges


@dataclass(frozen=True)
class Judgement:
    what: str  # "stall", "drift", "shortfall"
    figure: str
    verdict: str
    reasons: tuple[str, ...] = ()
    #: The judged quantity (longest stall s, drift, largest shortfall); None: none.
    value: float | None = None
    limit: float | None = None
    #: Clients the judgement names (their series are kept).
    named: tuple[str, ...] = ()


def _listed(names: Sequence[str]) -> str:
    shown = ", ".join(names[:NAMED])
    return shown + (f" and {len(names) - NAMED:,} more" if len(names) > NAMED else "")


def _finite_nonneg(v: Any) -> bool:
    return (isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            and v >= 0)


def judge_stalls(stalls: Sequence[Stall], max_stall_s: float, interval_s: float,
                 not_kept: int = 0, figure: str = "progress") -> Judgement:
    """FAIL when a client went more than ``max_stall_s`` without progress: each span
    named by its start, length and nodes (clients stalled at overlapping times are one
    span).  ``not_kept``: stalls dropped as shorter than each client's kept ones."""
    bad = [s for s in stalls if not (_finite_nonneg(s.start_s)
                                     and _finite_nonneg(s.no_progress_s))]
    if bad:
        return Judgement("stall", figure, INVALID, tuple(
            f"{s.client} on {s.node}: a stall at {s.start_s!r} s for {s.no_progress_s!r} s "
            "is not a time a run can have" for s in bad[:NAMED]), limit=max_stall_s)
    over = sorted((s for s in stalls if s.no_progress_s > max_stall_s),
                  key=lambda s: s.start_s)
    longest = max((s.no_progress_s for s in stalls), default=0.0)
    if not over:
        return Judgement("stall", figure, PASS, (), longest, max_stall_s)
    spans: list[list[Stall]] = []
    for s in over:
        if spans and s.start_s <= max(x.end_s for x in spans[-1]):
            spans[-1].append(s)
        else:
            spans.append([s])
    reasons = []
    for span in spans:
        start = min(s.start_s for s in span)
        end = max(s.end_s for s in span)
        nodes = sorted({s.node for s in span})
        clients = {s.client for s in span}
        reasons.append(f"no progress from {_clock(start)} for {end - start:.1f} s (to the "
                       f"interval, at most {end - start + interval_s:.1f} s; more than "
                       f"{max_stall_s:g} s) on {_listed(nodes)}"
                       + (f" ({len(clients):,} clients)" if len(clients) > 1 else
                          f" ({next(iter(clients))})"))
    if not_kept:
        reasons.append(f"{not_kept:,} shorter stall(s) not kept")
    named = tuple(dict.fromkeys(s.client for s in over))
    return Judgement("stall", figure, FAIL, tuple(reasons), longest, max_stall_s, named)


def _clock(seconds: float) -> str:
    """Time into the run: 't+1:02:03.4' (h:mm:ss), 't+12.5 s' below a minute."""
    if seconds < 60:
        return f"t+{seconds:.1f} s"
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"t+{int(h)}:{int(m):02d}:{s:04.1f}"


def judged_span(aggregate: np.ndarray) -> np.ndarray:
    """The intervals drift is judged on: all but the last (the run ends within it, and
    fio writes a bandwidth log's last, partial window or not, as its helper thread
    happens to sample it)."""
    return aggregate[:-1] if len(aggregate) > 2 else aggregate


def drift(aggregate: np.ndarray, interval_s: float) -> float:
    """The least-squares line's change from the first interval to the last, over the
    mean (see the module's docstring); ``aggregate``: the span judged."""
    y = np.asarray(aggregate, dtype=np.float64)
    t = (np.arange(len(y)) + 0.5) * interval_s
    tc = t - t.mean()
    slope = float(np.dot(tc, y - y.mean()) / np.dot(tc, tc))
    return float(slope * (t[-1] - t[0]) / float(y.mean()))


def judge_drift(series: Series, max_drift: float) -> Judgement:
    """A bandwidth figure's drift over the run within ``max_drift`` (either way)."""
    y = series.aggregate
    bad = ~np.isfinite(y) | (y < 0)
    if bad.any():
        k = int(np.nonzero(bad)[0][0])
        return Judgement("drift", series.name, INVALID, (
            f"the aggregate at {_clock(k * series.interval_s)} is {float(y[k])!r}: no "
            f"bandwidth is ({int(bad.sum()):,} such intervals)",), limit=max_drift)
    if len(y) < 2 or float(y.mean()) <= 0:
        return Judgement("drift", series.name, INVALID, (
            "no bandwidth measured over the run: no trend to judge",), limit=max_drift)
    d = drift(judged_span(y), series.interval_s)
    if abs(d) > max_drift:
        return Judgement("drift", series.name, FAIL, (
            f"{series.name} {'fell' if d < 0 else 'rose'} by {abs(d):.1%} of its mean "
            f"over the run (least-squares line): more than {max_drift:.1%}",), d,
            max_drift)
    return Judgement("drift", series.name, PASS, (), d, max_drift)


def node_means(clients: Sequence[ClientLine]) -> dict[str, float]:
    """Each node's mean of its clients' means."""
    per: dict[str, list[float]] = {}
    for c in clients:
        per.setdefault(c.node, []).append(c.mean)
    return {n: math.fsum(v) / len(v) for n, v in per.items()}


def judge_shortfall(series: Series, max_node_shortfall: float) -> Judgement:
    """A node whose bandwidth over the run is more than ``max_node_shortfall`` below the
    median of the other nodes' (see the module's docstring)."""
    bad = [c for c in series.clients if not _finite_nonneg(c.mean)]
    if bad:
        return Judgement("shortfall", series.name, INVALID, tuple(
            f"{c.client} on {c.node}: mean {c.mean!r} is not a bandwidth"
            for c in bad[:NAMED]), limit=max_node_shortfall)
    means = node_means(series.clients)
    if len(means) < 2:
        return Judgement("shortfall", series.name, PASS, (
            f"{len(means)} node(s): no other node to compare with",), None,
            max_node_shortfall)
    names = sorted(means, key=lambda n: means[n])
    s = [means[n] for n in names]
    m = len(s)

    def median_without(i: int) -> float:
        def at(j: int) -> float:
            return s[j] if j < i else s[j + 1]
        return (at((m - 2) // 2) + at((m - 1) // 2)) / 2

    short = {}
    for i, node in enumerate(names):
        others = median_without(i)
        short[node] = (1 - s[i] / others) if others > 0 else math.nan
    if any(not math.isfinite(v) for v in short.values()):
        return Judgement("shortfall", series.name, INVALID, (
            "the other nodes' median bandwidth is 0: no shortfall to judge",),
            limit=max_node_shortfall)
    worst = max(short.values())
    slow = [n for n in names if short[n] > max_node_shortfall]
    if not slow:
        return Judgement("shortfall", series.name, PASS, (), worst, max_node_shortfall)
    reasons = tuple(f"{n}: {means[n]:.4g} {series.unit} over the run, {short[n]:.1%} below "
                    f"the other nodes' median (more than {max_node_shortfall:.1%})"
                    for n in slow[:NAMED])
    if len(slow) > NAMED:
        reasons += (f"and {len(slow) - NAMED:,} more node(s)",)
    named = tuple(c.client for c in series.clients if c.node in set(slow[:NAMED]))
    return Judgement("shortfall", series.name, FAIL, reasons, worst, max_node_shortfall,
                     named)


# --------------------------------------------------------------------------- a soak


@dataclass
class Evidence:
    """What a soak keeps: its figures, compact, and every client's longest stalls."""

    settings: Settings
    series: list[Series]
    stalls: list[Stall]
    #: Stalls found but not kept (each shorter than its client's kept ones).
    stalls_not_kept: int = 0

    VERSION = 1

    def to_dict(self) -> dict[str, Any]:
        s = self.settings
        return {"version": self.VERSION,
                "settings": {"duration_s": s.duration_s, "interval_s": s.interval_s,
                             "max_stall_s": s.max_stall_s, "max_drift": s.max_drift,
                             "max_node_shortfall": s.max_node_shortfall},
                "series": [x.to_dict() for x in self.series],
                "stalls": [x.to_dict() for x in self.stalls],
                "stalls_not_kept": self.stalls_not_kept}

    @classmethod
    def from_dict(cls, data: Any) -> "Evidence":
        """EvidenceError, naming the key, for what :meth:`to_dict` did not make."""
        if not isinstance(data, dict) or data.get("version") != cls.VERSION:
            raise EvidenceError(f"soak: not a soak record of version {cls.VERSION}")
        settings = data.get("settings")
        try:
            st = Settings.of(settings)
        except (TypeError, KeyError):
            raise EvidenceError("soak.settings: missing or not a soak: section") from None
        for k, v in vars(st).items():
            if not _positive(v) and not (k == "max_drift" and v == 0):
                raise EvidenceError(f"soak.settings.{k}: {v!r} is not a positive number")
        listed = data.get("series") or []
        if not isinstance(listed, list):
            raise EvidenceError("soak.series: not a list of series")
        if len(listed) > MAX_SERIES:
            raise EvidenceError(f"soak.series: {len(listed):,} series, more than the "
                                f"{MAX_SERIES} a soak records (a figure per kind and fio "
                                "direction): refused before any is decoded")
        ratio = st.duration_s / st.interval_s
        cap = math.ceil(ratio) if ratio <= MAX_INTERVALS else MAX_INTERVALS
        series = [Series.from_dict(x, f"soak.series[{i}]", cap)
                  for i, x in enumerate(listed)]
        stalls = []
        for i, x in enumerate(data.get("stalls") or []):
            try:
                stalls.append(Stall(str(x["client"]), str(x["node"]),
                                    _time(x["start_s"]), _time(x["no_progress_s"])))
            except (TypeError, KeyError):
                raise EvidenceError(f"soak.stalls[{i}]: not a stall record") from None
        not_kept = data.get("stalls_not_kept", 0)
        if isinstance(not_kept, bool) or not isinstance(not_kept, int) or not_kept < 0:
            raise EvidenceError(f"soak.stalls_not_kept: {not_kept!r} is not a count")
        return cls(st, series, stalls, not_kept)


def _time(v: Any) -> float:
    """A time as recorded (NaN for what is no number: judged INVALID, not refused)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return math.nan
    return float(v)


def judge(evidence: Evidence) -> list[Judgement]:
    """Every judgement of a soak: its stalls, then each bandwidth figure's drift and
    slow node (latency figures are shown, not judged)."""
    st = evidence.settings
    out = [judge_stalls(evidence.stalls, st.max_stall_s, st.interval_s,
                        evidence.stalls_not_kept)]
    for series in evidence.series:
        if series.kind == BANDWIDTH:
            out.append(judge_drift(series, st.max_drift))
            out.append(judge_shortfall(series, st.max_node_shortfall))
    return out


def record_reasons(evidence: Evidence, nodes: Sequence[str] = ()) -> list[str]:
    """Why a record is not one a soak of its own settings on the job's ``nodes`` makes
    (INVALID): no bandwidth series, a series of another length than the settings', a
    node of the job without a client (or a client on no node of the job), and an
    all-clients span without progress longer than ``max_stall_s`` that no kept stall of
    a client covers.  That span is found by :func:`stalls_of` on the intervals in which
    a figure shows progress (a bandwidth above 0, or a latency recorded: fio writes a
    latency line only for a window in which I/O completed).  The live check and the
    sign-off both call it; ``nodes`` empty: the job's nodes are not known, not looked
    at."""
    st = evidence.settings
    out = []
    bandwidth = [s for s in evidence.series if s.kind == BANDWIDTH]
    if not bandwidth:
        out.append("no bandwidth series: a soak is judged on its bandwidth over the run")
    for s in evidence.series:
        if (s.n, s.interval_s, s.duration_s) != (st.intervals, st.interval_s, st.duration_s):
            out.append(f"its {s.name} is {s.n:,} intervals of {s.interval_s:g} s over "
                       f"{s.duration_s:g} s, but its settings ask {st.intervals:,} of "
                       f"{st.interval_s:g} s over {st.duration_s:g} s")
    if out:
        return out
    for s in bandwidth:
        have = {c.node for c in s.clients}
        if nodes and set(nodes) != have:
            missing = sorted(set(nodes) - have)
            stray = sorted(have - set(nodes))
            out.append(f"its {s.name} has clients on {_listed(sorted(have)) or 'no node'}, "
                       f"but the job ran on {_listed(list(nodes))}"
                       + (f": no client on {_listed(missing)}" if missing else "")
                       + (f": {_listed(stray)} not of the job" if stray else ""))
    progress = np.zeros(st.intervals, dtype=bool)
    for s in evidence.series:
        y = s.aggregate
        progress |= (y > 0) if s.kind == BANDWIDTH else np.isfinite(y)
    times = (np.nonzero(progress)[0] + 1) * round(st.interval_s * 1000)
    spans = stalls_of(times, st.interval_s, st.duration_s, "every client", "every node")
    by_client: dict[str, list[Stall]] = {}
    for x in evidence.stalls:
        by_client.setdefault(x.client, []).append(x)
    clients = dict.fromkeys(c.client for s in bandwidth for c in s.clients)
    for span in spans.stalls:
        if span.no_progress_s <= st.max_stall_s:
            continue
        uncovered = [c for c in clients
                     if len(by_client.get(c, [])) < MAX_STALLS_PER_CLIENT
                     and not any(x.no_progress_s >= span.no_progress_s - st.interval_s
                                 and x.start_s <= span.end_s + st.interval_s
                                 and x.end_s >= span.start_s - st.interval_s
                                 for x in by_client.get(c, []))]
        if uncovered:
            out.append(f"its series show no progress from {_clock(span.start_s)} for "
                       f"{span.no_progress_s:.1f} s (more than {st.max_stall_s:g} s), but "
                       f"its stalls hold none of {_listed(uncovered)} there")
    return out


def verdict(judgements: Sequence[Judgement]) -> str:
    """FAIL when one FAILs; else INVALID when one is; else PASS."""
    verdicts = {j.verdict for j in judgements}
    return FAIL if FAIL in verdicts else INVALID if INVALID in verdicts or not judgements \
        else PASS
