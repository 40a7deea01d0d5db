"""A benchmark's figures and verdict rebuilt from its job's own output, by the functions
its record names (IOR's, mdtest's and md-workbench's):

- its figures, parsed again from ``rfm_job.out`` (``Benchmark.output_figures``,
  :func:`output_figure_reasons`): each one the test records the one its output gives, as
  live; a case none of whose directories is there (a run report read alone) shows them
  as recorded.  IOR's count of slow clients too
  (:func:`fsaccept.benchmarks.ior.figures.node_figures`), with the verified reference
  entry's ``outlier_fraction``: the recorded fraction must be the entry's; with a
  fraction above 0 the count must be recorded and judged against a limit of 0
  (:func:`_outlier_reasons`, from the record alone);
- its verdict, judged again from the same output (``Benchmark.output_reasons``,
  :func:`output_reasons`: the live check's validity rules and the ranks' placement,
  worded as live); and what the live check records from that output (``node_mounts``,
  ``servers_after``, ``job_fstype``, ``rank_map``:
  :func:`fsaccept.core.joboutput.recorded_fields`; IOR's per-node figures, slowest nodes
  and slow clients named) the case's, each that differs INVALID with the live reason for
  what the output gives;
- its dataset margin, for the report (:func:`dataset_margin_of`).
"""

from __future__ import annotations

import os
from typing import Any

from fsaccept.benchmarks import registry
from fsaccept.benchmarks.catalogue import DatasetMargin, TestSpec
from fsaccept.core import guards, joboutput, servers
from fsaccept.core.formatting import format_number
from fsaccept.core.pernode import OUTLIER_FIGURE
from fsaccept.reporting.case import Case
from fsaccept.reporting.signoff.common import (EvidenceMissing, RunFiles, direct_io,
                                               figures_agree, job_output, kept_dirs,
                                               servers_after_reasons)


def output_figure_reasons(case: Case, spec: TestSpec, files: RunFiles | None = None,
                          reference: Any = None) -> list[str]:
    """A benchmark's figures rebuilt from the job's own output (``rfm_job.out``, read
    once and digested by the manifest) by the function its record names
    (``Benchmark.output_figures``: parsed and computed as the live check reports them):
    each figure the case records is the one its output gives.  Given the verified
    reference (``reference``), its entry's too: IOR's count of slow clients
    (``outlier_nodes``) is rebuilt with the entry's ``outlier_fraction``, which the case
    must have recorded and judged as live (:func:`_outlier_reasons`, from the record
    alone).  A case that records none (a fixture, a test that ended before its figures)
    has nothing to compare; a case none of whose directories is there (a run report read
    without its run directory) shows its figures as recorded."""
    bench = registry.BENCHMARKS.get(spec.benchmark)
    if bench is None or bench.output_figures is None:
        return []
    if not any(f.value is not None for f in case.figures):
        return []
    entry = getattr(reference, "entries", {}).get(spec.key) if reference is not None else None
    entry = entry if isinstance(entry, dict) else None
    out = (_outlier_reasons(case, spec, entry.get("outlier_fraction") or 0.0)
           if entry is not None and OUTLIER_FIGURE in spec.figures else [])
    if files is None or not kept_dirs(case, files):
        return out
    try:
        job = job_output(case, files)
    except EvidenceMissing as err:
        return out + [str(err)]
    given, names = bench.output_figures(job.stdout, spec, entry)
    return out + figures_agree(case, names, given, f"{bench.name} output ({job.path})")


def output_reasons(case: Case, spec: TestSpec, files: RunFiles | None = None,
                   reference: Any = None, fstype: str | None = None) -> list[str]:
    """A benchmark's verdict judged again from the job's own output (``rfm_job.out`` and
    ``rfm_job.err``, read once and digested by the manifest) by the live check's rules,
    through the function its record names (``Benchmark.output_reasons``): each INVALID
    reason it gives (an ERROR line, an output cut short or holding two runs, a known-bad
    version, ranks not in blocks...) is a reason, worded as live, beyond those the case
    says.  And what the live check records from that output must be what the case
    records: the nodes' view of the target, their answer on the storage servers after
    the benchmark, the job's file-system type and rank map
    (:func:`fsaccept.core.joboutput.recorded_fields`), and the benchmark's own (IOR's
    per-node figures, slowest nodes and slow clients named); a field that differs is a
    reason, with the live check's reason for what the output gives (``fstype``: the
    verified reference's ``target.fstype``).  Nothing to judge for a case that records
    no figure, or none of whose directories is there."""
    bench = registry.BENCHMARKS.get(spec.benchmark)
    if bench is None or bench.output_reasons is None:
        return []
    if not any(f.value is not None for f in case.figures):
        return []
    if files is None or not kept_dirs(case, files):
        return []
    try:
        job = job_output(case, files)
    except EvidenceMissing:
        return []  # output_figure_reasons says so
    entry = getattr(reference, "entries", {}).get(spec.key) if reference is not None else None
    reasons, fields = bench.output_reasons(job.stdout, job.stderr, spec,
                                           entry if isinstance(entry, dict) else None,
                                           case.get("ranks_per_node"))
    said = str(case.get("invalid_reasons") or "")
    where = os.path.basename(job.path)
    out = [f"its output ({where}): {r}" for r in reasons if r not in said]
    for key, given in {**joboutput.recorded_fields(job.stdout), **fields}.items():
        recorded = case.get(key)
        if (recorded if recorded is not None else type(given)()) == given:
            continue
        out.append(f"{key} is recorded as {str(recorded)[:200]!r}, but its output "
                   f"({where}) gives {str(given)[:200]!r}")
        out += _rebuilt_field_reasons(case, spec, key, given, fstype)
    return out


