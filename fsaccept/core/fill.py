"""Acceptance at a declared fill level (issue 39 §1).

(Over 900 lines, one concept: a fill level's settings, arithmetic and judges, which
the live check and the sign-off call alike; each piece reads the same typed
:class:`Settings` and :class:`Df`.)

A file system is fast empty.  A contract often says how fast it must stay once it is
full: "at 80 % of its capacity, each figure at least 70 % of its empty figure".  The
tests measured on the empty target are measured again once a **filler** (random,
incompressible data, owned and removed like all the run's data) has brought it to the
level the reference file's ``fill:`` section declares.

This module holds the arithmetic and the judges, pure (no ReFrame, no file):

* :class:`Settings`: the ``fill:`` section, typed, with its defaults.
* :class:`Df`: what ``df`` says of the target, bytes and inodes (:func:`read_df` reads
  ``df -B1 --output=size,used,avail,itotal,iused,iavail``'s own output).  The **level**
  is ``used / (used + avail)``: the share of what a user can fill, as ``df``'s ``Use%``
  (blocks reserved for root are no user's).  The inode level is ``iused / itotal``.
* :func:`plan`: how many bytes and files each node writes to reach the level, the line
  no node writes beyond, and the ageing rounds (:func:`churn_plan`); a
  :class:`PlanError` saying why a fill cannot or must not run.
* :func:`parse_output`: the filler job's marker lines (:data:`MARK`), read into a
  :class:`FillerOutput`; :meth:`Evidence.of` makes the record a filled test keeps.
* The judges: :func:`judge_level` (the level reached, blocks and inodes),
  :func:`judge_filler` (every node wrote its share and aged it), :func:`judge_figure`
  (one figure filled against empty; :func:`threshold_of`, the same bound as a live
  check's ReFrame reference), :func:`verdict`.

**The line no node crosses.**  ``target_used = floor(fraction x capacity)``, and never
beyond :data:`MAX_LEVEL` of it whatever is asked; ``room`` is the tolerance in bytes.
Each node writes its files in batches of at most ``check_bytes`` (at least its largest
file); before each batch it reads ``df`` and writes the batch only while ``used <=
stop_used = target_used - room / 2``.  At any moment at most one batch per node is in
flight and not yet seen by ``df``: ``nodes x check_bytes``, at most a quarter of
``room`` (:func:`plan` refuses more).  So ``used`` never passes ``target_used``, even
when ``df`` lags by ``lag_bytes = room / 2 - nodes x check_bytes`` (at least a quarter
of ``room``: Lustre caches its statfs for a second); and a node stops only above
``stop_used``, within half the tolerance of the target.

Verdict: INVALID when a judgement is (a figure measured at another level than declared
proves nothing), else FAIL when one FAILs, else PASS.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from fsaccept.core.pernode import OUTLIER_FIGURE
from fsaccept.core.units import GIB, MIB, TIME_UNITS, parse_size

PASS, FAIL, INVALID = "PASS", "FAIL", "INVALID"

#: The level fsaccept never fills beyond, whatever the reference file asks.
MAX_LEVEL = 0.95
#: Defaults of the reference file's ``fill:`` section.
DEFAULT_TOLERANCE = 0.02
#: The ageing profile's file sizes and the share of the filler's bytes each takes.
DEFAULT_FILE_SIZES: tuple[tuple[int, float], ...] = ((MIB, 0.1), (64 * MIB, 0.4),
                                                     (GIB, 0.5))
DEFAULT_DELETE_FRACTION = 0.1
#: A count (bytes, inodes, files) beyond this is none a file system reports (16 EiB).
MAX_COUNT = 2**64
#: Nodes named in one reason, at most.
NAMED = 5
#: The marker every line of the filler job's own output starts with.
MARK = "FSACCEPT_FILL"
#: The fill's record as a file of FillTarget's output directory (the check writes it,
#: ReFrame copies it there, the manifest digests it): what the sign-off judges every
#: filled test by, never a run report's field.
EVIDENCE_FILE = "fill-record.json"
#: The job lines (``fsaccept-info KEY ...``) that name the nodes FillTarget's job planned
#: for, and df of the target at a filled test's start.
NODES_INFO, DF_INFO = "fill_nodes", "fill_df"
#: The df readings a fill records: before the filler, and once filled (and aged).
BEFORE, FILLED = "before", "filled"
STAGES = (BEFORE, FILLED)
#: Why a node's filler stopped: it wrote its share, df reached the stop line, or a
#: write failed.
STOPS = ("budget", "level", "error")


class PlanError(ValueError):
    """A fill that cannot or must not run; the message says why, with the numbers."""


class OutputError(ValueError):
    """Filler output that is not what the job prints; the message names the line."""


class EvidenceError(ValueError):
    """A fill record that is not one; the message names the key."""


def human(nbytes: float) -> str:
    """Bytes as people read a file system's size: '7.11 PiB', '512 MiB', '0 B'."""
    if not math.isfinite(nbytes):
        return repr(nbytes)
    for unit, scale in (("EiB", 2**60), ("PiB", 2**50), ("TiB", 2**40), ("GiB", GIB),
                        ("MiB", MIB), ("KiB", 2**10)):
        if abs(nbytes) >= scale:
            return f"{nbytes / scale:.3g} {unit}"
    return f"{nbytes:.0f} B"


def _pct(x: float) -> str:
    return f"{x:.2%}" if math.isfinite(x) else repr(x)


# --------------------------------------------------------------------------- settings


