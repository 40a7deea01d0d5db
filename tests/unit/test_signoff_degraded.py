"""The sign-off of a degraded-mode session judges each degraded-mode test by its class
(the catalogue), by the verified reference's ``degraded:`` clause and by its recorded
evidence (the fault timeline, the nodes' probe after the benchmark), with the live
check's functions; never by a field taken on trust.  Every case is the real run
report of ``scripts/acceptance --system local-gluster --degraded`` (ACCEPTED), edited."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from fsaccept.reporting import report as signoff
from tests.conftest import capture_with_reference

DATA = Path(__file__).resolve().parent.parent / "data" / "reframe"
NAME = "local-gluster-degraded-accepted"


@pytest.fixture(autouse=True)
def _no_plots(monkeypatch):
    for name in ("figure_plot", "check_plot", "per_node_plot"):
        monkeypatch.setattr(signoff, name, lambda *a, **k: b"")
    monkeypatch.setattr("fsaccept.reporting.degraded.timeline_plot", lambda *a, **k: b"")


@pytest.fixture
def run(tmp_path):
    return capture_with_reference(NAME, tmp_path)


@pytest.fixture
def ref(run, tmp_path):
    return tmp_path / "reference.yaml"


def _cases(data):
    return [c for r in data["runs"] for c in r["testcases"]]


def _case(data, name):
    return next(c for c in _cases(data) if c["name"].split()[0] == name)


def _signoff(data, tmp_path, *extra):
    src = tmp_path / "run-report.json"
    src.write_text(json.dumps(data))
    code = signoff.main([str(src), "--out", str(tmp_path / "out"), *extra])
    return code, (tmp_path / "out" / "report.md").read_text().replace("\\", "")


def _timeline(case):
    return json.loads(case["fault_timeline"])


def _set_timeline(case, events):
    case["fault_timeline"] = json.dumps(events)


def test_the_real_degraded_session_is_accepted_with_its_section(run, tmp_path):
    code, md = _signoff(run, tmp_path)
    assert code == 0 and "**Overall verdict: ACCEPTED**" in md, md[:3000]
    section = md[md.index("## Degraded mode"):md.index("## Tests")]
    assert "Contract: While a storage server is down, each figure at least 60%" in section
    assert "| DegradedIORWriteBandwidth | write_bandwidth |" in section
    assert section.count("(≤ 60 s) | PASS |") == 4, section


def test_a_fault_not_seen_on_every_node_is_invalid(run, tmp_path):
    case = _case(run, "DegradedIORWriteBandwidth")
    _set_timeline(case, [e for e in _timeline(case) if e["event"] != "nodes_down"])
    # The detect figure is gone with it (the live check reports none then).
    case["perfvalues"] = {k: v for k, v in case["perfvalues"].items()
                          if not k.endswith(":time_to_detect_s")}
    code, md = _signoff(run, tmp_path)
    assert code == 1 and "the file system was not degraded during the measurement" in md


def test_a_measurement_that_ended_healthy_is_invalid(run, tmp_path):
    """``servers_after`` edited to say every node reached every brick: the fault was
    gone before the benchmark ended."""
    case = _case(run, "DegradedIORWriteBandwidth")
    case["servers_after"] = "n1,n2,n3,n4: ok 4 of 4 bricks connected"
    code, md = _signoff(run, tmp_path)
    assert code == 1 and "not every node's client saw the fault" in md


def _edit_figure(data, check, figure, at, value):
    """Item ``at`` of a figure's perfvalues record (0: the value, 1: the reference)."""
    case = _case(data, check)
    key = next(k for k in case["perfvalues"] if k.endswith(":" + figure))
    case["perfvalues"][key][at] = value


def test_a_recovery_figure_the_timeline_does_not_give_is_a_contradiction(run, tmp_path):
    _edit_figure(run, "DegradedIORDataIntegrity", "recovery_s", 0, 1.0)
    code, md = _signoff(run, tmp_path)
    assert code == 1 and "recovery_s is recorded as 1.0, but the recorded fault timeline" in md


def test_a_missing_timeline_is_missing_evidence(run, tmp_path):
    del _case(run, "DegradedMdtestEasy")["fault_timeline"]
    code, md = _signoff(run, tmp_path)
    assert code == 1 and "evidence missing: no fault_timeline" in md


