"""The evidence a test case recorded, judged again when a run report is re-read: by the
same functions the live check called (one function, two callers), so that an edited run
report whose test says ``pass`` is INVALID when its own evidence says the figure is
worthless.

- the directory the test wrote in (``target_dir``), in its own target's data directory
  of the verified reference (:func:`target_dir_reasons`);
- the nodes' view of the target before the benchmark (``node_mounts``):
  :func:`fsaccept.core.guards.node_mount_reasons`, and each node's recorded mount
  options against the verified reference's ``mount_options``:
  :func:`fsaccept.core.mountopts.node_reasons`;
- the storage servers after it (``servers_after``): :func:`fsaccept.core.servers.degraded`,
  and for a degraded-mode test :func:`fsaccept.core.degraded.not_degraded_after`, matched
  to the job's node list;
- a degraded-mode test's fault (``fault_timeline``): :class:`fsaccept.core.degraded.Fault`,
  within its own job, and the data it reads written before the fault began, for the
  same scenario (:func:`degraded_dataset_reasons`, given the fixtures it depended on);
  its scenario (``fault_scenario``) one the verified reference names and that runs its
  test, and its recorded fraction (``degraded_fraction``) that scenario's
  (:func:`degraded_scenario_reasons`; its thresholds, fault ceilings included, are that
  scenario's: :func:`fsaccept.reporting.runreport.looser_thresholds`);
- the file system the job ran on (``job_fstype``) against the verified reference's
  ``target.fstype``: :func:`fsaccept.core.guards.fstype_reasons`;
- the data written (``data_pattern``) against the session's data-reduction probe:
  :func:`fsaccept.core.reduction.reducible_data_reasons`, and the probe's own sentence
  against its ratios (:class:`fsaccept.core.reduction.ProbeResult`);
- a checkpoint's bandwidth against its volume (``burst_bytes``) over its time:
  :class:`fsaccept.benchmarks.ior.figures.Burst`; that volume and the recorded command's
  shards against the verified reference's ``checkpoint_size``
  (:func:`fsaccept.benchmarks.ior.command.checkpoint_block`); its slowest and fastest
  rank against its figures (:func:`fsaccept.benchmarks.ior.figures.rank_text`);
- a read that verifies (a restore, the integrity check): its recorded IOR command's ``-R``;
- the job's record in Slurm's accounting (``job_accounting``): this job's, and not ended
  by Slurm (:func:`fsaccept.core.slurm.accounting_reasons`, as live);
- a time limit noted after the benchmark (``time_limit_after_benchmark``): a note only
  when the benchmark had ended with exit 0;
- IOR's, mdtest's and md-workbench's figures, parsed again from the job's own
  ``rfm_job.out`` by the function their record names (``Benchmark.output_figures``,
  :func:`output_figure_reasons`): each one the test records the one its output gives,
  as live; a case none of whose directories is there (a run report read alone) shows
  them as recorded.  IOR's count of slow clients too
  (:func:`fsaccept.benchmarks.ior.figures.node_figures`): from IOR's per-rank counts
  and the job's rank lines, both in ``rfm_job.out``, with the verified reference
  entry's ``outlier_fraction``.  The recorded fraction must be the entry's; with a
  fraction above 0 the count must be recorded and judged against a limit of 0
  (:func:`_outlier_reasons`, from the record alone);
- IOR's, mdtest's and md-workbench's verdict, judged again from the same output by the
  function their record names (``Benchmark.output_reasons``, :func:`output_reasons`:
  the live check's validity rules and the ranks' placement, worded as live); and what
  the live check records from that output (``node_mounts``, ``servers_after``,
  ``job_fstype``, ``rank_map``: :func:`fsaccept.core.joboutput.recorded_fields`; IOR's
  per-node figures, slowest nodes and slow clients named) the case's, each that differs
  INVALID with the live reason for what the output gives;
- fio's figures, rebuilt from the reports its nodes kept (:func:`fio_reasons`):
  ``fio-<node>.json`` and ``.log``, for each node its ``rfm_job.out`` names.  The live
  check's functions compute them
  (:func:`fsaccept.benchmarks.fio.figures.reported_figures`).  Its figures are those of
  the verified reference's entry; its outlier fraction is the recorded one, which must
  be the entry's; above 0, its count must be recorded and judged against a limit of 0.
  Each node's findings are judged again from the same files, by the live check's
  function (:func:`fsaccept.benchmarks.fio.figures.judge_node`): its exit
  status, its report missing or not fio's, fio's own INVALID findings, a known-bad
  version.  Each INVALID one is a reason, whatever the case's result says.  So is a
  count of nodes that is not its ``num_tasks``, and a ``num_tasks`` that is not the
  job's node count.  A soak and an interference test are judged from their records;
- the run against the contract (:func:`contract_reasons`): the nodes, ranks per node and
  tasks its verified entry asks of the recorded partition (the benchmark record's
  ``placement``, as live), the job's node list, the recorded command
  (``Benchmark.contract_options``: IOR's ``ior_options``, mdtest's and md-workbench's
  ``run_options``, fio's ``command_line``) and the job's own rank lines and output
  header (``Benchmark.output_header``, ``sized_options``); each fio node's report, its
  job options (``Benchmark.report_options``, in :func:`fio_reasons`);
- the semantics program's case lines, parsed again from the job's own ``rfm_job.out``
  (:func:`semantics_rebuilt`; ``semantics_cases`` must be what they give, as printed,
  or as an older check recorded them, by ``repr``): each figure
  the value its line gives, each delay's ceiling no looser than the verified reference's
  ``max_visibility_s``, and a case that fails by
  :func:`fsaccept.benchmarks.semantics.validity.failures` never in a passed test;
- a soak's record, read from the file the soak keeps (``soak-record.json``: its logs are
  not kept; ``soak_record`` must be that file's): judged again by :func:`fsaccept.benchmarks.fio.soak.judge`,
  its settings those of the verified reference's entry (no looser), each judged figure
  the value the record gives, and a judgement that fails never in a passed test; the
  record held to its settings and the job (:func:`fsaccept.benchmarks.fio.soak.record_reasons`,
  as live): a bandwidth series of the settings' length, a client on each of the job's
  nodes, a kept stall over each span without progress beyond the limit;
- an interference test's record, read from the file it keeps
  (``interference-record.json``; ``interference_record`` must be that file's): judged
  again by :func:`fsaccept.benchmarks.fio.interference_judge.judge` (the overlap proven from the steps' own
  clocks, the ratio of two p99s that are latencies), its settings those of the verified
  reference's entry, each figure the value the record gives, and a judgement that is not
  PASS never in a passed test; the record the one the job's kept files rebuild
  (:func:`interference_rebuilt`: the steps' fio reports, the aggressors' logs and
  ``rfm_job.out``, by the live check's functions);
- a filled test's fill record, read from the file its FillTarget keeps
  (``fill-record.json``; its ``fill_record``, and FillTarget's, must be that file's:
  :func:`fill_reasons`, :func:`fill_target_reasons`): the level reached judged again by
  :func:`fsaccept.core.fill.judge_level` (df once filled, and df at the test's own start:
  the ``fill_df`` line its own ``rfm_job.out`` printed, which its ``fill_df`` must be,
  :func:`filled_df_reasons`) and the filler by :func:`fsaccept.core.fill.judge_filler`,
  its limits those of the verified reference's ``fill:`` section (the comparison with its
  empty counterpart is the session's: :mod:`fsaccept.reporting.fill`);
- the quota program's run, rebuilt from the job's own output (``quota_lines`` must be
  its lines): :mod:`fsaccept.benchmarks.quota.validity` (with the verified reference's
  entry, its lines held to each other, its directory the test's and below the verified
  target's path), its figures those the lines give, and its thresholds no looser than
  the entry's;
- IO500's results, rebuilt from the job's ``io500-results/`` and stdout
  (:func:`io500_rebuilt`; ``io500_result`` must be what they give):
  :func:`fsaccept.benchmarks.io500.validity.invalid_reasons`
  (its score recomputed from its phases), and its figures those the results give.

Each file a record is rebuilt from is read once by the sign-off's reader
(:class:`RunFiles`): bounded, below the run directory, without a symbolic link, where
the run directory is now; the manifest then digests those very bytes.  A file missing
or refused is INVALID ("evidence missing: PATH"), whatever version made the run report.

A JSON record a case carries (the probe's, the soak's, the interference test's, the
fill's) holding an integer beyond a float's range cannot be read (:func:`_record_json`):
no check writes one, and every float sum over it would raise.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Callable

from fsaccept.benchmarks import registry
from fsaccept.benchmarks.catalogue import ACCEPTANCE, FIXTURE, SCALING, DatasetMargin, TestSpec
from fsaccept.benchmarks.fio import command as fio_command
from fsaccept.benchmarks.fio import figures as fio_figures
from fsaccept.benchmarks.fio import interference as fio_interference
from fsaccept.benchmarks.fio import interference_judge as interference
from fsaccept.benchmarks.fio import soak
from fsaccept.benchmarks.fio.command import KINDS as FIO_KINDS
from fsaccept.benchmarks.io500 import config as io500_config
from fsaccept.benchmarks.io500 import parse as io500_parse
from fsaccept.benchmarks.io500 import validity as io500_validity
from fsaccept.benchmarks.ior.command import (PHASES, checkpoint_block, checkpoint_volume,
                                             ior_size)
from fsaccept.benchmarks.ior.command import parameters as ior_parameters
from fsaccept.benchmarks.ior.figures import RANK_TEXT, Burst, rank_text
from fsaccept.benchmarks.ior.patterns import argv_of, last_option
from fsaccept.benchmarks.quota import command as quota_command
from fsaccept.benchmarks.quota import parse as quota_parse
from fsaccept.benchmarks.quota import validity as quota_validity
from fsaccept.benchmarks.semantics import command as semantics_command
from fsaccept.benchmarks.semantics import parse as semantics_parse
from fsaccept.benchmarks.semantics import validity as semantics_validity
from fsaccept.core import (degraded, fill, guards, inputs, joboutput, mountopts, placement,
                           reduction, servers, slurm)
from fsaccept.core.findings import figure_problem
from fsaccept.core.formatting import format_number
from fsaccept.core.pernode import OUTLIER_FIGURE
from fsaccept.core.reference import TARGET_PARAMETER, ReferenceError
from fsaccept.core.units import format_size
from fsaccept.reporting.case import Case

#: The class of the data-reduction probe (the catalogue's).
PROBE = "DataReductionProbe"


class EvidenceMissing(Exception):
    """A file a check leaves as its evidence that the sign-off cannot read; the message
    is the INVALID reason (``evidence missing: PATH ...``)."""


def _same(path: str) -> str:
    return path


@dataclass
class RunFiles:
    """The files a run's test cases left in their directories, where the run directory
    is now (``rebase``: :func:`fsaccept.reporting.manifest.rebaser`), read by the
    sign-off's reader (``reads``): each once, bounded, below the run directory, without
    a symbolic link, so that what is judged is what the manifest digests."""

    reads: inputs.Reader
    rebase: Callable[[str], str] = _same
    #: The last job output read (its stdout's path -> it): the rules of one case share
    #: it, and no more than one is held.
    last_job: dict[str, JobOutput] = field(default_factory=dict, repr=False)

    def where(self, case: Case, name: str) -> str:
        """``name`` in the case's output directory (ReFrame copies a job's output and
        ``keep_files`` there), else in its stage directory (kept for a test that did not
        pass); the output directory's when neither has it."""
        found = []
        for key in ("outputdir", "stagedir"):
            d = case.get(key)
            if isinstance(d, str) and d:
                found.append(os.path.join(self.rebase(d), name))
                if os.path.lexists(found[-1]):
                    return found[-1]
        if not found:
            raise EvidenceMissing(f"evidence missing: {name}: the test case names no "
                                  "output or stage directory")
        return found[0]

    def text(self, case: Case, name: str, what: str) -> tuple[str, str]:
        """(the text of ``name``, decoded as the live check decodes it; its path);
        EvidenceMissing naming the path when it is not there or cannot be read."""
        path = self.where(case, name)
        if not os.path.lexists(path):
            raise EvidenceMissing(f"evidence missing: {path}")
        try:
            data = self.reads.read(path, inputs.MAX_LOG_BYTES, what)
        except inputs.InputError as err:
            raise EvidenceMissing(f"evidence missing: {str(err)[:300]}") from None
        return joboutput.decoded(data), path


    def job_text(self, case: Case, name: str, what: str) -> tuple[str, str]:
        """(the text of a job's file ``name``, decoded as :meth:`text` decodes it; its
        path), at most :data:`fsaccept.core.inputs.MAX_JOB_OUTPUT_BYTES`: a larger file
        is refused by its size before a byte is read.  Read a piece at a time
        (:meth:`fsaccept.core.inputs.Reader.pieces`: digested, its bytes never kept), so
        that only its text is held.  EvidenceMissing as :meth:`text`."""
        path = self.where(case, name)
        if not os.path.lexists(path):
            raise EvidenceMissing(f"evidence missing: {path}")
        data = bytearray()
        try:
            for piece in self.reads.pieces(path, inputs.MAX_JOB_OUTPUT_BYTES, what):
                data += piece
        except inputs.InputError as err:
            raise EvidenceMissing(f"evidence missing: {str(err)[:300]}") from None
        text = joboutput.decoded(data)
        del data
        return text, path

    def lines(self, case: Case, name: str, what: str
              ) -> tuple[Callable[[], Iterator[str]], str]:
        """(a function giving the lines of ``name`` anew, decoded as :meth:`text` decodes
        them, read a piece at a time: :meth:`fsaccept.core.inputs.Reader.pieces`; its
        path).  EvidenceMissing when it is not there; InputError from the lines when it
        cannot be read."""
        path = self.where(case, name)
        if not os.path.lexists(path):
            raise EvidenceMissing(f"evidence missing: {path}")
        return (lambda: joboutput.decoded_lines(
            self.reads.pieces(path, inputs.MAX_LOG_BYTES, what))), path


