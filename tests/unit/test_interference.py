"""The noisy neighbour's pure half (issue 39 §2): fio's real reports of a victim alone and
beside an aggressor (``tests/data/interference``), the overlap proven from the steps'
clocks, the p99 ratio judged, the record kept and re-judged by the sign-off."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import pytest

from fsaccept.benchmarks.fio import command
from fsaccept.benchmarks.fio import interference as fio_interference
from fsaccept.benchmarks.fio import logs
from fsaccept.benchmarks.fio.parse import parse_fio
from fsaccept.benchmarks.fio import interference_judge as interference
from fsaccept.benchmarks.fio.interference_judge import INVALID, FAIL, PASS, Span

DATA = Path(__file__).parent.parent / "data" / "interference"


def run(name: str):
    return parse_fio((DATA / name).read_text())


def evidence(max_p99_ratio: float = 10.0, alone: str = "victim-alone.json",
             loaded: str = "victim-loaded.json", log: bool = True) -> interference.Evidence:
    return fio_interference.evidence(
        interference.Settings(max_p99_ratio), {"vm": run(alone)}, {"vm": run(loaded)},
        {"vm": run("aggressor.json")},
        {"vm": logs.read_log(DATA / "aggressor_bw.1.log")} if log else None)


def verdict_of(ev: interference.Evidence) -> str:
    return interference.verdict(interference.judge(ev))


# --------------------------------------------------------------------------- real captures


def test_the_captures_give_fios_own_numbers():
    ev = evidence()
    (v,) = ev.victims
    # jobs[0].read.clat_ns.percentile["99.000000"] / 1000, of clat_ns.N reads
    assert (v.p99_alone_us, v.samples_alone) == (1548.288, 55130)
    assert (v.p99_loaded_us, v.samples_loaded) == (5210.112, 20169)
    assert v.ratio == pytest.approx(5210.112 / 1548.288)
    # job_start (ms) to job_start + read.runtime (ms)
    assert (v.loaded.start_s, v.loaded.end_s) == (1795768040.529, 1795768045.530)
    (a,) = ev.aggressors
    assert a.span.start_s == 1795768038.412 and a.span.end_s == 1795768047.414
    assert a.bandwidth_mib_s == pytest.approx(1732095658 / 2**20)
    # The log's windows closing at 42.412 to 45.412 s lie in the victim's run.
    assert a.shared_mib_s == pytest.approx((2501061 + 2485685 + 2281705 + 768768) / 4 / 1024)


def test_the_victim_slows_beside_the_aggressor_and_is_judged():
    ok = interference.judge(evidence(10))
    assert [(j.what, j.verdict) for j in ok] == [("overlap", PASS), ("load", PASS),
                                                  ("slowdown", PASS)]
    assert ok[0].value == 1.0 and ok[2].value == pytest.approx(3.365, abs=1e-3)
    slow = interference.judge_slowdown(evidence(2))
    assert slow.verdict == FAIL and slow.named == ("vm",)
    assert slow.reasons == ("vm: p99 1548 us alone, 5210 us beside the aggressor: x3.37 "
                            "(more than x2)",)
    assert verdict_of(evidence(2)) == FAIL


def test_the_steps_markers_and_fios_clock_agree():
    """Each fio span lies inside its step's markers: the two clocks tell one story."""
    steps = interference.parse_steps((DATA / "steps.txt").read_text())
    ev = evidence()
    (v,), (a,) = ev.victims, ev.aggressors
    for role, span in ((interference.VICTIM_ALONE, v.alone),
                       (interference.VICTIM_LOADED, v.loaded),
                       (interference.AGGRESSOR, a.span)):
        marked = steps[(role, "vm")]
        assert marked.start_s <= span.start_s < span.end_s <= marked.end_s, role


