"""Data-reduction probe: does the file system compress or deduplicate what it is given?

A benchmark that writes reducible data on a file system that reduces it measures the
reduction engine, not the storage.  The probe writes the same volume several times into
a directory of its own on the target, each time with one pattern, fsyncs, syncs the file
system, and takes the space each write took from the free space before and after
(``statvfs``; ``st_blocks`` does not show compression on btrfs):

- ``zeros``;
- ``ior-default``: IOR 4.0.0's default pattern (``timestamp``: 8-byte counters
  ``rank << 32 | seed + i``, the same in every transfer), generated here exactly;
- ``duplicates``: one MiB of random bytes written again and again: only deduplication
  reduces it (IOR's ``-l random`` repeats a rank's transfers after 4 GiB of offset);
- ``random``: ``os.urandom``, as irreducible as IOR's ``-l random`` (both 1.00:1 with
  zstd -19; tests/unit/test_reduction.py checks IOR's own output).

Free space on a busy shared file system moves by itself: the probe first samples it
without writing (the noise), sizes its volume to a multiple of that noise, repeats every
write, and bounds each ratio.  A ratio whose bounds straddle :data:`REDUCES_AT` is
"could not decide", never a guess.  The probe refuses a target without room before
writing anything, and removes exactly the files and directory it created, also when it
is interrupted (SIGTERM, SIGINT).

Run in a job: ``python -m fsaccept.core.reduction DIR [--volume BYTES]``; it prints one
line ``fsaccept-reduction {json}`` (:meth:`ProbeResult.to_dict`).
"""

from __future__ import annotations

import argparse
import array
import json
import os
import signal
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from fsaccept.core.units import MIB, format_size

#: What the probe writes, in this order (the reducible ones first).
PATTERNS = ("zeros", "ior-default", "duplicates", "random")
#: A pattern stored in less than 1/REDUCES_AT of its size is reduced.
REDUCES_AT = 1.2
#: Write unit (IOR's transfer, fio's block: the same in every write for ior-default).
CHUNK = MIB
#: Smallest and largest volume the probe writes per measurement.
MIN_VOLUME = 64 * MIB
MAX_VOLUME = 4096 * MIB
#: The volume is at least this many times the free-space noise.
NOISE_FACTOR = 50
#: The probe's files may take at most this fraction of the free space.
MAX_FILL_FRACTION = 0.5
RESULT_MARKER = "fsaccept-reduction"


class ProbeError(Exception):
    """The probe cannot run (no room, no directory): said before anything is written."""


