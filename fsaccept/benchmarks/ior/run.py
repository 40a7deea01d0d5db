"""What one IOR run printed, typed: its parameters, per-iteration results, summary
rows, stonewall phases and findings (filled by :mod:`.parse` and :mod:`.parse_json`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

from fsaccept.benchmarks.ior.patterns import argv_of, data_pattern_of
from fsaccept.core.findings import INVALID, Finding, Findings, Judged, json_safe as _finite



@dataclass
class IorParameters:
    """Typed view of the ``Options:`` block (raw strings are in ``IorRun.parameters``)."""

    api: str | None = None
    test_filename: str | None = None
    access: str | None = None  #: ``file-per-process`` or ``single-shared-file``
    type: str | None = None  #: ``independent`` or ``collective``
    segments: int | None = None
    ordering_in_file: str | None = None  #: ``sequential`` or ``random`` (``-z``)
    ordering_inter_file: str | None = None
    nodes: int | None = None  #: as IOR counted them (shared-memory communicators)
    tasks: int | None = None
    clients_per_node: int | None = None
    repetitions: int | None = None
    xfersize: str | None = None  #: as printed, e.g. ``1 MiB``, ``4096 bytes``
    blocksize: str | None = None
    aggregate_filesize: str | None = None  #: as printed (rounded by IOR, e.g. ``390.62 GiB``)
    xfer_bytes: int | None = None
    block_bytes: int | None = None
    stonewalling_time: int | None = None  #: ``-D`` seconds; ``None`` when not printed (no -D)
    stonewalling_wearout: int | None = None  #: ``-O stoneWallingWearOut``; printed only with -D


@dataclass
class IterationResult:
    """One row of the per-iteration table (``write``, ``read`` or ``remove``).

    Numeric fields are ``float(printed)``; IOR prints a negative/absent value as ``-``,
    which becomes ``None`` (all but ``total_s`` on ``remove`` rows). IOR prints values
    >= 3600 with no decimals (``5482`` in the row vs ``5481.85`` in the summary).
    ``iops`` here is computed by IOR over ``wr/rd(s)`` only, whereas the summary's OPs use
    the whole phase time: the two differ, use the summary for acceptance figures.
    """

    access: str
    bw_mib: float | None
    iops: float | None
    latency_s: float | None
    block_kib: float | None
    xfer_kib: float | None
    open_s: float | None
    wrrd_s: float | None
    close_s: float | None
    total_s: float | None
    iteration: int | None
    line: int | None = None  #: 1-based line number (``None`` when parsed from JSON)
    bw_token: str | None = None  #: bw(MiB/s) as printed (its precision bounds the value)
    test_id: int | None = None  #: the test it belongs to (``TestID``; an IOR script has several)
    bytes_moved: int | None = None
    """Exact bytes the phase moved when IOR printed them (``WARNING: Using actual aggregate
    bytes moved = N`` before the row), else ``None``."""
    stat_bytes: int | None = None
    """The files' aggregate size as IOR stat()ed them after the phase (``WARNING: Stat()
    of aggregate file size = N`` before the row, printed when it differs from what was
    asked or moved), else ``None``: a read's dataset."""


