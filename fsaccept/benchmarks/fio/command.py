"""fio command lines and figures of each client acceptance test, from a reference entry.

One table (:data:`KINDS`) says how each test runs, so that the checks never
assemble options themselves and a reviewer can read every test's settings in
one place.  Every setting that changes a figure's meaning is passed to fio
explicitly (never left to fio's defaults), so fio's report records it; sizes
are passed in bytes (fio's ``k``/``m`` suffixes depend on ``kb_base``).
"""

from __future__ import annotations

import math
import posixpath
import re
import shlex
from dataclasses import dataclass
from typing import Any

from fsaccept.benchmarks.catalogue import MISSING
from fsaccept.benchmarks.fio import figures
from fsaccept.benchmarks.fio.figures import FigureSpec
from fsaccept.benchmarks.fio import interference_judge
from fsaccept.benchmarks.fio import soak as soak_judge
from fsaccept.core.pernode import OUTLIER_FIGURE
from fsaccept.core.reference import entry_thresholds
from fsaccept.core.units import KIB, MIB, format_size, parse_size

#: fio job names of the metadata test, in the order they run (one stonewall group each).
METADATA_JOBS = ("filecreate", "filestat", "filedelete")
#: Default fraction of the median below which a node is an outlier (a slow client).
DEFAULT_OUTLIER_FRACTION = 0.8
#: What a node script's lines in the job's stdout begin with: ``fsaccept-node n1 exit 0``,
#: ``fsaccept-node n1 memory_kib 24683656``.
NODE_MARKER = "fsaccept-node"


#: The node script's line that gives its node's memory (``$node`` set by the script).
MEMORY_LINE = (f'echo "{NODE_MARKER} $node memory_kib '
               "$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)\"")


def node_memory_bytes(stdout: str) -> dict[str, int]:
    """Each node's memory as its :data:`MEMORY_LINE` printed it: node -> bytes."""
    return {n: int(kib) * 1024 for n, kib in
            re.findall(rf"^{NODE_MARKER} (\S+) memory_kib (\d+)$", stdout, re.M)}


def node_exits(stdout: str) -> dict[str, str]:
    """Each node's fio exit status as its node script printed it in the job's stdout
    (``fsaccept-node <node> exit <status>``): node -> ``0``, ``1``, ``mkdir-failed``."""
    return dict(re.findall(rf"^{NODE_MARKER} (\S+) exit (\S+)$", stdout, re.M))


@dataclass(frozen=True)
class Kind:
    """How one fio test runs, before the reference entry's sizes."""

    rw: str  #: fio ``rw=``
    block_size: int  #: default ``bs=`` (the entry may change it; the names follow)
    direct: bool  #: O_DIRECT: fixed by the test, it is what the figure means
    ioengine: str  #: fio ``ioengine=`` (``libaio``, ``psync``...)
    iodepth: int  #: fio ``iodepth=``: the I/Os each job keeps in flight
    regime: str  #: ``direct``, ``buffered`` or ``fsync``: part of the figure names
    fsync: int = 0  #: fio ``fsync=N``: fsync after every N writes
    end_fsync: bool = False  #: fsync when the job ends (counted in its runtime)
    metadata: bool = False  #: filecreate/filestat/filedelete jobs, no data
    #: A soak: fio's interval logs kept and the time series judged
    #: (``fsaccept.benchmarks.fio.soak``).
    soak: bool = False
    #: A noisy neighbour: this kind is the victim, seq_write's options the aggressor
    #: (``fsaccept.benchmarks.fio.interference_judge``).
    interference: bool = False


