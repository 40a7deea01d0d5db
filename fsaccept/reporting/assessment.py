"""Performance assessment: each figure as a percentage of what the hardware can do.

``reference/<system>.yaml`` may state ceilings (optional top-level ``ceilings:``)::

    ceilings:
      client_nic:                 # a name of your choice, shown in the report
        component: client         # client | network | servers | devices
        per: node                 # node: × the nodes the test ran on; system: as is
        bandwidth: {value: 100, unit: Gbit/s}
      servers:
        component: servers
        per: system
        count: 8                  # 8 servers × the values below
        bandwidth: {value: 20, unit: GB/s}
        iops: {value: 400000, unit: IOPS}
      mds:
        component: servers
        per: system
        ops: {value: 150000, unit: ops/s}
        figures: '^mdtest_'       # optional: only figures whose name matches

``bandwidth`` applies to MiB/s figures (units MiB/s, MB/s, GiB/s, GB/s, Gbit/s
are converted exactly), ``iops`` to IOPS figures, ``ops`` to ops/s figures.
A figure's ceiling is the lowest of those that apply (nodes × per-node
ceiling, or the system aggregate); the component with that ceiling is the
likely limit.  A figure above its ceiling is an anomaly: faster than the
hardware can be, so probably served from a cache.

``python -m fsaccept.reporting.assessment measure --target DIR`` measures a disk's
ceilings with fio (O_DIRECT) and prints a ``ceilings:`` block, which is how
the emulated cluster's reference states its own.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import yaml

from fsaccept.core import yamlfile
from fsaccept.core.formatting import format_number
from fsaccept.core.units import MIB

COMPONENTS = ("client", "network", "servers", "devices")
#: The run directory's file of the ceilings the run measured (``scripts/acceptance`` on
#: the emulated cluster; the manifest digests it): a re-made report assesses against it.
RUN_FILE = "ceilings.yaml"
#: Key of a ceiling entry → the figure unit it applies to.
KIND_UNITS = {"bandwidth": "MiB/s", "iops": "IOPS", "ops": "ops/s"}
#: Bandwidth units a ceiling may be given in → MiB/s per unit, exactly.
BANDWIDTH_UNITS = {
    "MiB/s": Decimal(1),
    "GiB/s": Decimal(1024),
    "MB/s": Decimal(10**6) / Decimal(MIB),
    "GB/s": Decimal(10**9) / Decimal(MIB),
    "Gbit/s": Decimal(10**9) / Decimal(8 * MIB),
}


#: Largest ceiling value (in its unit) and count: beyond any hardware, a typo (and a
#: value such as 1e308 overflowed the report's plot axes).
MAX_CEILING_VALUE = 1e12
MAX_CEILING_COUNT = 10**6


class CeilingError(ValueError):
    """A bad ``ceilings:`` section; the message names the file and the key."""


@dataclass(frozen=True)
class Ceiling:
    name: str
    component: str
    per: str
    count: int
    values: dict[str, float]  # figure unit ('MiB/s', 'IOPS', 'ops/s') → value per unit
    given: dict[str, str]  # figure unit → as written ('100 Gbit/s')
    figures: str | None = None

    def applies(self, figure: str, unit: str) -> bool:
        if unit not in self.values:
            return False
        return self.figures is None or re.search(self.figures, figure) is not None

    def total(self, unit: str, nodes: int | None) -> float | None:
        """The ceiling for a test on ``nodes`` nodes, in ``unit``."""
        value = self.values[unit] * self.count
        if self.per == "node":
            if not nodes:
                return None
            value *= nodes
        return value

    def explain(self, unit: str, nodes: int | None) -> str:
        """'4 nodes × 100 Gbit/s' or '8 × 20 GB/s'."""
        given = self.given[unit]
        if self.count > 1:
            given = f"{self.count} × {given}"
        if self.per == "node":
            given = f"{nodes} node{'s' if nodes != 1 else ''} × {given}"
        return given


def to_figure_unit(value: float, unit: str, kind: str, where: str) -> float:
    """A ceiling value in the unit of the figures it applies to."""
    if kind == "bandwidth":
        if unit not in BANDWIDTH_UNITS:
            raise CeilingError(f"{where}.unit: {unit!r} is not a bandwidth unit; "
                               f"use one of {', '.join(BANDWIDTH_UNITS)}")
        return float(Decimal(repr(value)) * BANDWIDTH_UNITS[unit])
    if unit != KIND_UNITS[kind]:
        raise CeilingError(f"{where}.unit: {unit!r}; {kind} ceilings are in {KIND_UNITS[kind]}")
    return float(value)


def parse_ceilings(raw: Any, source: str = "reference") -> list[Ceiling]:
    """The ``ceilings:`` section of a reference file (None: no ceilings)."""
    if raw is None:
        return []
    if not isinstance(raw, dict):
        raise CeilingError(f"{source}: ceilings: expected a map of name → ceiling")
    out = []
    for name, entry in raw.items():
        where = f"{source}: ceilings.{name}"
        if not isinstance(entry, dict):
            raise CeilingError(f"{where}: expected a map")
        unknown = set(entry) - {"component", "per", "count", "figures", "description",
                                *KIND_UNITS}
        if unknown:
            raise CeilingError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}; allowed: "
                               f"component, per, count, figures, description, "
                               f"{', '.join(KIND_UNITS)}")
        component = entry.get("component")
        if component not in COMPONENTS:
            raise CeilingError(f"{where}.component: {component!r}; use one of "
                               f"{', '.join(COMPONENTS)}")
        per = entry.get("per", "system")
        if per not in ("node", "system"):
            raise CeilingError(f"{where}.per: {per!r}; use node or system")
        count = entry.get("count", 1)
        if (not isinstance(count, int) or isinstance(count, bool) or count < 1
                or count > MAX_CEILING_COUNT):
            raise CeilingError(f"{where}.count: {count!r}; a whole number from 1 to "
                               f"{MAX_CEILING_COUNT:,}")
        figures = entry.get("figures")
        if figures is not None:
            try:
                re.compile(figures)
            except (re.error, TypeError) as err:
                raise CeilingError(f"{where}.figures: not a regular expression: {err}") from None
        values, given = {}, {}
        for kind, fig_unit in KIND_UNITS.items():
            if kind not in entry:
                continue
            spec = entry[kind]
            if not (isinstance(spec, dict) and set(spec) == {"value", "unit"}
                    and isinstance(spec["value"], (int, float))
                    and not isinstance(spec["value"], bool) and spec["value"] > 0):
                raise CeilingError(f"{where}.{kind}: expected {{value: <number > 0>, unit: ...}}")
            if not spec["value"] <= MAX_CEILING_VALUE:  # NaN too
                raise CeilingError(f"{where}.{kind}.value: {spec['value']!r} is beyond any "
                                   f"hardware (at most {MAX_CEILING_VALUE:g} per unit): a typo?")
            values[fig_unit] = to_figure_unit(spec["value"], spec["unit"], kind,
                                              f"{where}.{kind}")
            given[fig_unit] = f"{format_number(spec['value'])} {spec['unit']}"
        if not values:
            raise CeilingError(f"{where}: states no ceiling; give at least one of "
                               f"{', '.join(KIND_UNITS)}")
        out.append(Ceiling(name=str(name), component=component, per=per, count=count,
                           values=values, given=given, figures=figures))
    return out


def ceilings_from_reference_file(path: Path | str, raw: bytes | None = None) -> list[Ceiling]:
    """The ceilings of a reference file (read strictly, as reference files are, but not
    validated: the main schema knows the key; a --ceilings file holds only this key).
    ``raw``: its bytes as the caller read them (the sign-off reads each file once)."""
    path = Path(path)
    try:
        # Not UTF-8, NUL bytes, recursive aliases: refused.
        data = yamlfile.load(path) if raw is None else yamlfile.parse(raw, path)
    except OSError as err:
        raise CeilingError(f"{path}: cannot read: {err.strerror}") from None
    except yamlfile.StrictYAMLError as err:
        raise CeilingError(str(err)) from None
    if data is not None and not isinstance(data, dict):
        raise CeilingError(f"{path}: (top level): a {type(data).__name__}, expected a map "
                           "with a ceilings: key")
    return parse_ceilings((data or {}).get("ceilings"), str(path))


@dataclass(frozen=True)
class Assessment:
    figure: str
    value: float
    unit: str
    ceiling: float
    ceiling_name: str
    component: str
    explanation: str
    percent: float
    anomaly: bool
    #: Whose ceilings, when not those the report assesses against (the run's own,
    #: kept beside another ``--ceilings`` file's): named in the note.
    source: str = ""

    @property
    def derived(self) -> bool:
        """Whether the ceiling is a product (nodes × ..., servers × ...)."""
        return "×" in self.explanation

    @property
    def limiting(self) -> str:
        """The likely limiting component."""
        return "cache" if self.anomaly else self.component

    @property
    def note(self) -> str:
        against = f"against {self.source}: " if self.source else ""
        if self.anomaly:
            return (f"{against}ANOMALY: {self.percent:.1f} % of the {self.component} ceiling "
                    f"({self.explanation}): faster than the hardware can be, so probably "
                    "served from a cache")
        return (f"{against}{self.percent:.1f} % of the {self.component} ceiling "
                f"({self.explanation})")


def assess(figure: str, value: float | None, unit: str, nodes: int | None,
           ceilings: list[Ceiling]) -> Assessment | None:
    """The figure against the lowest ceiling that applies; None without one."""
    if value is None:
        return None
    best: tuple[float, Ceiling] | None = None
    for c in ceilings:
        if not c.applies(figure, unit):
            continue
        total = c.total(unit, nodes)
        if total is not None and (best is None or total < best[0]):
            best = (total, c)
    if best is None:
        return None
    total, c = best
    return Assessment(figure=figure, value=value, unit=unit, ceiling=total, ceiling_name=c.name,
                      component=c.component, explanation=c.explain(unit, nodes),
                      percent=100.0 * value / total, anomaly=value > total)


# --------------------------------------------------------------------------- measuring

#: fio jobs that measure a disk's ceilings: (name, rw, block size, figure kind).
FIO_JOBS = (("write", "write", "1m", "bandwidth"), ("read", "read", "1m", "bandwidth"),
            ("randwrite", "randwrite", "4k", "iops"), ("randread", "randread", "4k", "iops"))


def fio_ceiling(fio_json: dict[str, Any], rw: str, kind: str) -> float:
    """MiB/s (bandwidth) or IOPS of the one job in fio's JSON output."""
    job = fio_json["jobs"][0]
    side = job["write" if "write" in rw else "read"]
    return side["bw_bytes"] / MIB if kind == "bandwidth" else side["iops"]


