"""IOR command lines for each acceptance phase, from a reference entry.

One table says how each phase runs, so that the checks never assemble
options themselves and a reviewer can read every phase's flags in one place.
"""

from __future__ import annotations

import re

from dataclasses import dataclass, replace
from typing import Any

from fsaccept.benchmarks.catalogue import MISSING
from fsaccept.core.reference import REPEAT_KEYS, Reference, Threshold
from fsaccept.benchmarks.ior.patterns import (DATA_PATTERNS, IOR_DEFAULT_PATTERN,  # noqa: F401
                                               data_pattern_of, last_option)
from fsaccept.core.units import format_size, parse_size

#: Buffered reads of less data per node than this × node memory may be served from cache.
DEFAULT_MIN_CACHE_RATIO = 1.5
#: Largest planned data of one IOR rank, block_size x segments: 1 PiB.
MAX_BYTES_PER_RANK = 2**50


@dataclass(frozen=True)
class TestParameters:
    """One test's entry under ``tests:`` (sizes in bytes, times in seconds)."""

    name: str
    node_fraction: float
    ranks_per_node: int
    transfer_size: int
    block_size: int = 0  #: a checkpoint's follows from its size and the ranks (set-up)
    deadline_s: int = 0  #: 0: no deadline (the integrity check moves all its data)
    threshold: Threshold | None = None  #: None: nothing to judge against (integrity)
    segments: int = 1
    direct_io: bool = False
    min_cache_ratio: float = DEFAULT_MIN_CACHE_RATIO
    generation_deadline_s: int | None = None
    generation_transfer_size: int | None = None
    #: Nodes below this fraction of the median node fail the test (0: off).
    outlier_fraction: float = 0.0
    api: str = "POSIX"  #: IOR -a: POSIX or MPIIO
    collective: bool = False  #: -c: MPI-IO collective I/O (else independent)
    #: MPI-IO hints (``romio_cb_write: disable``), given to IOR as IOR_HINT__MPI__ variables.
    hints: dict[str, str] | None = None
    #: Lustre striping of the test directory: {"count": N (-1: all OSTs), "size": bytes}.
    stripe: dict[str, int] | None = None
    #: IOR's data pattern (-l), a key of :data:`DATA_PATTERNS`.
    data_pattern: str = "random"
    #: Reads: each rank reads what a rank on the next node wrote (-C); False: the read
    #: runs where the data was written (through the client that wrote it).
    read_other_node: bool = True
    #: A checkpoint's whole volume, split among the ranks (0: not a checkpoint test).
    checkpoint_size: int = 0


def parameters(ref: Reference, name: str, needed_by: str = "") -> TestParameters:
    """The typed IOR entry ``tests.<name>`` of a validated reference file."""
    return entry_parameters(name, ref.entry(name, needed_by))


def entry_parameters(name: str, entry: dict[str, Any]) -> TestParameters:
    """A validated IOR entry (``tests.<name>``), typed."""
    sizes = {k: parse_size(v) for k, v in entry.items() if k.endswith("_size")}
    plain = {k: v for k, v in entry.items()
             if not k.endswith("_size") and k not in ("threshold", "thresholds", *REPEAT_KEYS)}
    threshold = Threshold(**entry["threshold"]) if "threshold" in entry else None
    if "stripe" in plain:
        plain["stripe"] = {"count": plain["stripe"].get("count", -1),
                           "size": parse_size(plain["stripe"].get("size", "1MiB"))}
    if "hints" in plain:
        plain["hints"] = {k: str(v).lower() if isinstance(v, bool) else str(v)
                          for k, v in plain["hints"].items()}
    return TestParameters(name=name, threshold=threshold, **sizes, **plain)


def ior_tests(ref: Reference) -> dict[str, TestParameters]:
    """Every IOR entry of a reference file, typed."""
    return {name: parameters(ref, name) for name in ref.entries if name.startswith("ior_")}


def target_errors(where: str, entry: dict[str, Any], fstype: str) -> list[str]:
    """Rules between an IOR entry and the target's file-system type."""
    if entry.get("stripe") and fstype != "lustre":
        return [f"{where}.stripe: striping is a Lustre setting (lfs setstripe) and the "
                f"target is {fstype}: remove it"]
    return []