KINDS: dict[str, Kind] = {
    # The client-limited regime: O_DIRECT, asynchronous, a deep queue.
    "randread_direct": Kind("randread", 4 * KIB, True, "libaio", 16, "direct"),
    # The cache regime: the same reads through the page cache (libaio would be
    # synchronous on buffered files anyway, so the plain pread engine, depth 1).
    "randread_buffered": Kind("randread", 4 * KIB, False, "psync", 1, "buffered"),
    "seq_write": Kind("write", MIB, True, "libaio", 4, "direct", end_fsync=True),
    "seq_read": Kind("read", MIB, True, "libaio", 4, "direct"),
    # 4 KiB writes, each followed by fsync, queue depth 1 (a database log).
    "fsync": Kind("write", 4 * KIB, False, "psync", 1, "fsync", fsync=1),
    "metadata": Kind("write", 4 * KIB, False, "filecreate", 1, "metadata", metadata=True),
    # Hours of 1 MiB direct writes at a site, minutes in CI: the time series is judged
    # (stalls, drift, a slow node), the run's mean bandwidth too.
    "soak": Kind("write", MIB, True, "libaio", 4, "direct", soak=True),
    # A noisy neighbour: what an interactive user feels (4 KiB direct random reads at
    # queue depth 1, one at a time) alone, then beside an aggressor's direct 1 MiB writes
    # on the other nodes of the job (docs/user/interference.md).
    "interference": Kind("randread", 4 * KIB, True, "psync", 1, "direct",
                         interference=True),
}

#: A soak entry's limits besides fio's options (``docs/user/soak.md``); its duration is
#: ``runtime_s``.
SOAK_KEYS = ("interval_s", "max_stall_s", "max_drift", "max_node_shortfall")
#: The prefix of each node's interval logs, in the stage directory: ``soak-<node>_bw.1.log``.
SOAK_LOG = "soak-"
#: Where the node's name goes in the fio line (the node script puts ``$node`` there).
NODE_PLACEHOLDER = "@FSACCEPT_NODE@"
#: The soak's judged figures -> unit: the longest time a client went without progress,
#: the bandwidth's drift over the run and the slowest node's shortfall (in %).
SOAK_FIGURES = {"soak_longest_stall_s": "s", "soak_drift_pct": "%",
                "soak_node_shortfall_pct": "%"}

#: An interference entry's keys besides fio's options (``docs/user/interference.md``):
#: the victim's ``file_size`` and ``runtime_s`` (each of its two runs) are fio's.
INTERFERENCE_KEYS = ("victim_nodes", "aggressor_file_size", "lead_s", "max_p99_ratio",
                     "min_overlap")
#: Defaults: victim nodes (the rest of the job's nodes are aggressors), and seconds the
#: aggressor writes before the victim starts (and the margin it writes on after).
DEFAULT_VICTIM_NODES = 1
DEFAULT_LEAD_S = 5
#: The aggressor's kind: its options are this kind's, sized by ``aggressor_file_size``.
AGGRESSOR_KIND = "seq_write"
#: The interference test's figures -> unit, its main figure first: the worst victim
#: node's p99 under load over its p99 alone, the worst p99 alone and under load, the
#: aggressors' bandwidth while they shared the file system (summed), and the least share
#: of a victim's run under load the aggressor covered (in %).
INTERFERENCE_FIGURES = {"victim_p99_ratio": "ratio", "victim_p99_alone_us": "us",
                        "victim_p99_loaded_us": "us", "aggressor_shared_bw": "MiB/s",
                        "interference_overlap_pct": "%"}


#: What fio writes (its data tests; fio lays out a read test's files with it too) ->
#: its buffer options.  fio's default fills a buffer once with random data and scrambles
#: a few bytes per submit: no two blocks are equal, but lzma compresses it ~50:1 (4 MiB
#: in 64 KiB blocks, fio 3.33 and 3.37).  ``random`` refills every buffer with new random
#: data (1.006:1) and says outright that no block is made compressible or duplicate.
DATA_PATTERNS: dict[str, list[str]] = {
    "random": ["--refill_buffers=1", "--buffer_compress_percentage=0",
               "--dedupe_percentage=0"],
    "scrambled": ["--scramble_buffers=1"],
}


def pattern_reducible(pattern: str) -> bool:
    """Whether fio's ``pattern`` is data a file system can compress or deduplicate."""
    return pattern != "random"


class FioEntryError(ValueError):
    """A reference entry that cannot make a fio test; the message names the key."""