def test_runs_that_did_not_overlap_are_invalid():
    # The victim's run alone preceded the aggressor: as "under load" it was not.
    ev = evidence(alone="victim-alone.json", loaded="victim-alone.json", log=False)
    j = interference.judge_overlap(ev)
    assert j.verdict == INVALID and j.value == 0.0 and j.named == ("vm",)
    assert j.reasons[0].startswith("did not overlap: every aggressor node ran through 0% "
                                   "of vm's 5.0 s under load (at least 90% required)")
    # A FAIL of a run that did not overlap proves nothing.
    assert verdict_of(interference.Evidence(interference.Settings(1.0), ev.victims,
                                            ev.aggressors)) == INVALID


def test_a_fixture_that_delays_the_aggressor_is_invalid():
    ev = evidence()
    (a,) = ev.aggressors
    (v,) = ev.victims
    # The aggressor starts 1 s before the victim's end under load: it covers 20 %.
    late = interference.Aggressor("vm", a.bandwidth_mib_s,
                                  Span(v.loaded.end_s - 1.0, v.loaded.end_s + 10, "x"))
    j = interference.judge_overlap(interference.Evidence(ev.settings, ev.victims, [late]))
    assert j.verdict == INVALID and j.value == pytest.approx(1 / v.loaded.duration_s)
    # 90 % exactly passes; just below does not.
    d = v.loaded.duration_s
    for cover, want in ((0.9, PASS), (0.89, INVALID)):
        agg = interference.Aggressor("vm", 1.0, Span(v.loaded.end_s - cover * d,
                                                     v.loaded.end_s + 5, "x"))
        got = interference.judge_overlap(interference.Evidence(ev.settings, ev.victims,
                                                               [agg]))
        assert got.verdict == want, (cover, got)


def test_every_aggressor_node_must_be_running():
    v = interference.Victim("v1", 100.0, 200.0, 1000, 1000, Span(10, 20), Span(30, 40))
    full = interference.Aggressor("a1", 100.0, Span(25, 45))
    early = interference.Aggressor("a2", 100.0, Span(25, 32))  # ended 2 s into the run
    ev = interference.Evidence(interference.Settings(3.0), [v], [full, early])
    j = interference.judge_overlap(ev)
    assert j.verdict == INVALID and j.value == pytest.approx(0.2)
    disjoint = interference.Aggressor("a3", 100.0, Span(46, 50))
    j = interference.judge_overlap(interference.Evidence(ev.settings, [v], [full, disjoint]))
    assert "never all ran at once" in j.reasons[0]


def test_a_victim_alone_that_was_not_alone_is_invalid():
    v = interference.Victim("v1", 100.0, 200.0, 1000, 1000, Span(10, 20), Span(30, 40))
    for start, want in ((19.95, PASS), (19.5, INVALID)):  # the clocks' 0.1 s
        agg = interference.Aggressor("a1", 100.0, Span(start, 45))
        j = interference.judge_overlap(interference.Evidence(interference.Settings(3.0),
                                                             [v], [agg]))
        assert j.verdict == want, (start, j)
    assert "not alone: v1's run alone shared 0.5 s" in j.reasons[0]


@pytest.mark.parametrize("alone,loaded", [(0.0, 200.0), (100.0, 0.0), (math.nan, 200.0),
                                          (100.0, math.inf), (-1.0, 200.0)])
def test_a_ratio_of_no_latency_is_invalid_never_judged(alone, loaded):
    v = interference.Victim("v1", alone, loaded, 1000, 1000, Span(10, 20), Span(30, 40))
    ev = interference.Evidence(interference.Settings(3.0), [v],
                               [interference.Aggressor("a1", 1.0, Span(25, 45))])
    j = interference.judge_slowdown(ev)
    assert j.verdict == INVALID and j.value is None and j.named == ("v1",)
    assert "no latency is" in j.reasons[0]
    assert "victim_p99_ratio" not in command.interference_figures(ev)


def test_a_p99_of_few_reads_is_invalid():
    v = interference.Victim("v1", 100.0, 200.0, 99, 1000, Span(10, 20), Span(30, 40))
    ev = interference.Evidence(interference.Settings(3.0), [v],
                               [interference.Aggressor("a1", 1.0, Span(25, 45))])
    assert "of 99 reads: a p99 needs at least 100" in interference.judge_slowdown(ev).reasons[0]