@dataclass
class JobOutput:
    """A job's output as the live check read it (:mod:`fsaccept.core.joboutput`): its
    counted stdout, its stderr as the benchmark's aftermath, what the job recorded about
    itself; and where its stdout lies."""

    stdout: str
    stderr: str
    info: dict[str, str]
    path: str


def job_output(case: Case, files: RunFiles | None) -> JobOutput:
    """The job's own ``rfm_job.out`` and ``rfm_job.err`` of ``case``, read once through
    ``files``; EvidenceMissing when they are not there (or there is no run directory)."""
    if files is None:
        raise EvidenceMissing(f"evidence missing: {joboutput.JOB_STDOUT}: the run directory "
                              "was not read")
    path = files.where(case, joboutput.JOB_STDOUT)
    if path in files.last_job:
        return files.last_job[path]
    files.last_job.clear()  # one at a time: its text is let go before the next is read
    out, path = files.job_text(case, joboutput.JOB_STDOUT, "a job's output")
    err, _ = files.job_text(case, joboutput.JOB_STDERR, "a job's error output")
    stdout = joboutput.counted_stdout(out)
    del out
    info = joboutput.job_info(stdout)
    stderr = joboutput.benchmark_stderr(info, joboutput.counted_stderr(err))
    files.last_job[path] = JobOutput(stdout, stderr, info, path)
    return files.last_job[path]


@dataclass
class SessionEvidence:
    """What the session says as a whole: the data-reduction probe's result by the mount
    point it measured (a probe whose record contradicts itself gives none), and what is
    wrong with each probe case; the run's files each test case's evidence is rebuilt
    from (None: none read, e.g. a run report alone)."""

    probes: dict[str, reduction.ProbeResult] = field(default_factory=dict)
    probe_problems: dict[str, list[str]] = field(default_factory=dict)
    files: RunFiles | None = None
    #: FillTarget's test cases by (unique name, 'system:partition'), the last run of each.
    fill_targets: dict[tuple[str, str], Case] = field(default_factory=dict)


def probe_problems(case: Case) -> tuple[reduction.ProbeResult | None, list[str]]:
    """The probe's result, re-read from its recorded measurements, and where its sentence
    (verdict, summary) or its figures disagree with them."""
    text = case.get("reduction_result")
    if not text:
        return None, []
    result = _probe_result(text)
    if result is None:
        return None, ["its recorded measurements (reduction_result) cannot be read"]
    out = []
    if case.get("reduction_verdict") not in (None, result.verdict):
        out.append(f"it says {str(case.get('reduction_verdict'))[:80]!r}, but its own "
                   f"measurements say {result.verdict!r}")
    if case.get("reduction_summary") not in (None, result.summary()):
        out.append("its summary is not what its own measurements say: "
                   f"{result.summary()[:200]}")
    for fig in case.figures:
        m = result.measurements.get(fig.name.removesuffix("_reduction").replace("_", "-"))
        if fig.name.endswith("_reduction") and (m is None or fig.value != m.ratio):
            out.append(f"figure {fig.name} {fig.value!r} is not the ratio it measured")
    return result, out


def _record_json(text: str) -> Any:
    """A JSON record a test case carries (``reduction_result``, ``io500_result``);
    ValueError for an integer beyond a float's range (10**400): no check records one, and
    every float sum over it raises OverflowError."""
    return json.loads(text, parse_int=_float_range_int)


def _float_range_int(digits: str) -> int:
    value = int(digits)
    try:
        float(value)
    except OverflowError:
        raise ValueError(f"an integer of {len(digits)} characters is beyond a float's "
                         "range") from None
    return value


def _probe_result(text: Any) -> reduction.ProbeResult | None:
    """The probe's recorded measurements, read and every ratio of them computed once
    (None: not what the probe records, e.g. a space of 0 within an error below 0)."""
    try:
        result = reduction.ProbeResult.from_dict(_record_json(text))
        for m in result.measurements.values():
            m.text()
        result.summary()
    except (TypeError, ValueError, KeyError, AttributeError, RecursionError,
            ZeroDivisionError):
        return None
    return result


def session_evidence(cases: Sequence[Case], files: RunFiles | None = None) -> SessionEvidence:
    out = SessionEvidence(files=files)
    for case in cases:
        if registry.class_of_case(case.get("name")) == registry.FILL_TARGET.check:
            out.fill_targets[(str(case.get("unique_name") or case.get("name")),
                              f"{case.get('system')}:{case.get('partition')}")] = case
        if registry.class_of_case(case.get("name")) != PROBE or case.get("result") != "pass":
            continue
        result, problems = probe_problems(case)
        if problems:
            out.probe_problems[str(case.get("uuid"))] = problems
        elif result is not None:
            out.probes[str(case.get("target_mount") or result.target)] = result
    return out


def _direct_io(case: Case, spec: TestSpec) -> bool:
    kind = FIO_KINDS.get(spec.attrs.get("kind", ""))
    return case.get("direct_io") is True or bool(kind and kind.direct)


def _reducible(label: str) -> tuple[str, bool] | None:
    """(the pattern's words, whether the benchmark's own rule calls it reducible) of a
    recorded ``data_pattern`` ('ior random (irreducible)'): the label's own words on
    reducibility are not taken on trust."""
    match = re.match(r"(\S+) (\S+) \(", label)
    if not match or match.group(1) not in registry.BENCHMARKS:
        return None
    bench = registry.BENCHMARKS[match.group(1)]
    if bench.data_patterns and match.group(2) not in bench.data_patterns:
        return None  # not a pattern it writes: no rule says what it is
    rule = bench.pattern_reducible
    return label, (rule(match.group(2)) if rule else True)