@dataclass(frozen=True)
class FioParameters:
    """A fio test's entry of the reference file, with the kind's defaults filled in."""

    name: str  #: the entry's key, e.g. ``fio_randread_direct``
    kind: str
    node_fraction: float
    block_size: int
    ioengine: str  #: fio ``ioengine=`` (``libaio``, ``psync``...)
    iodepth: int  #: fio ``iodepth=``: the I/Os each job keeps in flight
    numjobs: int = 1
    file_size: int | None = None  #: per job (fio ``size=``); data tests
    runtime_s: int | None = None  #: data tests
    time_based: bool = True
    files: int | None = None  #: metadata: files per job (fio ``nrfiles=``)
    outlier_fraction: float = DEFAULT_OUTLIER_FRACTION
    data_pattern: str = "random"  #: a key of :data:`DATA_PATTERNS`
    #: A soak's limits (``None`` for the other kinds).
    soak: soak_judge.Settings | None = None
    #: An interference test's limits and split (``None`` for the other kinds).
    interference: InterferenceSplit | None = None

    @property
    def spec(self) -> Kind:
        return KINDS[self.kind]

    @property
    def direct(self) -> bool:
        return self.spec.direct

    @property
    def bytes_per_node(self) -> int:
        """Size of the files one node's fio works on."""
        if self.spec.metadata:
            return 0
        return (self.file_size or 0) * self.numjobs


def parameters(name: str, kind: str, entry: dict[str, Any], where: str = "") -> FioParameters:
    """Typed parameters of reference entry ``tests.<name>`` for a test of ``kind``."""
    key = f"{where}: tests.{name}" if where else f"tests.{name}"
    if kind not in KINDS:
        raise FioEntryError(f"{key}: unknown fio test kind {kind!r} "
                            f"(known: {', '.join(sorted(KINDS))})")
    k = KINDS[kind]
    if k.metadata:
        for bad in ("file_size", "runtime_s", "time_based"):
            if bad in entry:
                raise FioEntryError(f"{key}.{bad}: not for the metadata test (it creates, "
                                    "stats and deletes `files` files; a runtime would cut it "
                                    "short and leave the later phases missing files)")
        if "files" not in entry:
            raise FioEntryError(f"{key}.files: required (files each job creates)")
    else:
        for need in ("file_size", "runtime_s"):
            if need not in entry:
                raise FioEntryError(f"{key}.{need}: required for a {kind} test")
        if "files" in entry:
            raise FioEntryError(f"{key}.files: only for the metadata test")
    given = [x for x in SOAK_KEYS if x in entry]
    if given and not k.soak:
        raise FioEntryError(f"{key}.{given[0]}: only for the soak (tests.fio_soak)")
    split = _interference_split(key, entry, k)
    settings = None
    if k.soak:
        if entry.get("time_based") is False:
            raise FioEntryError(f"{key}.time_based: a soak runs for runtime_s")
        settings = soak_judge.Settings.of({"duration_s": entry.get("runtime_s"),
                                           **{x: entry[x] for x in given}})
        if settings.max_stall_s < settings.interval_s:
            raise FioEntryError(f"{key}.max_stall_s: {settings.max_stall_s:g} s is below "
                                f"interval_s {settings.interval_s:g} s: a stall is seen to "
                                "the interval")
    try:
        block = parse_size(entry.get("block_size", k.block_size))
        size = parse_size(entry["file_size"]) if "file_size" in entry else None
    except ValueError as err:
        raise FioEntryError(f"{key}: {err}") from None
    if size is not None and size % block:
        raise FioEntryError(f"{key}.file_size: {format_size(size)} is not a multiple of "
                            f"block_size {format_size(block)}")
    return FioParameters(
        name=name, kind=kind, node_fraction=entry["node_fraction"], block_size=block,
        ioengine=entry.get("ioengine", k.ioengine), iodepth=entry.get("iodepth", k.iodepth),
        numjobs=entry.get("numjobs", 1), file_size=size, runtime_s=entry.get("runtime_s"),
        time_based=entry.get("time_based", not k.metadata), files=entry.get("files"),
        outlier_fraction=float(entry.get("outlier_fraction", DEFAULT_OUTLIER_FRACTION)),
        data_pattern=entry.get("data_pattern", "random"), soak=settings,
        interference=split)


@dataclass(frozen=True)
class InterferenceSplit:
    """An interference entry's own keys, with their defaults."""

    settings: interference_judge.Settings
    victim_nodes: int = DEFAULT_VICTIM_NODES
    aggressor_file_size: int = 0
    lead_s: int = DEFAULT_LEAD_S


