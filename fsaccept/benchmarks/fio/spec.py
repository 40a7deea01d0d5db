"""fio, declared once: its record and its catalogue of client tests
(``checks/fio_client.py``; the opt-in soak and interference tests in ``checks/soak`` and
``checks/interference``), one per kind of ``command.KINDS``, each reading the reference
entry ``fio_<kind>``; its figures are named after the entry's block size (the
interference test's after what they are: ``command.INTERFERENCE_FIGURES``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fsaccept.benchmarks.catalogue import ACCEPTANCE, FILL_OPTIONAL, Benchmark, TestSpec
from fsaccept.benchmarks.fio import command, parse


def _fio(check: str, kind: str, descr: str, tags: tuple[str, ...] = ("client",),
         checks_dir: str = "", fill: str = "") -> TestSpec:
    return TestSpec(check=check, role=ACCEPTANCE, key=f"fio_{kind}", benchmark="fio",
                    descr=descr, tags=tags, figures=command.figure_patterns(kind),
                    attrs={"kind": kind}, schema="fio.schema.json", checks_dir=checks_dir,
                    fill=fill,
                    may_be_zero=tuple(command.SOAK_FIGURES) if command.KINDS[kind].soak
                    else ())


TESTS = (
    _fio("FioRandomReadDirect", "randread_direct",
         "fio 4 KiB random read IOPS, direct=1 (client-limited regime)", fill=FILL_OPTIONAL),
    # The client's cache, not the file system: no fuller file system slows it (not re-run
    # filled).
    _fio("FioRandomReadBuffered", "randread_buffered",
         "fio 4 KiB random read IOPS, buffered (cache regime)"),
    _fio("FioSequentialWrite", "seq_write", "fio 1 MiB sequential write bandwidth, direct=1",
         fill=FILL_OPTIONAL),
    _fio("FioSequentialRead", "seq_read", "fio 1 MiB sequential read bandwidth, direct=1",
         fill=FILL_OPTIONAL),
    _fio("FioFsync", "fsync", "fio 4 KiB writes with fsync=1, queue depth 1: IOPS and latency",
         fill=FILL_OPTIONAL),
    # A per-client metadata rate (the parallel metadata figures are mdtest's).
    _fio("FioMetadata", "metadata", "fio file create/stat/delete rates (no mdtest needed)",
         tags=("client", "metadata"), fill=FILL_OPTIONAL),
    # Opt-in (checks/soak): minutes to hours; run when the reference has tests.fio_soak.
    _fio("FioSoak", "soak", "fio 1 MiB direct writes for runtime_s, judged on their time "
         "series: stalls, drift, a slow node", tags=("client", "soak"), checks_dir="soak"),
    # Opt-in (checks/interference): needs two groups of nodes in one job; run when the
    # reference has tests.fio_interference.
    _fio("FioInterference", "interference", "a noisy neighbour: the victims' p99 4 KiB "
         "direct read latency beside the aggressors' writes over their p99 alone, in one "
         "job, the overlap proven", tags=("client", "interference"),
         checks_dir="interference"),
)

def contract_options(spec: TestSpec, entry: Mapping[str, Any], _ranks: int,
                     recorded: list[str]) -> list[str] | None:
    """The arguments the live check gives each node's fio for ``spec`` from its reference
    ``entry`` (:func:`command.contract_options`), its directory that of the ``recorded``
    ones); None for an interference test: its two groups' commands are its record's,
    rebuilt from its kept files (:mod:`fsaccept.benchmarks.fio.interference`)."""
    if command.KINDS[spec.attrs["kind"]].interference:
        return None
    return command.contract_options(
        command.parameters(spec.key, spec.attrs["kind"], dict(entry)), recorded)


BENCHMARK = Benchmark(
    # fio's report is JSON either way (its --output file, or stdout with messages).
    name="fio", binary="fio", spack_package="fio", version_name="fio",
    figure_kinds=("bandwidth", "iops", "latency"),
    parser=parse.parse_fio, json_parser=parse.parse_fio, tests=TESTS,
    entry_rules=command.entry_errors, pattern_reducible=command.pattern_reducible,
    data_patterns=tuple(command.DATA_PATTERNS),
    contract_options=contract_options, report_options=command.report_options,
    # What the entry sizes: each node's report must give them as the contract asks.
    sized_options=("--rw", "--bs", "--size", "--filesize", "--nrfiles", "--direct",
                   "--ioengine", "--iodepth", "--runtime", "--time_based", "--numjobs",
                   "--fsync", "--end_fsync"),
    unsafe_path_chars={":": "fio reads ':' in directory= as a separator between several "
                            "directories"})