def test_a_failed_restore_is_named(run, tmp_path):
    case = _case(run, "DegradedIORStonewalledRead")
    events = _timeline(case)
    for e in events:
        if e["event"] == "restore_end":
            e.update(status=2, output="volume start failed")
    _set_timeline(case, events)
    code, md = _signoff(run, tmp_path)
    assert code == 1
    assert "the restore command failed (exit 2: volume start failed): the file system may " \
           "still be degraded" in md


def test_a_threshold_looser_than_the_contract_is_refused(run, tmp_path):
    """The degraded write judged against 1 MiB/s: the clause gives 0.6 × 10."""
    _edit_figure(run, "DegradedIORWriteBandwidth", "write_bandwidth", 1, 1)
    code, md = _signoff(run, tmp_path)
    assert code == 1 and "looser than the reference" in md


def test_a_degraded_test_retagged_healthy_is_still_judged_as_degraded(run, tmp_path):
    case = _case(run, "DegradedIORWriteBandwidth")
    case["tags"] = ["acceptance", "bandwidth"]
    code, md = _signoff(run, tmp_path)
    assert code == 1 and "tags" in md


def _without(data, prefix):
    """The session as if the tests named ``prefix...`` had not been selected."""
    for r in data["runs"]:
        r["testcases"] = [c for c in r["testcases"] if not c["name"].startswith(prefix)]
        r["num_cases"] = len(r["testcases"])
    data["session_info"]["num_cases"] = len(data["runs"][0]["testcases"])


def test_a_degraded_session_missing_a_listed_test_is_incomplete(run, tmp_path):
    _without(run, "DegradedMdtestEasy")
    code, md = _signoff(run, tmp_path)
    assert code == 1 and "DegradedMdtestEasy" in md and "did not run" in md, md[:2500]


def test_a_session_without_degraded_tests_needs_none(run, tmp_path):
    """A normal session on a reference that has a degraded: clause is judged as before."""
    _without(run, "Degraded")
    code, md = _signoff(run, tmp_path)
    assert code == 0 and "**Overall verdict: ACCEPTED**" in md, md[:2500]
    assert "## Degraded mode" not in md and "[DegradedIORWriteBandwidth]" not in md


def test_a_reference_without_the_clause_cannot_verify_a_degraded_test(run, ref, tmp_path):
    data = yaml.safe_load(ref.read_text())
    del data["degraded"]
    other = tmp_path / "other.yaml"
    other.write_text(yaml.safe_dump(data))
    code, md = _signoff(run, tmp_path, "--reference", str(other))
    assert code == 1


# -- issue 41: the evidence matched to the case's own job --------------------------------
# Each edit below was ACCEPTED before: the answers after the benchmark counted, not
# matched to the job's nodes (class 3); a recovery that never healed (class 4); another
# test's fault, or data written after the fault (class 8); a timeline nested too deeply
# to read (class 6, a RecursionError).


def _down(data):
    """The real run's answer of every node after the degraded write: the fault seen."""
    return _case(data, "DegradedIORWriteBandwidth")["servers_after"].split(": ", 1)[1]


def _other_nodes_down(data):
    _case(data, "DegradedIORWriteBandwidth")["servers_after"] = "n5,n6,n7,n8: " + _down(data)


def _node_count_edited(data):
    case = _case(data, "DegradedIORWriteBandwidth")
    case["servers_after"] = f"n1,n2: {_down(data)}; n3,n4: ok 4 of 4 bricks connected"
    case["num_nodes"] = 2


def _one_node_four_times(data):
    _case(data, "DegradedIORWriteBandwidth")["servers_after"] = "n1,n1,n1,n1: " + _down(data)


def _edit_events(data, check, edit):
    case = _case(data, check)
    _set_timeline(case, edit(_timeline(case)))


def _at(events, name):
    return next(e for e in events if e["event"] == name)


# The degraded read: its heal came before its nodes reconnected, so its recorded
# recovery_s stays the one its edited timeline gives.
READ = "DegradedIORStonewalledRead"


def _without_healed(data):
    _edit_events(data, READ, lambda ev: [e for e in ev if e["event"] != "healed"])