def evidence_reasons(case: Case, spec: TestSpec | None, expected_fstype: str | None,
                     session: SessionEvidence, reference: Any = None) -> list[str]:
    """INVALID reasons the case's own recorded evidence gives (``expected_fstype``: the
    verified reference's ``target.fstype``; None when there is none to compare with;
    ``reference``: that verified reference file, whose entries a checkpoint's volume must
    match)."""
    if spec is None or not spec.benchmark:
        if spec is not None and spec.check == PROBE:
            return session.probe_problems.get(str(case.get("uuid")), [])
        if spec is not None and spec.check == registry.FILL_TARGET.check:
            return fill_target_reasons(case, session.files, reference)
        return []
    # A build runs no job (the catalogue says so): no target written, no placement.
    out = target_dir_reasons(case, reference) if spec.runs_job else []
    fstype = expected_fstype
    mount = case.get("target_mount")
    mounts = case.get("node_mounts")
    if isinstance(mounts, str) and mounts and fstype:
        answers = servers.ungrouped(mounts)
        if answers is None:
            out.append(f"node_mounts cannot be read: {mounts[:100]!r}")
        else:
            out += guards.node_mount_reasons(answers, fstype, str(mount),
                                             list(case.job.nodelist),
                                             _direct_io(case, spec))
            if reference is not None:  # its mount options, by the live check's judge
                target = reference.target
                out += mountopts.node_reasons(answers, str(mount),
                                              list(target.required_options),
                                              list(target.forbidden_options))
            # The job refuses a node whose client has lost a server: an answer that
            # says one is down is not one a live run records.
            down = [a for a in answers if "(down " in a]
            out += [f"node_mounts shows a server down: {a[:100]}" for a in down]
    after = case.get("servers_after")
    if spec.degraded:
        out += _fault_reasons(case, spec) + degraded_scenario_reasons(case, spec, reference)
    if isinstance(after, str) and after:
        answers = servers.ungrouped(after)
        out += (_servers_after_reasons(answers, case, spec) if answers is not None
                else [f"servers_after cannot be read: {after[:100]!r}"])
    elif fstype and servers.probe(fstype) and mounts:
        out.append(f"evidence missing: no servers_after, which every job on {fstype} "
                   "records after its benchmark")
    if fstype:
        for key in ("job_fstype", "target_fstype"):
            seen = case.get(key)
            if key in case and seen != fstype:
                out += guards.fstype_reasons(str(seen or ""), fstype,
                                             f"{key}: {case.get('target_dir') or 'the target'}")
    out += _reduction_reasons(case, spec, session)
    out += _burst_reasons(case, spec, reference)
    out += _verify_reasons(case, spec)
    out += output_figure_reasons(case, spec, session.files, reference)
    if spec.runs_job:
        out += contract_reasons(case, spec, reference, session.files)
    out += output_reasons(case, spec, session.files, reference, expected_fstype)
    if spec.benchmark == "io500" and spec.role == ACCEPTANCE:
        out += io500_reasons(case, session.files)
    if spec.benchmark == "semantics" and spec.role == ACCEPTANCE:
        out += semantics_reasons(case, spec, reference, session.files)
    if spec.benchmark == "quota" and spec.role == ACCEPTANCE:
        out += quota_reasons(case, spec, reference, session.files)
    kind = spec.attrs.get("kind") if spec.benchmark == "fio" else None
    if kind in FIO_KINDS and FIO_KINDS[kind].soak:
        out += soak_reasons(case, spec, reference, session.files)
    if kind in FIO_KINDS and FIO_KINDS[kind].interference:
        out += interference_reasons(case, spec, reference, session.files)
    if kind in FIO_KINDS and not FIO_KINDS[kind].soak and not FIO_KINDS[kind].interference:
        out += fio_reasons(case, spec, reference, session.files)
    if spec.filled:
        out += fill_reasons(case, reference, session)
    note = case.get("time_limit_after_benchmark")
    out += slurm.accounting_reasons(case.get("job_accounting"), case.job.jobid,
                                    str(note or ""), str(case.get("scheduler") or ""))
    if note:
        status = re.search(r"after the benchmark had ended \(exit (\S+?)\)", str(note))
        if not status or status.group(1) != "0":
            out.append(f"a time limit after the benchmark is a note only when the benchmark "
                       f"ended with exit 0: {str(note)[:200]}")
    return out


def target_dir_reasons(case: Case, reference: Any) -> list[str]:
    """The directory the test wrote in (``target_dir``) must lie in its own target's
    data directory, ``<path>/fsaccept`` of the verified reference's selected target: a
    measurement of one target is no sign-off of another.  The recorded strings are
    compared (no ``realpath``: the sign-off may run on another host)."""
    if reference is None:
        return []
    try:
        target = reference.target
    except ReferenceError:
        return []
    where = target.where
    data_root = posixpath.join(str(target.path), "fsaccept")
    recorded = case.get("target_dir")
    if not isinstance(recorded, str) or not recorded:
        return [f"evidence missing: no target_dir, the directory the test wrote in, to hold "
                f"against {where}.path {str(target.path)!r}"]
    if not (posixpath.isabs(recorded) and guards.path_within(recorded, data_root)):
        name = f" ({TARGET_PARAMETER} {target.name})" if target.name else ""
        return [f"target_dir {recorded[:200]!r} is not below {data_root!r}, the data "
                f"directory of its target{name} ({where}.path {str(target.path)!r}): it "
                "measured another directory than the reference file's"]
    return []


def _burst_reasons(case: Case, spec: TestSpec, reference: Any = None) -> list[str]:
    """A checkpoint's figures against its recorded volume (``burst_bytes``): its bandwidth
    is the volume over its time (:class:`fsaccept.benchmarks.ior.figures.Burst`, as live),
    no rank finished before the fastest, the volume is the verified reference's
    (:func:`_checkpoint_volume_reasons`), and its slowest and fastest rank are its time
    figures' (:func:`_rank_reasons`)."""
    phase = PHASES.get(str(spec.attrs.get("phase")))
    if phase is None or not phase.rank_times or spec.role != ACCEPTANCE:
        return []  # a checkpoint's fixture reports no figure
    time, rate, first = spec.figures[:3]
    by_name = {f.name: f.value for f in case.figures}
    if by_name.get(time) is None or figure_problem(by_name[time]):
        return []  # no figure, or none a benchmark measures: judged elsewhere
    volume = case.get("burst_bytes")
    why = _count_problem(volume)
    if why:
        return [f"burst_bytes {str(volume)[:40]!r} ({why}): the checkpoint's volume is "
                "not recorded"]
    burst = Burst(by_name[time], by_name.get(first) or 0.0, 0, 0, volume)
    out = _checkpoint_volume_reasons(case, spec, reference, volume)
    if by_name.get(rate) is None or abs(by_name[rate] - burst.bandwidth_mib_s) > \
            1e-9 * burst.bandwidth_mib_s:
        out.append(f"figure {rate} {by_name.get(rate)!r} is not its volume ({volume} bytes) "
                   f"over its {time} ({by_name[time]!r} s): {burst.bandwidth_mib_s!r} MiB/s")
    if not 0 < burst.first_s <= burst.seconds:
        out.append(f"figure {first} {by_name.get(first)!r} is not between 0 and the slowest "
                   f"rank's {time} {burst.seconds!r}")
    out += _rank_reasons(case, "slowest_rank", time, burst.seconds)
    out += _rank_reasons(case, "fastest_rank", first, by_name.get(first))
    return out


def _count_problem(value: Any) -> str | None:
    """Why a recorded count (bytes, ranks) is none: not a whole number, not above 0, or
    beyond a float's range (no float sum takes it)."""
    if not isinstance(value, int) or isinstance(value, bool):
        return "not a whole number"
    return figure_problem(value)


def _checkpoint_volume_reasons(case: Case, spec: TestSpec, reference: Any,
                               volume: int) -> list[str]:
    """The volume a checkpoint moved and each rank's shard in its recorded IOR command
    (``-t``, ``-b``, ``-s``), against what the verified reference's entry of its class asks:
    its ``checkpoint_size`` split among the ranks the case recorded, in whole transfers
    (:func:`fsaccept.benchmarks.ior.command.checkpoint_block`, the live check's split).
    Without a verified reference there is nothing to compare with (the sign-off is not
    verified then)."""
    if reference is None:
        return []
    ranks = case.get("num_tasks")
    why = _count_problem(ranks)
    if why:
        return [f"num_tasks {str(ranks)[:40]!r} ({why}): the checkpoint's volume cannot be "
                f"checked against tests.{spec.key}"]
    try:
        params = ior_parameters(reference, spec.key)
    except (ReferenceError, TypeError, ValueError) as err:
        return [f"burst_bytes cannot be checked: the reference file has no usable entry "
                f"tests.{spec.key}: {str(err)[:200]}"]
    want = checkpoint_volume(params, ranks)
    out = []
    if volume != want:
        out.append(f"burst_bytes {volume} is not the checkpoint tests.{spec.key} asks: its "
                   f"checkpoint_size {format_size(params.checkpoint_size)} split among {ranks} "
                   f"ranks in whole transfers of {format_size(params.transfer_size)} is "
                   f"{want} bytes")
    argv = argv_of(str(case.get("benchmark_command") or ""))
    for flag, shown in (("-t", ior_size(params.transfer_size)),
                        ("-b", ior_size(checkpoint_block(params, ranks))),
                        ("-s", str(params.segments))):
        got = last_option(argv, flag)
        if got != shown:
            out.append(f"the recorded IOR command (benchmark_command) gives "
                       + (f"{flag} {got[:40]}" if got is not None else f"no {flag}")
                       + f", tests.{spec.key} among {ranks} ranks is {flag} {shown}")
    return out


