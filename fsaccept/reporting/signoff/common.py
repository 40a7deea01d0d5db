"""What every test case's evidence is held to, and what it is read from: the run's files
(:class:`RunFiles`: each read once by the sign-off's reader, bounded, below the run
directory, without a symbolic link, where the run directory is now; the manifest then
digests those very bytes; a file missing or refused is INVALID, "evidence missing: PATH"),
the job's own output (:func:`job_output`), the session's evidence
(:class:`SessionEvidence`: the data-reduction probe's result, re-read from its
measurements by :func:`probe_problems`; FillTarget's cases), and the rules every
benchmark's test shares:

- the directory the test wrote in (``target_dir``), in its own target's data directory
  of the verified reference (:func:`target_dir_reasons`);
- the nodes' view of the target before the benchmark (``node_mounts``):
  :func:`fsaccept.core.guards.node_mount_reasons`, and each node's recorded mount
  options against the verified reference's ``mount_options``:
  :func:`fsaccept.core.mountopts.node_reasons` (:func:`node_mounts_reasons`);
- the storage servers after it (``servers_after``): :func:`fsaccept.core.servers.degraded`,
  and for a degraded-mode test :func:`fsaccept.core.degraded.not_degraded_after`, matched
  to the job's node list (:func:`servers_reasons`);
- the file system the job ran on (``job_fstype``) against the verified reference's
  ``target.fstype``: :func:`fsaccept.core.guards.fstype_reasons`
  (:func:`job_fstype_reasons`);
- the job's record in Slurm's accounting (``job_accounting``): this job's, and not ended
  by Slurm (:func:`fsaccept.core.slurm.accounting_reasons`, as live); a time limit noted
  after the benchmark (``time_limit_after_benchmark``): a note only when the benchmark
  had ended with exit 0 (:func:`accounting_reasons`).

A JSON record a case carries (the probe's, the soak's, the interference test's, the
fill's) holding an integer beyond a float's range cannot be read (:func:`record_json`):
no check writes one, and every float sum over it would raise.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Callable

from fsaccept.benchmarks import registry
from fsaccept.benchmarks.catalogue import Benchmark, TestSpec
from fsaccept.benchmarks.fio import spec as fio_spec
from fsaccept.benchmarks.fio.command import KINDS as FIO_KINDS
from fsaccept.benchmarks.fio.command import Kind
from fsaccept.core import (degraded, guards, inputs, joboutput, mountopts, reduction, servers,
                           slurm)
from fsaccept.core.findings import figure_problem
from fsaccept.core.reference import ReferenceError, TARGET_PARAMETER
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


def record_json(text: str) -> Any:
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
        result = reduction.ProbeResult.from_dict(record_json(text))
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


def benchmark_of(spec: TestSpec | None) -> Benchmark | None:
    """The record of the benchmark a test runs (None: none)."""
    return registry.BENCHMARKS.get(spec.benchmark) if spec is not None else None


def fio_kind(spec: TestSpec | None) -> Kind | None:
    """A fio test's kind record (None: not a test of fio's record, or of none of its
    kinds)."""
    if spec is None or benchmark_of(spec) is not fio_spec.BENCHMARK:
        return None
    return FIO_KINDS.get(spec.attrs.get("kind", ""))


def direct_io(case: Case, spec: TestSpec) -> bool:
    kind = FIO_KINDS.get(spec.attrs.get("kind", ""))
    return case.get("direct_io") is True or bool(kind and kind.direct)


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


def servers_after_reasons(answers: dict[str, list[str]], case: Case,
                           spec: TestSpec) -> list[str]:
    """The live rule on the nodes' answers after the benchmark: healthy, except for a
    degraded-mode figure, which must have been measured with the fault still seen."""
    if spec.degraded and not spec.attrs.get("benchmark_after_recovery"):
        return degraded.not_degraded_after(answers, case.job.nodelist)
    return servers.after_reasons(answers, list(case.job.nodelist))


def count_problem(value: Any) -> str | None:
    """Why a recorded count (bytes, ranks) is none: not a whole number, not above 0, or
    beyond a float's range (no float sum takes it)."""
    if not isinstance(value, int) or isinstance(value, bool):
        return "not a whole number"
    return figure_problem(value)


def kept_dirs(case: Case, files: RunFiles) -> list[str]:
    """The case's output and stage directories that are there, where the run directory
    is now."""
    return [d for d in (case.get("outputdir"), case.get("stagedir"))
            if isinstance(d, str) and d and os.path.isdir(files.rebase(d))]


def kept_text(case: Case, files: RunFiles | None, name: str, what: str) -> tuple[str, str]:
    """(the text of the record file ``name`` a check keeps beside its outputs, its path),
    read once through ``files``; EvidenceMissing when it is not there, cannot be read,
    is empty, or there is no run directory."""
    if files is None:
        raise EvidenceMissing(f"evidence missing: {name}: the run directory was not read")
    text, where = files.text(case, name, what)
    if not text:
        raise EvidenceMissing(f"evidence missing: {where} is empty")
    return text, where