def _not_healed_early(data):
    """not_healed in place of healed, long before its own limit (60 s) was up."""
    def edit(ev):
        healed = _at(ev, "healed")
        healed.update(event="not_healed", status=1, limit_s=60,
                      output="volume fsaccept-replica: 1 entry to heal")
        return ev
    _edit_events(data, READ, edit)


def _later_restore_failed(data):
    def edit(ev):
        t = _at(ev, "healed")["t"]
        return ev + [{"by": "the agent's exit path", "event": "restore_start", "t": t + 0.1},
                     {"by": "agent", "event": "restore_end", "t": t + 0.2, "status": 1,
                      "output": "volume start: fsaccept-replica: failed"}]
    _edit_events(data, READ, edit)


def _nodes_not_healthy(data):
    def edit(ev):
        _at(ev, "nodes_healthy")["event"] = "nodes_not_healthy"
        return ev
    _edit_events(data, READ, edit)


FAULT_FIGURES = (":time_to_detect_s", ":failover_s", ":recovery_s")


def _timeline_of_another_test(data):
    """The degraded mdtest's timeline, and the figures it gives, on the degraded write."""
    src, dst = _case(data, "DegradedMdtestEasy"), _case(data, "DegradedIORWriteBandwidth")
    dst["fault_timeline"] = src["fault_timeline"]
    for key, value in src["perfvalues"].items():
        if key.endswith(FAULT_FIGURES):
            dst["perfvalues"][key] = value


def _integrity_data_written_after_the_fault(data):
    fault = _at(_timeline(_case(data, "DegradedIORDataIntegrity")), "degrade_start")
    _case(data, "DegradedIORIntegrityDataset")["job_completion_time_unix"] = fault["t"] + 0.5


def _integrity_dataset_not_depended_on(data):
    case = _case(data, "DegradedIORDataIntegrity")
    case["dependencies_actual"] = [d for d in case["dependencies_actual"]
                                   if not d[0].startswith("DegradedIORIntegrityDataset")]


def _fault_start_removed(data):
    """Without its degrade_start, the fault began when?  (Its dataset's job completed
    before its degrade_end, after the degrade started.)"""
    _edit_events(data, "DegradedIORDataIntegrity",
                 lambda ev: [e for e in ev if e["event"] != "degrade_start"])


def _timeline_nested_deeply(data):
    _case(data, "DegradedMdtestEasy")["fault_timeline"] = "[" * 100_000 + "]" * 100_000


STITCHED = {
    "3: other nodes reported down": (
        _other_nodes_down, "DegradedIORWriteBandwidth",
        "names node n5,n6,n7,n8, not of the job (n1,n2,n3,n4)"),
    "3: the job's node count edited": (
        _node_count_edited, "DegradedIORWriteBandwidth",
        "not every node's client saw the fault (n3,n4: ok 4 of 4 bricks connected)"),
    "3: one node named four times": (
        _one_node_four_times, "DegradedIORWriteBandwidth",
        "node n1 answered the nodes' probe after the benchmark more than once"),
    "4: no healed event": (
        _without_healed, READ,
        "no healed event after the last restore_end): it may still be degraded"),
    "4: not_healed before its limit": (
        _not_healed_early, READ,
        "the file system did not report its heal done (not_healed, limit 60 s)"),
    "4: a later restore failed": (
        _later_restore_failed, READ,
        "the restore command failed (exit 1: volume start: fsaccept-replica: failed)"),
    "4: a client not reconnected": (
        _nodes_not_healthy, READ,
        "not every node's client reached every server again after the restore "
        "(nodes_not_healthy)"),
    "8: another test's fault timeline": (
        _timeline_of_another_test, "DegradedIORWriteBandwidth",
        "the fault timeline is not that of its own job 169: degrade_start 44.473 s after "
        "it completed"),
    "8: integrity data written after the fault": (
        _integrity_data_written_after_the_fault, "DegradedIORDataIntegrity",
        "the data it reads was written after the fault began: "
        "DegradedIORIntegrityDataset's job completed 0.5 s after degrade_start"),
    "8: integrity data of no fixture": (
        _integrity_dataset_not_depended_on, "DegradedIORDataIntegrity",
        "evidence missing: it depends on no DegradedIORIntegrityDataset"),
    "8: the fault's start removed": (
        _fault_start_removed, "DegradedIORDataIntegrity",
        "the fault's start is not recorded (no degrade_start before its degrade_end)"),
    "6: a timeline nested too deeply": (
        _timeline_nested_deeply, "DegradedMdtestEasy",
        "fault_timeline cannot be read: nested too deeply"),
}


