"""fio's figures and verdict rebuilt from the reports its nodes kept (:func:`fio_reasons`):
``fio-<node>.json`` and ``.log``, for each node its ``rfm_job.out`` names, by the live
check's functions (:func:`fsaccept.benchmarks.fio.figures.reported_figures`,
:func:`fsaccept.benchmarks.fio.figures.judge_node`); its figures those of the verified
reference's entry, its outlier fraction the recorded one (which must be the entry's);
a count of nodes that is not its ``num_tasks``, and a ``num_tasks`` that is not the
job's node count; each node's report's job options against the contract
(``Benchmark.report_options``, :func:`_report_contract`).  A soak and an interference
test are judged from their records (:mod:`.soak`, :mod:`.interference`).
"""

from __future__ import annotations

import os
from typing import Any

from fsaccept.benchmarks import registry
from fsaccept.benchmarks.catalogue import TestSpec
from fsaccept.benchmarks.fio import command as fio_command
from fsaccept.benchmarks.fio import figures as fio_figures
from fsaccept.core.pernode import OUTLIER_FIGURE
from fsaccept.reporting.case import Case
from fsaccept.reporting.signoff.common import (EvidenceMissing, RunFiles, count_problem,
                                               entry_parameters, figures_agree, job_output,
                                               kept_dirs)
from fsaccept.reporting.signoff.contract import contract_argv, options_differ
from fsaccept.reporting.signoff.output import outlier_limit_reasons


def fio_entry(spec: TestSpec, reference: Any) -> tuple[Any, str]:
    """(the verified reference's fio entry of ``spec``, typed, or None; why it cannot
    be read, or '')."""
    return entry_parameters(spec, reference, lambda key, entry: fio_command.parameters(
        key, spec.attrs["kind"], entry))


def fio_reasons(case: Case, spec: TestSpec, reference: Any = None,
                files: RunFiles | None = None) -> list[str]:
    """A fio test judged again from the reports its nodes kept (``fio-<node>.json`` and
    ``fio-<node>.log``, for each node the job's ``rfm_job.out`` names with its exit
    status), each read once and digested by the manifest, by the live check's functions:

    - each node's findings (:func:`fsaccept.benchmarks.fio.figures.judge_node`: its exit
      status, its report missing or not fio's, fio's own INVALID findings, a known-bad
      version): an INVALID one is a reason, worded as live, whatever the case's result;
    - the nodes that reported against the case's ``num_tasks``
      (:func:`fsaccept.benchmarks.fio.figures.node_count_reasons`), which must be the
      job's node count (one fio per node);
    - its figures (:func:`fsaccept.benchmarks.fio.figures.node_figures`, ``combine``,
      ``reported_figures``): those of the verified reference's entry, its outlier
      fraction the recorded one (which must be the entry's); each figure the case
      records is the one they give;
    - with an outlier fraction above 0, its count recorded and judged against a limit
      of 0, as live (:func:`.output.outlier_limit_reasons`, from the record alone).

    A report or log that is not there is evidence missing, unless the node's exit status
    is not 0 (fio then may have written none; the live check judges the same).  Nothing
    to judge without a recorded figure, a verified reference, or any of the case's
    directories (a run report read without its run directory)."""
    if not any(f.value is not None for f in case.figures):
        return []
    params, why = fio_entry(spec, reference)
    if why:
        return [why]
    limit = (outlier_limit_reasons(case, spec, params.outlier_fraction)
             if params is not None else [])
    if params is None or files is None or not kept_dirs(case, files):
        return limit
    fraction = case.get("outlier_fraction")
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)):
        return [f"outlier_fraction {str(fraction)[:40]!r} is not a number: its fio "
                "figures cannot be rebuilt"] + limit
    out = ([] if fraction == params.outlier_fraction else
           [f"outlier_fraction is recorded as {fraction}, but the reference file's "
            f"tests.{spec.key} says {params.outlier_fraction}"]) + limit
    specs = fio_command.figure_specs(params)
    kinds = fio_command.figure_kinds(specs)
    target = str(case.get("target_dir") or "")
    try:
        job = job_output(case, files)
        exits = fio_command.node_exits(job.stdout)
        # The node's memory changes a note only (the cache regime), never a reason.
        memory = fio_command.node_memory_bytes(job.stdout)
        nodes = sorted(exits)
        out += _fio_count_reasons(case, nodes)
        per_node, found, reports = {}, {}, {}
        where = f"{job.path}: no {fio_command.NODE_MARKER} line names a node"
        for node in nodes:
            name, ran = f"fio-{node}.json", exits[node] == "0"
            report, path = node_file(case, files, name, "a node's fio report", ran)
            log, _ = node_file(case, files, f"fio-{node}.log", "a node's fio messages",
                                    ran)
            where = f"{len(nodes)} node reports fio-NODE.json in {os.path.dirname(path)}"
            judged = fio_figures.judge_node(node, name, report, log or "", exits[node],
                                            memory.get(node), target, specs, kinds)
            found[node] = judged.findings
            if judged.run is not None:
                reports[node] = (judged.run, path)
            if judged.figures is not None:
                per_node[node] = judged.figures
    except EvidenceMissing as err:
        return out + [str(err)]
    out += _report_contract(spec, reference, reports)
    invalid = fio_figures.node_reasons(found)
    if invalid:  # no figure, as live
        return out + invalid
    given = (fio_figures.reported_figures(fio_figures.combine(per_node, specs, fraction))
             if per_node else {})
    names = {*fio_command.judged_figures(specs), OUTLIER_FIGURE}  # all it may report
    return out + figures_agree(case, names, given, f"fio output ({where})")


