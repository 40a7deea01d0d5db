"""The evidence a test case recorded, judged again when a run report is re-read: by the
same functions the live check called (one function, two callers), so that an edited run
report whose test says ``pass`` is INVALID when its own evidence says the figure is
worthless.

- the nodes' view of the target before the benchmark (``node_mounts``):
  :func:`fsaccept.core.guards.node_mount_reasons`;
- the storage servers after it (``servers_after``): :func:`fsaccept.core.servers.degraded`;
- the file system the job ran on (``job_fstype``) against the verified reference's
  ``target.fstype``: :func:`fsaccept.core.guards.fstype_reasons`;
- the data written (``data_pattern``) against the session's data-reduction probe:
  :func:`fsaccept.core.reduction.reducible_data_reasons`, and the probe's own sentence
  against its ratios (:class:`fsaccept.core.reduction.ProbeResult`);
- a checkpoint's bandwidth against its volume (``burst_bytes``) over its time:
  :class:`fsaccept.benchmarks.ior.figures.Burst`;
- a time limit noted after the benchmark (``time_limit_after_benchmark``): a note only
  when the benchmark had ended with exit 0;
- IO500's results (``io500_result``): :func:`fsaccept.benchmarks.io500.validity.invalid_reasons`
  (its score recomputed from its phases), and its figures those the results give.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from fsaccept.benchmarks import registry
from fsaccept.benchmarks.catalogue import ACCEPTANCE, SCALING, TestSpec
from fsaccept.benchmarks.fio.command import KINDS as FIO_KINDS
from fsaccept.benchmarks.io500 import parse as io500_parse
from fsaccept.benchmarks.io500 import validity as io500_validity
from fsaccept.benchmarks.ior.command import PHASES
from fsaccept.benchmarks.ior.figures import Burst
from fsaccept.core import degraded, guards, reduction, servers
from fsaccept.reporting.case import Case

#: The class of the data-reduction probe (the catalogue's).
PROBE = "DataReductionProbe"


@dataclass
class SessionEvidence:
    """What the session says as a whole: the data-reduction probe's result by the mount
    point it measured (a probe whose record contradicts itself gives none), and what is
    wrong with each probe case."""

    probes: dict[str, reduction.ProbeResult] = field(default_factory=dict)
    probe_problems: dict[str, list[str]] = field(default_factory=dict)


def probe_problems(case: Case) -> tuple[reduction.ProbeResult | None, list[str]]:
    """The probe's result, re-read from its recorded measurements, and where its sentence
    (verdict, summary) or its figures disagree with them."""
    text = case.get("reduction_result")
    if not text:
        return None, []
    try:
        result = reduction.ProbeResult.from_dict(json.loads(text))
    except (TypeError, ValueError, KeyError, AttributeError, RecursionError):
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


def session_evidence(cases: Sequence[Case]) -> SessionEvidence:
    out = SessionEvidence()
    for case in cases:
        if registry.class_of_case(case.get("name")) != PROBE or case.get("result") != "pass":
            continue
        result, problems = probe_problems(case)
        if problems:
            out.probe_problems[str(case.get("uuid"))] = problems
        elif result is not None:
            out.probes[str(case.get("target_mount") or result.target)] = result
    return out


def _direct_io(case: Case, spec: TestSpec) -> bool:
    kind = FIO_KINDS.get(spec.attrs.get("kind", ""))
    return case.get("direct_io") is True or bool(kind and kind.direct)


def _reducible(label: str) -> tuple[str, bool] | None:
    """(the pattern's words, whether the benchmark's own rule calls it reducible) of a
    recorded ``data_pattern`` ('ior random (irreducible)'): the label's own words on
    reducibility are not taken on trust."""
    match = re.match(r"(\S+) (\S+) \(", label)
    if not match or match.group(1) not in registry.BENCHMARKS:
        return None
    bench = registry.BENCHMARKS[match.group(1)]
    rule = bench.pattern_reducible
    return label, (rule(match.group(2)) if rule else True)


def evidence_reasons(case: Case, spec: TestSpec | None, expected_fstype: str | None,
                     session: SessionEvidence) -> list[str]:
    """INVALID reasons the case's own recorded evidence gives (``expected_fstype``: the
    verified reference's ``target.fstype``; None when there is none to compare with)."""
    if spec is None or not spec.benchmark:
        if spec is not None and spec.check == PROBE:
            return session.probe_problems.get(str(case.get("uuid")), [])
        return []
    out = []
    fstype = expected_fstype
    mount = case.get("target_mount")
    mounts = case.get("node_mounts")
    if isinstance(mounts, str) and mounts and fstype:
        answers = servers.ungrouped(mounts)
        if answers is None:
            out.append(f"node_mounts cannot be read: {mounts[:100]!r}")
        else:
            out += guards.node_mount_reasons(answers, fstype, str(mount),
                                             list(case.job.nodelist),
                                             _direct_io(case, spec))
            # The job refuses a node whose client has lost a server: an answer that
            # says one is down is not one a live run records.
            down = [a for a in answers if "(down " in a]
            out += [f"node_mounts shows a server down: {a[:100]}" for a in down]
    after = case.get("servers_after")
    if spec.degraded:
        out += _fault_reasons(case, spec)
    if isinstance(after, str) and after:
        answers = servers.ungrouped(after)
        out += (_servers_after_reasons(answers, case, spec) if answers is not None
                else [f"servers_after cannot be read: {after[:100]!r}"])
    elif fstype and servers.probe(fstype) and mounts:
        out.append(f"evidence missing: no servers_after, which every job on {fstype} "
                   "records after its benchmark")
    if fstype:
        for key in ("job_fstype", "target_fstype"):
            seen = case.get(key)
            if key in case and seen != fstype:
                out += guards.fstype_reasons(str(seen or ""), fstype,
                                             f"{key}: {case.get('target_dir') or 'the target'}")
    out += _reduction_reasons(case, spec, session)
    out += _burst_reasons(case, spec)
    if spec.benchmark == "io500" and spec.role == ACCEPTANCE:
        out += io500_reasons(case)
    note = case.get("time_limit_after_benchmark")
    if note:
        status = re.search(r"after the benchmark had ended \(exit (\S+?)\)", str(note))
        if not status or status.group(1) != "0":
            out.append(f"a time limit after the benchmark is a note only when the benchmark "
                       f"ended with exit 0: {str(note)[:200]}")
    return out