@dataclass(frozen=True)
class Limits:
    """What the judges hold a fill to: the level declared, of capacity and optionally of
    inodes, the shortfall below it still accepted, and the degradation allowed."""

    fraction: float
    max_degradation: float
    inode_fraction: float | None = None
    tolerance: float = DEFAULT_TOLERANCE

    def to_dict(self) -> dict[str, Any]:
        return {"fraction": self.fraction, "inode_fraction": self.inode_fraction,
                "tolerance": self.tolerance, "max_degradation": self.max_degradation}


@dataclass(frozen=True)
class Settings:
    """The reference file's ``fill:`` section, with its defaults."""

    #: The run may fill the target (it is refused otherwise: ``Reference.fill_settings``).
    allowed: bool
    limits: Limits
    #: (size in bytes, share of the filler's bytes), sizes distinct, shares summing to 1.
    file_sizes: tuple[tuple[int, float], ...] = DEFAULT_FILE_SIZES
    churn_rounds: int = 0
    delete_fraction: float = DEFAULT_DELETE_FRACTION
    #: Check names re-run filled; None: the catalogue's defaults the file has entries for.
    tests: tuple[str, ...] | None = None
    #: The share of the partition's nodes that write the filler.
    node_fraction: float = 1.0
    #: The fill job's time budget, and the rate it is sized by (MiB/s; None: the target's
    #: ``max_bandwidth_mib_s``).
    deadline_s: int | None = None
    bandwidth_mib_s: float | None = None

    @classmethod
    def of(cls, section: dict[str, Any]) -> "Settings":
        """From a schema-valid ``fill:`` section (sizes already checked by the loader)."""
        churn = section.get("churn") or {}
        sizes = section.get("file_sizes")
        return cls(
            allowed=section["allowed"],
            limits=Limits(fraction=float(section["fraction"]),
                          max_degradation=float(section["max_degradation"]),
                          inode_fraction=(None if section.get("inode_fraction") is None
                                          else float(section["inode_fraction"])),
                          tolerance=float(section.get("tolerance", DEFAULT_TOLERANCE))),
            file_sizes=(tuple((parse_size(s["size"]), float(s["share"])) for s in sizes)
                        if sizes else DEFAULT_FILE_SIZES),
            churn_rounds=int(churn.get("rounds", 0)),
            delete_fraction=float(churn.get("delete_fraction", DEFAULT_DELETE_FRACTION)),
            tests=tuple(section["tests"]) if "tests" in section else None,
            node_fraction=float(section.get("node_fraction", 1.0)),
            deadline_s=section.get("deadline_s"),
            bandwidth_mib_s=section.get("bandwidth_mib_s"))


# --------------------------------------------------------------------------- df


@dataclass(frozen=True)
class Df:
    """What ``df`` says of the target: bytes (``-B1``) and inodes (0: none reported)."""

    size: int
    used: int
    avail: int
    itotal: int = 0
    iused: int = 0
    iavail: int = 0

    FIELDS = ("size", "used", "avail", "itotal", "iused", "iavail")

    @property
    def capacity(self) -> int:
        """What a user can fill: used and available (root's reserve is no user's)."""
        return self.used + self.avail

    @property
    def level(self) -> float:
        """The share of the capacity used (NaN when there is no capacity)."""
        return self.used / self.capacity if self.capacity > 0 else math.nan

    @property
    def inode_level(self) -> float:
        """The share of the inodes used (NaN when the file system reports none)."""
        return self.iused / self.itotal if self.itotal > 0 else math.nan

    def problems(self) -> list[str]:
        """What no file system's df says: a count beyond :data:`MAX_COUNT`, no capacity,
        more inodes used than it has."""
        out = [f"{k}={v!r} is not a count" for k in self.FIELDS
               if not _count(v := getattr(self, k))]
        if out:
            return out
        if self.capacity <= 0:
            out.append(f"no capacity (used {self.used} + avail {self.avail} bytes)")
        if self.iused > self.itotal:
            out.append(f"{self.iused} inodes used of {self.itotal}")
        return out

    def text(self) -> str:
        """The marker's fields: 'size=... used=... avail=... itotal=... iused=... iavail=...'."""
        return " ".join(f"{k}={getattr(self, k)}" for k in self.FIELDS)

    @classmethod
    def parse(cls, text: str, where: str = "df") -> "Df":
        """From :meth:`text`'s fields (every one, once, each a count); OutputError naming
        ``where`` and the field otherwise."""
        fields = _fields(text, where)
        missing = [k for k in cls.FIELDS if k not in fields]
        unknown = [k for k in fields if k not in cls.FIELDS]
        if missing or unknown:
            raise OutputError(f"{where}: " + "; ".join(
                ([f"missing {', '.join(missing)}"] if missing else [])
                + ([f"unknown {', '.join(unknown)}"] if unknown else [])))
        return cls(**fields)

    def to_dict(self) -> dict[str, int]:
        return {k: getattr(self, k) for k in self.FIELDS}

    @classmethod
    def from_dict(cls, data: Any, where: str) -> "Df":
        if not isinstance(data, dict) or set(data) != set(cls.FIELDS):
            raise EvidenceError(f"{where}: not {{{', '.join(cls.FIELDS)}}}")
        for k in cls.FIELDS:
            if not _count(data[k]):
                raise EvidenceError(f"{where}.{k}: {data[k]!r} is not a count")
        return cls(**data)


#: df's own column names (``--output=size,used,avail,itotal,iused,iavail``, ``-B1``).
_DF_COLUMNS = {"1B-blocks": "size", "Used": "used", "Avail": "avail", "Inodes": "itotal",
               "IUsed": "iused", "IFree": "iavail"}