@pytest.mark.parametrize("bw", [0.0, math.nan, -5.0, math.inf])
def test_an_aggressor_without_load_is_invalid(bw):
    ev = evidence()
    dead = interference.Aggressor("vm", bw, ev.aggressors[0].span)
    j = interference.judge_load(interference.Evidence(ev.settings, ev.victims, [dead]))
    assert j.verdict == INVALID and j.named == ("vm",)


def test_empty_groups_and_spans_no_run_has_are_invalid():
    ev = evidence()
    assert interference.verdict(interference.judge(
        interference.Evidence(ev.settings, [], ev.aggressors))) == INVALID
    assert interference.judge_overlap(interference.Evidence(ev.settings, ev.victims, [])) \
        .verdict == INVALID
    bad = interference.Aggressor("vm", 1.0, Span(50.0, 40.0))
    j = interference.judge_overlap(interference.Evidence(ev.settings, ev.victims, [bad]))
    assert j.verdict == INVALID and "is no run's span" in j.reasons[0]
    assert interference.verdict([]) == INVALID


# --------------------------------------------------------------------------- fio's reports


def _edited(name: str, edit) -> object:
    report = json.loads((DATA / name).read_text())
    edit(report)
    return parse_fio(json.dumps(report))


def test_a_report_that_cannot_give_its_numbers_is_refused_naming_node_and_key():
    alone, agg = run("victim-alone.json"), run("aggressor.json")
    st = interference.Settings(3.0)

    def refused(loaded, match):
        with pytest.raises(fio_interference.InterferenceError, match=match):
            fio_interference.evidence(st, {"n1": alone}, {"n1": loaded}, {"n2": agg})
    refused(parse_fio(""), r"n1 \(under load\): fio's run is not valid: empty output")
    refused(parse_fio((DATA / "victim-loaded.json").read_text()[:3000]),
            r"n1 \(under load\): fio's run is not valid: (truncated|malformed) JSON")
    refused(_edited("victim-loaded.json", lambda r: r["jobs"][0].pop("job_start")),
            r"n1 \(under load\): jobs\[0\].job_start None is not a time in ms")
    refused(_edited("victim-loaded.json", lambda r: r["jobs"][0].update(job_start="1")),
            r"job_start '1' is not a time")
    refused(_edited("victim-loaded.json",
                    lambda r: r["jobs"][0]["read"]["clat_ns"].pop("percentile")),
            r"jobs\[0\].read.clat_ns.percentile.99.000000: None is not a latency")
    refused(_edited("victim-loaded.json", lambda r: r["jobs"].append(r["jobs"][0])),
            r"2 jobs in fio's report")
    refused(_edited("victim-loaded.json",
                    lambda r: r["jobs"][0]["job options"].update(job_start_clock_id="1")),
            r"job_start_clock_id=1: job_start is not the wall clock")
    with pytest.raises(fio_interference.InterferenceError, match="n9: a victim node needs both"):
        fio_interference.evidence(st, {"n1": alone, "n9": alone}, {"n1": alone}, {"n2": agg})
    with pytest.raises(fio_interference.InterferenceError, match=r"n2 \(aggressor\): no "
                       "bandwidth log"):
        fio_interference.evidence(st, {"n1": alone}, {"n1": run("victim-loaded.json")},
                                  {"n2": agg}, {})


def test_the_shared_bandwidth_counts_a_window_without_a_line_as_zero():
    log = logs.parse_log("1000, 1024, 1, 0, 0\n2000, 2048, 1, 0, 0\n4000, 1024, 1, 0, 0\n",
                         "a_bw.1.log")
    # Windows closing at 2, 3, 4 s lie in [0.9 s, 4.0 s]: (2048 + 0 + 1024) / 3 KiB/s.
    assert fio_interference.shared_bandwidth(log, 1000, Span(0.9, 4.0)) == \
        pytest.approx(3072 / 3 / 1024)
    assert fio_interference.shared_bandwidth(log, 1000, Span(1.2, 2.1)) is None
    reads = logs.parse_log("1000, 1024, 0, 0, 0\n", "a_bw.1.log")
    assert fio_interference.shared_bandwidth(reads, 1000, Span(0.0, 3.0)) == 0.0