@dataclass
class SummaryRow:
    """One operation row of ``Summary of all tests:`` (or the JSON ``summary[]``)."""

    operation: str  #: ``write`` or ``read``
    max_mib: float  #: Max(MiB): best iteration's aggregate bandwidth, MiB/s
    min_mib: float  #: Min(MiB), MiB/s
    mean_mib: float  #: Mean(MiB), MiB/s (mean over iterations)
    stddev_mib: float  #: first StdDev column, MiB/s
    max_ops: float  #: Max(OPs): aggregate operations/s (transfer-size operations)
    min_ops: float
    mean_ops: float
    stddev_ops: float  #: second StdDev column
    mean_s: float  #: Mean(s): mean phase time over iterations
    stonewall_s: float | None
    """Stonewall(s): mean time until the stonewall (deadline) was hit; ``None`` (``NA``)
    unless ``stoneWallingWearOut`` was set."""
    stonewall_mib: float | None
    """Stonewall(MiB) / JSON ``StoneWallbwMeanMIB``: despite the header, this is a
    **per-rank mean bandwidth in MiB/s** during the stonewall phase (mean data moved per rank
    divided by the stonewall time), NOT an aggregate and not an amount of data. Multiply by
    ``tasks`` for an aggregate estimate. ``None`` (``NA``) without wear-out."""
    test_id: int | None
    tasks: int | None  #: #Tasks
    tasks_per_node: int | None  #: tPN (ranks on node 0)
    reps: int | None
    fpp: int | None  #: file per process (``-F``)
    reord: int | None  #: ``-C``
    reordoff: int | None
    reordrand: int | None
    seed: int | None
    segments: int | None  #: segcnt
    block_bytes: int | None  #: blksiz
    xfer_bytes: int | None  #: xsize
    agg_mib: float | None  #: aggs(MiB): data actually moved in iteration 0, MiB
    api: str | None
    ref_num: int | None
    line: int | None = None  #: 1-based line number (``None`` when parsed from JSON)
    printed: dict[str, str] = field(default_factory=dict)
    """Field name -> the exact token IOR printed (text output only)."""


@dataclass
class MaxBandwidth:
    """``Max Write:`` / ``Max Read:`` line (printed only with ``-v``)."""

    operation: str  #: ``write`` or ``read``
    mib_per_s: float
    mb_per_s: float
    line: int | None = None


@dataclass
class StonewallPhase:
    """One wear-out phase: ``stonewalling pairs accessed min: .. max: .. -- min data: ..``.

    The per-rank lines (``N: stonewalling pairs accessed: K``, printed with ``-v``) that
    precede it are folded into ``ranks_reported`` / ``rank_pairs_min`` / ``rank_pairs_max``.
    Data figures are GiB with one decimal, as printed.
    """

    pairs_min: int | None = None
    pairs_max: int | None = None
    min_data_gib: float | None = None  #: least data moved by one rank before the deadline
    mean_data_gib: float | None = None  #: mean data per rank before the deadline
    time_s: float | None = None  #: time until the stonewall was hit
    ranks_reported: int = 0
    rank_pairs_min: int | None = None
    rank_pairs_max: int | None = None
    line: int | None = None


@dataclass(frozen=True)
class RankTimes:
    """One row of IOR's per-rank CSV (``-O saveRankPerformanceDetailsCSV``): one rank's
    times of one access, as IOR 4.0.0 writes them (``%.10e``, from the rank's own
    ``gettimeofday`` readings), and its share of the volume (aggregate / ranks) over
    each, in bytes/s."""

    seconds: float  #: runtime-with-openclose: first open to last close
    transfer_s: float  #: runtime: its transfers alone
    rate: float  #: throughput-withopenclose: its share of the volume over ``seconds``
    transfer_rate: float  #: throughput: its share over ``transfer_s``
    line: int  #: 1-based line number in the output