def _burst_reasons(case: Case, spec: TestSpec) -> list[str]:
    """A checkpoint's figures against its recorded volume (``burst_bytes``): its bandwidth
    is the volume over its time (:class:`fsaccept.benchmarks.ior.figures.Burst`, as live),
    and no rank finished before the fastest."""
    phase = PHASES.get(str(spec.attrs.get("phase")))
    if phase is None or not phase.rank_times or spec.role != ACCEPTANCE:
        return []  # a checkpoint's fixture reports no figure
    time, rate, first = spec.figures[:3]
    by_name = {f.name: f.value for f in case.figures}
    if by_name.get(time) is None:
        return []  # no figure at all: judged elsewhere (a passing test must have one)
    volume = case.get("burst_bytes")
    if not isinstance(volume, int) or isinstance(volume, bool) or volume <= 0:
        return [f"burst_bytes {str(volume)[:40]!r}: the checkpoint's volume is not recorded"]
    burst = Burst(by_name[time], by_name.get(first) or 0.0, 0, 0, volume)
    out = []
    if by_name.get(rate) is None or abs(by_name[rate] - burst.bandwidth_mib_s) > \
            1e-9 * burst.bandwidth_mib_s:
        out.append(f"figure {rate} {by_name.get(rate)!r} is not its volume ({volume} bytes) "
                   f"over its {time} ({by_name[time]!r} s): {burst.bandwidth_mib_s!r} MiB/s")
    if not 0 < burst.first_s <= burst.seconds:
        out.append(f"figure {first} {by_name.get(first)!r} is not between 0 and the slowest "
                   f"rank's {time} {burst.seconds!r}")
    return out