# --------------------------------------------------------------------------- step markers


@pytest.mark.parametrize("text,match", [
    ("FSACCEPT_STEP victim-alone n1 start\n", "is not a step marker"),
    ("FSACCEPT_STEP victim-alone n1 start 1.5e9\n", "is not a step marker"),
    ("FSACCEPT_STEP victim-alone n1 start nan\n", "is not a step marker"),
    ("FSACCEPT_STEP \x00 n1 start 1\n", r"line 1: role '\\x00' is not one of"),
    ("FSACCEPT_STEP victim; rm -rf / n1 start 1\n", "is not a step marker"),
    ("FSACCEPT_STEP victim $(id) start 1\n", r"role 'victim' is not one of"),
    ("FSACCEPT_STEP aggressor n1 start 1\nFSACCEPT_STEP aggressor n1 start 2\n",
     "line 2: aggressor on n1 starts twice"),
    ("FSACCEPT_STEP aggressor n1 end 2 exit 0\n", "ends without a start"),
    ("FSACCEPT_STEP aggressor n1 start 5\nFSACCEPT_STEP aggressor n1 end 4\n",
     "before its start"),
    ("FSACCEPT_STEP aggressor n1 start 5\nFSACCEPT_STEP aggressor n1 end 6 exit 137\n",
     "ended with exit 137"),
    ("FSACCEPT_STEP aggressor n1 start 5\n", "line 1: aggressor on n1 started and never "
     "ended"),
])
def test_step_markers_that_are_not_ones_are_refused_naming_the_line(text, match):
    with pytest.raises(interference.StepsError, match=match):
        interference.parse_steps(text, "job.out")


def test_step_markers_among_other_output():
    text = ("srun: job 7 queued\n" * 1000 + "FSACCEPT_STEP aggressor n$1 start 10.25\n"
            "binary \x00\xff\nFSACCEPT_STEP aggressor n$1 end 20 exit 0\n")
    assert interference.parse_steps(text) == {("aggressor", "n$1"): Span(10.25, 20.0,
                                                                         "step markers")}
    assert interference.parse_steps("") == {}


# --------------------------------------------------------------------------- the record


def test_the_record_survives_json_and_is_judged_the_same():
    ev = evidence(2)
    text = json.dumps(ev.to_dict(), sort_keys=True)
    assert len(text) < 1000
    again = interference.Evidence.from_dict(json.loads(text))
    assert again == ev
    assert interference.judge(again) == interference.judge(ev)


def test_a_recorded_nan_is_judged_invalid_not_refused():
    data = evidence().to_dict()
    data["victims"][0]["p99_alone_us"] = None
    ev = interference.Evidence.from_dict(data)
    assert math.isnan(ev.victims[0].p99_alone_us)
    assert verdict_of(ev) == INVALID


@pytest.mark.parametrize("edit,match", [
    (lambda d: d.clear(), "not an interference record of version 1"),
    (lambda d: d.update(version=2), "of version 1"),
    (lambda d: d.update(settings=[]), r"interference.settings: missing"),
    (lambda d: d["settings"].update(max_p99_ratio=0.5), "max_p99_ratio: 0.5 is not a ratio"),
    (lambda d: d["settings"].update(max_p99_ratio=True), "max_p99_ratio: True"),
    (lambda d: d["settings"].update(min_overlap=0.5), r"min_overlap: 0.5 is not 0.9 to 1"),
    (lambda d: d.pop("victims"), r"interference.victims: missing or not a list"),
    (lambda d: d["victims"].append("x"), r"interference.victims\[1\].node: missing"),
    (lambda d: d["victims"][0].update(samples_alone=-1),
     r"interference.victims\[0\].samples_alone: -1 is not a count"),
    (lambda d: d["victims"][0].update(samples_loaded=True), r"samples_loaded: True"),
    (lambda d: d["victims"][0].update(alone=[1, 2]),
     r"interference.victims\[0\].alone: not \[start_s, end_s, source\]"),
    (lambda d: d["aggressors"][0].update(span="1-2"), r"aggressors\[0\].span: not"),
])
def test_a_record_that_is_not_one_is_refused_naming_the_key(edit, match):
    data = copy.deepcopy(evidence().to_dict())
    edit(data)
    with pytest.raises(interference.EvidenceError, match=match):
        interference.Evidence.from_dict(data)
    with pytest.raises(interference.EvidenceError):
        interference.Evidence.from_dict("not a dict")