def read_df(text: str, where: str = "df") -> Df:
    """``df -B1 --output=size,used,avail,itotal,iused,iavail PATH``'s output: a header
    and one line of counts (``-``, a file system without inode counts: 0).  OutputError
    naming what is wrong otherwise."""
    lines = [li.split() for li in text.splitlines() if li.strip()]
    if len(lines) != 2:
        raise OutputError(f"{where}: {len(lines)} lines, not a header and one line of counts")
    header, values = lines
    unknown = [h for h in header if h not in _DF_COLUMNS]
    if unknown or len(header) != len(values) or len(set(header)) != len(header):
        raise OutputError(f"{where}: header {' '.join(header)[:120]!r} is not df -B1 "
                          "--output=size,used,avail,itotal,iused,iavail's")
    fields: dict[str, int] = {}
    for name, value in zip(header, values):
        key = _DF_COLUMNS[name]
        if value == "-" and key in ("itotal", "iused", "iavail"):
            fields[key] = 0
        else:
            fields[key] = _parse_count(value, f"{where}: {name}")
    missing = [h for h, k in _DF_COLUMNS.items() if k not in fields]
    if missing:
        raise OutputError(f"{where}: no {', '.join(missing)} column")
    return Df(**fields)


def _count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v < MAX_COUNT


_DIGITS = re.compile(r"[0-9]{1,20}")


def _parse_count(text: str, where: str) -> int:
    if not _DIGITS.fullmatch(text) or int(text) >= MAX_COUNT:
        raise OutputError(f"{where}: {text[:40]!r} is not a count")
    return int(text)


def _fields(text: str, where: str) -> dict[str, int]:
    """``key=N`` fields, each once, each N a count (``rc`` may be negative)."""
    out: dict[str, int] = {}
    for part in text.split():
        key, sep, value = part.partition("=")
        if not sep or not re.fullmatch(r"[a-z_]{1,20}", key):
            raise OutputError(f"{where}: {part[:40]!r} is not key=value")
        if key in out:
            raise OutputError(f"{where}: {key} given twice")
        if key == "rc" and re.fullmatch(r"-?[0-9]{1,4}", value):
            out[key] = int(value)
            continue
        out[key] = _parse_count(value, f"{where}: {key}")
    return out


# --------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class NodePlan:
    """One node's share of the filler: (file size, count) per size class, and empty files
    (inodes alone) when the inode level needs more files than the bytes make."""

    node: str
    files: tuple[tuple[int, int], ...]
    empty_files: int = 0

    @property
    def bytes(self) -> int:
        return sum(size * n for size, n in self.files)

    @property
    def file_count(self) -> int:
        return sum(n for _, n in self.files) + self.empty_files

    def args(self) -> str:
        """What the node's filler is given: 'SIZE:COUNT,SIZE:COUNT empty=N'."""
        return (",".join(f"{size}:{n}" for size, n in self.files)
                + f" empty={self.empty_files}")


@dataclass(frozen=True)
class ChurnRound:
    """One round of ageing: on each node, of each size class, the files whose index ``i``
    has ``i % stride == offset`` are deleted and written again (new data, new blocks: the
    free space they leave is scattered among the kept files)."""

    round: int
    stride: int
    offset: int
    #: node -> ((size, files deleted and written again), ...)
    nodes: tuple[tuple[str, tuple[tuple[int, int], ...]], ...]

    @property
    def bytes(self) -> int:
        return sum(size * n for _, classes in self.nodes for size, n in classes)

    @property
    def files(self) -> int:
        return sum(n for _, classes in self.nodes for _, n in classes)


@dataclass(frozen=True)
class Plan:
    """A fill: where it starts, the lines it keeps, what each node writes."""

    df: Df
    limits: Limits
    #: The used bytes never passed (the declared level, at most MAX_LEVEL).
    target_used: int
    #: A node writes its next batch only while df reports at most this used.
    stop_used: int
    #: Bytes a node writes between two readings of df, at most.
    check_bytes: int
    #: How far df may lag behind what landed without the target being passed.
    lag_bytes: int
    #: The inodes used the fill aims at (None: no inode level declared).
    target_inodes: int | None
    nodes: tuple[NodePlan, ...]
    churn: tuple[ChurnRound, ...] = ()
    #: The rate the fill is sized by (MiB/s), and the time it takes at that rate
    #: (filler and ageing), None without a rate.
    bandwidth_mib_s: float | None = None
    seconds: float | None = None

    @property
    def bytes(self) -> int:
        return sum(n.bytes for n in self.nodes)

    @property
    def files(self) -> int:
        return sum(n.file_count for n in self.nodes)

    @property
    def written(self) -> int:
        """Bytes written in all: the filler and every round of ageing."""
        return self.bytes + sum(r.bytes for r in self.churn)

    def summary(self) -> str:
        """One paragraph: from where to where, how much, how long."""
        cap = self.df.capacity
        out = (f"fill from {_pct(self.df.level)} to {_pct(self.target_used / cap)} of "
               f"{human(cap)}: {human(self.bytes)} in {self.files:,} files on "
               f"{len(self.nodes):,} node(s), df read every {human(self.check_bytes)} a "
               f"node, no batch started above {human(self.stop_used)} used")
        if self.churn:
            out += (f"; {len(self.churn)} round(s) of ageing rewriting "
                    f"{human(sum(r.bytes for r in self.churn))}")
        if self.seconds is not None:
            out += (f"; {self.seconds / 3600:.3g} h at {self.bandwidth_mib_s:,.0f} MiB/s")
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"df": self.df.to_dict(), "limits": self.limits.to_dict(),
                "target_used": self.target_used, "stop_used": self.stop_used,
                "check_bytes": self.check_bytes, "lag_bytes": self.lag_bytes,
                "target_inodes": self.target_inodes,
                "nodes": {n.node: n.args() for n in self.nodes},
                "churn": [{"round": r.round, "stride": r.stride, "offset": r.offset}
                          for r in self.churn],
                "bytes": self.bytes, "files": self.files, "seconds": self.seconds}