def _rank_reasons(case: Case, key: str, figure: str,
                  seconds: float | None) -> list[str]:
    """A burst's recorded slowest or fastest rank (``key``: 'rank 3 on n2: 4.21 s') as the
    live check writes it (:func:`fsaccept.benchmarks.ior.figures.rank_text`): a rank of
    the job, on the node its rank map places it, with the time of its ``figure``."""
    if seconds is None or figure_problem(seconds):
        return []  # no figure, or none a benchmark measures: said above
    text = case.get(key)
    match = RANK_TEXT.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        return [f"{key} {str(text)[:80]!r} is not a rank as the check records it "
                "('rank R on NODE: T s')"]
    rank, ranks = int(match.group(1)), case.get("num_tasks")
    rank_map = str(case.get("rank_map") or "")
    want = rank_text(rank, placement.node_of_rank(rank_map, rank) or "?", seconds)
    if _count_problem(ranks) or rank >= ranks:
        return [f"{key} {text[:80]!r} is not one of its {str(ranks)[:40]} ranks"]
    if text != want:
        return [f"{key} {text[:80]!r} is not what its {figure} ({seconds!r} s) and its rank "
                f"map ({rank_map[:80]!r}) say: {want[:80]!r}"]
    return []


def _verify_reasons(case: Case, spec: TestSpec) -> list[str]:
    """A read that verifies what it reads (a checkpoint's restore, the integrity check:
    ``Phase.verify``) proves the data only if its recorded IOR command did (``-R``)."""
    phase = PHASES.get(str(spec.attrs.get("phase")))
    if phase is None or not phase.verify or not case.figures:
        return []
    command = case.get("benchmark_command")
    if not isinstance(command, str) or not command:
        return ["evidence missing: no benchmark_command, the IOR command whose -R verifies "
                "what it read"]
    if "-R" not in argv_of(command):
        return ["the recorded IOR command (benchmark_command) does not verify what it read "
                "(no -R): its figures prove no data"]
    return []


def _servers_after_reasons(answers: dict[str, list[str]], case: Case,
                           spec: TestSpec) -> list[str]:
    """The live rule on the nodes' answers after the benchmark: healthy, except for a
    degraded-mode figure, which must have been measured with the fault still seen."""
    if spec.degraded and not spec.attrs.get("benchmark_after_recovery"):
        return degraded.not_degraded_after(answers, case.job.nodelist)
    return servers.after_reasons(answers, list(case.job.nodelist))


def _fault_reasons(case: Case, spec: TestSpec) -> list[str]:
    """A degraded-mode test, re-judged from its recorded timeline: the fault injected,
    seen on every node, the file system restored and healed, all within the case's own
    job; and its fault figures those the timeline gives."""
    timeline = case.get("fault_timeline")
    if not isinstance(timeline, str) or not timeline:
        return ["evidence missing: no fault_timeline, which every degraded-mode test "
                "records"]
    fault, unreadable = degraded.fault_from(timeline)
    if unreadable:
        return unreadable
    job = case.job
    out = fault.invalid_reasons() + fault.outside_job(job.jobid, job.submit_time,
                                                      job.completion_time)
    given = fault.figures
    for fig in case.figures:
        if fig.name in degraded.FIGURES and fig.value is not None and (
                fig.name not in given or abs(fig.value - given[fig.name]) > 1e-6):
            out.append(f"{fig.name} is recorded as {fig.value}, but the recorded fault "
                       f"timeline gives {given.get(fig.name, 'none')}")
    return out


def _scenario(case: Case) -> str:
    name = case.get(degraded.SCENARIO_PARAMETER)
    return name if isinstance(name, str) else ""


def degraded_scenario_reasons(case: Case, spec: TestSpec, reference: Any) -> list[str]:
    """A degraded-mode test's scenario against the verified reference: one its
    ``degraded.scenarios`` names (any, or none, when it names none), whose clause runs
    the test's key, and the contract fraction it recorded (``degraded_fraction``) that
    clause's for its key."""
    mode = reference.degraded_mode if reference is not None else None
    if mode is None:
        return []  # its thresholds cannot be verified: looser_thresholds says so
    scenario = _scenario(case)
    try:
        clause = reference.degraded_clause(scenario)
    except ReferenceError as err:
        return [f"its fault scenario ({degraded.SCENARIO_PARAMETER} "
                f"{scenario[:40]!r}) is not the contract's: {str(err)[:300]}"]
    want = clause.tests.get(spec.key)
    if want is None:
        return [f"{clause.where}.tests does not list {spec.key}: its test is not the "
                "contract's"]
    said = case.get("degraded_fraction")
    if isinstance(said, (int, float)) and not isinstance(said, bool) and said != want:
        return [f"degraded_fraction is recorded as {said!r}, but the reference file's "
                f"{clause.where} gives {want!r} for {spec.key}"]
    return []


def degraded_dataset_reasons(case: Case, spec: TestSpec | None,
                             fixtures: Sequence[Case]) -> list[str]:
    """A degraded-mode test that reads data its fixture wrote (the catalogue's degraded
    fixture of its reference key): that fixture among those it depended on
    (``fixtures``), its job completed before the test's fault began, by the live check's
    rule (:meth:`fsaccept.core.degraded.Fault.written_after`)."""
    if spec is None or not spec.degraded:
        return []
    wanted = [t.check for t in registry.DEGRADED if t.role == FIXTURE and t.key == spec.key]
    fault, unreadable = degraded.fault_from(str(case.get("fault_timeline") or ""))
    if not wanted or unreadable:
        return []  # an unreadable timeline: _fault_reasons says so
    out = []
    for check in wanted:
        fx = next((f for f in fixtures if registry.class_of_case(f.get("name")) == check), None)
        if fx is None:
            out.append(f"evidence missing: it depends on no {check}, the data it reads "
                       "(dependencies_actual)")
            continue
        out += fault.written_after(check, fx.job.completion_time)
        if _scenario(fx) != _scenario(case):
            out.append(f"the data it reads was written for another fault scenario: "
                       f"{check}'s {_scenario(fx)[:40]!r}, its own {_scenario(case)[:40]!r}")
    return out


def _reduction_reasons(case: Case, spec: TestSpec,
                       session: SessionEvidence) -> list[str]:
    result = session.probes.get(str(case.get("target_mount")))
    # A sweep's point is a rate as its healthy test's is.
    if result is None or spec.role not in (ACCEPTANCE, SCALING) or spec.benchmark not in (
            "ior", "fio", "io500"):
        return []
    if not spec.reduction_matters:  # a count of wrong transfers is not a rate
        return []
    label = case.get("data_pattern")
    if not label:
        if spec.attrs.get("kind") == "metadata":  # fio's metadata test writes no data
            return []
        return ["evidence missing: no data_pattern, and the session's probe found the file "
                "system reducing data"]
    read = _reducible(str(label))
    if read is None:
        return [f"data_pattern {str(label)[:80]!r} is not one fsaccept writes"]
    return reduction.reducible_data_reasons(read[0], read[1], result)


def _kept_dirs(case: Case, files: RunFiles) -> list[str]:
    """The case's output and stage directories that are there, where the run directory
    is now."""
    return [d for d in (case.get("outputdir"), case.get("stagedir"))
            if isinstance(d, str) and d and os.path.isdir(files.rebase(d))]


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
    if files is None or not _kept_dirs(case, files):
        return out
    try:
        job = job_output(case, files)
    except EvidenceMissing as err:
        return out + [str(err)]
    given, names = bench.output_figures(job.stdout, spec, entry)
    return out + _figures_agree(case, names, given, f"{bench.name} output ({job.path})")


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
    if files is None or not _kept_dirs(case, files):
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
    if files is not None and _kept_dirs(case, files):
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
                                         list(case.job.nodelist), _direct_io(case, spec))
    if key == "job_fstype" and fstype:
        return guards.fstype_reasons(str(given), fstype,
                                     f"job_fstype: {case.get('target_dir') or 'the target'}")
    if key == "servers_after" and answers is not None:
        return _servers_after_reasons(answers, case, spec)
    return []


def _outlier_reasons(case: Case, spec: TestSpec, fraction: float) -> list[str]:
    """A test whose reference entry seeks slow clients (``fraction``, its
    ``outlier_fraction``), as live: the recorded fraction is the entry's, and the count
    is judged as live (:func:`_outlier_limit_reasons`)."""
    out = []
    recorded = case.get("outlier_fraction", fraction)
    if isinstance(recorded, bool) or not isinstance(recorded, (int, float)):
        out.append(f"outlier_fraction {str(recorded)[:40]!r} is not a number")
    elif recorded != fraction:
        out.append(f"outlier_fraction is recorded as {recorded}, but the reference file's "
                   f"tests.{spec.key} says {fraction}")
    return out + _outlier_limit_reasons(case, spec, fraction)


