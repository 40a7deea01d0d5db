"""An interference test's record, read from the file it keeps
(``interference-record.json``; ``interference_record`` must be that file's): judged again
by :func:`fsaccept.benchmarks.fio.interference_judge.judge` (the overlap proven from the steps' own
clocks, the ratio of two p99s that are latencies), its settings those of the verified
reference's entry, each figure the value the record gives, and a judgement that is not
PASS never in a passed test; the record the one the job's kept files rebuild
(:func:`interference_rebuilt`: the steps' fio reports, the aggressors' logs and
``rfm_job.out``, by the live check's functions).
"""

from __future__ import annotations

import json
from typing import Any

from fsaccept.benchmarks.catalogue import TestSpec
from fsaccept.benchmarks.fio import command as fio_command
from fsaccept.benchmarks.fio import interference as fio_interference
from fsaccept.benchmarks.fio import interference_judge as interference
from fsaccept.reporting.case import Case
from fsaccept.reporting.signoff.common import (EvidenceMissing, RunFiles, figures_agree,
                                               first_difference, job_output, kept_text,
                                               record_json)
from fsaccept.reporting.signoff.fio import fio_entry, node_file


def interference_evidence_of(case: Case) -> tuple[interference.Evidence | None, str]:
    """An interference test's recorded record (``interference_record``), read; (None,
    why) when it cannot be."""
    text = case.get("interference_record")
    if not isinstance(text, str) or not text:
        return None, ("evidence missing: no interference_record, which the interference "
                      "test records")
    try:
        return interference.Evidence.from_dict(record_json(text)), ""
    except (ValueError, interference.EvidenceError) as err:
        return None, (f"its interference record (interference_record) cannot be read: "
                      f"{str(err)[:300]}")


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
        text, where = kept_text(case, files, interference.RECORD_FILE,
                                 "an interference record")
    except EvidenceMissing as err:
        return [str(err)]
    try:
        evidence = interference.Evidence.from_dict(record_json(text))
    except (ValueError, interference.EvidenceError, RecursionError) as err:
        return [f"its interference record ({where}) cannot be read: {str(err)[:300]}"]
    out = []
    if text != case.get("interference_record"):
        out.append(f"its interference_record is not what its output {where} says")
    judged = interference.judge(evidence)
    out += [f"its interference record: {j.what}: {r}" for j in judged
            if j.verdict == interference.INVALID for r in j.reasons]
    given = fio_command.interference_figures(evidence)
    out += figures_agree(case, fio_command.INTERFERENCE_FIGURES, given,
                          "interference record")
    params, why = fio_entry(spec, reference)
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
                   f"{first_difference(json.loads(text), record.to_dict())}")
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
            return node_file(case, files, name, "an interference step's file",
                                  needed)[0]
        want = victim_nodes if victim_nodes is not None else \
            len(fio_interference.names(job.info.get("victims", "")))
        return fio_interference.rebuilt(settings, job.stdout, job.info, read,
                                        str(case.get("target_dir") or ""), want,
                                        list(case.job.nodelist))
    except EvidenceMissing as err:
        return None, [str(err)]