def entry_errors(where: str, entry: dict[str, Any]) -> list[str]:
    """Rules of an IOR entry the schema cannot express (IOR would refuse these at run
    time), as ``tests.<name>.<key>: message``."""
    if "checkpoint_size" in entry:
        return _checkpoint_errors(where, entry)
    try:
        block, transfer = parse_size(entry["block_size"]), parse_size(entry["transfer_size"])
        gen = parse_size(entry["generation_transfer_size"]) \
            if "generation_transfer_size" in entry else None
    except (KeyError, ValueError):
        return []  # the schema has said what is wrong
    segments = entry.get("segments", 1)
    if entry.get("direct_io") and entry.get("api") == "MPIIO":
        return [f"{where}.direct_io: O_DIRECT is IOR's POSIX option (--posix.odirect); with "
                "MPIIO give the MPI library's hints (e.g. direct_write: true)"]
    if entry.get("collective") and entry.get("api", "POSIX") != "MPIIO":
        return [f"{where}.collective: collective I/O needs api: MPIIO"]
    if entry.get("hints") and entry.get("api", "POSIX") != "MPIIO":
        return [f"{where}.hints: MPI-IO hints need api: MPIIO"]
    for key, value in (entry.get("hints") or {}).items():
        # The schema's pattern lets a trailing newline through ($ matches before it);
        # a hint is one environment variable name and one line of value.
        if not re.fullmatch(r"[A-Za-z0-9_]+", key):
            return [f"{where}.hints: {key!r} is not a hint name (letters, digits, _)"]
        if any(ord(c) < 32 or ord(c) == 127 for c in str(value)):
            return [f"{where}.hints.{key}: control characters in {value!r}"]
    if entry.get("outlier_fraction") and where not in ("tests.ior_write_bandwidth",
                                                       "tests.ior_shared_write"):
        return [f"{where}.outlier_fraction: IOR prints per-rank counts only in wear-out "
                "phases: per-node figures exist for ior_write_bandwidth and ior_shared_write "
                "alone"]
    if block % transfer:
        return [f"{where}.block_size: {format_size(block)} is not a multiple "
                f"of transfer_size {format_size(transfer)}"]
    if where.startswith("tests.ior_random") and block <= transfer:
        return [f"{where}.block_size: random offsets need block_size > "
                "transfer_size (IOR refuses -z with -b = -t)"]
    if block * segments > MAX_BYTES_PER_RANK:
        return [f"{where}.segments: block_size x segments = "
                f"{format_size(block * segments)} per rank is more than "
                f"{format_size(MAX_BYTES_PER_RANK)}, the most allowed"]
    if gen is not None and block % gen:
        return [f"{where}.block_size: {format_size(block)} is not a multiple "
                f"of generation_transfer_size {format_size(gen)}"]
    return []

def _checkpoint_errors(where: str, entry: dict[str, Any]) -> list[str]:
    try:
        size, transfer = parse_size(entry["checkpoint_size"]), parse_size(entry["transfer_size"])
    except (KeyError, ValueError):
        return []  # the schema has said what is wrong
    if transfer > size:
        return [f"{where}.transfer_size: {format_size(transfer)} is more than the whole "
                f"checkpoint_size {format_size(size)}"]
    if entry.get("collective") and entry.get("api", "POSIX") != "MPIIO":
        return [f"{where}.collective: collective I/O needs api: MPIIO"]
    if entry.get("hints") and entry.get("api", "POSIX") != "MPIIO":
        return [f"{where}.hints: MPI-IO hints need api: MPIIO"]
    return []