def _interference_split(key: str, entry: dict[str, Any], k: Kind) -> InterferenceSplit | None:
    given = [x for x in INTERFERENCE_KEYS if x in entry]
    if given and not k.interference:
        raise FioEntryError(f"{key}.{given[0]}: only for the interference test "
                            "(tests.fio_interference)")
    if not k.interference:
        return None
    for need in ("max_p99_ratio", "aggressor_file_size"):
        if need not in entry:
            raise FioEntryError(f"{key}.{need}: required for the interference test")
    for other in ("thresholds", "outlier_fraction"):
        if other in entry:
            raise FioEntryError(f"{key}.{other}: not for the interference test: it is "
                                "judged by max_p99_ratio (the victim's p99 under load over "
                                "its own p99 alone), not by figures against thresholds")
    if entry.get("time_based") is False:
        raise FioEntryError(f"{key}.time_based: the victim runs for runtime_s, twice")
    for fixed, value in (("iodepth", 1), ("numjobs", 1)):
        if entry.get(fixed, value) != value:
            raise FioEntryError(f"{key}.{fixed}: the victim is one reader at queue depth 1 "
                                f"(what an interactive user feels); {fixed} is {value}")
    try:
        aggressor = parse_size(entry["aggressor_file_size"])
    except ValueError as err:
        raise FioEntryError(f"{key}.aggressor_file_size: {err}") from None
    if aggressor % KINDS[AGGRESSOR_KIND].block_size:
        raise FioEntryError(f"{key}.aggressor_file_size: {format_size(aggressor)} is not a "
                            f"multiple of {format_size(KINDS[AGGRESSOR_KIND].block_size)}")
    ratio, overlap = entry["max_p99_ratio"], entry.get(
        "min_overlap", interference_judge.DEFAULT_MIN_OVERLAP)
    if not ratio >= 1:
        raise FioEntryError(f"{key}.max_p99_ratio: {ratio!r} is below 1: a p99 under load "
                            "is judged against its p99 alone")
    if not interference_judge.DEFAULT_MIN_OVERLAP <= overlap <= 1:
        raise FioEntryError(f"{key}.min_overlap: {overlap!r} is not "
                            f"{interference_judge.DEFAULT_MIN_OVERLAP} to 1")
    return InterferenceSplit(interference_judge.Settings(float(ratio), float(overlap)),
                             entry.get("victim_nodes", DEFAULT_VICTIM_NODES), aggressor,
                             entry.get("lead_s", DEFAULT_LEAD_S))


def split_nodes(nodes: list[str], victim_nodes: int) -> tuple[list[str], list[str]]:
    """(victims, aggressors) of a job's nodes, in their order: the first ``victim_nodes``
    are victims, the rest aggressors; FioEntryError when either group would be empty."""
    if not 1 <= victim_nodes < len(nodes):
        raise FioEntryError(f"victim_nodes {victim_nodes} of {len(nodes)} node(s): the "
                            "interference test needs at least one victim and one aggressor "
                            "node (raise node_fraction, or lower victim_nodes)")
    return nodes[:victim_nodes], nodes[victim_nodes:]


def aggressor_parameters(p: FioParameters) -> FioParameters:
    """The aggressor's fio parameters of an interference test: :data:`AGGRESSOR_KIND`'s
    options on ``aggressor_file_size``, writing for ``lead_s`` before the victim starts,
    its ``runtime_s``, and two ``lead_s`` after (the victim's own start-up, the clocks)."""
    if p.interference is None:
        raise ValueError(f"{p.name}: not an interference test")
    k = KINDS[AGGRESSOR_KIND]
    split = p.interference
    return FioParameters(
        name=f"{p.name}_aggressor", kind=AGGRESSOR_KIND, node_fraction=p.node_fraction,
        block_size=k.block_size, ioengine=k.ioengine, iodepth=k.iodepth,
        file_size=split.aggressor_file_size,
        runtime_s=int(p.runtime_s or 0) + 3 * split.lead_s, time_based=True,
        outlier_fraction=0.0, data_pattern=p.data_pattern)


#: The prefix of each aggressor node's bandwidth log, in the stage directory
#: (``aggressor-<node>_bw.1.log``), and its window (ms): the aggressor's bandwidth over the
#: victims' run under load is read from it (``fsaccept.benchmarks.fio.interference``).
AGGRESSOR_LOG = "aggressor-"
AGGRESSOR_LOG_MS = 1000