# --------------------------------------------------------------------------- the entry


ENTRY = {"node_fraction": 1, "file_size": "64MiB", "runtime_s": 5,
         "aggressor_file_size": "256MiB", "max_p99_ratio": 10, "lead_s": 2}


def test_the_entry_makes_a_victim_and_an_aggressor():
    p = command.parameters("fio_interference", "interference", ENTRY)
    assert p.interference.settings == interference.Settings(10.0, 0.9)
    opts = command.fio_options(p, "/d")
    for want in ("--rw=randread", "--bs=4096", "--direct=1", "--ioengine=psync",
                 "--iodepth=1", "--time_based=1", "--runtime=5", "--size=67108864"):
        assert want in opts
    agg = command.aggressor_options(p, "/d")
    for want in ("--rw=write", "--bs=1048576", "--direct=1", "--size=268435456",
                 "--runtime=11", "--log_unix_epoch=1", "--log_avg_msec=1000",
                 f"--write_bw_log=aggressor-{command.NODE_PLACEHOLDER}"):
        assert want in agg
    assert command.split_nodes(["n1", "n2", "n3"], 1) == (["n1"], ["n2", "n3"])
    with pytest.raises(command.FioEntryError, match="at least one victim and one aggressor"):
        command.split_nodes(["n1", "n2"], 2)
    assert command.interference_references(p.interference) == {
        "victim_p99_ratio": (10.0, None, 0, "ratio")}
    assert command.figure_patterns("interference")[0] == "^victim_p99_ratio$"


@pytest.mark.parametrize("entry,match", [
    ({k: v for k, v in ENTRY.items() if k != "max_p99_ratio"}, "max_p99_ratio: required"),
    ({k: v for k, v in ENTRY.items() if k != "aggressor_file_size"},
     "aggressor_file_size: required"),
    ({**ENTRY, "iodepth": 4}, "iodepth: the victim is one reader at queue depth 1"),
    ({**ENTRY, "numjobs": 2}, "numjobs"),
    ({**ENTRY, "time_based": False}, "time_based"),
    ({**ENTRY, "max_p99_ratio": 0.5}, "is below 1"),
    ({**ENTRY, "min_overlap": 0.5}, "min_overlap: 0.5 is not 0.9 to 1"),
    ({**ENTRY, "aggressor_file_size": "1000KiB"}, "is not a multiple of 1MiB"),
    ({**ENTRY, "aggressor_file_size": "lots"}, "aggressor_file_size"),
    ({**ENTRY, "thresholds": {"victim_p99_ratio": {"value": 3, "unit": "ratio"}}},
     "thresholds: not for the interference test: it is judged by max_p99_ratio"),
    ({**ENTRY, "outlier_fraction": 0.5}, "outlier_fraction: not for the interference test"),
])
def test_an_entry_the_test_cannot_run_is_refused(entry, match):
    with pytest.raises(command.FioEntryError, match=f"tests.fio_interference.{match}"
                       if ":" in match else match):
        command.parameters("fio_interference", "interference", entry)


def test_its_keys_are_refused_for_the_other_kinds_and_allowed_by_the_schema():
    schema = json.loads((Path(command.__file__).parent / "schema.json").read_text())
    assert set(command.INTERFERENCE_KEYS) <= set(schema["properties"])
    for key in command.INTERFERENCE_KEYS:
        with pytest.raises(command.FioEntryError, match=rf"tests.fio_seq_write.{key}: only "
                           r"for the interference test \(tests.fio_interference\)"):
            command.parameters("fio_seq_write", "seq_write", {
                "node_fraction": 1, "file_size": "1MiB", "runtime_s": 1, key: 1})


