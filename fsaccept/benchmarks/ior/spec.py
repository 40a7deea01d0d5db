"""IOR, declared once: its record and its catalogue of tests (``checks/ior_acceptance.py``).

Each test is one IOR phase (``command.PHASES``): a key, its role, the figures it reports,
and its ``phase``, ``operation`` (the summary row IOR's figure comes from) and
``figure_kind`` (MiB/s or IOPS).  A read test's dataset is a fixture with the read's key.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from fsaccept.benchmarks.catalogue import (ACCEPTANCE, FILL_DEFAULT, FILL_OPTIONAL, FIXTURE,
                                           Benchmark, DatasetMargin, TestSpec)
from fsaccept.benchmarks.ior import command, parse, parse_json, validity
from fsaccept.benchmarks.ior import figures as ior_figures
from fsaccept.benchmarks.ior.patterns import argv_of
from fsaccept.core import joboutput, placement
from fsaccept.core.joboutput import RANK_MARKER
from fsaccept.core.pernode import OUTLIER_FIGURE


def _ior(check: str, role: str, key: str, descr: str, phase: str, operation: str,
         figure_kind: str = "bandwidth", tags: tuple[str, ...] = (),
         figures: tuple[str, ...] | None = None, schema: str = "",
         stonewall_figure: bool = False,
         fixed: dict[str, tuple] | None = None, reduction_matters: bool = True,
         fill: str = "", bounded: dict[str, str] | None = None) -> TestSpec:
    """A test of one IOR phase; an acceptance test reports ``<operation>_<kind>`` and,
    when the entry asks for slow clients, the outlier count.  Its aggregate bandwidth
    (``<operation>_bandwidth``, a checkpoint's volume over its time) is judged against
    the components' bound of its operation."""
    if figures is None:
        figures = (() if role == FIXTURE else
                   (ior_figures.figure_name(operation, figure_kind),
                    OUTLIER_FIGURE))
    if bounded is None:
        main = ior_figures.figure_name(operation, figure_kind)
        bounded = ({main: operation} if role == ACCEPTANCE and figure_kind == "bandwidth"
                   and main in figures else {})
    return TestSpec(check=check, role=role, key=key, descr=descr, benchmark="ior",
                    tags=tags, figures=figures,
                    attrs={"phase": phase, "operation": operation,
                           "figure_kind": figure_kind,
                           "report_stonewall_figure": stonewall_figure},
                    schema=f"ior.schema.json#/$defs/{schema}" if schema else "",
                    fixed_thresholds=fixed or {}, reduction_matters=reduction_matters,
                    fill=fill, bounded=bounded)


#: A checkpoint's figures, and its restore's: the slowest rank's open-to-close time (the
#: main figure), the volume over it, and the fastest rank's time (stragglers show).
CHECKPOINT_FIGURES = ("checkpoint_time_s", "checkpoint_bandwidth", "first_rank_done_s")
RESTORE_FIGURES = ("restore_time_s", "restore_bandwidth", "first_rank_done_s",
                   ior_figures.INCORRECT_TRANSFERS)
#: A restore that reads back a wrong transfer fails, whatever its time.
NO_WRONG_TRANSFER = {ior_figures.INCORRECT_TRANSFERS: (0, None, 0, "transfers")}


def _checkpoint(variant: str, layout: str, tags: tuple[str, ...] = ()) -> tuple[TestSpec, ...]:
    """An AI checkpoint (a fixed volume written once, no stonewall), its restore read back
    on other nodes and verified, and the restore's own checkpoint (a fixture: the restore
    can run and be judged alone)."""
    snake = "_shared" if variant else ""
    phase = f"checkpoint{snake}"
    return (
        _ior(f"IORCheckpoint{variant}Write", ACCEPTANCE, f"checkpoint{snake}_write",
             f"AI checkpoint saved by every rank, {layout}", f"{phase}_write", "write",
             tags=("checkpoint", *tags), figures=CHECKPOINT_FIGURES,
             schema=f"checkpoint{snake}_write_test", fill=FILL_OPTIONAL,
             bounded={"checkpoint_bandwidth": "write"}),
        _ior(f"IORCheckpoint{variant}Dataset", FIXTURE, f"checkpoint{snake}_restore",
             f"AI checkpoint for the restore, {layout}", f"{phase}_write", "write"),
        _ior(f"IORCheckpoint{variant}Restore", ACCEPTANCE, f"checkpoint{snake}_restore",
             f"AI checkpoint restored on other nodes and verified, {layout}",
             f"{phase}_restore", "read", tags=("checkpoint", *tags), figures=RESTORE_FIGURES,
             schema=f"checkpoint{snake}_restore_test", fixed=NO_WRONG_TRANSFER,
             fill=FILL_OPTIONAL, bounded={"restore_bandwidth": "read"}),
    )


TESTS = (
    _ior("IORWriteBandwidth", ACCEPTANCE, "ior_write_bandwidth",
         "IOR write bandwidth, stonewalled, file per process", "write_bandwidth", "write",
         tags=("bandwidth",), schema="bandwidth_test", stonewall_figure=True,
         figures=("write_bandwidth", "write_bandwidth" + ior_figures.STONEWALL_SUFFIX,
                  OUTLIER_FIGURE),
         fill=FILL_DEFAULT),
    _ior("IORReadDatasetGeneration", FIXTURE, "ior_read_bandwidth",
         "IOR dataset for the sustained read", "read_generation", "write"),
    _ior("IORStonewalledRead", ACCEPTANCE, "ior_read_bandwidth",
         "IOR read bandwidth sustained for the deadline", "read_bandwidth", "read",
         tags=("bandwidth",), schema="read_bandwidth_test", fill=FILL_DEFAULT),
    _ior("IORRandomWriteIOPS", ACCEPTANCE, "ior_random_write_iops",
         "IOR random 4 KiB write IOPS", "random_write_iops", "write", "iops",
         tags=("iops",), schema="iops_test", fill=FILL_DEFAULT),
    _ior("IORRandomReadDatasetGeneration", FIXTURE, "ior_random_read_iops",
         "IOR dataset for random 4 KiB reads", "random_read_generation", "write"),
    _ior("IORRandomReadIOPS", ACCEPTANCE, "ior_random_read_iops",
         "IOR random 4 KiB read IOPS", "random_read_iops", "read", "iops",
         tags=("iops",), schema="random_read_test", fill=FILL_DEFAULT),
    _ior("IORIntegrityDataset", FIXTURE, "ior_data_integrity",
         "IOR patterned dataset for the integrity check", "integrity_write", "write"),
    _ior("IORDataIntegrity", ACCEPTANCE, "ior_data_integrity",
         "IOR data integrity: patterned write, verified read on other nodes",
         "integrity_read", "read", tags=("integrity",), schema="integrity_test",
         figures=(ior_figures.INCORRECT_TRANSFERS,),
         # A fast file system that returns wrong data must fail.
         fixed=NO_WRONG_TRANSFER, reduction_matters=False),
    _ior("IORSharedFileWrite", ACCEPTANCE, "ior_shared_write",
         "IOR shared-file write bandwidth, stonewalled", "shared_write", "write",
         tags=("bandwidth", "shared-file"), schema="shared_write_test",
         fill=FILL_OPTIONAL),
    _ior("IORSharedReadDatasetGeneration", FIXTURE, "ior_shared_read",
         "IOR shared-file dataset for the sustained read", "shared_read_generation", "write"),
    _ior("IORSharedFileRead", ACCEPTANCE, "ior_shared_read",
         "IOR shared-file read bandwidth sustained for the deadline", "shared_read", "read",
         tags=("bandwidth", "shared-file"), schema="shared_read_test",
         fill=FILL_OPTIONAL),
    *_checkpoint("", "file per process"),
    *_checkpoint("Shared", "one shared file", ("shared-file",)),
)


def output_figures(stdout: str, spec: TestSpec, entry: Mapping[str, Any] | None = None
                   ) -> tuple[dict[str, float], frozenset[str]]:
    """The figures a job's output gives a test, as live
    (:func:`fsaccept.benchmarks.ior.figures.figures_of`), and the names it answers for:
    a burst's three, else the main figure and its aggregate up to the stonewall; and
    the count of wrong transfers.  Given the test's reference entry (``entry``), the count
    of slow clients too, for a test that reports one: from IOR's per-rank counts and the
    job's rank lines, with the entry's ``outlier_fraction`` (none when it is 0)."""
    operation, kind = spec.attrs.get("operation"), spec.attrs.get("figure_kind")
    if not isinstance(operation, str) or not isinstance(kind, str):
        return {}, frozenset()
    phase = command.PHASES.get(str(spec.attrs.get("phase")))
    burst = tuple(spec.figures[:3]) if phase is not None and phase.rank_times else ()
    main = ior_figures.figure_name(operation, kind)
    names = {*burst} if burst else {main, main + ior_figures.STONEWALL_SUFFIX}
    fraction = 0.0
    if entry is not None and OUTLIER_FIGURE in spec.figures and not burst:
        names.add(OUTLIER_FIGURE)
        fraction = float(entry.get("outlier_fraction") or 0.0)
    return (ior_figures.figures_of(parse.parse_ior(stdout), operation, kind, burst,
                                   placement.parse_rank_map(stdout, RANK_MARKER), fraction),
            frozenset(names | {ior_figures.INCORRECT_TRANSFERS}))


def contract_options(spec: TestSpec, entry: Mapping[str, Any], ranks: int,
                     recorded: list[str]) -> list[str] | None:
    """The arguments the live check gives IOR for ``spec``'s phase, from its reference
    ``entry`` among ``ranks`` (:func:`fsaccept.benchmarks.ior.command.contract_options`),
    paths and seed as ``recorded``; None: a test of no IOR phase."""
    phase = spec.attrs.get("phase")
    if phase not in command.PHASES:
        return None
    return command.contract_options(phase, command.entry_parameters(spec.key, dict(entry)),
                                    ranks, recorded)


def output_header(stdout: str) -> tuple[int | None, int | None, list[str] | None]:
    """(tasks, nodes, the command line's words) IOR's own header prints."""
    run = parse.parse_ior(stdout)
    params = getattr(run, "params", None)
    return (getattr(params, "tasks", None), getattr(params, "nodes", None),
            argv_of(run.command_line) if run.command_line else None)


def output_reasons(stdout: str, stderr: str, spec: TestSpec,
                   entry: Mapping[str, Any] | None = None, ranks_per_node: Any = None
                   ) -> tuple[list[str], dict[str, Any]]:
    """The INVALID reasons a job's output gives a test, by the live check's rules
    (:func:`validity.ior_invalid_reasons`, what the output asked of itself:
    :func:`validity.output_expectation`, the deadline the entry's when it prints none;
    a burst's per-rank times, :func:`figures.burst_reasons`; a verifying read judged
    as one, :func:`validity.verified_read`; ranks in blocks of ``ranks_per_node``,
    :func:`fsaccept.core.placement.block_reasons`), worded as live; and, with no reason,
    what the live check records of its per-node figures
    (:func:`figures.recorded_node_fields`, with the entry's ``outlier_fraction``; none
    without the entry, or for a test that records none)."""
    operation, kind = spec.attrs.get("operation"), spec.attrs.get("figure_kind")
    phase = command.PHASES.get(str(spec.attrs.get("phase")))
    if not isinstance(operation, str) or not isinstance(kind, str) or phase is None:
        return [], {}
    run = joboutput.parsed(parse.parse_ior, parse.error_findings, stdout, stderr)
    if phase.verify:
        validity.verified_read(run)
    own = validity.output_expectation(run, operation)
    deadline = own.deadline_s or (int((entry or {}).get("deadline_s") or 0) or None)
    reasons = validity.ior_invalid_reasons(run, dataclasses.replace(
        own, deadline_s=deadline, figure_kind=kind))
    if phase.rank_times:
        reasons += ior_figures.burst_reasons(run, operation)
    ranks = placement.parse_rank_map(stdout, RANK_MARKER)
    reasons += placement.block_reasons(ranks, ranks_per_node, validity.BLOCK_PLACEMENT) \
        if isinstance(ranks_per_node, int) and ranks_per_node > 0 else (
            [f"ranks_per_node {str(ranks_per_node)[:40]!r} is not a count: the ranks' "
             "placement cannot be checked"] if ranks else [])
    if reasons or entry is None or phase.verify or phase.rank_times:
        return reasons, {}
    fraction = float(entry.get("outlier_fraction") or 0.0) \
        if OUTLIER_FIGURE in spec.figures else 0.0
    found = ior_figures.node_figures(run, ranks, operation, kind, fraction)
    name = ior_figures.figure_name(operation, kind)
    return [], ior_figures.recorded_node_fields(found, name, kind) if found else {
        "per_node_figures": {}, "slowest_nodes": "", "outlier_nodes_named": ""}


def output_dataset_margin(stdout: str, spec: TestSpec) -> DatasetMargin | None:
    """The dataset margin a job's output gives a test's deadline-bound phase
    (:func:`fsaccept.benchmarks.ior.figures.dataset_margin`, with the deadline the
    output asked of itself and the keys that size its dataset,
    :func:`command.dataset_keys`); None for a phase without one."""
    phase, operation = spec.attrs.get("phase"), spec.attrs.get("operation")
    keys = command.dataset_keys(phase) if phase in command.PHASES else ()
    if not keys or not isinstance(operation, str):
        return None
    run = parse.parse_ior(stdout)
    return ior_figures.dataset_margin(
        run, operation, validity.output_expectation(run, operation).deadline_s, keys)


BENCHMARK = Benchmark(
    name="ior", binary="ior", spack_package="ior", version_name="ior",
    figure_kinds=("bandwidth", "iops"),
    parser=parse.parse_ior, json_parser=parse_json.parse_ior_json,
    tests=TESTS, output_figures=output_figures, output_reasons=output_reasons,
    contract_options=contract_options, output_header=output_header,
    # What the entry sizes: the header IOR prints must give them as the contract asks.
    sized_options=("-t", "-b", "-s", "-D"),
    dataset_margin=output_dataset_margin,
    # The contract's degraded-mode clause: write and read bandwidth, and the data
    # written before the fault read back after the recovery.
    degraded=("IORWriteBandwidth", "IORReadDatasetGeneration", "IORStonewalledRead",
              "IORIntegrityDataset", "IORDataIntegrity"),
    degraded_after_recovery=("IORDataIntegrity",),
    # The scaling sweeps: write and read bandwidth over nodes, ranks and transfer sizes;
    # the shared-file tests over Lustre's stripe matrix.
    scaling={**dict.fromkeys(("IORWriteBandwidth", "IORReadDatasetGeneration",
                              "IORStonewalledRead"),
                             ("nodes", "ranks_per_node", "transfer_size")),
             **dict.fromkeys(("IORSharedFileWrite", "IORSharedReadDatasetGeneration",
                              "IORSharedFileRead"), ("stripe",))},
    entry_rules=command.entry_errors, target_rules=command.target_errors,
    pattern_reducible=command.pattern_reducible, data_patterns=tuple(command.DATA_PATTERNS),
    reread_rules=validity.reread_reasons, reference_rules=validity.judge_against_reference,
    unsafe_path_chars={"@": "IOR reads '@' in -o as a separator between several files "
                            "(FILENAME_DELIMITER)"})
