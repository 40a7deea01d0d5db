"""A soak's record, read from the file the soak keeps (``soak-record.json``: its logs are
not kept; ``soak_record`` must be that file's): judged again by
:func:`fsaccept.benchmarks.fio.soak.judge`, its settings those of the verified reference's entry
(no looser), each judged figure the value the record gives, and a judgement that fails
never in a passed test; the record held to its settings and the job
(:func:`fsaccept.benchmarks.fio.soak.record_reasons`, as live): a bandwidth series of the settings'
length, a client on each of the job's nodes, a kept stall over each span without
progress beyond the limit (:func:`soak_reasons`).
"""

from __future__ import annotations

from typing import Any

from fsaccept.benchmarks.catalogue import TestSpec
from fsaccept.benchmarks.fio import command as fio_command
from fsaccept.benchmarks.fio import soak
from fsaccept.reporting.case import Case
from fsaccept.reporting.signoff.common import (EvidenceMissing, RunFiles, figures_agree,
                                               record_json)
from fsaccept.reporting.signoff.fio import fio_entry


def soak_evidence_of(case: Case) -> tuple[soak.Evidence | None, str]:
    """A soak's recorded record (``soak_record``), read, for what is shown; (None, why)
    when it cannot be.  What is judged is the record's file (:func:`soak_reasons`)."""
    return _soak_evidence(case.get("soak_record"), "its soak record (soak_record)",
                          "evidence missing: no soak_record, which the soak records")


def _soak_evidence(text: Any, what: str, missing: str) -> tuple[soak.Evidence | None, str]:
    if not isinstance(text, str) or not text:
        return None, missing
    try:
        return soak.Evidence.from_dict(record_json(text)), ""
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
    out += figures_agree(case, fio_command.SOAK_FIGURES, given, "soak record", 0.0)
    params, why = fio_entry(spec, reference)
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