# --------------------------------------------------------------------------- the sign-off


def _spec():
    from fsaccept.benchmarks import registry
    return registry.TESTS["FioInterference"]


def _case(ev: interference.Evidence, result: str = "pass", outputdir=None, kept=None,
          **figures):
    """The case the live check records of ``ev``; with ``outputdir``, the record's file
    it keeps there (``kept``: other bytes in it)."""
    from fsaccept.reporting.case import case_of
    given = {**command.interference_figures(ev), **figures}
    perf = {f"local-gluster:compute:{k}": [v, 100, None, 0,
                                           command.INTERFERENCE_FIGURES[k], result]
            for k, v in given.items()}
    record = json.dumps(ev.to_dict(), sort_keys=True)
    if outputdir is not None:
        _job_files(outputdir)
        kept = record if kept is None else kept
        (outputdir / interference.RECORD_FILE).write_bytes(
            kept if isinstance(kept, bytes) else kept.encode())
    return case_of({"name": "FioInterference", "result": result, "perfvalues": perf,
                    "outputdir": str(outputdir), "interference_record": record})


class _Reference:
    def __init__(self, **entry):
        self.entries = {"fio_interference": {**ENTRY, **entry}}


def _job_files(outputdir, steps: str | None = None, victims=("vm",),
               aggressor: str = "vm") -> None:
    """What the test's job keeps, from the real captures (one host: each victim node's
    the victim's, the aggressor's the aggressor's): each step's report and messages, the
    aggressor's bandwidth log, and rfm_job.out (its groups, the steps' markers,
    ``steps`` in place of the capture's, and exit statuses)."""
    outputdir.mkdir(parents=True, exist_ok=True)
    roles = [("victim-alone", v, "victim-alone.json") for v in victims] + [
        ("victim-loaded", v, "victim-loaded.json") for v in victims] + [
        ("aggressor", aggressor, "aggressor.json")]
    for role, node, capture in roles:
        (outputdir / f"fio-{role}-{node}.json").write_text((DATA / capture).read_text())
        (outputdir / f"fio-{role}-{node}.log").write_text("")
    (outputdir / f"aggressor-{aggressor}_bw.1.log").write_text(
        (DATA / "aggressor_bw.1.log").read_text())
    steps = (DATA / "steps.txt").read_text() if steps is None else steps
    marks = [line.replace(" vm ", f" {node} ") for line in steps.splitlines()
             for node in (victims if " victim-" in line else (aggressor,))]
    (outputdir / "rfm_job.out").write_text("\n".join([
        "fsaccept-info fio_version fio-3.37", f"fsaccept-info victims {','.join(victims)}",
        f"fsaccept-info aggressors {aggressor}",
        *(f"fsaccept-node {n} memory_kib 4000000" for n in dict.fromkeys([*victims, aggressor])),
        *marks, *(f"fsaccept-node {node} {role} exit 0" for role, node, _ in roles), ""]))
    (outputdir / "rfm_job.err").write_text("")


def test_the_sign_off_judges_the_recorded_test_again(tmp_path):
    from fsaccept.core import inputs
    from fsaccept.reporting.signoff.common import RunFiles
    from fsaccept.reporting.signoff.interference import interference_reasons
    spec = _spec()
    out = tmp_path / "output" / "FioInterference"

    def judged(case, ref=None):
        return interference_reasons(case, spec, ref, RunFiles(inputs.Reader(tmp_path)))
    assert judged(_case(evidence(10), outputdir=out), _Reference()) == []
    failed = judged(_case(evidence(2), outputdir=out), _Reference(max_p99_ratio=2))
    assert failed == ["recorded as passed, but its interference record fails: vm: p99 1548 "
                      "us alone, 5210 us beside the aggressor: x3.37 (more than x2)"]
    edited = judged(_case(evidence(10), victim_p99_ratio=1.5, outputdir=out), _Reference())
    assert any("victim_p99_ratio is recorded as 1.5, but its interference record gives 3.36"
               in r for r in edited), edited
    looser = judged(_case(evidence(10), result="fail", outputdir=out),
                    _Reference(max_p99_ratio=3))
    assert any("the reference file says {'max_p99_ratio': 3.0" in r for r in looser), looser
    apart = evidence(alone="victim-alone.json", loaded="victim-alone.json", log=False)
    assert judged(_case(apart, result="fail", outputdir=out))[0].startswith(
        "its interference record: overlap: did not overlap")
    missing = _case(evidence(), outputdir=out)
    missing.record.pop("interference_record")
    assert judged(missing) == [
        "evidence missing: no interference_record, which the interference test records"]