def split(count: int, n: int, start: int = 0) -> list[int]:
    """``count`` shared among ``n`` as evenly as whole numbers go, the remainder's ones
    given from position ``start`` on (round-robin)."""
    base, rest = divmod(count, n)
    return [base + (1 if (i - start) % n < rest else 0) for i in range(n)]


def plan(df: Df, settings: Settings, nodes: Sequence[str], reserve_bytes: int = 0,
         bandwidth_mib_s: float | None = None) -> Plan:
    """The fill of a target ``df`` describes by ``nodes``: PlanError when it cannot or
    must not run (the numbers in the message).

    ``reserve_bytes``: the free space the filled tests need once it is full (their
    capacity guard: the largest planned volume over ``target.max_fill_fraction``);
    ``bandwidth_mib_s``: the rate to size it by when the section gives none (the target's
    ``max_bandwidth_mib_s``)."""
    lim = settings.limits
    problems = df.problems()
    if problems:
        raise PlanError(f"df of the target: {'; '.join(problems)}")
    nodes = list(nodes)
    if not nodes or len(set(nodes)) != len(nodes):
        raise PlanError(f"nodes: {len(nodes)} given, {len(set(nodes))} distinct: the filler "
                        "needs one or more nodes, each once")
    for what, value in (("fill.fraction", lim.fraction),
                        ("fill.inode_fraction", lim.inode_fraction)):
        if value is not None and not (_finite(value) and 0 < value <= MAX_LEVEL):
            raise PlanError(f"{what}: {value!r}: fsaccept fills to a level above 0 and at "
                            f"most {MAX_LEVEL:.0%}, whatever is asked")
    if not (_finite(lim.tolerance) and 0 < lim.tolerance < lim.fraction):
        raise PlanError(f"fill.tolerance: {lim.tolerance!r} is not above 0 and below "
                        f"fill.fraction {lim.fraction!r}")
    cap = df.capacity
    target_used = min(math.floor(lim.fraction * cap), math.floor(MAX_LEVEL * cap))
    if df.used > target_used:
        raise PlanError(
            f"the target is at {_pct(df.level)} already ({human(df.used)} used of "
            f"{human(cap)}), above the declared {_pct(lim.fraction)}: a filled run measures "
            "at the declared level, and fsaccept deletes nothing it did not write")
    need = target_used - df.used
    largest = max(size for size, _ in settings.file_sizes)
    room = math.floor(lim.tolerance * cap)  # how far below the target the level may be
    check_bytes = max(largest, room // (4 * len(nodes)))
    if len(nodes) * check_bytes > room // 4:
        raise PlanError(
            f"{len(nodes):,} node(s) x the largest file ({human(largest)}) is "
            f"{human(len(nodes) * largest)} in flight at once, more than a quarter of the "
            f"tolerance ({_pct(lim.tolerance)} of {human(cap)}: {human(room)}): smaller "
            "file sizes (fill.file_sizes), fewer nodes (fill.node_fraction) or a larger "
            "fill.tolerance")
    stop_used = target_used - room // 2
    lag_bytes = room // 2 - len(nodes) * check_bytes
    free_after = cap - target_used
    if reserve_bytes > free_after:
        raise PlanError(
            f"filled to {_pct(lim.fraction)}, the target keeps {human(free_after)} free; "
            f"the filled tests need {human(reserve_bytes)} (their capacity guard): a lower "
            "fill.fraction, or smaller test entries")
    classes = _classes(need, settings.file_sizes)
    data_files = sum(n for _, n in classes)
    target_inodes = None
    empty = 0
    if lim.inode_fraction is not None:
        if df.itotal == 0:
            raise PlanError("fill.inode_fraction: the file system reports no inode count "
                            "(df's Inodes is 0 or -): no inode level can be reached or proven")
        target_inodes = math.floor(lim.inode_fraction * df.itotal)
        if df.iused > target_inodes:
            raise PlanError(
                f"the target's inodes are at {_pct(df.inode_level)} already ({df.iused:,} of "
                f"{df.itotal:,}), above the declared {_pct(lim.inode_fraction)}")
        empty = max(0, target_inodes - df.iused - data_files)
    if df.itotal > 0 and df.iused + data_files + empty > math.floor(MAX_LEVEL * df.itotal):
        raise PlanError(
            f"the file sizes make {data_files:,} files; with the {df.iused:,} inodes used "
            f"that is beyond {MAX_LEVEL:.0%} of the {df.itotal:,} inodes: larger file sizes "
            "(fill.file_sizes)")
    node_plans = _node_plans(nodes, classes, empty)
    churn = tuple(churn_plan(node_plans, settings.churn_rounds, settings.delete_fraction))
    rate = settings.bandwidth_mib_s or bandwidth_mib_s
    seconds = None
    if rate:
        seconds = (sum(n.bytes for n in node_plans) + sum(r.bytes for r in churn)) / (
            rate * MIB)
    if settings.deadline_s is not None:
        if seconds is None:
            raise PlanError("fill.deadline_s: no rate to size the fill by: "
                            "fill.bandwidth_mib_s or target.max_bandwidth_mib_s")
        if seconds > settings.deadline_s:
            raise PlanError(
                f"writing {human(need)} (and {human(sum(r.bytes for r in churn))} of "
                f"ageing) at {rate:,.0f} MiB/s takes {seconds / 3600:.3g} h, more than "
                f"fill.deadline_s ({settings.deadline_s / 3600:.3g} h)")
    return Plan(df=df, limits=lim, target_used=target_used, stop_used=stop_used,
                check_bytes=check_bytes, lag_bytes=lag_bytes, target_inodes=target_inodes,
                nodes=tuple(node_plans), churn=churn, bandwidth_mib_s=rate,
                seconds=seconds)


def _finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _classes(need: int, mix: Sequence[tuple[int, float]]) -> list[tuple[int, int]]:
    """(size, count) per class: each class's share of ``need`` in whole files (rounded
    down), the rest in files of the smallest size (rounded up: the stop line, not the
    count, keeps the level)."""
    counts = {size: math.floor(need * share / size) for size, share in mix}
    rest = need - sum(size * n for size, n in counts.items())
    smallest = min(counts)
    if rest > 0:
        counts[smallest] += -(-rest // smallest)
    return [(size, counts[size]) for size, _ in mix]


def _node_plans(nodes: list[str], classes: list[tuple[int, int]],
                empty: int) -> list[NodePlan]:
    """Each class's files shared among the nodes, the remainders round-robin from where
    the previous class's ended (the bytes stay even)."""
    per_node: list[list[tuple[int, int]]] = [[] for _ in nodes]
    start = 0
    for size, count in classes:
        for i, n in enumerate(split(count, len(nodes), start)):
            per_node[i].append((size, n))
        start = (start + count) % len(nodes)
    empties = split(empty, len(nodes), start)
    return [NodePlan(node, tuple(files), e) for node, files, e in zip(nodes, per_node,
                                                                         empties)]


def selected(count: int, stride: int, offset: int) -> int:
    """How many of the indices 0 .. count-1 have ``i % stride == offset``."""
    return count // stride + (1 if offset < count % stride else 0)


def churn_plan(nodes: Sequence[NodePlan], rounds: int,
               delete_fraction: float) -> list[ChurnRound]:
    """``rounds`` rounds of ageing: round ``r`` (from 1) deletes, on each node, of each
    size class, the files whose index ``i % stride == (r - 1) % stride`` (``stride``: the
    nearest whole ``1 / delete_fraction``, at least 2) and writes them again under the
    same names: the same bytes, the level kept, the free space scattered."""
    if rounds <= 0:
        return []
    if not (_finite(delete_fraction) and 0 < delete_fraction <= 0.5):
        raise PlanError(f"fill.churn.delete_fraction: {delete_fraction!r} is not above 0 "
                        "and at most 0.5")
    stride = max(2, round(1 / delete_fraction))
    out = []
    for r in range(1, rounds + 1):
        offset = (r - 1) % stride
        out.append(ChurnRound(r, stride, offset, tuple(
            (n.node, tuple((size, selected(count, stride, offset))
                           for size, count in n.files)) for n in nodes)))
    return out


# --------------------------------------------------------------------------- job output


@dataclass(frozen=True)
class NodeFill:
    """What one node's filler says it did."""

    node: str
    bytes: int
    files: int
    empty: int
    rc: int
    stop: str
    #: Ageing rounds done with exit 0, and the bytes they wrote again.
    rounds: int = 0
    churn_bytes: int = 0


@dataclass
class FillerOutput:
    """The filler job's marker lines, read: df per stage, each node's line, each node's
    ageing rounds (node -> round -> (files, bytes, rc))."""

    df: dict[str, Df] = field(default_factory=dict)
    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    churn: dict[str, dict[int, tuple[int, int, int]]] = field(default_factory=dict)


_MARK_LINE = re.compile(rf"^{MARK} (?P<kind>df|node|churn) (?P<name>\S+)(?P<rest>.*)$")
_NODE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,254}")


def parse_output(text: str, where: str = "filler output") -> FillerOutput:
    """The filler job's lines, among its other output::

        FSACCEPT_FILL df before size=N used=N avail=N itotal=N iused=N iavail=N
        FSACCEPT_FILL node n1 bytes=N files=N empty=N rc=0 stop=level
        FSACCEPT_FILL churn n1 round=1 files=N bytes=N rc=0
        FSACCEPT_FILL df filled size=N ...

    OutputError, naming the line, for a marker that is malformed, of an unknown kind or
    stage, a field missing, unknown or given twice, a number that is no count, or a
    stage, node or round given twice."""
    out = FillerOutput()
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.startswith(MARK):
            continue
        here = f"{where}: line {lineno}"
        m = _MARK_LINE.match(line.rstrip())
        if not m:
            raise OutputError(f"{here}: {line[:80]!r} is not a fill marker ({MARK} "
                              "df|node|churn NAME key=value...)")
        kind, name, rest = m.group("kind"), m.group("name"), m.group("rest")
        if kind == "df":
            if name not in STAGES:
                raise OutputError(f"{here}: df stage {name[:40]!r} is not one of "
                                  f"{', '.join(STAGES)}")
            if name in out.df:
                raise OutputError(f"{here}: df {name} given twice")
            out.df[name] = Df.parse(rest, here)
            continue
        if not _NODE_NAME.fullmatch(name):
            raise OutputError(f"{here}: {name[:40]!r} is not a node's name")
        if kind == "node":
            parts = rest.split()
            stops = [p.partition("=")[2] for p in parts if p.startswith("stop=")]
            if len(stops) != 1 or stops[0] not in STOPS:
                raise OutputError(f"{here}: not one stop= of {', '.join(STOPS)}")
            fields = _fields(" ".join(p for p in parts if not p.startswith("stop=")), here)
            _exactly(fields, ("bytes", "files", "empty", "rc"), here)
            if name in out.nodes:
                raise OutputError(f"{here}: node {name} reported twice")
            out.nodes[name] = {**fields, "stop": stops[0]}
            continue
        fields = _fields(rest, here)
        _exactly(fields, ("round", "files", "bytes", "rc"), here)
        rounds = out.churn.setdefault(name, {})
        if fields["round"] in rounds:
            raise OutputError(f"{here}: round {fields['round']} of {name} reported twice")
        rounds[fields["round"]] = (fields["files"], fields["bytes"], fields["rc"])
    return out


def _exactly(fields: dict[str, int], keys: tuple[str, ...], where: str) -> None:
    missing = [k for k in keys if k not in fields]
    unknown = [k for k in fields if k not in keys]
    if missing or unknown:
        raise OutputError(f"{where}: " + "; ".join(
            ([f"missing {', '.join(missing)}"] if missing else [])
            + ([f"unknown {', '.join(unknown)}"] if unknown else [])))


# --------------------------------------------------------------------------- the record


@dataclass
class Evidence:
    """What a filled test keeps (``fill_record``): the limits it was judged by, df before
    the filler and once filled, the nodes planned and what each wrote, the ageing
    rounds planned, and the bytes planned.  Small: a line a node."""

    limits: Limits
    df: dict[str, Df]
    planned_nodes: tuple[str, ...]
    nodes: list[NodeFill]
    churn_rounds: int = 0
    planned_bytes: int = 0

    VERSION = 1

    @classmethod
    def of(cls, plan_: Plan, output: FillerOutput) -> "Evidence":
        """The record of a fill ``plan_`` from its job's output."""
        nodes = []
        for node, f in output.nodes.items():
            rounds = output.churn.get(node, {})
            done = sorted(r for r, (_, _, rc) in rounds.items() if rc == 0)
            # Rounds count in order: a round missing or failed ends the count.
            count = next((i for i, r in enumerate(done, 1) if r != i), len(done) + 1) - 1
            nodes.append(NodeFill(node, f["bytes"], f["files"], f["empty"], f["rc"],
                                  f["stop"], count,
                                  sum(b for r, (_, b, rc) in rounds.items() if rc == 0)))
        return cls(plan_.limits, dict(output.df), tuple(n.node for n in plan_.nodes),
                   nodes, len(plan_.churn), plan_.bytes)

    @property
    def written(self) -> int:
        return sum(n.bytes for n in self.nodes)

    def to_dict(self) -> dict[str, Any]:
        return {"version": self.VERSION, "limits": self.limits.to_dict(),
                "df": {k: v.to_dict() for k, v in self.df.items()},
                "planned_nodes": list(self.planned_nodes),
                "nodes": [{"node": n.node, "bytes": n.bytes, "files": n.files,
                           "empty": n.empty, "rc": n.rc, "stop": n.stop,
                           "rounds": n.rounds, "churn_bytes": n.churn_bytes}
                          for n in self.nodes],
                "churn_rounds": self.churn_rounds, "planned_bytes": self.planned_bytes}

    @classmethod
    def from_dict(cls, data: Any) -> "Evidence":
        """EvidenceError, naming the key, for what :meth:`to_dict` did not make.  A
        limit that is not a number is refused; a level the judges find wrong is judged."""
        if not isinstance(data, dict) or data.get("version") != cls.VERSION:
            raise EvidenceError(f"fill: not a fill record of version {cls.VERSION}")
        lim = data.get("limits")
        if not isinstance(lim, dict) or set(lim) != {"fraction", "inode_fraction",
                                                     "tolerance", "max_degradation"}:
            raise EvidenceError("fill.limits: missing, or not {fraction, inode_fraction, "
                                "tolerance, max_degradation}")
        inode = lim["inode_fraction"]
        for k, ok in (("fraction", lambda v: 0 < v <= MAX_LEVEL),
                      ("inode_fraction", lambda v: 0 < v <= MAX_LEVEL),
                      ("tolerance", lambda v: 0 < v < 1),
                      ("max_degradation", lambda v: 0 <= v < 1)):
            v = lim[k]
            if (v is not None or k != "inode_fraction") and not (_finite(v) and ok(v)):
                raise EvidenceError(f"fill.limits.{k}: {v!r} is not a {k} fsaccept "
                                    "fills by")
        limits = Limits(float(lim["fraction"]), float(lim["max_degradation"]),
                        None if inode is None else float(inode), float(lim["tolerance"]))
        dfs = data.get("df")
        if not isinstance(dfs, dict) or not set(dfs) <= set(STAGES):
            raise EvidenceError(f"fill.df: missing, or stages other than {', '.join(STAGES)}")
        planned = data.get("planned_nodes")
        if not isinstance(planned, list) or not all(isinstance(n, str) and n for n in planned):
            raise EvidenceError("fill.planned_nodes: missing or not a list of node names")
        raw = data.get("nodes")
        if not isinstance(raw, list):
            raise EvidenceError("fill.nodes: missing or not a list")
        nodes = [_node_fill(x, f"fill.nodes[{i}]") for i, x in enumerate(raw)]
        for key in ("churn_rounds", "planned_bytes"):
            if not _count(data.get(key)):
                raise EvidenceError(f"fill.{key}: {data.get(key)!r} is not a count")
        return cls(limits, {k: Df.from_dict(v, f"fill.df.{k}") for k, v in dfs.items()},
                   tuple(planned), nodes, data["churn_rounds"], data["planned_bytes"])


def _node_fill(x: Any, where: str) -> NodeFill:
    keys = ("node", "bytes", "files", "empty", "rc", "stop", "rounds", "churn_bytes")
    if not isinstance(x, dict) or set(x) != set(keys):
        raise EvidenceError(f"{where}: not {{{', '.join(keys)}}}")
    if not isinstance(x["node"], str) or not _NODE_NAME.fullmatch(x["node"]):
        raise EvidenceError(f"{where}.node: {str(x['node'])[:40]!r} is not a node's name")
    for k in ("bytes", "files", "empty", "rounds", "churn_bytes"):
        if not _count(x[k]):
            raise EvidenceError(f"{where}.{k}: {x[k]!r} is not a count")
    if isinstance(x["rc"], bool) or not isinstance(x["rc"], int):
        raise EvidenceError(f"{where}.rc: {x['rc']!r} is not an exit status")
    if x["stop"] not in STOPS:
        raise EvidenceError(f"{where}.stop: {str(x['stop'])[:40]!r} is not one of "
                            f"{', '.join(STOPS)}")
    return NodeFill(**x)


# --------------------------------------------------------------------------- judges


@dataclass(frozen=True)
class Judgement:
    what: str  # "level", "filler", "figure"
    verdict: str
    reasons: tuple[str, ...] = ()
    #: The judged quantity (the level reached; the bytes written; filled over empty,
    #: a time's inverted); None: none.
    value: float | None = None
    limit: float | None = None
    #: A figure's judgement: the figure it judges.
    figure: str = ""


def judge_level(evidence: Evidence, during: Df | None = None) -> Judgement:
    """The level reached: df once filled at least the declared fraction less the
    tolerance (and at most :data:`MAX_LEVEL`), of capacity, and of inodes when declared;
    ``during``: df at a filled test's start, held to the same (the filler was there)."""
    lim = evidence.limits
    need = lim.fraction - lim.tolerance
    stages = [(BEFORE, evidence.df.get(BEFORE)), (FILLED, evidence.df.get(FILLED))]
    if during is not None:
        stages.append(("at the test's start", during))
    reasons = [f"no df {name}: the level is not proven" for name, d in stages if d is None]
    reasons += [f"df {name}: {p}" for name, d in stages if d is not None
                for p in d.problems()]
    if reasons:
        return Judgement("level", INVALID, tuple(reasons), limit=need)
    filled = evidence.df[FILLED]
    for name, d in stages[1:]:
        if d.level < need:
            reasons.append(
                f"df {name}: {_pct(d.level)} of the capacity used ({human(d.used)} of "
                f"{human(d.capacity)}), below the declared {_pct(lim.fraction)} less its "
                f"tolerance ({_pct(need)})")
        elif d.level > MAX_LEVEL:
            reasons.append(f"df {name}: {_pct(d.level)} of the capacity used, beyond the "
                           f"{MAX_LEVEL:.0%} fsaccept never fills past")
        if lim.inode_fraction is not None:
            ineed = lim.inode_fraction - lim.tolerance
            if d.itotal == 0:
                reasons.append(f"df {name}: the file system reports no inode count: the "
                               "inode level is not proven")
            elif d.inode_level < ineed:
                reasons.append(
                    f"df {name}: {_pct(d.inode_level)} of the inodes used ({d.iused:,} of "
                    f"{d.itotal:,}), below the declared {_pct(lim.inode_fraction)} less "
                    f"its tolerance ({_pct(ineed)})")
    return Judgement("level", INVALID if reasons else PASS, tuple(reasons), filled.level,
                     need)


def judge_filler(evidence: Evidence) -> Judgement:
    """Every node planned reported, once, its filler ended with exit 0 (not a failed
    write), and it did every round of ageing."""
    seen = [n.node for n in evidence.nodes]
    reasons = []
    missing = [n for n in evidence.planned_nodes if n not in seen]
    if missing:
        reasons.append(f"{_listed(missing)}: no filler line (the node's step was killed, "
                       "or its output cut short)")
    stray = [n for n in seen if n not in evidence.planned_nodes]
    if stray:
        reasons.append(f"{_listed(stray)}: not a node of the plan")
    twice = sorted({n for n in seen if seen.count(n) > 1})
    if twice:
        reasons.append(f"{_listed(twice)}: reported twice")
    failed = [n for n in evidence.nodes if n.rc != 0 or n.stop == "error"]
    reasons += [f"{n.node}: its filler ended with exit {n.rc} (stop={n.stop}) after "
                f"{human(n.bytes)}" for n in failed[:NAMED]]
    short = [n for n in evidence.nodes if n.rounds < evidence.churn_rounds]
    reasons += [f"{n.node}: {n.rounds} of {evidence.churn_rounds} ageing round(s) done"
                for n in short[:NAMED]]
    if not evidence.nodes:
        reasons.append("no node wrote filler")
    return Judgement("filler", INVALID if reasons else PASS, tuple(reasons),
                     float(evidence.written), float(evidence.planned_bytes))


@dataclass(frozen=True)
class Pair:
    """One figure measured on the empty target and again at the declared level."""

    test: str
    figure: str
    unit: str
    empty: float | None
    filled: float | None
    #: Why a figure is missing ('' when both are there).
    why: str = ""


def compares(figure: str, fixed: Iterable[str] = (), may_be_zero: Iterable[str] = ()) -> bool:
    """Whether a filled test is compared with its empty test by ``figure`` (one the empty
    test judged against a threshold): not a figure its class always judges the same way
    (``fixed``: no wrong transfer), not one whose 0 is a measurement (``may_be_zero``),
    not the slow-client count."""
    return not (figure in set(fixed) or figure in set(may_be_zero) or figure == OUTLIER_FIGURE)


def reached(pair: Pair) -> float:
    """The filled figure over the empty one (a time's inverted: smaller is better); NaN
    when either is no figure."""
    if not (_finite(pair.empty) and _finite(pair.filled) and pair.empty > 0
            and pair.filled > 0):
        return math.nan
    return pair.empty / pair.filled if pair.unit in TIME_UNITS else pair.filled / pair.empty


def threshold_of(empty: float, unit: str, max_degradation: float
                 ) -> tuple[float, float | None, float | None, str]:
    """A filled figure's threshold as ReFrame takes it (value, lower, upper, unit), from
    its empty figure: a rate's floor ``(1 - max_degradation) x empty``, a time's ceiling
    ``empty / (1 - max_degradation)`` (the live filled check's reference; the sign-off
    judges by :func:`judge_figure`, the same bound)."""
    floor = 1 - max_degradation
    if unit in TIME_UNITS:
        return (empty / floor, None, 0.0, unit)
    return (empty * floor, 0.0, None, unit)


def judge_figure(pair: Pair, max_degradation: float) -> Judgement:
    """A filled figure at least ``1 - max_degradation`` of its empty figure (a time at
    most its empty figure over that).  A figure missing, NaN, infinite, 0 or negative is
    INVALID, never judged."""
    floor = 1 - max_degradation
    name = f"{pair.test}: {pair.figure}"
    for what, v in (("empty", pair.empty), ("filled", pair.filled)):
        if v is None:
            return Judgement("figure", INVALID, (
                f"{name}: no {what} figure" + (f" ({pair.why})" if pair.why else ""),),
                limit=floor, figure=pair.figure)
        if not (_finite(v) and v > 0):
            return Judgement("figure", INVALID, (
                f"{name}: its {what} figure {v!r} {pair.unit} is none a file system has",),
                limit=floor, figure=pair.figure)
    r = reached(pair)
    if r >= floor - 1e-12:
        return Judgement("figure", PASS, (), r, floor, pair.figure)
    bound = ("at most" if pair.unit in TIME_UNITS else "at least")
    want = threshold_of(pair.empty, pair.unit, max_degradation)[0]
    return Judgement("figure", FAIL, (
        f"{name}: {pair.filled:.5g} {pair.unit} filled, {pair.empty:.5g} {pair.unit} "
        f"empty: {r:.1%} of its empty figure ({bound} {want:.5g} {pair.unit}: "
        f"max_degradation {max_degradation:g})",), r, floor, pair.figure)


def record_of(stdout: str, planned: str, job_nodes: Sequence[str], settings: Settings,
              reserve_bytes: int = 0, sizing_rate: float | None = None
              ) -> tuple[Evidence | None, Plan | None, list[str]]:
    """The fill's record from its job's output (``stdout``), planned again from its df
    before the filler and the nodes the job planned for (``planned``: "n1,n2"), which
    must be the job's (``job_nodes``; empty: not known); (record, plan, []), or (None,
    None, why) when it cannot be made.  FillTarget and the sign-off both call it."""
    try:
        out = parse_output(stdout, "the job's output")
    except OutputError as err:
        return None, None, [f"the filler's lines cannot be read: {err}"]
    nodes = [n for n in planned.split(",") if n]
    if sorted(nodes) != sorted(job_nodes or nodes):
        return None, None, [f"the job planned for {','.join(nodes) or 'no node'}, but ran "
                            f"on {','.join(job_nodes or [])}"]
    before = out.df.get(BEFORE)
    if before is None or not nodes:
        return None, None, ["the job printed no df before the filler, or no node list: "
                            "the fill was not planned"]
    try:
        p = plan(before, settings, nodes, reserve_bytes, sizing_rate)
    except PlanError as err:
        return None, None, [f"the fill's plan is refused on the job's own df: {err}"]
    return Evidence.of(p, out), p, []


def invalid_reasons(evidence: Evidence, during: Df | None = None) -> list[str]:
    """What makes a filled test INVALID from its fill record: the level reached (once
    filled, and ``during``: df at the test's own start) and the filler, each reason
    named after its judgement (the live check and the sign-off give the same)."""
    return [f"its fill record: {j.what}: {r}"
            for j in (judge_level(evidence, during), judge_filler(evidence))
            if j.verdict == INVALID for r in j.reasons]


def filled_reasons(evidence: Evidence, df_text: str) -> list[str]:
    """What makes a filled test INVALID: its fill record judged with df at its own start
    (``df_text``: the :data:`DF_INFO` line its job printed), or without it, saying why,
    when that line cannot be read.  The live check and the sign-off both call it."""
    try:
        during = Df.parse(df_text, DF_INFO)
    except OutputError as err:
        return [f"no df at its start: {err}"] + invalid_reasons(evidence)
    return invalid_reasons(evidence, during)


def judge(evidence: Evidence, pairs: Iterable[Pair] = (),
          during: Df | None = None) -> list[Judgement]:
    """Every judgement of a fill: the level, the filler, each figure."""
    return ([judge_level(evidence, during), judge_filler(evidence)]
            + [judge_figure(p, evidence.limits.max_degradation) for p in pairs])


def verdict(judgements: Iterable[Judgement]) -> str:
    """INVALID when one is (or there are none); else FAIL when one FAILs; else PASS."""
    verdicts = {j.verdict for j in judgements}
    return INVALID if INVALID in verdicts or not verdicts else \
        FAIL if FAIL in verdicts else PASS


def _listed(names: Sequence[str]) -> str:
    shown = ", ".join(names[:NAMED])
    return shown + (f" and {len(names) - NAMED:,} more" if len(names) > NAMED else "")

