"""The bound the measured components set, and each aggregate bandwidth judged against it
(``fsaccept/reporting/bound.py``): which component binds, on the test's own nodes, and
the verdicts the reference's ``components:`` section asks (``efficiency_min``: FAIL;
above the bound by more than ``above_bound_tolerance``: INVALID).

The records here are made in the test, in the formats the real run reports hold (the
survey's lines as ``local-gluster-survey-slow`` recorded them); the real lab run is
judged in ``test_golden_reports`` (``tests/data/reframe/local-gluster-bound``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from fsaccept.benchmarks import registry
from fsaccept.benchmarks.catalogue import BOUND_KINDS, TestSpec
from fsaccept.core import components
from fsaccept.reporting.bound import DEFAULT_ABOVE_BOUND_TOLERANCE, Rules, bound_section

DATA = Path(__file__).resolve().parents[1] / "data" / "reframe"
NODES = ["n1", "n2", "n3", "n4"]
BRICKS = [f"vm:/bricks/b{i}" for i in range(1, 5)]
SURVEY_LINES = "\n".join(
    ["fsaccept-survey version 1 size 67108864 runtime_s 5 bricks 4 nodes n1,n2,n3,n4 "
     "dir /mnt/gluster/fsaccept/TargetSurvey/survey"]
    + [f"fsaccept-survey target {i} {n} vm {b}" for i, (n, b) in enumerate(zip(NODES, BRICKS))]
    + [f"fsaccept-survey result {i} {n} 0 r{i}-{n}.json" for i, n in enumerate(NODES)]
    + ["fsaccept-survey end"])


class _Case(dict):
    """A test case as the sign-off types it: its fields, and its figures."""

    def __init__(self, name: str, figures: dict[str, float] | None = None, **fields: Any):
        super().__init__(name=name, **fields)
        self.figures = [SimpleNamespace(name=k, value=v) for k, v in (figures or {}).items()]


@dataclass
class _Test:
    name: str
    case: _Case
    verdict: str = "PASS"
    target: str = ""
    figures: list[Any] = field(default_factory=list)


def _network(aggregate=50.0, alone=None, verdict="PASS", target="", read=None):
    alone = alone if alone is not None else {n: 50.0 for n in NODES}
    figures = {"network_aggregate": aggregate}
    if read is not None:
        figures["network_read_aggregate"] = read
    return _Test("NetworkSurvey", _Case("NetworkSurvey", figures, link_figures=alone),
                 verdict, target)


def _survey(per_target=100.0, verdict="PASS", target="", missing=()):
    kept = {b: per_target for b in BRICKS if b not in missing}
    return _Test("TargetSurvey", _Case("TargetSurvey", survey_lines=SURVEY_LINES,
                                       target_figures=kept), verdict, target)


def _ior(check="IORWriteBandwidth", figure="write_bandwidth", value=40.0, nodes=NODES,
         verdict="PASS", target=""):
    return _Test(check, _Case(check, job_nodelist=list(nodes)), verdict, target,
                 [SimpleNamespace(name=figure, value=value)])


def _reference(**section):
    return SimpleNamespace(data={"components": section} if section else {})


def test_the_catalogue_says_which_tests_set_a_ceiling_and_which_figures_are_bounded():
    specs = list(registry.TESTS.values())
    assert {s.check: (s.component, s.ceiling_kinds) for s in specs if s.component} == {
        "TargetSurvey": ("targets", ("write",)),
        "NetworkSurvey": ("network", ("write", "read"))}
    assert all(s.component in components.COMPONENTS for s in specs if s.component)
    bounded = {s.check: dict(s.bounded) for s in specs if s.bounded}
    assert bounded["IORWriteBandwidth"] == {"write_bandwidth": "write"}
    assert bounded["IORStonewalledRead"] == {"read_bandwidth": "read"}
    assert bounded["IORCheckpointRestore"] == {"restore_bandwidth": "read"}
    # Each bounded figure is one its test reports; no variant of a test is bounded.
    assert all(s.reports(f) for s in specs for f in s.bounded)
    assert not [s.check for s in specs if s.bounded and (s.degraded or s.filled
                                                         or s.role == "scaling")]
    assert "IORDataIntegrity" not in bounded and "IORRandomWriteIOPS" not in bounded
    with pytest.raises(ValueError, match="bound kind 'iops'"):
        TestSpec(check="X", role="acceptance", descr="x", bounded={"f": "iops"})
    with pytest.raises(ValueError, match="without a component"):
        TestSpec(check="X", role="acceptance", descr="x", ceiling_kinds=BOUND_KINDS)


def test_no_component_test_no_section():
    assert not bound_section([_ior()])


def test_the_network_binds_the_write_and_the_read_has_no_bound():
    section = bound_section([_network(50.0), _survey(100.0), _ior(value=40.0)])
    write, read = section.kinds
    assert (write.kind, write.bound.value, write.bound.binding) == ("write", 50.0, "network")
    assert write.part("targets").value == 400.0
    assert write.part("clients").value is None
    assert read.bound is None and "measured no read" in read.part("network").how
    assert "does not measure read" in read.part("targets").how
    (judged,) = section.figures
    assert (judged.verdict, judged.binding, judged.efficiency_text) == ("PASS", "network",
                                                                         "80.0 %")
    assert section.failures == [] and section.incomplete == []


def test_the_targets_bind_when_the_network_is_faster():
    section = bound_section([_network(5000.0, {n: 2000.0 for n in NODES}), _survey(100.0),
                             _ior(value=380.0)])
    (judged,) = section.figures
    assert (judged.bound.value, judged.binding, judged.efficiency_text) == (
        400.0, "targets", "95.0 %")


def test_a_test_on_fewer_nodes_is_bound_by_what_they_sent_alone():
    alone = {"n1": 10.0, "n2": 12.0, "n3": 50.0, "n4": 50.0}
    section = bound_section([_network(100.0, alone), _ior(value=20.0, nodes=["n1", "n2"])])
    (judged,) = section.figures
    assert judged.bound.value == 22.0
    assert judged.of_kind.part("network").how.startswith("2 nodes alone, summed")
    # All four: what they sent at once (less than the sum alone).
    (whole,) = bound_section([_network(100.0, alone), _ior(value=20.0)]).figures
    assert whole.bound.value == 100.0


def test_a_node_the_network_check_did_not_measure_has_no_network_bound():
    section = bound_section([_network(100.0, {"n1": 50.0, "n2": 50.0}),
                             _ior(value=20.0, nodes=["n1", "n5"])])
    (judged,) = section.figures
    assert judged.verdict == "—" and "no link of n5" in judged.of_kind.part("network").how


def test_above_the_bound_by_more_than_the_tolerance_is_invalid_and_blocks():
    over = 50.0 * (1 + DEFAULT_ABOVE_BOUND_TOLERANCE) + 0.1
    section = bound_section([_network(50.0), _ior(value=over)])
    (judged,) = section.figures
    assert judged.verdict == "INVALID"
    assert "served from a cache" in judged.reason and "set by the network" in judged.reason
    assert section.failures == [f"IORWriteBandwidth: write_bandwidth INVALID against the "
                                f"components' bound: {judged.reason}"]
    # Within the tolerance: a PASS above 100 %; a tolerance of its own judges it again.
    assert bound_section([_network(50.0), _ior(value=60.0)]).figures[0].verdict == "PASS"
    strict = bound_section([_network(50.0), _ior(value=60.0)],
                           _reference(above_bound_tolerance=0.1))
    assert strict.figures[0].verdict == "INVALID"


def test_below_efficiency_min_fails_naming_the_binding_component():
    section = bound_section([_network(50.0), _survey(100.0), _ior(value=40.0)],
                            _reference(efficiency_min=0.9))
    (judged,) = section.figures
    assert judged.verdict == "FAIL" and judged.limit == "≤ 1.25 x, ≥ 0.90 x"
    assert ("40 MiB/s is 80.0 % of the bound, 50 MiB/s, set by the network (4 nodes at "
            "once, NetworkSurvey): below components.efficiency_min 0.9") in judged.reason
    assert len(section.failures) == 1
    assert bound_section([_network(50.0), _ior(value=46.0)],
                         _reference(efficiency_min=0.9)).figures[0].verdict == "PASS"


def test_an_invalid_component_sets_no_ceiling_and_an_invalid_figure_is_not_judged():
    section = bound_section([_network(50.0, verdict="INVALID"), _survey(100.0),
                             _ior(value=390.0)])
    (judged,) = section.figures
    assert (judged.binding, judged.verdict) == ("targets", "PASS")
    assert section.kinds[0].part("network").how == "NetworkSurvey is INVALID"
    # A slow link FAILs its check; what it measured still bounds.
    assert bound_section([_network(50.0, verdict="FAIL"), _ior()]).figures[0].binding == \
        "network"
    # A test that is INVALID has no figure to judge.
    section = bound_section([_network(50.0), _ior(value=900.0, verdict="INVALID")])
    assert section.figures[0].verdict == "—" and section.failures == []


def test_a_target_not_measured_leaves_no_targets_bound():
    section = bound_section([_survey(100.0, missing=(BRICKS[2],)), _ior(value=40.0)])
    (judged,) = section.figures
    assert judged.bound is None and judged.verdict == "—"
    assert judged.of_kind.part("targets").how == f"TargetSurvey: target {BRICKS[2]} not measured"


def test_each_target_is_bound_by_its_own_components():
    section = bound_section([_network(50.0, target="a"),
                             _network(500.0, {n: 500.0 for n in NODES}, target="b"),
                             _ior(value=40.0, target="a"), _ior(value=400.0, target="b"),
                             _ior(value=40.0, target="c")])
    assert [(k.target, k.kind) for k in section.kinds] == [
        ("a", "write"), ("a", "read"), ("b", "write"), ("b", "read")]
    assert [(f.test, f.bound.value) for f in section.figures] == [
        ("IORWriteBandwidth", 50.0), ("IORWriteBandwidth", 500.0)]


def test_the_rules_come_from_the_reference_and_the_schema_holds_them(tmp_path):
    import yaml

    from fsaccept.suite.reference import ReferenceError, load_reference
    assert Rules.of(None) == Rules(None, DEFAULT_ABOVE_BOUND_TOLERANCE)
    assert Rules.of(_reference(efficiency_min=0.9, above_bound_tolerance=0)) == \
        Rules(0.9, 0.0)
    raw = yaml.safe_load((DATA / "ior-fail.reference.yaml").read_text())
    path = tmp_path / "r.yaml"
    raw["components"] = {"efficiency_min": 0.9, "above_bound_tolerance": 0.5}
    path.write_text(yaml.safe_dump(raw))
    assert Rules.of(load_reference(path)) == Rules(0.9, 0.5)
    for bad, said in (({"efficiency_min": 1.5}, "components.efficiency_min"),
                      ({"efficiency_min": 0}, "components.efficiency_min"),
                      ({"above_bound_tolerance": -1}, "components.above_bound_tolerance"),
                      ({"efficiency": 0.9}, "components")):
        raw["components"] = bad
        path.write_text(yaml.safe_dump(raw))
        with pytest.raises(ReferenceError, match=said):
            load_reference(path)


@pytest.mark.parametrize("value", [".nan", ".inf", "true", "'0.9'"])
def test_a_rule_that_is_no_number_is_refused(tmp_path, value):
    from fsaccept.suite.reference import ReferenceError, load_reference
    path = tmp_path / "r.yaml"
    path.write_text((DATA / "ior-fail.reference.yaml").read_text()
                    + f"components:\n  efficiency_min: {value}\n")
    with pytest.raises(ReferenceError, match="components"):
        load_reference(path)


def test_the_real_lab_run_is_bound_by_its_limited_network():
    """The lab's run with its network limited to 50 MiB/s (``local-gluster-bound``),
    re-judged from its kept outputs with its verified reference (efficiency_min 0.9):
    the golden report says the network binds, at what, and which figure FAILs."""
    text = (DATA.parent / "golden" / "local-gluster-bound+reference.report.txt").read_text()
    assert ("| write bandwidth | not measured (no check of it ran) | 50.001 MiB/s (4 nodes at "
            "once, NetworkSurvey) | 200.71 MiB/s (4 targets alone, summed, TargetSurvey) | "
            "50.001 MiB/s | network |") in text
    assert "| IORWriteBandwidth | write_bandwidth | 48.1 MiB/s | 50.001 MiB/s | network | " \
        "96.2 % | ≤ 1.25 x, ≥ 0.90 x | PASS |" in text
    assert text.count("IORSharedFileWrite: write_bandwidth FAIL against the components' "
                      "bound: 40.65 MiB/s is 81.3 % of the bound") >= 2
    assert "overall verdict: NOT ACCEPTED" in text


@pytest.mark.parametrize("aggregate, alone", [
    (0.0, None), (-5.0, None), (float("nan"), None), (float("inf"), None),
    (50.0, {n: float("nan") for n in NODES}), (50.0, {n: -1.0 for n in NODES}),
    (50.0, {n: "50" for n in NODES}), (50.0, {n: True for n in NODES}), (50.0, [1, 2])])
def test_a_ceiling_that_is_no_positive_figure_sets_no_bound(aggregate, alone):
    network = _network(aggregate)
    if alone is not None:
        network.case["link_figures"] = alone
    section = bound_section([network, _ior(value=40.0, nodes=["n1"])])
    (judged,) = section.figures
    assert judged.bound is None and judged.verdict == "—", judged
    assert section.failures == []


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -1.0])
def test_a_figure_that_is_no_figure_is_not_judged(value):
    (judged,) = bound_section([_network(50.0), _ior(value=value)]).figures
    assert judged.verdict == "—" and "not a figure" in judged.reason


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -3.0, "100", None])
def test_a_target_figure_that_is_no_figure_sets_no_targets_bound(value):
    survey = _survey(100.0)
    survey.case["target_figures"][BRICKS[1]] = value
    (judged,) = bound_section([survey, _ior(value=40.0)]).figures
    assert judged.bound is None and f"target {BRICKS[1]} not measured" in \
        judged.of_kind.part("targets").how


def test_a_component_tests_figures_are_not_assessed_against_the_typed_ceilings():
    """One target's figure is no figure of the whole system: the lab's run had its
    target_write_min at '99.7 % of the devices ceiling'."""
    from fsaccept.reporting import assessment, report
    ceilings = assessment.parse_ceilings(
        {"disk": {"component": "devices", "bandwidth": {"value": 50, "unit": "MiB/s"}}})
    judge = report._Assess(ceilings, [], "")
    survey = _survey()
    survey.figures = [SimpleNamespace(name="target_write_min", value=60.0, unit="MiB/s")]
    survey.nodes = 4
    assert judge(survey) == ({}, [])
    ior = _ior(value=60.0)
    ior.figures[0].unit, ior.nodes = "MiB/s", 4
    limits, found = judge(ior)
    assert limits == {"write_bandwidth": 50.0} and found[0].anomaly


def test_a_read_is_bound_by_what_the_nodes_received_at_once_and_a_cache_is_invalid():
    """The network's read round bounds what is read, on any of its nodes; the lab's
    restore read 82.7 MiB/s through a network limited to 50: a cache answered."""
    section = bound_section([_network(50.0, read=49.9),
                             _ior("IORStonewalledRead", "read_bandwidth", 45.0,
                                  nodes=["n1", "n2"]),
                             _ior("IORCheckpointSharedRestore", "restore_bandwidth", 82.7)])
    write, read = section.kinds
    assert (read.bound.value, read.bound.binding) == (49.9, "network")
    assert read.part("network").how.startswith("4 nodes receiving at once")
    ok, cached = section.figures
    assert (ok.verdict, ok.efficiency_text) == ("PASS", "90.2 %")
    assert cached.verdict == "INVALID" and "served from a cache" in cached.reason
    assert section.failures[0].startswith(
        "IORCheckpointSharedRestore: restore_bandwidth INVALID against the components' bound")