def pattern_chunk(pattern: str, nbytes: int = CHUNK, seed: int = 0) -> bytes | None:
    """One write of ``pattern`` (None for ``random``: new bytes for every write)."""
    if pattern == "zeros":
        return bytes(nbytes)
    if pattern == "ior-default":
        # IOR 4.0.0 utilities.c, generate_memory_pattern, DATA_TIMESTAMP, rank 0.
        return array.array("Q", range(seed, seed + nbytes // 8)).tobytes()
    if pattern == "duplicates":
        return os.urandom(nbytes)
    if pattern == "random":
        return None
    raise ValueError(f"unknown probe pattern {pattern!r} (known: {', '.join(PATTERNS)})")


def free_bytes(path: str | os.PathLike) -> int:
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


def sync_fs(path: str | os.PathLike) -> None:
    """Write back the file system holding ``path``, and only it (``syncfs(2)``: btrfs
    compresses and accounts extents at writeback and commit).  ``sync`` would flush
    every file system of the node: on a busy login node, or beside other jobs, each took
    minutes and the probe ran out of its time limit."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        if _libc().syncfs(fd) != 0:
            os.sync()  # a kernel without syncfs: every file system, as before
    finally:
        os.close(fd)


def _libc():
    import ctypes
    return ctypes.CDLL(None, use_errno=True)


def settled_free(path: str | os.PathLike) -> int:
    """Free space once everything written to its file system is on disk."""
    sync_fs(path)
    return free_bytes(path)


@dataclass
class Measurement:
    pattern: str
    volume: int
    spaces: list[int]  #: bytes of free space each repeat took
    error: int  #: +/- bytes: the noise and the spread of the repeats

    @property
    def space(self) -> int:
        return int(statistics.median(self.spaces))

    @property
    def ratio(self) -> float:
        """volume / space taken; with a space within the error of 0, the lower bound."""
        return self.volume / self.space if self.space > self.error else self.ratio_min

    @property
    def ratio_min(self) -> float:
        return self.volume / max(self.space + self.error, 1)

    @property
    def ratio_max(self) -> float | None:
        """None: unbounded (the space taken is within the error of 0)."""
        low = self.space - self.error
        return self.volume / low if low > 0 else None

    @property
    def verdict(self) -> str:
        """``reduced``, ``not reduced`` or ``could not decide``."""
        if self.ratio_min >= REDUCES_AT:
            return "reduced"
        if self.ratio_max is not None and self.ratio_max < REDUCES_AT:
            return "not reduced"
        return "could not decide"

    def text(self) -> str:
        high = f"{self.ratio_max:.3g}" if self.ratio_max is not None else "∞"
        ratio = (f"{self.ratio:.3g}:1" if self.space > self.error
                 else f"≥ {self.ratio_min:.3g}:1")
        return (f"{self.pattern}: {format_size(self.volume)} took "
                f"{format_size(max(self.space, 0))} ± {format_size(self.error)}: {ratio} "
                f"({self.ratio_min:.3g}..{high}), {self.verdict}")


@dataclass
class ProbeResult:
    target: str
    noise: int  #: bytes the free space moved by itself while nothing was written
    volume: int
    measurements: dict[str, Measurement] = field(default_factory=dict)

    @property
    def verdict(self) -> str:
        """``reduces``, ``does not reduce`` or ``could not decide: why``."""
        rand = self.measurements.get("random")
        if rand is not None and rand.verdict != "not reduced":
            return (f"could not decide: random data measured {rand.text()} "
                    "(the free space moved by more than the data written)")
        if not self.measurements:
            return (f"could not decide: the free space moved by {format_size(self.noise)} "
                    f"while nothing was written; telling reduction apart would need "
                    f"{NOISE_FACTOR} times that, more than the probe's "
                    f"{format_size(MAX_VOLUME)}: nothing written")
        verdicts = [m.verdict for p, m in self.measurements.items() if p != "random"]
        if "reduced" in verdicts:
            return "reduces"
        if verdicts and all(v == "not reduced" for v in verdicts):
            return "does not reduce"
        return ("could not decide: free space moved by "
                f"{format_size(self.noise)} while nothing was written")

    @property
    def reduces(self) -> bool:
        return self.verdict == "reduces"

    @property
    def deduplicates(self) -> bool:
        """Whether it stored repeated random data in less space (deduplication)."""
        dup = self.measurements.get("duplicates")
        return self.reduces and dup is not None and dup.verdict == "reduced"

    def summary(self) -> str:
        """One sentence for the report."""
        m = self.measurements
        if self.verdict.startswith("could not decide"):
            return f"{self.target}: {self.verdict}"
        parts = [f"{_name(p)} {_ratio_text(m[p])}" for p in PATTERNS if p in m]
        what = "reduces" if self.reduces else "does not reduce"
        return f"the file system of {self.target} {what} data: " + ", ".join(parts)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["verdict"] = self.verdict
        d["summary"] = self.summary()
        for p, meas in self.measurements.items():
            d["measurements"][p].update(ratio=meas.ratio, ratio_min=meas.ratio_min,
                                        ratio_max=meas.ratio_max, verdict=meas.verdict)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "ProbeResult":
        keep = ("pattern", "volume", "spaces", "error")
        return cls(target=d["target"], noise=d["noise"], volume=d["volume"],
                   measurements={p: Measurement(**{k: m[k] for k in keep})
                                 for p, m in d["measurements"].items()})


def _name(pattern: str) -> str:
    return {"ior-default": "IOR's default pattern", "random": "random data",
            "duplicates": "repeated random data"}.get(pattern, pattern)


def _ratio_text(m: Measurement) -> str:
    return (f"{m.ratio:.3g}:1" if m.space > m.error else f"≥ {m.ratio_min:.3g}:1")


def measure_noise(directory: str | os.PathLike, samples: int = 5,
                  interval_s: float = 0.2) -> int:
    """Bytes the free space moves by itself (max - min over ``samples``), at least one
    block (the resolution of any measurement)."""
    values = []
    for i in range(samples):
        if i:
            time.sleep(interval_s)
        values.append(settled_free(directory))
    return max(max(values) - min(values), os.statvfs(directory).f_frsize)


class Probe:
    """One probe run in ``directory`` (the target); remembers every path it created."""

    def __init__(self, directory: str | os.PathLike, volume: int | None = None,
                 repeats: int = 3, max_fill_fraction: float = MAX_FILL_FRACTION):
        self.target = Path(directory)
        self.volume = volume
        self.repeats = repeats
        self.max_fill_fraction = max_fill_fraction
        self.created: list[Path] = []  #: files, then the directory (removed in reverse)
        self.workdir: Path | None = None

    def plan(self, noise: int) -> int:
        """The volume to write: at least NOISE_FACTOR x the noise, in whole chunks (0:
        more than MAX_VOLUME would be needed, nothing is written and the result is
        "could not decide"); refuses (ProbeError) when the target has no room for it."""
        volume = self.volume or max(MIN_VOLUME, NOISE_FACTOR * noise)
        volume = -(-volume // CHUNK) * CHUNK
        if volume > MAX_VOLUME and not self.volume:
            return 0
        free = free_bytes(self.target)
        if volume > self.max_fill_fraction * free:
            raise ProbeError(f"{self.target}: the probe writes {format_size(volume)} at a "
                             f"time and {format_size(free)} is free: no room (at most "
                             f"{self.max_fill_fraction:g} of the free space); nothing written")
        return volume

    def run(self) -> ProbeResult:
        if not self.target.is_dir():
            raise ProbeError(f"{self.target}: not a directory")
        noise = measure_noise(self.target)
        volume = self.plan(noise)
        if not volume:
            return ProbeResult(str(self.target), noise, 0)  # too noisy: could not decide
        self.workdir = self.target / f"fsaccept-reduction.{os.getpid()}.{time.time_ns()}"
        self.workdir.mkdir()  # a new directory, or FileExistsError: never someone else's
        self.created.append(self.workdir)
        result = ProbeResult(str(self.target), noise, volume)
        try:
            for pattern in PATTERNS:
                spaces = [self.measure(pattern, volume, i) for i in range(self.repeats)]
                spread = (max(spaces) - min(spaces)) // 2
                result.measurements[pattern] = Measurement(pattern, volume, spaces,
                                                           noise + spread)
        finally:
            self.cleanup()
        return result

    def measure(self, pattern: str, volume: int, index: int) -> int:
        """Bytes of free space one write of ``volume`` bytes of ``pattern`` took."""
        path = self.workdir / f"{pattern}.{index}"
        chunk = pattern_chunk(pattern, seed=index)
        before = settled_free(self.target)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        self.created.append(path)
        try:
            for _ in range(volume // CHUNK):
                os.write(fd, chunk if chunk is not None else os.urandom(CHUNK))
            os.fsync(fd)
        finally:
            os.close(fd)
        after = settled_free(self.target)
        self.remove(path)
        return before - after

    def remove(self, path: Path) -> None:
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        self.created.remove(path)
        sync_fs(self.target)  # the next "before" sees the space given back

    def cleanup(self) -> None:
        """Remove what this probe created, and nothing else (the directory only if it
        is empty: never a file someone else put there)."""
        for path in reversed(list(self.created)):
            if path == self.workdir:
                try:
                    path.rmdir()
                except OSError:
                    pass
                self.created.remove(path)
            else:
                self.remove(path)


def reducible_data_reasons(pattern_label: str, reducible: bool,
                           result: ProbeResult | None, repeats: str = "") -> list[str]:
    """The rule: a figure measured with reducible data on a file system that the probe
    found reducing data is INVALID, with the ratio.  ``repeats``: why otherwise
    irreducible data repeated (INVALID where the probe found deduplication)."""
    if result is not None and repeats and result.deduplicates:
        dup = result.measurements["duplicates"]
        return [f"written with {pattern_label}, which {repeats}, on a file system that "
                f"deduplicates (data-reduction probe on {result.target}: repeated random "
                f"data {_ratio_text(dup)}): the figure counts deduplicated transfers; write "
                "less per rank (block_size x segments, or a shorter deadline)"]
    if not reducible or result is None or not result.reduces:
        return []
    m = result.measurements
    ratios = ", ".join(f"{_name(p)} {_ratio_text(m[p])}" for p in PATTERNS
                       if p in m and p != "random")
    return [f"written with {pattern_label}, reducible data, on a file system that reduces "
            f"it (data-reduction probe on {result.target}: {ratios}): the figure measures "
            "the reduction engine; remove data_pattern from the reference entry (irreducible "
            "data) or publish the figure as the procedure's own"]


def pattern_label(tool: str, pattern: str, reducible: bool, asked: bool) -> str:
    """How a figure's provenance and report name its data: ``random (irreducible)``,
    ``timestamp (reducible, IOR's default; asked by the reference)``."""
    what = "reducible" if reducible else "irreducible"
    return f"{tool} {pattern} ({what}{'; asked by the reference' if asked else ''})"


#: Results of the probes this process (one ReFrame session) ran, by mount point: the
#: tests that run after the probe in the same session apply the rule with it.
SESSION_RESULTS: dict[str, ProbeResult] = {}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m fsaccept.core.reduction",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("directory")
    ap.add_argument("--volume", type=int, help="bytes per write (default: from the noise)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--max-fill-fraction", type=float, default=MAX_FILL_FRACTION)
    args = ap.parse_args(argv)

    def stop(signum, _frame):
        raise SystemExit(128 + signum)  # unwinds through Probe.run's cleanup

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    probe = Probe(args.directory, args.volume, args.repeats, args.max_fill_fraction)
    try:
        result = probe.run()
    except (ProbeError, OSError) as err:
        print(f"{RESULT_MARKER}-error {err}", flush=True)
        return 2
    print(RESULT_MARKER, json.dumps(result.to_dict()), flush=True)
    print(result.summary(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
