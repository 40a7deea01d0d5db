"""The sign-off of a degraded-mode session judges each degraded-mode test by its class
(the catalogue), by the verified reference's ``degraded:`` clause and by its recorded
evidence (the fault timeline, the nodes' probe after the benchmark), with the live
check's functions; never by a field taken on trust.  Every case is the real run
report of ``scripts/acceptance --system local-gluster --degraded`` (ACCEPTED), edited."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from fsaccept.reporting import report as signoff
from tests.conftest import capture_with_reference

DATA = Path(__file__).resolve().parent.parent / "data" / "reframe"
NAME = "local-gluster-degraded-accepted"


@pytest.fixture(autouse=True)
def _no_plots(monkeypatch):
    for name in ("figure_plot", "check_plot", "per_node_plot", "timeline_plot"):
        monkeypatch.setattr(signoff, name, lambda *a, **k: b"")


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
