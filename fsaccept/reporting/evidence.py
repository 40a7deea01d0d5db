"""The evidence a test case recorded, judged again when a run report is re-read: by the
same functions the live check called (one function, two callers), so that an edited run
report whose test says ``pass`` is INVALID when its own evidence says the figure is
worthless.

:func:`evidence_reasons` gives a case's reasons in one order: the rules every benchmark's
test shares (:mod:`fsaccept.reporting.signoff.common`: its directory, the nodes' mounts,
the servers after it, the file system, Slurm's accounting), the data it wrote against
the probe (:mod:`.signoff.reduction`), IOR's checkpoint and verifying reads
(:mod:`.signoff.ior`), the figures and verdict its output gives (:mod:`.signoff.output`),
the contract (:mod:`.signoff.contract`), and, by one table (:data:`JUDGES`), each owner's
re-judging: a benchmark's (IO500, semantics, quota), a fio kind's (fio's node reports, a
soak, an interference test), a condition's (degraded mode, filled), a check of no
benchmark's (the data-reduction probe, FillTarget).  The table is keyed by what the
test's catalogue record resolves to (:func:`owners`), never by a name compared here.
"""

from __future__ import annotations

from typing import Any, Callable

from fsaccept.benchmarks import registry
from fsaccept.benchmarks.catalogue import ACCEPTANCE, TestSpec
from fsaccept.benchmarks.fio.command import KINDS as FIO_KINDS
from fsaccept.benchmarks.io500 import spec as io500_spec
from fsaccept.benchmarks.quota import spec as quota_spec
from fsaccept.benchmarks.network import spec as network_spec
from fsaccept.benchmarks.survey import spec as survey_spec
from fsaccept.benchmarks.semantics import spec as semantics_spec
from fsaccept.reporting.case import Case
from fsaccept.reporting.signoff.common import (PROBE, SessionEvidence, accounting_reasons,
                                               fio_kind, job_fstype_reasons,
                                               node_mounts_reasons, servers_reasons,
                                               target_dir_reasons)
from fsaccept.reporting.signoff.contract import contract_reasons
from fsaccept.reporting.signoff.degraded import degraded_scenario_reasons, fault_reasons
from fsaccept.reporting.signoff.fill import fill_reasons, fill_target_reasons
from fsaccept.reporting.signoff.fio import fio_reasons
from fsaccept.reporting.signoff.interference import interference_reasons
from fsaccept.reporting.signoff.io500 import io500_reasons
from fsaccept.reporting.signoff.ior import burst_reasons, verify_reasons
from fsaccept.reporting.signoff.output import output_figure_reasons, output_reasons
from fsaccept.reporting.signoff.quota import quota_reasons
from fsaccept.reporting.signoff.reduction import reduction_reasons
from fsaccept.reporting.signoff.semantics import semantics_reasons
from fsaccept.reporting.signoff.soak import soak_reasons
from fsaccept.reporting.signoff.network import network_reasons
from fsaccept.reporting.signoff.survey import survey_reasons

#: One owner's re-judging: (case, its catalogue record, the verified reference or None,
#: the session's evidence) -> INVALID reasons.
Judge = Callable[[Case, TestSpec, Any, SessionEvidence], list[str]]

#: The conditions a test's record flags (``TestSpec.degraded``, ``TestSpec.filled``).
DEGRADED, FILLED = "degraded", "filled"


def _with_files(judge: Callable[[Case, TestSpec, Any, Any], list[str]]) -> Judge:
    """A judge of (case, spec, reference, the run's files) as a row of :data:`JUDGES`."""
    return lambda case, spec, ref, session: judge(case, spec, ref, session.files)


#: Each owner's re-judging, by what a test's catalogue record resolves to
#: (:func:`owners`): a check of no benchmark by its class (``TestSpec.check``), a fio
#: test by its kind's record (``fio.command.KINDS``), any other benchmark's test by its
#: record's name and the test's role, a condition by its ``TestSpec`` flag.  A new
#: owner adds its row here.
JUDGES: dict[Any, Judge] = {
    PROBE: lambda case, spec, ref, session: session.probe_problems.get(
        str(case.get("uuid")), []),
    registry.FILL_TARGET.check: lambda case, spec, ref, session: fill_target_reasons(
        case, session.files, ref),
    DEGRADED: lambda case, spec, ref, session: (fault_reasons(case, spec)
                                                + degraded_scenario_reasons(case, spec, ref)),
    (io500_spec.BENCHMARK.name, ACCEPTANCE): lambda case, spec, ref, session: io500_reasons(
        case, session.files),
    (semantics_spec.BENCHMARK.name, ACCEPTANCE): _with_files(semantics_reasons),
    (quota_spec.BENCHMARK.name, ACCEPTANCE): _with_files(quota_reasons),
    (survey_spec.BENCHMARK.name, ACCEPTANCE): _with_files(survey_reasons),
    (network_spec.BENCHMARK.name, ACCEPTANCE): _with_files(network_reasons),
    **{kind: _with_files(soak_reasons if kind.soak else
                         interference_reasons if kind.interference else fio_reasons)
       for kind in FIO_KINDS.values()},
    FILLED: lambda case, spec, ref, session: fill_reasons(case, ref, session),
}

#: The owners judged before the servers' answers after the benchmark (a degraded-mode
#: test's fault: those answers are read by its rule).
BEFORE_SERVERS = frozenset({DEGRADED})


def owners(spec: TestSpec) -> list[Any]:
    """The keys of :data:`JUDGES` a test is judged by, in the order its reasons are
    given: a check of no benchmark by its class; else its degraded mode, its
    benchmark's (a fio test by its kind's record), then its fill."""
    if not spec.benchmark:
        return [spec.check]
    kind = fio_kind(spec)
    return ([DEGRADED] if getattr(spec, DEGRADED) else []) \
        + [kind if kind is not None else (spec.benchmark, spec.role)] \
        + ([FILLED] if getattr(spec, FILLED) else [])


def _judged(keys: list[Any], case: Case, spec: TestSpec, reference: Any,
            session: SessionEvidence) -> list[str]:
    return [r for key in keys if key in JUDGES
            for r in JUDGES[key](case, spec, reference, session)]


def evidence_reasons(case: Case, spec: TestSpec | None, expected_fstype: str | None,
                     session: SessionEvidence, reference: Any = None) -> list[str]:
    """INVALID reasons the case's own recorded evidence gives (``expected_fstype``: the
    verified reference's ``target.fstype``; None when there is none to compare with;
    ``reference``: that verified reference file, whose entries a checkpoint's volume must
    match)."""
    if spec is None:
        return []
    keys = owners(spec)
    if not spec.benchmark:
        return _judged(keys, case, spec, reference, session)
    # A build runs no job (the catalogue says so): no target written, no placement.
    out = target_dir_reasons(case, reference) if spec.runs_job else []
    out += node_mounts_reasons(case, spec, expected_fstype, reference)
    out += _judged([k for k in keys if k in BEFORE_SERVERS], case, spec, reference, session)
    out += servers_reasons(case, spec, expected_fstype)
    out += job_fstype_reasons(case, expected_fstype)
    out += reduction_reasons(case, spec, session)
    out += burst_reasons(case, spec, reference)
    out += verify_reasons(case, spec)
    out += output_figure_reasons(case, spec, session.files, reference)
    if spec.runs_job:
        out += contract_reasons(case, spec, reference, session.files)
    out += output_reasons(case, spec, session.files, reference, expected_fstype)
    out += _judged([k for k in keys if k not in BEFORE_SERVERS], case, spec, reference,
                   session)
    return out + accounting_reasons(case)
