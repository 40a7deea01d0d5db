"""The run report judged as one session, for the sign-off: every case of it (fixtures
too), its own counts against the cases present, each case of this session and of one
system (the verified reference's), and what the sign-off cannot verify (no verified
reference, acceptance tests the reference defines that did not run, an override of the
target's file-system type).  Its result, a :class:`.runreport.SessionCheck`, goes into
:func:`.verdict.judge_session`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fsaccept.benchmarks import registry
from fsaccept.benchmarks.catalogue import ACCEPTANCE, FILLED_PREFIX, SCALING
from fsaccept.reporting.case import Case, TypedReport, typed
from fsaccept.reporting.signoff.common import session_evidence
from fsaccept.reporting.signoff.fill import not_rebuilt_without_reference
from fsaccept.reporting.runreport import (PASS, RAN_A_JOB, SKIPPED, SessionCheck, Test,
                                          record_problems, spec_of_case, target_of,
                                          verdict_of)
from fsaccept.suite.reference import fill_tests


#: Seconds a case's job may end after the session's recorded end (clocks, rounding).
SESSION_SLACK_S = 5.0


def session_check(report: TypedReport | dict[str, Any], tests: list[Test],
                  reference: Any = None, reference_problem: str = "") -> SessionCheck:
    """Every test case judged as part of its session: fixtures too (one that did not pass
    blocks the sign-off whether or not a test still names it), the session's own counts
    against the cases present, each case of this session (its uuid, a job inside the
    session's time) and of one system, the one the verified reference is written for;
    without a verified reference (``reference_problem`` says why) or with acceptance tests
    the reference defines missing, the sign-off is not verified.  ``report``: typed at
    the door (a run report as parsed is typed there first)."""
    out = SessionCheck()
    run = typed(report)
    info = run.info
    out.blocking += _count_problems(info, run.record.get("runs") or [], run.runs)
    cases = run.cases
    uuid = info.get("uuid")
    start, end = info.get("time_start_unix"), info.get("time_end_unix")
    for tc in cases:
        name = str(tc.get("name"))[:100]
        if tc.get("session_uuid") != uuid or not str(tc.get("uuid", "")).startswith(
                f"{uuid}:"):
            out.blocking.append(f"{name}: its case is not of this session ({uuid})")
        done = tc.get("job_completion_time_unix")
        if (_number(done) and _number(start) and _number(end)
                and not start <= done <= end + SESSION_SLACK_S):
            out.blocking.append(f"{name}: its job ended outside the session's time")
    systems = sorted({str(tc.get("system")) for tc in cases if tc.get("system")})
    if len(systems) > 1:
        out.blocking.append(f"the cases are of {len(systems)} systems ({', '.join(systems)}): "
                            "a sign-off is for one")
    last: dict[Any, Case] = {}
    for tc in cases:  # a fixture retried: its last run
        if tc.get("fixture"):
            last[(tc.get("unique_name"), tc.get("system"), tc.get("partition"))] = tc
    evidence = session_evidence(cases)
    for fx in last.values():
        v = verdict_of(fx)
        # A fixture skipped ran no job: its tests say why (INCOMPLETE), no evidence is judged.
        contradictions = record_problems(fx, reference, evidence) if v.verdict in RAN_A_JOB \
            else []
        if contradictions:
            out.blocking.append(f"fixture {str(fx.get('name'))[:100]}: "
                                + "; ".join(contradictions))
            continue
        if v.verdict not in (PASS, SKIPPED):
            out.blocking.append(f"fixture {fx.get('name')}: {v.verdict}"
                                + (f" ({v.reason})" if v.reason else ""))
    if reference is not None and reference_problem:  # --reference: not the run's file
        out.unverified.append(reference_problem)
    if reference is None:
        out.unverified.append("the reference file could not be verified: "
                              + (reference_problem or "none was given")
                              + ("" if "thresholds not compared" in reference_problem
                                 else "; thresholds not compared"))
        out.unverified += not_rebuilt_without_reference(cases)
        return out
    for system in systems:
        try:
            reference.check_system(system)
        except ValueError as err:
            out.blocking.append(str(err)[:300])
    for name in reference.target_names:  # a case naming another target: its own reason
        target = reference.for_target(name)
        overrides = sorted({str(tc.get("target_fstype_expected")) for tc in cases
                            if tc.get("target_fstype_expected") and target_of(tc) == name}
                           - {target.target_fstype})
        if overrides:
            out.unverified.append(f"the run expected the target{_named(name)} on "
                                  f"{', '.join(overrides)} (FSACCEPT_TARGET_FSTYPE or "
                                  "target_fstype_expected), the reference file says "
                                  f"{target.target_fstype}")
    ran_on = {(spec_of_case(t.case).check, t.target) for t in tests if spec_of_case(t.case)}
    ran = {check for check, _ in ran_on}
    missing = [t.check + _named(name, " on target ")
               for name in reference.target_names for t in registry.TESTS.values()
               if (t.check, name) not in ran_on
               and not _per_scenario(t, reference.for_target(name))
               and _required(t, reference.for_target(name),
                             degraded_session=ran & _DEGRADED_CHECKS)
               and not _outside_the_sweep(t, reference.for_target(name), ran)
               and not _outside_the_fill(t, reference.for_target(name), ran)]
    if ran & _DEGRADED_CHECKS:
        missing += _missing_scenarios(tests, reference)
    if missing:
        out.unverified.append(f"{len(missing)} acceptance test(s) the reference file defines "
                              f"did not run: {', '.join(missing)}")
    return out


_DEGRADED_CHECKS = {t.check for t in registry.DEGRADED if t.degraded}


def _named(name: str, before: str = " ") -> str:
    """`` NAME`` of a named target ("" for a single ``target:``)."""
    return f"{before}{name}" if name else ""


_SCALING_CHECKS = {t.check for t in registry.SCALING_TESTS if t.role == SCALING}


def _outside_the_sweep(spec: Any, reference: Any, ran: set[str]) -> bool:
    """A scaling session (one that ran a sweep's checks: ``scripts/acceptance
    --scaling``) needs, of the healthy tests, only those whose key it sweeps."""
    return bool(ran & _SCALING_CHECKS) and spec.key not in reference.swept_tests(
        registry.scaling_keys())


#: The filled re-runs' class names (``Filled<Check>``).
_FILLED_CHECKS = {t.check for t in registry.filled_tests() if t.filled}


def _outside_the_fill(spec: Any, reference: Any, ran: set[str]) -> bool:
    """A fill session (one that ran a filled re-run: ``scripts/acceptance --fill``) needs
    the tests ``fill.tests`` names (default: the catalogue's), each empty and filled, and
    no other; any other session, no filled re-run."""
    if not ran & _FILLED_CHECKS:
        return spec.filled
    return spec.check.removeprefix(FILLED_PREFIX) not in fill_tests(reference)


def _required(spec: Any, reference: Any, degraded_session: Any) -> bool:
    """Whether the session must have run this acceptance test: each the reference file
    defines; a degraded-mode one only in a degraded-mode session (one that ran any), and
    then each the file's ``degraded.tests`` lists."""
    if spec.role != ACCEPTANCE or spec.key not in reference.entries:
        return False
    if not spec.degraded:
        return True
    mode = reference.degraded_mode
    return bool(degraded_session) and mode is not None and spec.key in mode.all_tests


def _per_scenario(spec: Any, reference: Any) -> bool:
    """A degraded-mode test the file's named scenarios each require on their own."""
    mode = reference.degraded_mode if spec.degraded else None
    return mode is not None and bool(mode.scenarios)


def _missing_scenarios(tests: list[Test], reference: Any) -> list[str]:
    """Each degraded-mode test a named scenario of the file runs (its clause's
    ``tests``) that did not run under that scenario."""
    mode = reference.degraded_mode if not reference.named_targets else None
    if mode is None or not mode.scenarios:
        return []
    ran_in = {(spec_of_case(t.case).check, t.scenario) for t in tests if spec_of_case(t.case)}
    return [f"{t.check} in scenario {clause.scenario}" for clause in mode.clauses
            for t in registry.DEGRADED if t.role == ACCEPTANCE and t.degraded
            and t.key in clause.tests and t.key in reference.entries
            and (t.check, clause.scenario) not in ran_in]


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v == v


def _count_problems(info: Mapping[str, Any], records: list[Mapping[str, Any]],
                    runs: Sequence[Sequence[Case]]) -> list[str]:
    """Where the session's counts (as ReFrame writes them: cases of the first run, failures,
    aborts and skips of the last) and each run's (``records``: as the run report gives
    them; ``runs``: each run's cases, typed) differ from the cases present."""
    out = []
    for i, (run, cases) in enumerate(zip(records, runs)):
        got = {"num_cases": len(cases),
               "num_failures": sum(tc.get("result") == "fail" for tc in cases),
               "num_aborted": sum(tc.get("result") == "abort" for tc in cases),
               # ReFrame counts a test not run for a failed dependency as skipped.
               "num_skipped": sum(tc.get("result") in ("skip", "fail_deps") for tc in cases)}
        for key, n in got.items():
            if key in run and run[key] != n:
                out.append(f"runs[{i}].{key} is {run[key]!r}, but the run has {n}")
    if runs:
        first, final = runs[0], runs[-1]
        want = {"num_cases": len(first),
                "num_failures": sum(tc.get("result") == "fail" for tc in final),
                "num_aborted": sum(tc.get("result") == "abort" for tc in final),
                "num_skipped": sum(tc.get("result") in ("skip", "fail_deps")
                                   for tc in final)}
        for key, n in want.items():
            if info.get(key) != n:
                out.append(f"session_info.{key} is {info.get(key)!r}, but the run report "
                           f"holds {n}")
    return out