def _outlier_limit_reasons(case: Case, spec: TestSpec, fraction: float) -> list[str]:
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
      of 0, as live (:func:`_outlier_limit_reasons`, from the record alone).

    A report or log that is not there is evidence missing, unless the node's exit status
    is not 0 (fio then may have written none; the live check judges the same).  Nothing
    to judge without a recorded figure, a verified reference, or any of the case's
    directories (a run report read without its run directory)."""
    if not any(f.value is not None for f in case.figures):
        return []
    params, why = _fio_entry(spec, reference)
    if why:
        return [why]
    limit = (_outlier_limit_reasons(case, spec, params.outlier_fraction)
             if params is not None else [])
    if params is None or files is None or not _kept_dirs(case, files):
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
            report, path = _fio_node_file(case, files, name, "a node's fio report", ran)
            log, _ = _fio_node_file(case, files, f"fio-{node}.log", "a node's fio messages",
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
    return out + _figures_agree(case, names, given, f"fio output ({where})")


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
    want, why = _contract_argv(spec, bench, entry, len(reports), [])
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
        diff = _options_differ(sized(given), sized(want))
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
    why = _count_problem(tasks)
    if why:
        return [f"num_tasks {str(tasks)[:40]!r} ({why}): how many nodes were to run fio "
                "is not recorded"]
    out = fio_figures.node_count_reasons(nodes, tasks)
    job_nodes = case.job.nodelist
    if job_nodes and len(job_nodes) != tasks:
        out.append(f"num_tasks is recorded as {tasks}, but the job had {len(job_nodes)} "
                   f"node(s) ({','.join(job_nodes)[:200]}): fio runs once per node")
    return out


def _fio_node_file(case: Case, files: RunFiles, name: str, what: str,
                   ran: bool) -> tuple[str | None, str]:
    """(the text of a node's kept file ``name``, its path): None when it is not there
    and the node's exit status was not 0 (``ran`` False: the live check judges a report
    missing then); EvidenceMissing when it is not there after an exit status of 0, or
    cannot be read."""
    path = files.where(case, name)
    if not ran and not os.path.lexists(path):
        return None, path
    return files.text(case, name, what)


def io500_run(case: Case) -> io500_parse.Io500Run | None:
    """The IO500 run an IO500 test case recorded (``io500_result``); None without one
    or when it cannot be read.  What is shown: a test whose record is not what its
    output rebuilds is INVALID (:func:`io500_reasons`)."""
    text = case.get("io500_result")
    if not isinstance(text, str) or not text:
        return None
    try:
        return io500_parse.run_from_dict(_record_json(text))
    except (TypeError, ValueError, RecursionError):
        return None


def io500_rebuilt(case: Case, files: RunFiles | None) -> tuple[io500_parse.Io500Run | None,
                                                                str, str]:
    """(the IO500 run its job's output says, rebuilt as the live check built it,
    :func:`fsaccept.benchmarks.io500.parse.job_run`: its result directory, copied to
    the output directory, else its stdout; the record the check would have kept,
    :func:`fsaccept.benchmarks.io500.parse.record_of`; where it was read).
    EvidenceMissing when the job's output cannot be read."""
    job = job_output(case, files)
    assert files is not None  # job_output refuses None
    where = files.where(case, io500_config.RESULT_DIR)
    stage = case.get("stagedir")
    # Named as the live check named it (its stage directory): the record holds the path.
    shown = os.path.join(stage, io500_config.RESULT_DIR) if isinstance(stage, str) else None
    run, _ = io500_parse.job_run(where, job.stdout, job.stderr,
                                 joboutput.exit_status(job.info),
                                 read_text=files.reads.read_text, shown=shown)
    return run, io500_parse.record_of(run) if run is not None else "", where


def io500_reasons(case: Case, files: RunFiles | None = None) -> list[str]:
    """IO500's results rebuilt from the job's own output (its result directory and
    stdout, read once and digested by the manifest), by the live check's functions; the
    recorded ``io500_result`` the one they rebuild; the rebuilt run judged again by the
    live check's rules (its score recomputed from its phases), beyond what the case
    already says; and each figure the case reports the one its results give."""
    if not case.get("io500_result"):
        return ["evidence missing: no io500_result, which the IO500 check records"]
    try:
        run, record, where = io500_rebuilt(case, files)
    except EvidenceMissing as err:
        return [str(err)]
    if run is None:
        return [f"evidence missing: {where}: io500 left no result directory and printed no "
                "IO500 output"]
    out = []
    if case.get("io500_result") != record:
        out.append(f"its io500_result is not what its output {where} says")
    said = str(case.get("invalid_reasons") or "")
    tasks = case.get("num_tasks")
    try:
        out += [r for r in io500_validity.invalid_reasons(
            run, procs=tasks if isinstance(tasks, int) and tasks > 0 else None)
            if r not in said]
    except (TypeError, ValueError, ZeroDivisionError, OverflowError) as err:
        return out + [f"its IO500 results ({where}) cannot be judged: {str(err)[:200]}"]
    given = io500_parse.figures_of(run)
    for fig in case.figures:
        value = given.get(fig.name, (None, ""))[0]
        if fig.value is not None and (value is None or abs(fig.value - value) > 1e-9):
            out.append(f"{fig.name} is recorded as {fig.value}, but its IO500 results "
                       f"({where}) give {value if value is not None else 'none'}")
    return out


def semantics_rebuilt(case: Case, files: RunFiles | None
                      ) -> tuple[semantics_parse.SemanticsRun, str]:
    """(the semantics program's run its job's output says, parsed as the live check
    parsed it: :func:`fsaccept.benchmarks.semantics.parse.parse_semantics` of the
    counted stdout, with its stderr's findings; where it was read).  EvidenceMissing
    when the job's output cannot be read."""
    if files is None:
        raise EvidenceMissing(f"evidence missing: {joboutput.JOB_STDOUT}: the run directory "
                              "was not read")
    read, path = files.lines(case, joboutput.JOB_STDOUT, "a job's output")
    err, _ = files.text(case, joboutput.JOB_STDERR, "a job's error output")
    try:  # its output read line by line (twice: joboutput.counted_stdout_lines)
        info = joboutput.job_info(read())
        stderr = joboutput.benchmark_stderr(info, joboutput.counted_stderr(err))
        return joboutput.parsed(semantics_parse.parse_semantics,
                                semantics_parse.error_findings,
                                joboutput.counted_stdout_lines(read), stderr), path
    except inputs.InputError as why:
        raise EvidenceMissing(f"evidence missing: {str(why)[:300]}") from None


def semantics_reasons(case: Case, spec: TestSpec, reference: Any = None,
                      files: RunFiles | None = None) -> list[str]:
    """The semantics program's run rebuilt from the job's own output (``rfm_job.out``,
    read once and digested by the manifest), by the live check's functions, and judged
    again: the recorded case lines (``semantics_cases``) those it prints; its figures
    those the lines give; with the verified reference, the live check's INVALID reasons
    beyond those the case says, each delay's ceiling its ``max_visibility_s`` and each
    rate's floor its ``min_*_rate`` (no looser), and no failed case in a test recorded
    as passed."""
    text = case.get("semantics_cases")
    if not isinstance(text, str) or not text:
        return ["evidence missing: no semantics_cases, which the semantics check records"]
    try:
        run, where = semantics_rebuilt(case, files)
    except EvidenceMissing as err:
        return [str(err)]
    out = []
    if text not in (run.case_lines(), run.repr_case_lines()):  # the latter: older runs
        out.append(f"its semantics_cases are not what its output {where} says")
    if not run.cases:
        return out + [f"its output {where} holds no case line of the semantics program: "
                      f"{'; '.join(run.reasons)[:300]}"]
    given = run.figures()
    for fig in case.figures:
        value = given.get(fig.name)
        if fig.value is not None and (value is None or abs(fig.value - value) > 1e-9):
            out.append(f"{fig.name} is recorded as {fig.value}, but its output ({where}) "
                       f"gives {value if value is not None else 'none'}")
    # Lines that contradict each other, whatever the reference and the case say.
    contradicted = semantics_validity.consistency_reasons(run)
    entry = getattr(reference, "entries", {}).get(spec.key) if reference is not None else None
    if not isinstance(entry, dict):
        if not run.valid and case.get("result") == "pass":
            out.append(f"recorded as passed, but its output ({where}) is not a whole run: "
                       f"{'; '.join(run.reasons)[:300]}")
        return out + [f"its output ({where}): {r}" for r in contradicted]
    try:
        params = semantics_command.parameters(spec.key, entry)
    except (TypeError, ValueError) as err:
        return out + [f"tests.{spec.key} cannot be read: {str(err)[:200]}"]
    tasks = case.get("num_tasks")
    said = str(case.get("invalid_reasons") or "")
    if isinstance(tasks, int) and not isinstance(tasks, bool):
        out += [r for r in semantics_validity.invalid_reasons(
            run, semantics_validity.expectation(params, tasks)) if r not in said]
    else:
        out += [r for r in run.reasons + contradicted if r not in said]
    by_name = {f.name: f for f in case.figures}
    for name, (value, lower, upper, unit) in semantics_command.thresholds(params).items():
        fig = by_name.get(name)
        if fig is None:
            continue
        if lower is not None:  # a floor (a namespace case's rate)
            if fig.lower_limit is None or fig.lower_limit < value * (1 + lower):
                out.append(f"{name}: the reference file says at least {value:g} {unit}, but "
                           "the test was judged against "
                           f"{fig.lower_limit if fig.lower_limit is not None else 'nothing'}")
        elif fig.upper_limit is None or fig.upper_limit > value * (1 + (upper or 0)):
            out.append(f"{name}: the reference file says at most {value:g} {unit}, but the "
                       "test was judged against "
                       f"{fig.upper_limit if fig.upper_limit is not None else 'nothing'}")
    failed = semantics_validity.failures(run, params)
    if failed and case.get("result") == "pass":
        out.append(f"recorded as passed, but its case lines fail: {'; '.join(failed)[:400]}")
    return out