def checkpoint_block(params: TestParameters, ranks: int) -> int:
    """Each rank's shard of a checkpoint: its size over the ranks, rounded up to whole
    transfers (IOR moves whole transfers), so the volume written is at least the size."""
    shard = -(-params.checkpoint_size // max(ranks, 1))
    return -(-shard // params.transfer_size) * params.transfer_size


def checkpoint_volume(params: TestParameters, ranks: int) -> int:
    """What a checkpoint's ranks move together: each its shard (:func:`checkpoint_block`)."""
    return ranks * checkpoint_block(params, ranks)


def pattern_reducible(pattern: str) -> bool:
    """Whether IOR's ``pattern`` is data a file system can compress or deduplicate: one
    IOR does not write (``unknown (x: IOR refuses it)``) is never taken as irreducible."""
    return DATA_PATTERNS.get(pattern, True)


#: IOR's random pattern seeds each transfer with (unsigned) seed + rank + offset: 32 bits.
RANDOM_SEED_PERIOD = 2**32


def random_pattern_repeats(pattern: str, bytes_per_rank: int, ranks: int,
                           transfer_size: int) -> str:
    """Why IOR's ``random`` pattern wrote some transfer twice ("" when it did not): a rank
    past 4 GiB of offset repeats its first transfers; more ranks than bytes in a transfer
    make rank r + transfer write rank r's transfer at the next offset."""
    if pattern != "random":
        return ""
    if bytes_per_rank > RANDOM_SEED_PERIOD:
        return (f"repeats a rank's transfers every 4 GiB (its seed is 32 bits) and a rank "
                f"wrote {format_size(bytes_per_rank)}")
    if ranks > transfer_size:
        return (f"repeats transfers across ranks when there are more ranks ({ranks}) than "
                f"bytes in a transfer ({transfer_size})")
    return ""


#: Options every phase shares (after -a API and, file per process, -F): fsync after
#: write (-e), barriers between open/IO/close (-g) so phase times are comparable (not in
#: a burst: :attr:`Phase.barriers`), keep files (-k: removal is the harness's job, after
#: the last test that reads them), and -v for the per-rank stonewall counts and "Max" lines.
COMMON = ["-e", "-g", "-k", "-v"]


@dataclass(frozen=True)
class Phase:
    """How one IOR phase runs."""

    access: str  #: "-w" or "-r"
    random: bool = False  #: -z: random offsets within each block
    reorder: bool = True  #: -C: read back data another node wrote
    wearout: bool = False  #: every rank moves as much as the fastest one
    uses_deadline: bool = True
    generation: bool = False  #: writes a dataset that a later phase reads
    pattern: bool = False  #: -G SEED: a data pattern a later read can verify
    verify: bool = False  #: -R: the read checks every transfer against the pattern
    shared: bool = False  #: one file for all ranks (N-to-1), else a file per process (-F)
    status: bool = False  #: -O stoneWallingStatusFile: the read reads what was written
    #: -g: barriers between open, transfer and close; a burst has none, so that each
    #: rank's open-to-close time is its own and stragglers show.
    barriers: bool = True
    #: -O saveRankPerformanceDetailsCSV: each rank's open-to-close time (a burst's figures).
    rank_times: bool = False


PHASES: dict[str, Phase] = {
    # Stonewalled write with wear-out: the published bandwidth procedure.
    "write_bandwidth": Phase("-w", wearout=True),
    # Dataset for the sustained read: stonewalled write, pair count kept in a status file.
    "read_generation": Phase("-w", wearout=True, generation=True, status=True),
    # Read exactly what was written (status file), stopping at the deadline.
    "read_bandwidth": Phase("-r", status=True),
    "random_write_iops": Phase("-w", random=True),
    # Dataset for random reads: full blocks, written with large transfers, no deadline
    # (a stonewalled dataset would leave holes that random offsets hit).
    "random_read_generation": Phase("-w", uses_deadline=False, generation=True),
    "random_read_iops": Phase("-r", random=True),
    # Data integrity: full blocks written with a pattern (seeded per session), read
    # back on another node (-C) checking every transfer (-R); no deadline, all data.
    "integrity_write": Phase("-w", uses_deadline=False, generation=True, pattern=True),
    "integrity_read": Phase("-r", uses_deadline=False, pattern=True, verify=True),
    # Shared file (N-to-1), as the file-per-process pair: stonewalled write with wear-out;
    # the read sustained over a dataset written beforehand.
    "shared_write": Phase("-w", wearout=True, shared=True),
    "shared_read_generation": Phase("-w", wearout=True, generation=True, shared=True,
                                    status=True),
    "shared_read": Phase("-r", shared=True, status=True),
    # A checkpoint: a fixed volume, not stonewalled, fsync at close (-e), the data
    # pattern seeded per session; its restore reads each shard on another node (-C)
    # verifying every transfer (-R).  No barriers: each rank's time is its own.
    "checkpoint_write": Phase("-w", uses_deadline=False, generation=True, pattern=True,
                              barriers=False, rank_times=True),
    "checkpoint_restore": Phase("-r", uses_deadline=False, pattern=True, verify=True,
                                barriers=False, rank_times=True),
    # The same into and from one shared file (N-to-1: frameworks that write one file).
    "checkpoint_shared_write": Phase("-w", uses_deadline=False, generation=True,
                                     pattern=True, shared=True, barriers=False,
                                     rank_times=True),
    "checkpoint_shared_restore": Phase("-r", uses_deadline=False, pattern=True, verify=True,
                                       shared=True, barriers=False, rank_times=True),
}


def dataset_keys(phase_name: str) -> tuple[str, ...]:
    """The entry's keys that size what a deadline-bound phase may consume: a sustained
    read's dataset, written until its generation's deadline or its segments; a random
    read's, written whole (block x segments); a write's room (segments).  () for a
    phase without a deadline."""
    phase = PHASES[phase_name]
    if not phase.uses_deadline or phase.generation:
        return ()
    if phase.access == "-r":
        return ("generation_deadline_s", "segments") if phase.status \
            else ("block_size", "segments")
    return ("segments",)


def ior_options(phase_name: str, params: TestParameters, test_file: str,
                status_file: str | None = None, seed: int = 1,
                rank_times_file: str | None = None) -> list[str]:
    """IOR's arguments for ``phase_name`` with the sizes and deadlines of ``params``;
    ``seed`` is the data pattern's (``-G``) for the phases that write or verify one;
    ``rank_times_file`` where IOR appends each rank's times (a burst's phases)."""
    phase = PHASES[phase_name]
    transfer = params.transfer_size
    if phase_name == "random_read_generation":
        transfer = params.generation_transfer_size or params.transfer_size
    deadline = params.deadline_s
    if phase.generation and phase.uses_deadline:
        if params.generation_deadline_s is None:
            raise ValueError(f"{params.name}: generation_deadline_s is required")
        deadline = params.generation_deadline_s
    opts = [phase.access, "-a", params.api, *([] if phase.shared else ["-F"]),
            *(o for o in COMMON if phase.barriers or o != "-g")]
    if params.api == "MPIIO":
        opts += (["-c"] if params.collective else []) + ["--mpiio.showHints"]
    if phase.random:
        opts.append("-z")
    if phase.verify:
        opts.append("-R")
    if phase.pattern:
        opts += ["-G", str(seed)]
    # Every phase: the writes fill transfers with it, -R verifies against it.
    opts += ["-l", params.data_pattern]
    if phase.reorder and (params.read_other_node or phase.access == "-w"):
        opts.append("-C")
    opts += ["-t", ior_size(transfer), "-b", ior_size(params.block_size),
             "-s", str(params.segments)]
    if phase.uses_deadline:
        opts += ["-D", _seconds(deadline)]
    if phase.wearout:
        opts += ["-O", "stoneWallingWearOut=1"]
    if status_file and phase.status:
        opts += ["-O", f"stoneWallingStatusFile={status_file}"]
    if rank_times_file and phase.rank_times:
        opts += ["-O", f"saveRankPerformanceDetailsCSV={rank_times_file}"]
    if params.direct_io:
        opts.append("--posix.odirect")
    opts += ["-o", test_file]
    return opts


def run_parameters(params: TestParameters, ranks: int) -> TestParameters:
    """The entry's parameters as its phase runs them among ``ranks``: a checkpoint's block
    is its size split among the ranks (:func:`checkpoint_block`)."""
    if not params.checkpoint_size:
        return params
    return replace(params, block_size=checkpoint_block(params, ranks))


def contract_options(phase_name: str, params: TestParameters, ranks: int,
                     recorded: list[str]) -> list[str]:
    """IOR's arguments the live check builds for ``phase_name`` (:func:`ior_options`) with
    the entry's ``params`` among ``ranks``, its paths and its data pattern's seed (what a
    run alone decides) those of the ``recorded`` arguments; ValueError when the entry
    cannot give them."""
    named = {}
    for i, arg in enumerate(recorded[:-1]):
        if arg == "-O" and "=" in recorded[i + 1]:
            key, value = recorded[i + 1].split("=", 1)
            named[key] = value
    opts = ior_options(phase_name, run_parameters(params, ranks),
                       last_option(recorded, "-o") or MISSING,
                       status_file=named.get("stoneWallingStatusFile", MISSING),
                       seed=last_option(recorded, "-G") or MISSING,  # type: ignore[arg-type]
                       rank_times_file=named.get("saveRankPerformanceDetailsCSV", MISSING))
    if "-l" not in recorded:
        # The data pattern a run wrote is judged by its own rule (reducible data against
        # the session's probe, from the recorded data_pattern); runs recorded before the
        # harness gave -l wrote IOR's default and are judged by it, not here.
        at = opts.index("-l")
        del opts[at:at + 2]
    return opts


def hint_variables(params: TestParameters) -> dict[str, str]:
    """The environment that gives IOR its MPI-IO hints (IOR reads ``IOR_HINT__MPI__<key>``
    and passes them to MPI_File_open)."""
    return {f"IOR_HINT__MPI__{key}": value for key, value in (params.hints or {}).items()}


def stripe_commands(params: TestParameters, directory: str) -> list[str]:
    """Lustre: set the test directory's striping before the benchmark writes (its files
    inherit it).  Shell words; ``directory`` may be a shell expansion in double quotes."""
    if not params.stripe:
        return []
    return [f'lfs setstripe -c {params.stripe["count"]} -S {params.stripe["size"]} '
            f'"{directory}"']


def ior_size(nbytes: int) -> str:
    """IOR's size syntax (k/m/g/t are powers of 2): 1048576 → '1m'."""
    text = format_size(nbytes)
    for unit, suffix in (("TiB", "t"), ("GiB", "g"), ("MiB", "m"), ("KiB", "k")):
        if text.endswith(unit):
            return text[: -len(unit)] + suffix
    return text


def _seconds(value: float) -> str:
    # IOR's -D takes whole seconds.
    if value != int(value):
        raise ValueError(f"IOR deadlines are whole seconds, got {value}")
    return str(int(value))


def planned_bytes(params: TestParameters, ranks: int) -> int:
    """Upper bound of the data one phase moves: ranks × block × segments."""
    return ranks * params.block_size * params.segments
