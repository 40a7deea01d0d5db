"""The session's verdict, decided once: ACCEPTED, NOT ACCEPTED or INCOMPLETE, and why.

ACCEPTED only if at least one test tagged ``acceptance`` ran, every test (fixtures
excepted: they are shown with the test that uses them) is PASS, all of them used the
same reference file (one SHA-256) and the session verifies; INCOMPLETE when nothing
failed but some tests were skipped (e.g. a benchmark is not installed: each says why and
how to fix it) or something cannot be verified; NOT ACCEPTED otherwise.

:func:`judge_session` weighs the tests, the session as a whole (:mod:`.session`), each
condition's section (what blocks, what cannot be verified) and the run's manifest.
The report (:func:`.report.build_context`) lays its result out, and ``fsaccept report``
prints it (:func:`console_lines`). Nightly prints each test's line (:func:`verdict_line`):
it judges no session.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from fsaccept.core.formatting import one_line
from fsaccept.reporting.case import TypedReport
from fsaccept.reporting.runreport import SessionCheck, Test
from fsaccept.reporting.sections import CheckSummary, check_summaries
from fsaccept.reporting.session import session_check
from fsaccept.reporting.verdicts import (ACCEPTED, INCOMPLETE, NOT_ACCEPTED, PASS, SKIPPED,
                                         is_acceptance)

#: Reasons listed under the overall verdict (then a count: the tables have them all).
BLOCKING_SHOWN = 50


class SectionFindings(Protocol):
    """What a condition's section adds to the session's verdict."""

    failures: list[str]  # each blocks the sign-off
    incomplete: list[str]  # each leaves it INCOMPLETE at best


@dataclass(frozen=True)
class SessionVerdict:
    """The session's verdict and the reasons shown under it (one line per check)."""

    verdict: str
    reasons: list[str]

    @property
    def accepted(self) -> bool:
        return self.verdict == ACCEPTED


def verdict_line(t: Test) -> str:
    """One test's line: 'name: VERDICT (reason)'."""
    return f"{t.name}: {t.verdict}" + (f" ({t.reason})" if t.reason else "")


def judge_session(report: TypedReport, tests: list[Test], *, reference: Any = None,
                  reference_problem: str = "", conditions: Iterable[SectionFindings] = (),
                  integrity: Any = None,
                  checks: Sequence[CheckSummary] | None = None) -> SessionVerdict:
    """The verdict of a session: its ``tests`` (a sweep's points beyond the partition left
    out), the session judged as a whole against the verified ``reference`` (None:
    ``reference_problem`` says why), each condition's findings, and the run's manifest
    verified (``integrity``: a :class:`.manifest.Integrity`, or None when there is none).
    ``checks``: the tests' check summaries, when already made."""
    session = session_check(report, tests, reference, reference_problem)
    for found in conditions:
        session.blocking += found.failures
        session.unverified += found.incomplete
    if integrity is not None and integrity.present and not integrity.verified:
        session.unverified += [f"integrity: {p}" for p in integrity.problems]
    verdict, reasons = overall_verdict(tests, session)
    checks = check_summaries(tests) if checks is None else checks
    return SessionVerdict(verdict, _by_check(verdict, reasons, tests, checks))


def overall_verdict(tests: list[Test], session: SessionCheck | None = None
                    ) -> tuple[str, list[str]]:
    """ACCEPTED only if there is a test, every test is PASS and the session verifies;
    INCOMPLETE if what did not pass was skipped or cannot be verified; else NOT ACCEPTED.
    With, for each test that did not pass, its :func:`verdict_line`, then the session's
    reasons."""
    session = session or SessionCheck()
    if not tests:
        return NOT_ACCEPTED, ["no test ran"] + session.blocking + session.unverified
    blocking = [verdict_line(t) for t in tests if t.verdict != PASS]
    skipped = [t for t in tests if t.verdict == SKIPPED]
    if skipped and len(skipped) == len(blocking) and not session.blocking:
        return INCOMPLETE, ([f"{len(skipped)} of {len(tests)} tests did not run"] + blocking
                            + session.unverified)
    shas = sorted({tc.get("reference_sha256") for t in tests for tc in t.cases + t.fixtures
                   if tc.get("reference_sha256")})
    if len(shas) > 1:
        blocking.append(f"the tests used {len(shas)} different reference files (SHA-256 "
                        f"{', '.join(str(s)[:12] for s in shas)}): the reference changed "
                        "during the run")
    if not any(is_acceptance(t.case) for t in tests):
        blocking.append(f"no acceptance test ran (only: {', '.join(t.name for t in tests)})")
    blocking += session.blocking
    if blocking:
        return NOT_ACCEPTED, blocking + session.unverified
    if session.unverified:
        return INCOMPLETE, [f"{len(session.unverified)} thing(s) the sign-off cannot "
                            "verify"] + session.unverified
    return ACCEPTED, []


def console_lines(judged: SessionVerdict) -> list[str]:
    """The console's last lines: the reasons, each on one line, then, alone on the last
    line, 'overall verdict: VERDICT' (what scripts/repeat-acceptance and a person read)."""
    head = ["not accepted because:"] if judged.reasons else []
    return (head + ["  " + one_line(r) for r in judged.reasons]
            + [f"overall verdict: {judged.verdict}"])


def _by_check(verdict: str, blocking: list[str], tests: list[Test],
              checks: Sequence[CheckSummary]) -> list[str]:
    """What blocks the sign-off, one line per check: 1,667 nodes that failed are one line
    with the counts and the worst case, not 1,667 lines."""
    nonpass = [t for t in tests if t.verdict != PASS]
    head = blocking[:1] if verdict == INCOMPLETE else []
    per_test = dict(zip(map(id, nonpass), blocking[len(head):len(head) + len(nonpass)]))
    rest = blocking[len(head) + len(nonpass):]
    lines = []
    for chk in checks:
        bad = [t for t in chk.tests if t.verdict != PASS]
        if len(bad) == 1:
            lines.append(per_test.get(id(bad[0]), ""))
        elif bad:
            counts = ", ".join(f"{v} {n:,}" for v, n in chk.counts if v != PASS)
            lines.append(f"{chk.name}: {len(bad):,} of {len(chk.tests):,} test cases did not "
                         f"pass ({counts}); the worst: {per_test.get(id(chk.detailed[0]), '')}"
                         if chk.large else f"{chk.name}: {len(bad):,} of {len(chk.tests):,} "
                         f"test cases did not pass ({counts}); first: "
                         f"{per_test.get(id(bad[0]), '')}")
    lines = [li for li in lines if li]
    if len(lines) > BLOCKING_SHOWN:
        lines = lines[:BLOCKING_SHOWN] + [f"(and {len(lines) - BLOCKING_SHOWN:,} more: see "
                                          "the summary)"]
    return head + lines + rest