def quota_reasons(case: Case, spec: TestSpec, reference: Any = None,
                  files: RunFiles | None = None) -> list[str]:
    """The quota program's run rebuilt from the job's own output (``rfm_job.out``, read
    once and digested by the manifest) and judged again by the live check's functions:
    the recorded lines (``quota_lines``) those it prints; INVALID by its rules (with the
    verified reference's entry: its limit, stop and tolerance), its figures those the
    lines give, each threshold no looser than the entry's, and no failure in a test
    recorded as passed."""
    text = case.get("quota_lines")
    if not isinstance(text, str) or not text:
        return ["evidence missing: no quota_lines, which the quota check records"]
    try:
        job = job_output(case, files)
    except EvidenceMissing as err:
        return [str(err)]
    run = joboutput.parsed(quota_parse.parse_quota, quota_parse.error_findings, job.stdout,
                           job.stderr)
    if quota_parse.program_lines(job.stdout) != text:
        return [f"its quota_lines are not what its output {job.path} says"]
    entry = getattr(reference, "entries", {}).get(spec.key) if reference is not None else None
    params = None
    if isinstance(entry, dict):
        try:
            params = quota_command.parameters(spec.key, entry)
        except (TypeError, ValueError, KeyError) as err:
            return [f"tests.{spec.key} cannot be read: {str(err)[:200]}"]
    target_dir = case.get("target_dir")
    out = [f"its output ({job.path}): {r}" for r in quota_validity.invalid_reasons(
        run, params, quota_command.quota_directory(target_dir)
        if isinstance(target_dir, str) and target_dir else None, target_path(reference))]
    if out:
        return out
    out += _figures_agree(case, quota_command.FIGURES, run.figures(),
                          f"output ({job.path})")
    if params is None:
        return out
    by_name = {f.name: f for f in case.figures}
    for name, (value, lower, upper, unit) in quota_command.references(params).items():
        fig = by_name.get(name)
        if fig is None:
            continue
        if lower is not None and (fig.lower_limit is None
                                  or fig.lower_limit < value * (1 + lower) - 1e-9):
            out.append(f"{name}: the reference file says at least {value * (1 + lower):g} "
                       f"{unit}, but the test was judged against "
                       f"{fig.lower_limit if fig.lower_limit is not None else 'nothing'}")
        if fig.upper_limit is None or fig.upper_limit > value * (1 + upper) + 1e-9:
            out.append(f"{name}: the reference file says at most {value * (1 + upper):g} "
                       f"{unit}, but the test was judged against "
                       f"{fig.upper_limit if fig.upper_limit is not None else 'nothing'}")
    failed = quota_validity.failures(run, params)
    if failed and case.get("result") == "pass":
        out.append(f"recorded as passed, but its lines fail: {'; '.join(failed)[:400]}")
    return out


def target_path(reference: Any) -> str | None:
    """The verified reference's target path (None: none, or no target selected)."""
    try:
        return str(reference.target.path) if reference is not None else None
    except (AttributeError, ValueError):
        return None


def soak_evidence_of(case: Case) -> tuple[soak.Evidence | None, str]:
    """A soak's recorded record (``soak_record``), read, for what is shown; (None, why)
    when it cannot be.  What is judged is the record's file (:func:`soak_reasons`)."""
    return _soak_evidence(case.get("soak_record"), "its soak record (soak_record)",
                          "evidence missing: no soak_record, which the soak records")


def _soak_evidence(text: Any, what: str, missing: str) -> tuple[soak.Evidence | None, str]:
    if not isinstance(text, str) or not text:
        return None, missing
    try:
        return soak.Evidence.from_dict(_record_json(text)), ""
    except (ValueError, soak.EvidenceError, RecursionError) as err:
        return None, f"{what} cannot be read: {str(err)[:300]}"


def soak_reasons(case: Case, spec: TestSpec, reference: Any = None,
                 files: RunFiles | None = None) -> list[str]:
    """A soak's record judged again, by the live check's functions: its settings those
    of the verified reference's entry, its figures those the judgements give, and no
    failed judgement in a test recorded as passed.  The record judged is the file the
    check wrote beside its outputs (``soak-record.json``, digested by the manifest: the
    logs are not kept), read once through ``files``; the run report's ``soak_record``
    must be that file's."""
    if not case.get("soak_record"):
        return ["evidence missing: no soak_record, which the soak records"]
    try:
        if files is None:
            raise EvidenceMissing(f"evidence missing: {soak.RECORD_FILE}: the run directory "
                                  "was not read")
        text, where = files.text(case, soak.RECORD_FILE, "a soak's record")
    except EvidenceMissing as err:
        return [str(err)]
    evidence, why = _soak_evidence(text, f"its soak record ({where})", f"evidence missing: "
                                   f"{where} is empty")
    if evidence is None:
        return [why]
    out = []
    if text != case.get("soak_record"):
        out.append(f"its soak_record is not what its output {where} says")
    judged = soak.judge(evidence)
    out += [f"its soak record: {j.what}: {r}" for j in judged if j.verdict == soak.INVALID
            for r in j.reasons]
    out += [f"its soak record: {r}"
            for r in soak.record_reasons(evidence, case.job.nodelist)]
    given = fio_command.soak_figures(judged)
    out += _figures_agree(case, fio_command.SOAK_FIGURES, given, "soak record", 0.0)
    params, why = _fio_entry(spec, reference)
    if why:
        return out + [why]
    if params is not None:
        want = params.soak
        if want is not None and evidence.settings != want:
            out.append(f"its soak record was judged with {vars(evidence.settings)}, the "
                       f"reference file says {vars(want)}")
    failed = [r for j in judged if j.verdict == soak.FAIL for r in j.reasons]
    if failed and case.get("result") == "pass":
        out.append(f"recorded as passed, but its soak record fails: {'; '.join(failed)[:400]}")
    return out


def interference_evidence_of(case: Case) -> tuple[interference.Evidence | None, str]:
    """An interference test's recorded record (``interference_record``), read; (None,
    why) when it cannot be."""
    text = case.get("interference_record")
    if not isinstance(text, str) or not text:
        return None, ("evidence missing: no interference_record, which the interference "
                      "test records")
    try:
        return interference.Evidence.from_dict(_record_json(text)), ""
    except (ValueError, interference.EvidenceError) as err:
        return None, (f"its interference record (interference_record) cannot be read: "
                      f"{str(err)[:300]}")


def _kept_text(case: Case, files: RunFiles | None, name: str, what: str) -> tuple[str, str]:
    """(the text of the record file ``name`` a check keeps beside its outputs, its path),
    read once through ``files``; EvidenceMissing when it is not there, cannot be read,
    is empty, or there is no run directory."""
    if files is None:
        raise EvidenceMissing(f"evidence missing: {name}: the run directory was not read")
    text, where = files.text(case, name, what)
    if not text:
        raise EvidenceMissing(f"evidence missing: {where} is empty")
    return text, where


def interference_reasons(case: Case, spec: TestSpec, reference: Any = None,
                         files: RunFiles | None = None) -> list[str]:
    """An interference test's record judged again, by the live check's functions: an
    INVALID judgement (did not overlap, no load, a p99 that is no latency) is a reason,
    its figures those the record gives, its settings those of the verified reference's
    entry, and no failed judgement in a test recorded as passed.  The record judged is
    the file the check wrote beside its outputs (``interference-record.json``, digested
    by the manifest), read once through ``files``; the run report's
    ``interference_record`` must be that file's."""
    if not case.get("interference_record"):
        return ["evidence missing: no interference_record, which the interference test "
                "records"]
    try:
        text, where = _kept_text(case, files, interference.RECORD_FILE,
                                 "an interference record")
    except EvidenceMissing as err:
        return [str(err)]
    try:
        evidence = interference.Evidence.from_dict(_record_json(text))
    except (ValueError, interference.EvidenceError, RecursionError) as err:
        return [f"its interference record ({where}) cannot be read: {str(err)[:300]}"]
    out = []
    if text != case.get("interference_record"):
        out.append(f"its interference_record is not what its output {where} says")
    judged = interference.judge(evidence)
    out += [f"its interference record: {j.what}: {r}" for j in judged
            if j.verdict == interference.INVALID for r in j.reasons]
    given = fio_command.interference_figures(evidence)
    out += _figures_agree(case, fio_command.INTERFERENCE_FIGURES, given,
                          "interference record")
    params, why = _fio_entry(spec, reference)
    if why:
        return out + [why]
    if params is not None:
        split = params.interference
        if split is not None and evidence.settings != split.settings:
            out.append(f"its interference record was judged with {vars(evidence.settings)}, "
                       f"the reference file says {vars(split.settings)}")
    failed = [r for j in judged if j.verdict == interference.FAIL for r in j.reasons]
    if failed and case.get("result") == "pass":
        out.append("recorded as passed, but its interference record fails: "
                   f"{'; '.join(failed)[:400]}")
    split = params.interference if params is not None else None
    record, why_not = interference_rebuilt(
        case, files, split.settings if split is not None else evidence.settings,
        split.victim_nodes if split is not None else None)
    out += why_not
    if record is not None and json.loads(text) != record.to_dict():
        out.append(f"its interference record ({where}) is not the one its job's files give "
                   f"(fio-ROLE-NODE.json, the aggressors' logs, rfm_job.out): "
                   f"{_first_difference(json.loads(text), record.to_dict())}")
    return out


def interference_rebuilt(case: Case, files: RunFiles | None,
                         settings: interference.Settings, victim_nodes: int | None
                         ) -> tuple[interference.Evidence | None, list[str]]:
    """The record an interference test's kept files give, rebuilt by the live check's
    function (:func:`fsaccept.benchmarks.fio.interference.rebuilt`): its steps' reports
    (``fio-ROLE-NODE.json`` and ``.log``), its aggressors' bandwidth logs and the job's
    ``rfm_job.out`` (its groups, its steps' exit statuses and markers), each read once
    through ``files``; the groups against ``victim_nodes`` (None: the job's own count)
    and the job's node list.  (None, why) when they cannot give it: each reason INVALID,
    a file gone "evidence missing"."""
    try:
        job = job_output(case, files)
        assert files is not None  # job_output raised otherwise

        def read(name: str, needed: bool) -> str | None:
            return _fio_node_file(case, files, name, "an interference step's file",
                                  needed)[0]
        want = victim_nodes if victim_nodes is not None else \
            len(fio_interference.names(job.info.get("victims", "")))
        return fio_interference.rebuilt(settings, job.stdout, job.info, read,
                                        str(case.get("target_dir") or ""), want,
                                        list(case.job.nodelist))
    except EvidenceMissing as err:
        return None, [str(err)]


def _first_difference(kept: Any, rebuilt: Any, where: str = "") -> str:
    """Where two JSON records first differ: the key's path and both values."""
    if isinstance(kept, dict) and isinstance(rebuilt, dict):
        for key in sorted(set(kept) | set(rebuilt)):
            if kept.get(key) != rebuilt.get(key):
                return _first_difference(kept.get(key), rebuilt.get(key),
                                         f"{where}.{key}" if where else str(key))
    if isinstance(kept, list) and isinstance(rebuilt, list) and len(kept) == len(rebuilt):
        for i, (a, b) in enumerate(zip(kept, rebuilt)):
            if a != b:
                return _first_difference(a, b, f"{where}[{i}]")
    return (f"{where or 'the record'} is {json.dumps(kept)[:120]}, its files give "
            f"{json.dumps(rebuilt)[:120]}")