def aggressor_options(p: FioParameters, directory: str) -> list[str]:
    """The aggressor's fio arguments for one node (:func:`aggressor_parameters`), with its
    bandwidth log in the wall clock (``log_unix_epoch``: set beside the victims' spans)."""
    return fio_options(aggressor_parameters(p), directory) + [
        f"--write_bw_log={AGGRESSOR_LOG}{NODE_PLACEHOLDER}",
        f"--log_avg_msec={AGGRESSOR_LOG_MS}", "--log_unix_epoch=1"]


def interference_references(split: InterferenceSplit
                            ) -> dict[str, tuple[float, float | None, float | None, str]]:
    """The interference test's judged figure as a ReFrame reference: the p99 ratio at
    most ``max_p99_ratio`` (the overlap is an INVALID reason, not a threshold)."""
    return {"victim_p99_ratio": (split.settings.max_p99_ratio, None, 0, "ratio")}


def interference_figures(evidence: interference_judge.Evidence) -> dict[str, float]:
    """The interference test's figures from its record (those it cannot give, e.g. a
    ratio of a p99 that is 0, are left out: the judgements say why)."""
    out: dict[str, float] = {}
    ratios = [v.ratio for v in evidence.victims]
    if ratios and all(math.isfinite(r) for r in ratios):
        out["victim_p99_ratio"] = max(ratios)
        out["victim_p99_alone_us"] = max(v.p99_alone_us for v in evidence.victims)
        out["victim_p99_loaded_us"] = max(v.p99_loaded_us for v in evidence.victims)
    shared = interference_judge.aggressor_bandwidth(evidence)
    if evidence.aggressors and math.isfinite(shared):
        out["aggressor_shared_bw"] = shared
    load = evidence.load()
    spans = [v.loaded for v in evidence.victims]
    if spans and all(s.sane for s in spans) and all(a.span.sane for a in evidence.aggressors):
        out["interference_overlap_pct"] = 100 * min(
            interference_judge.covered_fraction(s, load) for s in spans)
    return out


def fio_options(p: FioParameters, directory: str) -> list[str]:
    """fio's arguments (without ``--output``) for one node, files below ``directory``."""
    k = p.spec
    common = [f"--directory={directory}", f"--numjobs={p.numjobs}", "--fallocate=none",
              "--group_reporting=1", "--output-format=json"]
    if k.metadata:
        opts = common + ["--filename_format=fsaccept.$jobnum.$filenum", "--rw=write",
                         f"--bs={p.block_size}", f"--filesize={p.block_size}",
                         f"--nrfiles={p.files}", "--openfiles=1", "--direct=0",
                         "--iodepth=1", "--time_based=0"]
        for i, job in enumerate(METADATA_JOBS):
            opts += [f"--name={job}", f"--ioengine={job}"] + (["--stonewall"] if i else [])
        return opts
    opts = [f"--name={p.kind}", *common, f"--rw={k.rw}", f"--bs={p.block_size}",
            f"--size={p.file_size}", f"--direct={int(k.direct)}", f"--ioengine={p.ioengine}",
            f"--iodepth={p.iodepth}", "--invalidate=1", f"--time_based={int(p.time_based)}",
            f"--runtime={p.runtime_s}"]
    opts += DATA_PATTERNS[p.data_pattern]
    if k.fsync:
        opts.append(f"--fsync={k.fsync}")
    if k.end_fsync:
        opts.append("--end_fsync=1")
    if p.soak is not None:
        log = SOAK_LOG + NODE_PLACEHOLDER
        opts += [f"--write_bw_log={log}", f"--write_lat_log={log}",
                 f"--log_avg_msec={round(p.soak.interval_s * 1000)}"]
    return opts


#: The script each node runs (fio's line in it): the job's own command.
NODE_SCRIPT = "fsaccept-fio-node.sh"
#: A node's directory and report in the command a run report records.
NODE_NAME = "<node>"


def command_line(p: FioParameters, binary: str, target_dir: str) -> str:
    """The fio command of each node, as the run report records it (``benchmark_command``):
    its directory ``<target_dir>/<node>``, its report ``fio-<node>.json``.  The live
    check records it; the sign-off holds the recorded one to it."""
    opts = fio_options(p, posixpath.join(target_dir, NODE_NAME))
    return shlex.join([binary, *opts, f"--output=fio-{NODE_NAME}.json"]).replace(
        NODE_PLACEHOLDER, NODE_NAME)


