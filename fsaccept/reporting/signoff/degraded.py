"""A degraded-mode test's fault judged again: its recorded timeline (``fault_timeline``:
:class:`fsaccept.core.degraded.Fault`, within its own job, :func:`fault_reasons`), the
data it reads written before the fault began, for the same scenario
(:func:`degraded_dataset_reasons`, given the fixtures it depended on), and its scenario
(``fault_scenario``) one the verified reference names and that runs its test, its
recorded fraction (``degraded_fraction``) that scenario's
(:func:`degraded_scenario_reasons`; its thresholds, fault ceilings included, are that
scenario's: :func:`fsaccept.reporting.runreport.looser_thresholds`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fsaccept.benchmarks import registry
from fsaccept.benchmarks.catalogue import FIXTURE, TestSpec
from fsaccept.core import degraded
from fsaccept.core.reference import ReferenceError
from fsaccept.reporting.case import Case


def fault_reasons(case: Case, spec: TestSpec) -> list[str]:
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
        return []  # an unreadable timeline: fault_reasons says so
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