def _servers_after_reasons(answers: dict[str, list[str]], case: Case,
                           spec: TestSpec) -> list[str]:
    """The live rule on the nodes' answers after the benchmark: healthy, except for a
    degraded-mode figure, which must have been measured with the fault still seen."""
    if spec.degraded and not spec.attrs.get("benchmark_after_recovery"):
        nodes = case.get("num_nodes")
        return degraded.not_degraded_after(answers, nodes if isinstance(nodes, int) else 0)
    return servers.degraded_reasons(answers)


def _fault_reasons(case: Case, spec: TestSpec) -> list[str]:
    """A degraded-mode test, re-judged from its recorded timeline: the fault injected,
    seen on every node, the file system restored; and its fault figures those the
    timeline gives."""
    timeline = case.get("fault_timeline")
    if not isinstance(timeline, str) or not timeline:
        return ["evidence missing: no fault_timeline, which every degraded-mode test "
                "records"]
    fault = degraded.fault_of(degraded.loads(timeline))
    out = fault.invalid_reasons()
    given = fault.figures
    for fig in case.figures:
        if fig.name in degraded.FIGURES and fig.value is not None and (
                fig.name not in given or abs(fig.value - given[fig.name]) > 1e-6):
            out.append(f"{fig.name} is recorded as {fig.value}, but the recorded fault "
                       f"timeline gives {given.get(fig.name, 'none')}")
    return out


def _reduction_reasons(case: Case, spec: TestSpec,
                       session: SessionEvidence) -> list[str]:
    result = session.probes.get(str(case.get("target_mount")))
    # A sweep's point is a rate as its healthy test's is.
    if result is None or spec.role not in (ACCEPTANCE, SCALING) or spec.benchmark not in (
            "ior", "fio", "io500"):
        return []
    if not spec.reduction_matters:  # a count of wrong transfers is not a rate
        return []
    label = case.get("data_pattern")
    if not label:
        if spec.attrs.get("kind") == "metadata":  # fio's metadata test writes no data
            return []
        return ["evidence missing: no data_pattern, and the session's probe found the file "
                "system reducing data"]
    read = _reducible(str(label))
    if read is None:
        return [f"data_pattern {str(label)[:80]!r} is not one fsaccept writes"]
    return reduction.reducible_data_reasons(read[0], read[1], result)


def io500_run(case: Case) -> io500_parse.Io500Run | None:
    """The IO500 run an IO500 test case recorded (``io500_result``); None without one
    or when it cannot be read."""
    text = case.get("io500_result")
    if not isinstance(text, str) or not text:
        return None
    try:
        return io500_parse.run_from_dict(json.loads(text))
    except (TypeError, ValueError, RecursionError):
        return None


def io500_reasons(case: Case) -> list[str]:
    """IO500's results judged again from the record, by the live check's rules (its
    score recomputed from its phases), beyond what the case already says; and each
    figure the case reports the one its results give."""
    if not case.get("io500_result"):
        return ["evidence missing: no io500_result, which the IO500 check records"]
    run = io500_run(case)
    if run is None:
        return ["its recorded IO500 results (io500_result) cannot be read"]
    said = str(case.get("invalid_reasons") or "")
    tasks = case.get("num_tasks")
    out = [r for r in io500_validity.invalid_reasons(
        run, procs=tasks if isinstance(tasks, int) and tasks > 0 else None) if r not in said]
    given = io500_parse.figures_of(run)
    for fig in case.figures:
        value = given.get(fig.name, (None, ""))[0]
        if fig.value is not None and (value is None or abs(fig.value - value) > 1e-9):
            out.append(f"{fig.name} is recorded as {fig.value}, but its recorded IO500 "
                       f"results give {value if value is not None else 'none'}")
    return out