def ceilings_block(measured: dict[str, float], per: str = "system") -> dict[str, Any]:
    """A ``ceilings:`` map from measured {'write': MiB/s, 'read': MiB/s,
    'randwrite': IOPS, 'randread': IOPS} (one shared disk: per system)."""
    out: dict[str, Any] = {}
    for op in ("write", "read"):
        # Aggregate figures only: a per-node minimum is no figure of the whole disk.
        entry: dict[str, Any] = {"component": "devices", "per": per,
                                 "figures": f"{op}(?!.*node_min)"}
        if op in measured:
            entry["bandwidth"] = {"value": round(measured[op], 2), "unit": "MiB/s"}
        if "rand" + op in measured:
            entry["iops"] = {"value": round(measured["rand" + op], 2), "unit": "IOPS"}
        if len(entry) > 3:
            out[f"disk_{op}"] = entry
    return out


def measure(target: Path, size: str = "512m", runtime_s: int = 5,
            numjobs: int = 4) -> dict[str, float]:
    """Run fio (O_DIRECT, ``numjobs`` jobs reported as one group, queue depth 16)
    in ``target``; returns the measured ceilings."""
    fio = shutil.which("fio")
    if fio is None:
        raise RuntimeError("fio is not installed (scripts/setup installs it)")
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory(dir=target, prefix="fsaccept-ceiling-") as d:
        for name, rw, bs, kind in FIO_JOBS:
            cmd = [fio, f"--name={name}", f"--directory={d}",
                   f"--rw={rw}", f"--bs={bs}", f"--size={size}", "--direct=1",
                   "--ioengine=libaio", "--iodepth=16", f"--numjobs={numjobs}",
                   "--group_reporting", "--time_based",
                   f"--runtime={runtime_s}", "--output-format=json"]
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=runtime_s + 120)
            if proc.returncode != 0:
                raise RuntimeError(f"{' '.join(cmd)} failed: {proc.stderr.strip()}")
            out[name] = fio_ceiling(json.loads(proc.stdout), rw, kind)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="fsaccept ceilings",
                                 description="measure a disk's ceilings with fio")
    sub = ap.add_subparsers(dest="command", required=True)
    m = sub.add_parser("measure", help="print a ceilings: block for a reference file")
    m.add_argument("--target", type=Path, default=Path("/var/tmp"))
    m.add_argument("--size", default="512m", help="fio file size per job (default 512m)")
    m.add_argument("--runtime", type=int, default=5, help="seconds per fio job")
    m.add_argument("--numjobs", type=int, default=4, help="parallel fio jobs (default 4)")
    args = ap.parse_args(argv)
    try:
        measured = measure(args.target, args.size, args.runtime, args.numjobs)
    except (RuntimeError, OSError) as err:
        print(f"fsaccept.reporting.assessment: {err}", file=sys.stderr)
        return 2
    print(f"# measured with fio --direct=1 --iodepth=16 --numjobs={args.numjobs} in "
          f"{args.target} ({args.size} per job, {args.runtime} s each)")
    print(yaml.safe_dump({"ceilings": ceilings_block(measured)}, sort_keys=False), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
