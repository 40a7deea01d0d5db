"""The sign-off's re-reads of a job's own output are bounded (issue 49, class 8): a job's
``rfm_job.out`` it parses whole (IOR's, mdtest's...) is read a piece at a time, its bytes
never kept beside its text, at most ``inputs.MAX_JOB_OUTPUT_BYTES``; a larger one is
refused by its size before a byte of it is read, INVALID "evidence missing".

The run directory is ``test_manifest``'s (the real ``local-spack-accepted`` run report,
each test's output a real capture), a test's output made huge by a hole after its real
text (a sparse file: no disk taken).  Memory is measured with tracemalloc, not time."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

from fsaccept.benchmarks import registry
from fsaccept.core import inputs
from fsaccept.reporting.case import case_of
from fsaccept.reporting.evidence import evidence_reasons
from fsaccept.reporting.signoff.common import RunFiles, SessionEvidence
from fsaccept.suite.reference import load_reference
from tests.unit.test_manifest import _case, _outdir, _signoff, run  # noqa: F401

MIB = 1 << 20


def _grown(run: Path, name: str, size: int) -> Path:  # noqa: F811
    """The real output of test ``name``, followed by a hole up to ``size`` bytes."""
    out = _outdir(run, name) / "rfm_job.out"
    with open(out, "r+b") as f:
        f.truncate(size)
    return out


def _measured(run: Path, name: str) -> tuple[list[str], int]:  # noqa: F811
    """(the sign-off's reasons for test ``name``, by the rules it applies to a case, its
    peak of traced memory while it judged it, in bytes)."""
    data = json.loads((run / "run-report.json").read_text())
    tc = _case(data, name)
    ref = Path(tc["reference_path"])
    reference = load_reference(str(ref), ref.read_bytes())
    spec = registry.TESTS[registry.class_of_case(name)]
    session = SessionEvidence(files=RunFiles(inputs.Reader(run)))
    tracemalloc.start()
    try:
        reasons = evidence_reasons(case_of(tc), spec, reference.target.fstype, session,
                                   reference)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return reasons, peak


def test_a_300_mib_ior_output_is_refused_unread(run, capsys):  # noqa: F811
    """It took 900 MiB, and the run stayed ACCEPTED."""
    out = _grown(run, "IORWriteBandwidth", 300 * MIB)
    reasons, peak = _measured(run, "IORWriteBandwidth")
    assert peak < 16 * MIB, f"{peak / MIB:.0f} MiB"
    refused = (f"evidence missing: {out}: 314,572,800 bytes, more than the "
               f"{inputs.MAX_JOB_OUTPUT_BYTES:,} read as a job's output: refused")
    assert refused in reasons, reasons
    code, md, _ = _signoff(run, capsys)
    assert code == 1 and "**Overall verdict: NOT ACCEPTED**" in md
    assert f"- IORWriteBandwidth: INVALID ({refused}" in md, md[:2000]


def test_a_300_mib_mdtest_output_is_refused_unread(run):  # noqa: F811
    out = _grown(run, "MdtestEasy", 300 * MIB)
    reasons, peak = _measured(run, "MdtestEasy")
    assert peak < 16 * MIB, f"{peak / MIB:.0f} MiB"
    assert any(r.startswith(f"evidence missing: {out}: 314,572,800 bytes") for r in reasons), \
        reasons


def test_an_output_within_the_cap_is_read_once_as_text_alone(run, monkeypatch):  # noqa: F811
    """Within the cap (here made 32 MiB) the output is judged, and held once as text:
    its bytes are not kept beside it, nor decoded again by each rule (IOR's figures, its
    verdict, the contract): less than twice and a half its size (it took over three)."""
    monkeypatch.setattr(inputs, "MAX_JOB_OUTPUT_BYTES", 32 * MIB, raising=False)
    _grown(run, "IORWriteBandwidth", 24 * MIB)
    reasons, peak = _measured(run, "IORWriteBandwidth")
    assert not any(r.startswith("evidence missing") for r in reasons), reasons
    assert peak < 2.5 * 24 * MIB, f"{peak / MIB:.0f} MiB"