def fill_evidence_of(case: Case) -> tuple[fill.Evidence | None, str]:
    """A filled test's recorded fill record (``fill_record``), read; (None, why) when it
    cannot be."""
    text = case.get("fill_record")
    if not isinstance(text, str) or not text:
        return None, "evidence missing: no fill_record, which every filled test records"
    try:
        return fill.Evidence.from_dict(_record_json(text)), ""
    except (ValueError, fill.EvidenceError) as err:
        return None, f"its fill record (fill_record) cannot be read: {str(err)[:300]}"


def _fill_kept(case: Case, files: RunFiles | None
               ) -> tuple[fill.Evidence | None, str, str, list[str]]:
    """(FillTarget's kept record, read from the file of ``case``; its text; its path;
    why it cannot be read)."""
    try:
        text, where = _kept_text(case, files, fill.EVIDENCE_FILE, "a fill record")
    except EvidenceMissing as err:
        return None, "", "", [str(err)]
    try:
        return fill.Evidence.from_dict(_record_json(text)), text, where, []
    except (ValueError, fill.EvidenceError, RecursionError) as err:
        return None, text, where, [f"its fill record ({where}) cannot be read: "
                                   f"{str(err)[:300]}"]


def fill_target_of(case: Case, session: SessionEvidence) -> Case | None:
    """The FillTarget test case a filled test depended on (its ``dependencies_actual``:
    the last run of it), None when it names none the run report holds."""
    for dep in case.get("dependencies_actual") or []:
        if isinstance(dep, (list, tuple)) and len(dep) >= 2:
            found = session.fill_targets.get((str(dep[0]), str(dep[1])))
            if found is not None:
                return found
    return None


def fill_target_reasons(case: Case, files: RunFiles | None,
                        reference: Any = None) -> list[str]:
    """FillTarget's own case: the fill record it kept (``fill-record.json``) read through
    ``files``; its ``fill_record`` that file's, and a record whose level or filler is
    INVALID never in a passed test.  With the verified reference, the record must be the
    one its job's ``rfm_job.out`` rebuilds (:func:`fill_target_rebuilt`).  One that made
    no record (it failed first) is judged by its own reasons."""
    field_text = case.get("fill_record")
    if not field_text and case.get("result") != "pass":
        return []
    if not field_text:
        return ["evidence missing: no fill_record, which FillTarget records"]
    evidence, text, where, why = _fill_kept(case, files)
    if evidence is None:
        return why
    out = []
    if text != field_text:
        out.append(f"its fill_record is not what {where} says")
    if case.get("result") == "pass":
        out += [f"recorded as passed, but its fill record: {j.what}: {r}"
                for j in (fill.judge_level(evidence), fill.judge_filler(evidence))
                if j.verdict == fill.INVALID for r in j.reasons]
    if reference is not None and case.get("result") == "pass":
        out += fill_target_rebuilt(case, files, reference, evidence, where)
    return out


def not_rebuilt_without_reference(cases: Sequence[Case]) -> list[str]:
    """What the sign-off cannot rebuild without a verified reference file, named: each
    passed FillTarget's record from its job's output (its plan is the reference's
    ``fill:`` section's), never skipped silently."""
    return [f"{str(c.get('display_name') or c.get('name'))[:100]}: evidence missing: its "
            f"fill record is not rebuilt from its output ({joboutput.JOB_STDOUT}): the "
            "fill is planned by the verified reference file's fill: section"
            for c in cases if c.get("result") == "pass"
            and registry.class_of_case(c.get("name")) == registry.FILL_TARGET.check]


def fill_target_rebuilt(case: Case, files: RunFiles | None, reference: Any,
                        kept: fill.Evidence, where: str) -> list[str]:
    """FillTarget's record rebuilt from its job's own ``rfm_job.out`` (the filler's
    lines, its df before and once filled, each node's exit and ageing rounds) by the
    live check's function (:func:`fsaccept.core.fill.record_of`), with the verified
    reference's ``fill:`` section and sizing rate and the recorded reserve; the kept
    record (``kept``, read from ``where``) must be the rebuilt one, and the rebuilt one's
    INVALID judgements are reasons."""
    try:
        mode = reference.fill_mode
        rate = reference.target.max_bandwidth_mib_s
    except (ReferenceError, KeyError, TypeError, ValueError, AttributeError) as err:
        return [f"fill: cannot be read: {str(err)[:200]}"]
    if mode is None:
        return ["the reference file has no fill: section, which FillTarget fills by"]
    reserve = case.get("fill_reserve_bytes")
    if isinstance(reserve, bool) or not isinstance(reserve, int) or reserve < 0:
        return [f"fill_reserve_bytes {str(reserve)[:40]!r} is not a count of bytes: the "
                "fill's plan cannot be made again"]
    try:
        job = job_output(case, files)
    except EvidenceMissing as err:
        return [str(err)]
    record, _, why = fill.record_of(job.stdout, job.info.get(fill.NODES_INFO, ""),
                                    list(case.job.nodelist), mode, reserve, rate)
    if record is None:
        return [f"its output ({job.path}): {r}" for r in why]
    out = [f"its output ({job.path}): {j.what}: {r}"
           for j in (fill.judge_level(record), fill.judge_filler(record))
           if j.verdict == fill.INVALID for r in j.reasons]
    if kept.to_dict() != record.to_dict():
        out.append(f"its fill record ({where}) is not the one its output ({job.path}) "
                   f"gives: {_first_difference(kept.to_dict(), record.to_dict())}")
    return out


def fill_reasons(case: Case, reference: Any = None,
                 session: SessionEvidence | None = None) -> list[str]:
    """A filled test's record judged again, by the live check's functions: the level
    reached (once filled, and at the test's own start) and the filler, each INVALID
    reason a reason; its limits those of the verified reference's ``fill:`` section.
    The record judged is the file FillTarget kept (``fill-record.json``, digested by the
    manifest) of the FillTarget the test depended on; the test's ``fill_record`` must be
    that file's."""
    if not case.get("fill_record"):
        return ["evidence missing: no fill_record, which every filled test records"]
    session = session or SessionEvidence()
    target = fill_target_of(case, session)
    if target is None:
        return ["evidence missing: it depends on no FillTarget the run report holds, whose "
                f"kept record ({fill.EVIDENCE_FILE}) it is judged by (dependencies_actual)"]
    evidence, text, where, why_not = _fill_kept(target, session.files)
    if evidence is None:
        return why_not
    out = []
    if text != case.get("fill_record"):
        out.append(f"its fill_record is not what {where} says")
    out += filled_df_reasons(case, evidence, session.files)
    if reference is not None:
        try:
            mode = reference.fill_mode
        except (ReferenceError, KeyError, TypeError, ValueError) as err:
            return out + [f"fill: cannot be read: {str(err)[:200]}"]
        if mode is None:
            out.append("the reference file has no fill: section, which a filled test is "
                       "judged by")
        elif mode.limits != evidence.limits:
            out.append(f"its fill record was judged with {evidence.limits.to_dict()}, the "
                       f"reference file says {mode.limits.to_dict()}")
    return out


def filled_df_reasons(case: Case, evidence: fill.Evidence,
                      files: RunFiles | None) -> list[str]:
    """The fill record judged with df at the filled test's start, by the live check's
    function (:func:`fsaccept.core.fill.filled_reasons`).  That df is the line the
    test's own ``rfm_job.out`` printed (``fill_df``, which must be the case's); a case
    none of whose directories is there (a run report read alone) is judged by its
    recorded ``fill_df``."""
    recorded = case.get("fill_df")
    if not isinstance(recorded, str) or not recorded:
        return ["evidence missing: no fill_df, df of the target at the filled test's "
                "start"] + fill.invalid_reasons(evidence)
    if files is None or not _kept_dirs(case, files):
        return fill.filled_reasons(evidence, recorded)
    try:
        job = job_output(case, files)
    except EvidenceMissing as err:
        return [str(err)] + fill.invalid_reasons(evidence)
    printed = job.info.get(fill.DF_INFO, "")
    out = [] if printed == recorded else [
        f"its fill_df is not what its output ({job.path}) says: "
        f"{(printed or 'no ' + fill.DF_INFO + ' line')[:200]}"]
    return out + fill.filled_reasons(evidence, printed)


def _figures_agree(case: Case, names: Any, given: dict[str, float], record: str,
                   missing: float | None = None) -> list[str]:
    """Each recorded figure of ``names`` that is not the value its record gives
    (``missing``: the value of a figure the record judges nothing for)."""
    out = []
    for fig in case.figures:
        if fig.name not in names or fig.value is None:
            continue
        value = given.get(fig.name, missing)
        if value is None or abs(fig.value - value) > 1e-9 * max(1.0, abs(value)):
            out.append(f"{fig.name} is recorded as {fig.value}, but its {record} gives "
                       f"{value if value is not None else 'none'}")
    return out


def _fio_entry(spec: TestSpec, reference: Any) -> tuple[Any, str]:
    """(the verified reference's fio entry of ``spec``, typed, or None; why it cannot
    be read, or '')."""
    entry = getattr(reference, "entries", {}).get(spec.key) if reference is not None else None
    if not isinstance(entry, dict):
        return None, ""
    try:
        return fio_command.parameters(spec.key, spec.attrs["kind"], entry), ""
    except (ValueError, KeyError, TypeError) as err:
        return None, f"tests.{spec.key} cannot be read: {str(err)[:200]}"