@pytest.mark.parametrize("what", sorted(STITCHED))
def test_degraded_evidence_not_of_the_case_is_never_accepted(run, tmp_path, what):
    edit, check, said = STITCHED[what]
    edit(run)
    code, md = _signoff(run, tmp_path)
    assert code == 1 and "**Overall verdict: ACCEPTED**" not in md, what
    assert f"{check}: INVALID (" in md and said in md, md[:3000]


def _live(data, check):
    """What a degraded-mode test's live check sees of its own job (its timeline, its
    job's times and nodes, the nodes' lines after the benchmark, its dataset's job), made
    from its recorded case."""
    case = _case(data, check)
    job = SimpleNamespace(jobid=case["jobid"], submit_time=case["job_submit_time"],
                          completion_time=case["job_completion_time_unix"],
                          nodelist=case["job_nodelist"])
    stdout = "".join(f"fsaccept-servers {node} {answer}\n"
                     for nodes, answer in (g.split(": ", 1)
                                           for g in case["servers_after"].split("; "))
                     for node in nodes.split(","))
    live = SimpleNamespace(fault_timeline=case["fault_timeline"], job=job,
                           benchmark_after_recovery=case["benchmark_after_recovery"],
                           _stdout_text=lambda: stdout)
    dataset = next((_case(data, d[0].split("_")[0]) for d in case["dependencies_actual"]
                    if d[0].startswith("Degraded")), None)
    if dataset is not None:  # the fixture object, of its class, with its job
        live.dataset = type(dataset["name"].split()[0], (), {})()
        live.dataset.job = SimpleNamespace(completion_time=dataset["job_completion_time_unix"])
    return live


def _live_reasons(data, check):
    from fsaccept.rfm.degraded import DegradedMode
    live = _live(data, check)
    return DegradedMode.fault_reasons(live) + (
        [] if live.benchmark_after_recovery else DegradedMode.degraded_reasons(live))


def test_the_live_check_finds_nothing_wrong_with_the_real_run(run):
    for check in ("DegradedIORWriteBandwidth", READ, "DegradedIORDataIntegrity",
                  "DegradedMdtestEasy"):
        assert _live_reasons(run, check) == [], check


#: What the live check says of its own job's evidence so edited (a node's repeated
#: lines in a job's output count once, with its last answer: a relaunched step).
LIVE = {"3: the job's node count edited": STITCHED["3: the job's node count edited"][2],
        "3: one node named four times": "not every node's client saw the fault (n2,n3,n4: "
                                        "no answer)",
        "4: not_healed before its limit": STITCHED["4: not_healed before its limit"][2],
        "8: another test's fault timeline": STITCHED["8: another test's fault timeline"][2],
        "8: integrity data written after the fault":
            STITCHED["8: integrity data written after the fault"][2]}


@pytest.mark.parametrize("what", sorted(LIVE))
def test_the_live_check_refuses_it_by_the_same_function(run, tmp_path, what):
    """The live check (``DegradedMode``) judges its own job's answers and timeline by
    the functions the sign-off applies to the recorded ones: the same reason."""
    edit, check, _ = STITCHED[what]
    edit(run)
    reasons = _live_reasons(run, check)
    assert any(LIVE[what] in r for r in reasons), reasons
    assert LIVE[what] in _signoff(run, tmp_path)[1]


def test_the_timeline_plot_draws_what_it_can_of_an_edited_timeline(run):
    """A fault without its start is not drawn (the plot's time axis starts at the first
    fault's start): it raised ValueError, a traceback of the sign-off."""
    from fsaccept.reporting import degraded as section_of, plots, runreport
    _fault_start_removed(run)
    section = section_of.degraded_section(runreport.tests_of(run))
    drawn = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(plots, "_png", lambda fig: drawn.append(fig) or b"png")
        assert plots.timeline_plot(section) == b"png"
    assert [t.get_text() for t in drawn[0].axes[0].get_yticklabels()] == [
        "DegradedIORWriteBandwidth", READ, "DegradedMdtestEasy"]
    plots._pyplot().close(drawn[0])