def contract_options(p: FioParameters, recorded: list[str]) -> list[str] | None:
    """fio's arguments the live check gives each node for ``p`` (:func:`command_line`),
    its directory that of the ``recorded`` ones (a run alone decides it); the job's own
    arguments (the node script) for a ``recorded`` list that is theirs.  None for an
    interference test: its record is rebuilt from its kept files."""
    if p.interference is not None:
        return None
    if recorded == [NODE_SCRIPT]:
        return [NODE_SCRIPT]
    where = [a.split("=", 1)[1] for a in recorded if a.startswith("--directory=")]
    directory = where[-1] if where else ""
    suffix = "/" + NODE_NAME
    target = directory[:-len(suffix)] if directory.endswith(suffix) else MISSING
    return shlex.split(command_line(p, "fio", target))[1:]


def report_options(run: Any) -> list[str]:
    """The options a node's fio report says it ran with (its JSON's ``global options``,
    then each job's ``job options``), as a command line gives them (``--bs=4096``)."""
    out = [f"--{k}={v}" for k, v in run.global_options.items()]
    for job in run.jobs:
        out += [f"--{k}={v}" for k, v in job.job_options.items()]
    return out


def size_label(nbytes: int) -> str:
    """Short size for figure names: 4096 → '4k', 1048576 → '1m'."""
    text = format_size(nbytes)
    for unit, suffix in (("TiB", "t"), ("GiB", "g"), ("MiB", "m"), ("KiB", "k")):
        if text.endswith(unit):
            return text[: -len(unit)] + suffix
    return text + "b"


def figure_specs(p: FioParameters) -> list[FigureSpec]:
    """The figures a test reports, named after what they mean (operation, block size,
    regime), each with its place in fio's report."""
    k = p.spec
    bs = size_label(p.block_size)
    if k.metadata:
        return [FigureSpec(f"{job}_ops", "ops/s", job, ("write", "iops"))
                for job in METADATA_JOBS]
    if k.fsync:
        base = f"fsync_{bs}"
        specs = [FigureSpec(f"{base}_iops", "IOPS", p.kind, ("write", "iops"))]
        for what, path in (("write_clat", ("write", "clat_ns")),
                           ("sync_lat", ("sync", "lat_ns"))):
            for label, key in (("p50", ("percentile", "50.000000")),
                               ("p99", ("percentile", "99.000000")), ("max", ("max",))):
                specs.append(FigureSpec(f"{base}_{what}_{label}_us", "us", p.kind,
                                        path + key, kind="latency"))
        return specs
    direction = "read" if "read" in k.rw else "write"
    if k.rw.startswith("rand"):
        return [FigureSpec(f"rand{direction}_{bs}_{k.regime}_iops", "IOPS", p.kind,
                           (direction, "iops"))]
    return [FigureSpec(f"seq_{direction}_{bs}_{k.regime}_bw", "MiB/s", p.kind,
                       (direction, "bw_bytes"))]


def deadline_s(p: FioParameters) -> int:
    """Seconds the fio run is planned to last (its runtime; 0 when size-bound)."""
    return int(p.runtime_s or 0)


#: What a figure is, by its unit, in the words of ``known_bad_versions.yaml``'s ``affects``.
FIGURE_KINDS = {"IOPS": "iops", "MiB/s": "bandwidth", "us": "latency", "ops/s": "metadata"}


def figure_kinds(specs: list[FigureSpec]) -> list[str]:
    """What the figures of ``specs`` are, in the words of ``known_bad_versions.yaml``'s
    ``affects`` (a fio version with a known bug affecting one is INVALID)."""
    return sorted({FIGURE_KINDS[s.unit] for s in specs})


def judged_figures(specs: list[FigureSpec]) -> dict[str, FigureSpec]:
    """Figure names a threshold may name: each figure, and ``<name>_node_min``
    (the slowest node) for throughput figures (:func:`figures.reported`)."""
    return {r.name: r.spec for r in figures.reported(specs, 0.0) if r.spec is not None}


