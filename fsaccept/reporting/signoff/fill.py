"""A filled test's fill record, read from the file its FillTarget keeps
(``fill-record.json``; its ``fill_record``, and FillTarget's, must be that file's:
:func:`fill_reasons`, :func:`fill_target_reasons`): the level reached judged again by
:func:`fsaccept.core.fill.judge_level` (df once filled, and df at the test's own start:
the ``fill_df`` line its own ``rfm_job.out`` printed, which its ``fill_df`` must be,
:func:`filled_df_reasons`) and the filler by :func:`fsaccept.core.fill.judge_filler`, its
limits those of the verified reference's ``fill:`` section (the comparison with its empty
counterpart is the session's: :mod:`fsaccept.reporting.fill`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fsaccept.benchmarks import registry
from fsaccept.core import fill, joboutput
from fsaccept.core.reference import ReferenceError
from fsaccept.reporting.case import Case
from fsaccept.reporting.signoff.common import (EvidenceMissing, RunFiles, SessionEvidence,
                                               first_difference, job_output, kept_dirs,
                                               kept_text, record_json)


def fill_evidence_of(case: Case) -> tuple[fill.Evidence | None, str]:
    """A filled test's recorded fill record (``fill_record``), read; (None, why) when it
    cannot be."""
    text = case.get("fill_record")
    if not isinstance(text, str) or not text:
        return None, "evidence missing: no fill_record, which every filled test records"
    try:
        return fill.Evidence.from_dict(record_json(text)), ""
    except (ValueError, fill.EvidenceError) as err:
        return None, f"its fill record (fill_record) cannot be read: {str(err)[:300]}"


def _fill_kept(case: Case, files: RunFiles | None
               ) -> tuple[fill.Evidence | None, str, str, list[str]]:
    """(FillTarget's kept record, read from the file of ``case``; its text; its path;
    why it cannot be read)."""
    try:
        text, where = kept_text(case, files, fill.EVIDENCE_FILE, "a fill record")
    except EvidenceMissing as err:
        return None, "", "", [str(err)]
    try:
        return fill.Evidence.from_dict(record_json(text)), text, where, []
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
                   f"gives: {first_difference(kept.to_dict(), record.to_dict())}")
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
    if files is None or not kept_dirs(case, files):
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