def entry_parameters(spec: TestSpec, reference: Any,
                     parameters: Callable[[str, dict], Any]) -> tuple[Any, str]:
    """(the verified reference's entry of ``spec``, typed by its benchmark's
    ``parameters(key, entry)``, or None when there is none; why it cannot be read, or
    '')."""
    entry = getattr(reference, "entries", {}).get(spec.key) if reference is not None else None
    if not isinstance(entry, dict):
        return None, ""
    try:
        return parameters(spec.key, entry), ""
    except (ValueError, KeyError, TypeError) as err:
        return None, f"tests.{spec.key} cannot be read: {str(err)[:200]}"


def program_run(case: Case, files: RunFiles | None, field: str, what: str,
                parse: Callable[[str], Any], errors: Callable[[str], list],
                lines: Callable[[str], str]) -> tuple[JobOutput, Any] | list[str]:
    """(the job's output, the run of a program of fsaccept's own rebuilt from it by
    ``parse`` and ``errors``), or the reasons it cannot be: the case records no
    ``field`` (the program's lines, as ``lines`` takes them from an output), the output
    is missing, or its lines are not those recorded."""
    text = case.get(field)
    if not isinstance(text, str) or not text:
        return [f"evidence missing: no {field}, which {what} records"]
    try:
        job = job_output(case, files)
    except EvidenceMissing as err:
        return [str(err)]
    if lines(job.stdout) != text:
        return [f"its {field} are not what its output {job.path} says"]
    return job, joboutput.parsed(parse, errors, job.stdout, job.stderr)


def figures_agree(case: Case, names: Any, given: dict[str, float], record: str,
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


def first_difference(kept: Any, rebuilt: Any, where: str = "") -> str:
    """Where two JSON records first differ: the key's path and both values."""
    if isinstance(kept, dict) and isinstance(rebuilt, dict):
        for key in sorted(set(kept) | set(rebuilt)):
            if kept.get(key) != rebuilt.get(key):
                return first_difference(kept.get(key), rebuilt.get(key),
                                         f"{where}.{key}" if where else str(key))
    if isinstance(kept, list) and isinstance(rebuilt, list) and len(kept) == len(rebuilt):
        for i, (a, b) in enumerate(zip(kept, rebuilt)):
            if a != b:
                return first_difference(a, b, f"{where}[{i}]")
    return (f"{where or 'the record'} is {json.dumps(kept)[:120]}, its files give "
            f"{json.dumps(rebuilt)[:120]}")


def target_path(reference: Any) -> str | None:
    """The verified reference's target path (None: none, or no target selected)."""
    try:
        return str(reference.target.path) if reference is not None else None
    except (AttributeError, ValueError):
        return None


def node_mounts_reasons(case: Case, spec: TestSpec, fstype: str | None,
                        reference: Any) -> list[str]:
    """The nodes' view of the target before the benchmark (``node_mounts``), by the live
    check's judges: the file system, its mount options, no server down."""
    mount = case.get("target_mount")
    mounts = case.get("node_mounts")
    if not (isinstance(mounts, str) and mounts and fstype):
        return []
    answers = servers.ungrouped(mounts)
    if answers is None:
        return [f"node_mounts cannot be read: {mounts[:100]!r}"]
    out = guards.node_mount_reasons(answers, fstype, str(mount), list(case.job.nodelist),
                                    direct_io(case, spec))
    if reference is not None:  # its mount options, by the live check's judge
        target = reference.target
        out += mountopts.node_reasons(answers, str(mount), list(target.required_options),
                                      list(target.forbidden_options))
    # The job refuses a node whose client has lost a server: an answer that says one is
    # down is not one a live run records.
    down = [a for a in answers if "(down " in a]
    return out + [f"node_mounts shows a server down: {a[:100]}" for a in down]


def servers_reasons(case: Case, spec: TestSpec, fstype: str | None) -> list[str]:
    """The storage servers after the benchmark (``servers_after``), by the live rule
    (:func:`servers_after_reasons`); none recorded by a job on a file system whose
    servers are probed is evidence missing."""
    after = case.get("servers_after")
    if isinstance(after, str) and after:
        answers = servers.ungrouped(after)
        return (servers_after_reasons(answers, case, spec) if answers is not None
                else [f"servers_after cannot be read: {after[:100]!r}"])
    if fstype and servers.probe(fstype) and case.get("node_mounts"):
        return [f"evidence missing: no servers_after, which every job on {fstype} "
                "records after its benchmark"]
    return []


def job_fstype_reasons(case: Case, fstype: str | None) -> list[str]:
    """The file system the job ran on (``job_fstype``, ``target_fstype``) against the
    verified reference's ``target.fstype``."""
    out = []
    for key in ("job_fstype", "target_fstype") if fstype else ():
        seen = case.get(key)
        if key in case and seen != fstype:
            out += guards.fstype_reasons(str(seen or ""), fstype,
                                         f"{key}: {case.get('target_dir') or 'the target'}")
    return out


def accounting_reasons(case: Case) -> list[str]:
    """The job's record in Slurm's accounting, as live; and a time limit noted after the
    benchmark, a note only when the benchmark had ended with exit 0."""
    note = case.get("time_limit_after_benchmark")
    out = slurm.accounting_reasons(case.get("job_accounting"), case.job.jobid,
                                   str(note or ""), str(case.get("scheduler") or ""))
    if note:
        status = re.search(r"after the benchmark had ended \(exit (\S+?)\)", str(note))
        if not status or status.group(1) != "0":
            out.append(f"a time limit after the benchmark is a note only when the benchmark "
                       f"ended with exit 0: {str(note)[:200]}")
    return out