def figure_patterns(kind: str) -> tuple[str, ...]:
    """Every figure name a test of ``kind`` may report, as ``^regex$`` patterns (the names
    carry the entry's block size), its main figure first, then the outlier count."""
    k = KINDS[kind]
    p = FioParameters(name="", kind=kind, node_fraction=1.0, block_size=k.block_size,
                      ioengine=k.ioengine, iodepth=k.iodepth)
    label = f"_{size_label(k.block_size)}_"
    if k.interference:
        return tuple(f"^{name}$" for name in INTERFERENCE_FIGURES)
    return (*("^" + re.escape(name).replace(re.escape(label), "_[0-9.]+[bkmgt]_", 1) + "$"
              for name in judged_figures(figure_specs(p))), OUTLIER_FIGURE,
            *(SOAK_FIGURES if k.soak else ()))


def soak_references(s: soak_judge.Settings) -> dict[str, tuple[float, float | None,
                                                               float | None, str]]:
    """A soak's judged figures as ReFrame references: each at most its limit."""
    limits = {"soak_longest_stall_s": s.max_stall_s, "soak_drift_pct": 100 * s.max_drift,
              "soak_node_shortfall_pct": 100 * s.max_node_shortfall}
    return {name: (limits[name], None, 0, unit) for name, unit in SOAK_FIGURES.items()}


def soak_figures(judgements: list[soak_judge.Judgement]) -> dict[str, float]:
    """The judged figures of a soak's judgements (a judgement that judged nothing, e.g.
    the shortfall of one node, gives none)."""
    out = {}
    for j in judgements:
        if j.value is None:
            continue
        if j.what == "stall":
            out["soak_longest_stall_s"] = j.value
        elif j.what == "drift":
            out["soak_drift_pct"] = max(out.get("soak_drift_pct", 0), 100 * abs(j.value))
        elif j.what == "shortfall":
            out["soak_node_shortfall_pct"] = max(out.get("soak_node_shortfall_pct", 0),
                                                 100 * j.value)
    return out


def reframe_references(thresholds: dict[str, Any], specs: list[FigureSpec],
                       outlier_detection: bool, where: str = "thresholds"
                       ) -> dict[str, tuple[float, float | None, float | None, str]]:
    """ReFrame reference tuples ``(value, lower, upper, unit)`` of a fio test.

    Throughput thresholds are lower bounds (``-tolerance``), latency thresholds upper
    bounds (``+tolerance``); with outlier detection, ``outlier_nodes`` must be 0.
    ``thresholds`` maps figure name → ``reference.Threshold``; a name the test does not
    report, or a unit that is not the figure's, raises :class:`FioEntryError`.
    """
    figures = judged_figures(specs)
    refs: dict[str, tuple[float, float | None, float | None, str]] = {}
    for name, th in thresholds.items():
        if name not in figures:
            raise FioEntryError(
                f"{where}.{name or 'threshold'}: not a figure of this test; it reports: "
                f"{', '.join(figures)}")
        spec = figures[name]
        if th.unit != spec.unit:
            raise FioEntryError(f"{where}.{name}.unit: {th.unit!r}, but {name} is in "
                                f"{spec.unit!r}")
        refs[name] = th.as_reframe_reference()  # latencies (us) are ceilings
    if outlier_detection:
        refs[OUTLIER_FIGURE] = (0, None, 0, "nodes")
    return refs


def kind_of(key: str) -> str | None:
    """The test kind a reference key names: ``tests.fio_<kind>`` (the key the fio check
    of that kind reads, ``checks/fio_client.py``), or None."""
    kind = key.removeprefix("fio_")
    return kind if key.startswith("fio_") and kind in KINDS else None


def entry_errors(where: str, entry: dict[str, Any]) -> list[str]:
    """What the fio check refuses in its entry at set-up (:func:`parameters`, the
    thresholds by :func:`reframe_references`), found before any run: ``fsaccept
    reference`` and every run's reference check (``where`` is ``tests.<key>``)."""
    key = where.rsplit(".", 1)[-1]
    kind = kind_of(key)
    if kind is None:
        return [f"{where}: no fio test reads this key; the fio tests are "
                f"{', '.join('fio_' + k for k in KINDS)}"]
    try:
        p = parameters(key, kind, entry)
        reframe_references(entry_thresholds(entry), figure_specs(p),
                           outlier_detection=p.outlier_fraction > 0,
                           where=f"{where}.thresholds")
    except FioEntryError as err:
        return [str(err)]
    return []