def test_the_sign_off_judges_the_kept_record_file_not_the_field(tmp_path):
    """What is judged is the file the check kept (interference-record.json), never the
    run report's interference_record: the field forged, the file edited, missing,
    truncated, binary, empty, no run directory read."""
    from fsaccept.core import inputs
    from fsaccept.reporting.signoff.common import RunFiles
    from fsaccept.reporting.signoff.interference import interference_reasons
    spec = _spec()
    out = tmp_path / "output" / "FioInterference"
    kept = out / interference.RECORD_FILE

    def judged(case, ref=None):
        return interference_reasons(case, spec, ref, RunFiles(inputs.Reader(tmp_path)))
    # The field forged to a passing record; the kept file fails (x3.37 above x2).
    failing = _case(evidence(2), result="pass", outputdir=out)
    passing = json.dumps(evidence(10).to_dict(), sort_keys=True)
    failing.record["interference_record"] = passing
    reasons = judged(failing, _Reference(max_p99_ratio=2))
    assert f"its interference_record is not what its output {kept} says" in reasons
    assert any(r.startswith("recorded as passed, but its interference record fails")
               for r in reasons), reasons
    # The file edited (the field kept): the field is not what it says.
    case = _case(evidence(10), outputdir=out)
    record = json.loads(kept.read_text())
    record["settings"]["max_p99_ratio"] = 100.0
    kept.write_text(json.dumps(record, sort_keys=True))
    reasons = judged(case, _Reference())
    assert reasons[0] == f"its interference_record is not what its output {kept} says"
    assert any("its interference record was judged with {'max_p99_ratio': 100.0" in r
               for r in reasons), reasons
    # Truncated, binary, empty, missing, no run directory read.
    text = case.record["interference_record"]
    for data, said in ((text[:100].encode(), f"its interference record ({kept}) cannot be "
                        "read"),
                       (b"\x00\xff" * 50, f"its interference record ({kept}) cannot be read"),
                       (b"", f"evidence missing: {kept} is empty")):
        kept.write_bytes(data)
        assert judged(case)[0].startswith(said), (data[:20], judged(case))
        assert len(judged(case)) == 1
    kept.unlink()
    assert judged(case) == [f"evidence missing: {kept}"]
    assert interference_reasons(case, spec) == [
        "evidence missing: interference-record.json: the run directory was not read"]


def test_the_report_section_rows():
    from fsaccept.reporting import interference as section
    sec = section.loads(json.loads(json.dumps(evidence(2).to_dict())))
    assert sec.verdict == FAIL and sec.aggressor_bw == "1,962.2 MiB/s"
    assert sec.victim_rows() == [{"node": "vm", "alone": "1,548.3 us",
                                  "loaded": "5,210.1 us", "ratio": "x3.37", "limit": "x2",
                                  "overlap": "100%"}]
    rows = sec.rows()
    assert [(r["judgement"], r["measured"], r["limit"], r["verdict"]) for r in rows] == [
        ("overlap", "100%", "at least 90%", PASS), ("load", "1,962.2 MiB/s", "—", PASS),
        ("slowdown", "x3.37", "at most x2", FAIL)]


# --------------------------------------------------------------------------- the record rebuilt
# from the job's files (issue 49, class 4): each edit below was ACCEPTED.