def contract_reasons(case: Case, spec: TestSpec, reference: Any,
                     files: RunFiles | None = None) -> list[str]:
    """A run held to what the verified reference's entry asks of it, as the live check
    derived its job from it (one function, two callers), so that a lighter run relabelled
    with the contract's digest is never ACCEPTED:

    - its placement (:func:`fsaccept.benchmarks.registry.placement_of`, the benchmark's
      rule, and :func:`fsaccept.core.placement.nodes_asked` of the recorded partition's
      node count, ``partition_nodes``, rounded as the reference says): the recorded
      ``num_nodes``, ``node_fraction``, ranks per node and ``num_tasks``, and the job's
      node list (``job_nodelist``);
    - its command (``Benchmark.contract_options``: IOR's ``ior_options``, mdtest's and
      md-workbench's ``run_options``, fio's ``command_line``): the recorded
      ``benchmark_command`` and the benchmark's arguments in ``executable_opts``;
    - where the run directory is there, the job's own ``rfm_job.out``: the ranks and nodes
      its rank lines show, and the tasks, nodes and sized options
      (``Benchmark.sized_options``: IOR's ``-t -b -s -D``, mdtest's ``-n``...) its
      output's header prints (fio's reports: :func:`fio_reasons`).

    An acceptance test or a fixture with an entry; a scaling point is its sweep's."""
    if reference is None or spec.role not in (ACCEPTANCE, FIXTURE) or not spec.key:
        return []
    entry = getattr(reference, "entries", {}).get(spec.key)
    if not isinstance(entry, dict):
        return []  # looser_thresholds says the entry is missing
    where = f"tests.{spec.key}"
    total = case.get("partition_nodes")
    why = _count_problem(total)
    if why:
        return [f"partition_nodes {str(total)[:40]!r} ({why}): the nodes {where} asks "
                "cannot be known"]
    try:
        fraction, per_node = registry.placement_of(spec, entry)
        nodes = placement.nodes_asked(fraction, total, reference.node_rounding)
    except (KeyError, TypeError, ValueError) as err:
        return [f"the nodes {where} asks cannot be known: {str(err)[:200]}"]
    asked = (f"node_fraction {format_number(fraction)} of {total}, rounded "
             f"{reference.node_rounding}" if fraction is not None else "one node")
    out = []
    ran = case.get("num_nodes")
    if ran != nodes:
        out.append(f"{_lighter(ran, nodes)}: ran on {str(ran)[:40]} nodes, the verified "
                   f"entry {where} asks {nodes} ({asked})")
    if fraction is not None and case.get("node_fraction") != fraction:
        out.append(f"node_fraction is recorded as {str(case.get('node_fraction'))[:40]}, "
                   f"the verified entry {where} says {format_number(fraction)}")
    for key in ("ranks_per_node", "num_tasks_per_node"):
        if key in case and case.get(key) != per_node:
            out.append(f"{_lighter(case.get(key), per_node)}: {key} is "
                       f"{str(case.get(key))[:40]}, the verified entry {where} asks "
                       f"{per_node} per node")
    tasks = nodes * per_node
    if case.get("num_tasks") != tasks:
        out.append(f"{_lighter(case.get('num_tasks'), tasks)}: num_tasks is "
                   f"{str(case.get('num_tasks'))[:40]}, the verified entry {where} asks "
                   f"{tasks} ({nodes} nodes x {per_node})")
    listed = list(case.job.nodelist)
    if listed and len(listed) != nodes:
        out.append(f"{_lighter(len(listed), nodes)}: the job's node list (job_nodelist) "
                   f"has {len(listed)} nodes ({', '.join(listed)[:100]}), the verified "
                   f"entry {where} asks {nodes}")
    bench = registry.BENCHMARKS.get(spec.benchmark)
    if bench is None or bench.contract_options is None:
        return out
    asked, why = _contract_argv(spec, bench, entry, tasks, [])
    if asked is None and not why:
        return out  # no command of its own to hold (an interference test: its record)
    out += _command_contract(case, spec, bench, entry, tasks)
    if files is not None and _kept_dirs(case, files):
        try:
            job = job_output(case, files)
        except EvidenceMissing:
            return out  # said by the output's own figures
        out += _output_contract(case, spec, bench, entry, job, nodes, tasks)
    return out


def _lighter(ran: Any, asked: int) -> str:
    return ("lighter than the contract" if isinstance(ran, int) and ran < asked
            else "not the run the contract asks")


def _recorded_commands(case: Case) -> list[tuple[str, list[str]]]:
    """(what, the benchmark's arguments) of each command the case recorded: the command
    its benchmark ran (``benchmark_command``: as the benchmark printed it, or the live
    check's), and ReFrame's ``executable_opts`` after the rank-map wrapper."""
    out = []
    command = case.get("benchmark_command")
    if isinstance(command, str) and command:
        argv = argv_of(command)
        out.append(("the recorded command (benchmark_command)",
                    argv[1:] if argv and not argv[0].startswith("-") else argv))
    opts = case.get("executable_opts")
    if isinstance(opts, list) and all(isinstance(o, str) for o in opts):
        if joboutput.RANK_MARKER in opts:
            opts = opts[opts.index(joboutput.RANK_MARKER) + 2:]
        out.append(("the job's command (executable_opts)", opts))
    return out


def _contract_argv(spec: TestSpec, bench: Any, entry: dict, tasks: int,
                   recorded: list[str]) -> tuple[list[str] | None, str]:
    try:
        return bench.contract_options(spec, entry, tasks, recorded), ""
    except (KeyError, TypeError, ValueError) as err:
        return None, str(err)[:200]


def _command_contract(case: Case, spec: TestSpec, bench: Any, entry: dict,
                      tasks: int) -> list[str]:
    out = []
    for what, got in _recorded_commands(case):
        want, why = _contract_argv(spec, bench, entry, tasks, got)
        if why:
            return [f"the command tests.{spec.key} asks cannot be built: {why}"]
        diff = _options_differ(got, want) if want is not None else ""
        if diff:
            out.append(f"not the run the contract asks: {what} {diff} (tests.{spec.key} "
                       f"among {tasks} ranks)")
    return out


def _output_contract(case: Case, spec: TestSpec, bench: Any, entry: dict, job: JobOutput,
                     nodes: int, tasks: int) -> list[str]:
    """The job's own output against the contract: its rank lines (where each rank ran,
    from Slurm) and its benchmark's header."""
    out = []
    where = f"tests.{spec.key}"
    ranks = placement.parse_rank_map(job.stdout, joboutput.RANK_MARKER)
    seen = sorted(set(ranks.values()))
    if ranks and (len(ranks), len(seen)) != (tasks, nodes):
        light = len(ranks) < tasks or len(seen) < nodes
        out.append(("lighter than the contract" if light else "not the run the contract asks")
                   + ": "
                   f"its output ({job.path}) shows {len(ranks)} ranks on {len(seen)} nodes "
                   f"({', '.join(seen)[:100]}), the verified entry {where} asks {tasks} "
                   f"on {nodes}")
    listed = set(case.job.nodelist)
    if ranks and listed and not set(seen) <= listed:
        out.append(f"its output ({job.path}) shows ranks on "
                   f"{', '.join(sorted(set(seen) - listed))[:100]}, which the job's node "
                   "list (job_nodelist) does not name")
    if bench.output_header is None:
        return out
    printed_tasks, printed_nodes, argv = bench.output_header(job.stdout)
    got = (argv[1:] if argv and not argv[0].startswith("-") else argv) or []
    want = _contract_argv(spec, bench, entry, tasks, got)[0] if argv else None
    seen_asked = [(f"{printed_tasks} tasks", f"{tasks} tasks", printed_tasks, tasks),
                  (f"{printed_nodes} nodes", f"{nodes} nodes", printed_nodes, nodes)]
    seen_asked = [(a, b, x < y) for a, b, x, y in seen_asked if x is not None and x != y]
    for flag in bench.sized_options if want is not None else ():
        if last_option(got, flag) != last_option(want, flag):
            seen_asked.append((_shown(flag, last_option(got, flag)),
                               _shown(flag, last_option(want, flag)), False))
    if seen_asked:
        light = any(x for _, _, x in seen_asked)
        out.append(("lighter than the contract" if light else "not the run the contract asks")
                   + f": its output's own header ({job.path}) prints "
                   + ", ".join(a for a, _, _ in seen_asked) + f"; the verified entry {where} "
                   "asks " + ", ".join(b for _, b, _ in seen_asked))
    return out


def _shown(flag: str, value: str | None) -> str:
    return f"{flag} {value[:40]}" if value is not None else f"no {flag}"


def _option_units(argv: list[str]) -> list[tuple[str, str]]:
    """(its key, the option as given) of each option of an argument list: a flag with the
    value after it ('-t 1m'; IOR's '-O name=value' keyed by its name), or alone
    ('-F', '--runtime=3', keyed by its name)."""
    out, i = [], 0
    while i < len(argv):
        arg = argv[i]
        if arg.startswith("-") and i + 1 < len(argv) and not argv[i + 1].startswith("-"):
            value = argv[i + 1]
            key = f"{arg} {value.split('=', 1)[0]}" if arg == "-O" else arg
            out.append((key, f"{arg} {value}"))
            i += 2
            continue
        out.append((arg.split("=", 1)[0], arg))
        i += 1
    return out


def _options_differ(got: list[str], want: list[str]) -> str:
    """'' when the two argument lists give the same options (in any order); else what
    differs: 'gives -D 2 where it asks -D 60; lacks -F; adds -z'."""
    got_units, want_units = Counter(_option_units(got)), Counter(_option_units(want))
    extra = list((got_units - want_units).elements())
    missing = list((want_units - got_units).elements())
    if not extra and not missing:
        return ""
    parts = []
    for key, shown in missing:
        other = next((u for u in extra if u[0] == key), None)
        if other is not None:
            extra.remove(other)
            parts.append(f"gives {other[1][:60]} where it asks {shown[:60]}")
        else:
            parts.append(f"lacks {shown[:60]}")
    parts += [f"adds {shown[:60]}" for _, shown in extra]
    return "; ".join(dict.fromkeys(parts))