@dataclass
class IorRun(Judged):
    """Everything parsed from one IOR run."""

    source: str = "text"  #: ``text`` or ``json``
    version: str | None = None  #: e.g. ``IOR-4.0.0``
    command_line: str | None = None
    began: str | None = None
    machine: str | None = None
    start_time: str | None = None
    finished: str | None = None
    finished_line: int | None = None  #: the (last) ``Finished`` line's number
    header: dict[str, str] = field(default_factory=dict)
    """Other ``key : value`` lines outside the Options block (TestID, Path, FS, ...)."""
    parameters: dict[str, str] = field(default_factory=dict)
    """The first ``Options:`` block, raw strings as printed."""
    params: IorParameters = field(default_factory=IorParameters)
    results: list[IterationResult] = field(default_factory=list)
    summary: list[SummaryRow] = field(default_factory=list)
    max_bandwidth: list[MaxBandwidth] = field(default_factory=list)
    stonewall: list[StonewallPhase] = field(default_factory=list)
    pairs_deadline_accessed: list[int] = field(default_factory=list)
    """``Pairs deadlineForStonewallingaccessed: N`` values (IOR's typo). Not printed when a
    stonewalling status file is used (the count goes to the file instead)."""
    summary_file: str | None = None
    """Set when stdout says ``Writing output to F`` (``-O summaryFile``): figures are in F."""
    rank_pairs: dict[int, list[int]] = field(default_factory=dict)
    """``N: stonewalling pairs accessed: K`` (wear-out phases, ``-v``): rank -> the transfers
    it made before the stonewall, one value per phase in the order printed.  Ranks flush
    these lines late (after the phase's summary line, even after its result row), so they
    are collected wherever they stand."""
    hints_passed: dict[str, str] = field(default_factory=dict)
    """``hints passed to MPI_File_open() { key = value }`` (MPIIO, ``--mpiio.showHints``):
    what IOR asked of the MPI library (first file opened)."""
    hints_returned: dict[str, str] = field(default_factory=dict)
    """``hints returned from opened file { ... }``: what the MPI library applied."""
    data_errors: dict[str, int] = field(default_factory=dict)
    """``Incorrect data on read (N errors found)`` (``-R``/``-W``), summed per access: the
    transfers whose data failed verification (IOR 4.0.0 counts one per transfer and names
    neither the file nor the offset)."""
    rank_rows: dict[str, dict[int, RankTimes]] = field(default_factory=dict)
    """IOR's per-rank CSV (``-O saveRankPerformanceDetailsCSV``, the file shown in the
    job's output after the benchmark): access -> rank -> its row."""
    findings: list[Finding] = field(default_factory=Findings)

    @property
    def rank_times(self) -> dict[str, dict[int, float]]:
        """Access -> rank -> its open-to-close seconds (:attr:`rank_rows`).  Without
        barriers between open, transfer and close (no ``-g``), a straggler's time is its
        own."""
        return {access: {rank: row.seconds for rank, row in rows.items()}
                for access, rows in self.rank_rows.items()}

    @property
    def reasons(self) -> list[str]:
        """Human-readable reasons for ``valid == False`` (one per invalid finding)."""
        out = []
        for f in self.findings:
            if f.severity == INVALID:
                out.append(f"line {f.line}: {f.text}" if f.line else f.text)
        return out

    def summary_for(self, operation: str) -> SummaryRow | None:
        """First summary row for ``write`` or ``read``, or ``None``."""
        for row in self.summary:
            if row.operation == operation:
                return row
        return None

    def iterations_of(self, row: SummaryRow) -> list[IterationResult]:
        """The per-iteration rows of a summary row: its operation, in its test."""
        return [it for it in self.results if it.access == row.operation
                and (row.test_id is None or it.test_id is None or it.test_id == row.test_id)]

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict (non-finite floats become ``None``).  ``rank_pairs`` is
        a list of ``[rank, K, ...]`` (its values per phase), sorted by rank: one short
        list per rank, not one object (a 44,080-rank run has as many)."""
        d: dict[str, Any] = _finite(asdict(replace(self, rank_pairs={}, rank_rows={})))
        # The open-to-close times (the figures' source) in the rows' place.
        d = {("rank_times" if k == "rank_rows" else k): v for k, v in d.items()}
        d["rank_times"] = {access: [[rank, t[rank]] for rank in sorted(t)]
                           for access, t in self.rank_times.items()}
        pairs = self.rank_pairs
        d["rank_pairs"] = [[rank, *pairs[rank]] for rank in sorted(pairs)]
        d["valid"] = self.valid
        d["reasons"] = self.reasons
        d["data_pattern"] = self.data_pattern
        return d

    @property
    def data_pattern(self) -> str | None:
        """The data pattern (``-l``) its command line wrote (None: no command line)."""
        return data_pattern_of(argv_of(self.command_line)) if self.command_line else None