def _signed(tmp_path, record: dict, nodelist=None, steps=None, victims=("vm",),
            **entry) -> list[str]:
    """The sign-off's reasons for a passed interference test whose kept record (and its
    field) is ``record``, its job's files the real captures (``steps``: its markers)."""
    from fsaccept.core import inputs
    from fsaccept.reporting.case import case_of
    from fsaccept.reporting.signoff.common import RunFiles
    from fsaccept.reporting.signoff.interference import interference_reasons
    out = tmp_path / "output" / "FioInterference"
    _job_files(out, steps, victims)
    text = json.dumps(record, sort_keys=True)
    (out / interference.RECORD_FILE).write_text(text)
    ev = interference.Evidence.from_dict(record)
    perf = {f"local-gluster:compute:{k}": [v, 100, None, 0,
                                           command.INTERFERENCE_FIGURES[k], "pass"]
            for k, v in command.interference_figures(ev).items()}
    case = case_of({"name": "FioInterference", "result": "pass", "perfvalues": perf,
                    "outputdir": str(out), "interference_record": text,
                    **({"job_nodelist": list(nodelist)} if nodelist else {})})
    return interference_reasons(case, _spec(), _Reference(**entry),
                                RunFiles(inputs.Reader(tmp_path)))


def _two_victims() -> dict:
    return fio_interference.evidence(
        interference.Settings(10.0), {n: run("victim-alone.json") for n in ("v1", "v2")},
        {n: run("victim-loaded.json") for n in ("v1", "v2")}, {"vm": run("aggressor.json")},
        {"vm": logs.read_log(DATA / "aggressor_bw.1.log")}).to_dict()


def test_an_honest_record_rebuilt_from_its_files_is_signed(tmp_path):
    assert _signed(tmp_path, evidence(10).to_dict()) == []
    assert _signed(tmp_path, _two_victims(), ["v1", "v2", "vm"], victims=("v1", "v2"),
                   victim_nodes=2) == []


def test_a_p99_the_kept_fio_report_contradicts_is_invalid(tmp_path):
    record = evidence(10).to_dict()
    record["victims"][0]["p99_loaded_us"] = 1600.0
    reasons = _signed(tmp_path, record)
    assert reasons[-1].endswith("is not the one its job's files give (fio-ROLE-NODE.json, "
                                "the aggressors' logs, rfm_job.out): victims[0].p99_loaded_us "
                                "is 1600.0, its files give 5210.112"), reasons


def test_an_aggressor_on_a_victim_node_is_invalid(tmp_path):
    reasons = _signed(tmp_path, evidence(10).to_dict(), nodelist=["vm"])
    assert ("the job's nodes are vm, but it took vm as its victims and vm as its "
            "aggressors: the victims are the first victim_nodes nodes, the aggressors the "
            "others") in reasons, reasons


def test_a_victim_dropped_from_the_record_is_invalid(tmp_path):
    record = _two_victims()
    record["victims"] = record["victims"][:1]
    reasons = _signed(tmp_path, record, ["v1", "v2", "vm"], victims=("v1", "v2"),
                      victim_nodes=2)
    assert any("is not the one its job's files give" in r and "victims is" in r
               for r in reasons), reasons


def test_spans_a_day_before_the_job_are_invalid(tmp_path):
    record = evidence(10).to_dict()
    for v in record["victims"]:
        for key in ("alone", "loaded"):
            v[key][:2] = [t - 86400 for t in v[key][:2]]
    record["aggressors"][0]["span"][:2] = [t - 86400 for t in record["aggressors"][0]["span"][:2]]
    reasons = _signed(tmp_path, record)
    assert any("is not the one its job's files give" in r and "[0]" in r
               for r in reasons), reasons


def test_step_markers_that_show_no_overlap_are_invalid(tmp_path):
    """The job's own markers put the aggressor's step a minute after the victims'."""
    steps = "\n".join(
        " ".join([*line.split()[:4], f"{float(line.split()[4]) + 60:.9f}", *line.split()[5:]])
        if " aggressor " in line else line
        for line in (DATA / "steps.txt").read_text().splitlines())
    reasons = _signed(tmp_path, evidence(10).to_dict(), steps=steps)
    assert any(r.startswith("vm (aggressor): fio's clock puts its run at") and
               "outside its step's markers" in r for r in reasons), reasons