def _report_contract(spec: TestSpec, reference: Any,
                     reports: dict[str, tuple[Any, str]]) -> list[str]:
    """Each node's report (node -> its parsed run, its path) against the contract: the
    options the verified entry sizes (``Benchmark.sized_options``) as the report's own
    job options give them (``Benchmark.report_options``), nodes that differ alike
    together."""
    bench = registry.BENCHMARKS.get(spec.benchmark)
    entry = getattr(reference, "entries", {}).get(spec.key)
    if bench is None or bench.report_options is None or bench.contract_options is None \
            or not isinstance(entry, dict):
        return []
    want, why = contract_argv(spec, bench, entry, len(reports), [])
    if why:
        return [f"the command tests.{spec.key} asks cannot be built: {why}"]
    if want is None:
        return []

    def sized(argv: list[str]) -> list[str]:
        return [a for a in argv if a.split("=", 1)[0] in bench.sized_options]

    differ: dict[str, list[str]] = {}
    for node, (run, _) in sorted(reports.items()):
        given = bench.report_options(run)
        if not given:  # no whole report (empty, cut, not JSON): its node's rules say so
            continue
        diff = options_differ(sized(given), sized(want))
        if diff:
            differ.setdefault(diff, []).append(node)
    out = []
    for diff, nodes in differ.items():
        paths = [reports[n][1] for n in nodes]
        where = (paths[0] if len(paths) == 1 else
                 f"{len(paths)} node reports in {os.path.dirname(paths[0])}")
        out.append(f"not the run the contract asks: the report of {', '.join(nodes)[:100]} "
                   f"({where}) {diff} (tests.{spec.key})")
    return out


def _fio_count_reasons(case: Case, nodes: list[str]) -> list[str]:
    """The nodes fio reported from against the case's ``num_tasks``, as live; and that
    count the job's nodes (Slurm's node list, when recorded): fio runs one task per node
    (its entry has no ``ranks_per_node``)."""
    tasks = case.get("num_tasks")
    why = count_problem(tasks)
    if why:
        return [f"num_tasks {str(tasks)[:40]!r} ({why}): how many nodes were to run fio "
                "is not recorded"]
    out = fio_figures.node_count_reasons(nodes, tasks)
    job_nodes = case.job.nodelist
    if job_nodes and len(job_nodes) != tasks:
        out.append(f"num_tasks is recorded as {tasks}, but the job had {len(job_nodes)} "
                   f"node(s) ({','.join(job_nodes)[:200]}): fio runs once per node")
    return out


def node_file(case: Case, files: RunFiles, name: str, what: str,
                   ran: bool) -> tuple[str | None, str]:
    """(the text of a node's kept file ``name``, its path): None when it is not there
    and the node's exit status was not 0 (``ran`` False: the live check judges a report
    missing then); EvidenceMissing when it is not there after an exit status of 0, or
    cannot be read."""
    path = files.where(case, name)
    if not ran and not os.path.lexists(path):
        return None, path
    return files.text(case, name, what)
