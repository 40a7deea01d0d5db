"""IO500's results rebuilt from the job's ``io500-results/`` and stdout
(:func:`io500_rebuilt`; ``io500_result`` must be what they give):
:func:`fsaccept.benchmarks.io500.validity.invalid_reasons` (its score recomputed from its
phases), and its figures those the results give (:func:`io500_reasons`).
"""

from __future__ import annotations

import os

from fsaccept.benchmarks.io500 import config as io500_config
from fsaccept.benchmarks.io500 import parse as io500_parse
from fsaccept.benchmarks.io500 import validity as io500_validity
from fsaccept.core import joboutput
from fsaccept.reporting.case import Case
from fsaccept.reporting.signoff.common import (EvidenceMissing, RunFiles, job_output,
                                               record_json)


def io500_run(case: Case) -> io500_parse.Io500Run | None:
    """The IO500 run an IO500 test case recorded (``io500_result``); None without one
    or when it cannot be read.  What is shown: a test whose record is not what its
    output rebuilds is INVALID (:func:`io500_reasons`)."""
    text = case.get("io500_result")
    if not isinstance(text, str) or not text:
        return None
    try:
        return io500_parse.run_from_dict(record_json(text))
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