#: The case's fields of its dataset margin (``rfm/ior.py``): the data, what the deadline
#: consumed, the one over the other, the entry's keys that size the data.
MARGIN_FIELDS = ("dataset_bytes", "dataset_consumed_bytes", "dataset_margin",
                 "dataset_sized_by")


def dataset_margin_of(case: Case, files: RunFiles | None = None) -> DatasetMargin | None:
    """A case's dataset margin, for the report (never a verdict): rebuilt from the job's
    own output by the function its benchmark's record names
    (``Benchmark.dataset_margin``) when the run's files are there, else as the case
    recorded it (two whole byte counts above 0, its deadline, the keys that size it).  None: a test of
    no deadline-bound phase, or nothing to tell it from."""
    spec = registry.TESTS.get(registry.class_of_case(case.get("name")))
    bench = registry.BENCHMARKS.get(spec.benchmark) if spec is not None else None
    if bench is None or bench.dataset_margin is None:
        return None
    if files is not None and kept_dirs(case, files):
        try:
            return bench.dataset_margin(job_output(case, files).stdout, spec)
        except EvidenceMissing:
            pass
    had, used = case.get(MARGIN_FIELDS[0]), case.get(MARGIN_FIELDS[1])
    deadline, keys = case.get("deadline_s"), case.get(MARGIN_FIELDS[3])
    # The live check records the keys that size a deadline-bound phase's data, and for
    # no other phase.
    if not isinstance(keys, str) or not keys.split() or not all(
            isinstance(v, int) and not isinstance(v, bool) and v > 0
            for v in (had, used, deadline)):
        return None
    return DatasetMargin(had, used, deadline, tuple(keys.split()))


def _rebuilt_field_reasons(case: Case, spec: TestSpec, key: str, given: Any,
                           fstype: str | None) -> list[str]:
    """The live check's reasons on a field as the job's output gives it (the run report
    recorded another: its own were judged): the nodes' view of the target, the job's
    file-system type, the servers after the benchmark."""
    answers = servers.ungrouped(given) if isinstance(given, str) else None
    if key == "node_mounts" and fstype and answers is not None:
        return guards.node_mount_reasons(answers, fstype, str(case.get("target_mount")),
                                         list(case.job.nodelist), direct_io(case, spec))
    if key == "job_fstype" and fstype:
        return guards.fstype_reasons(str(given), fstype,
                                     f"job_fstype: {case.get('target_dir') or 'the target'}")
    if key == "servers_after" and answers is not None:
        return servers_after_reasons(answers, case, spec)
    return []


def _outlier_reasons(case: Case, spec: TestSpec, fraction: float) -> list[str]:
    """A test whose reference entry seeks slow clients (``fraction``, its
    ``outlier_fraction``), as live: the recorded fraction is the entry's, and the count
    is judged as live (:func:`outlier_limit_reasons`)."""
    out = []
    recorded = case.get("outlier_fraction", fraction)
    if isinstance(recorded, bool) or not isinstance(recorded, (int, float)):
        out.append(f"outlier_fraction {str(recorded)[:40]!r} is not a number")
    elif recorded != fraction:
        out.append(f"outlier_fraction is recorded as {recorded}, but the reference file's "
                   f"tests.{spec.key} says {fraction}")
    return out + outlier_limit_reasons(case, spec, fraction)


def outlier_limit_reasons(case: Case, spec: TestSpec, fraction: float) -> list[str]:
    """With an ``outlier_fraction`` above 0, the count of slow clients is recorded and
    judged against a limit of 0, as the live check judges it (a slow client fails the
    test): neither dropped from the run report nor passed by a looser limit."""
    if fraction <= 0:
        return []
    fig = next((f for f in case.figures if f.name == OUTLIER_FIGURE), None)
    if fig is None or fig.value is None:
        return [f"{OUTLIER_FIGURE}: tests.{spec.key} seeks slow clients (outlier_fraction "
                f"{fraction}), but the run report records no such figure"]
    if fig.upper_limit is None or not fig.upper_limit <= 0:
        return [f"{OUTLIER_FIGURE}: tests.{spec.key} seeks slow clients (outlier_fraction "
                f"{fraction}): its limit is 0, but the test was judged against "
                + (f"≤ {format_number(fig.upper_limit)}" if fig.upper_limit is not None
                   else "no limit")]
    return []
