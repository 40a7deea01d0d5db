"""The components' model (fsaccept/core/components.py): the survey's rounds, the slow
target, and the bound a figure is judged against."""

from __future__ import annotations

import random

import pytest

from fsaccept.core import components
from fsaccept.core.components import Target


def _targets(servers: int, per_server: int) -> list[Target]:
    return [Target(f"OST{s * per_server + i:04x}", f"oss{s}")
            for s in range(servers) for i in range(per_server)]


def _check(plan, targets, nodes):
    steps = [s for r in plan for s in r]
    assert sorted(s.target for s in steps) == sorted(targets), "each target once"
    for r, steps_r in enumerate(plan):
        assert {s.round for s in steps_r} == {r}
        assert len({s.node for s in steps_r}) == len(steps_r), "a node measures one target"
        assert len({s.target.server for s in steps_r}) == len(steps_r), \
            "a server serves one target"


def test_four_bricks_on_one_server_take_four_rounds():
    targets = _targets(1, 4)
    plan = components.survey_plan(targets, ["n1", "n2", "n3", "n4"])
    _check(plan, targets, 4)
    assert len(plan) == 4
    assert [s.node for r in plan for s in r] == ["n1", "n2", "n3", "n4"]


def test_a_thousand_targets_on_a_hundred_servers_take_ten_rounds():
    targets = _targets(100, 10)
    plan = components.survey_plan(targets, [f"n{i}" for i in range(1000)])
    _check(plan, targets, 1000)
    assert len(plan) == 10


def test_fewer_nodes_than_servers_take_targets_over_nodes_rounds():
    targets = _targets(100, 10)
    plan = components.survey_plan(targets, [f"n{i}" for i in range(64)])
    _check(plan, targets, 64)
    assert len(plan) == components.fewest_rounds(targets, 64) == 16


@pytest.mark.parametrize("seed", range(20))
def test_the_plan_takes_the_fewest_rounds_any_plan_can(seed):
    rng = random.Random(seed)
    targets = [Target(f"t{i}", f"s{rng.randrange(rng.randint(1, 12))}")
               for i in range(rng.randint(1, 80))]
    nodes = [f"n{i}" for i in range(rng.randint(1, 20))]
    plan = components.survey_plan(targets, nodes)
    _check(plan, targets, len(nodes))
    assert len(plan) == components.fewest_rounds(targets, len(nodes))


def test_a_plan_refuses_no_node_and_a_target_twice():
    with pytest.raises(ValueError, match="at least one node"):
        components.survey_plan(_targets(1, 2), [])
    with pytest.raises(ValueError, match="twice"):
        components.survey_plan([Target("b1", "h")] * 2, ["n1"])
    assert components.survey_plan([], ["n1"]) == []


def test_the_slow_target_is_named_with_its_server():
    values = {Target("b1", "h1"): 200.0, Target("b2", "h2"): 5.6,
              Target("b3", "h1"): 180.0, Target("b4", "h2"): 190.0}
    slow = components.slow_targets(values, 0.2)
    assert [s.target.name for s in slow] == ["b2"]
    assert slow[0].describe("write", "MiB/s") == \
        "b2 on h2 (write 5.6 MiB/s, 0.03 x the median 185 MiB/s)"


def test_targets_within_the_spread_are_not_slow_and_one_turns_it_off():
    values = {Target("b1", "h"): 100.0, Target("b2", "h"): 81.0, Target("b3", "h"): 120.0}
    assert components.slow_targets(values, 0.2) == []
    assert [s.target.name for s in components.slow_targets(values, 0.1)] == ["b2"]
    assert components.slow_targets({Target("b1", "h"): 0.0, Target("b2", "h"): 9.0}, 1) == []
    with pytest.raises(ValueError, match="max_spread"):
        components.slow_targets(values, 1.5)
    with pytest.raises(ValueError, match="share a name"):
        components.slow_targets({Target("b1", "h"): 1.0, Target("b1", "g"): 2.0})


def test_the_bound_is_the_lowest_component_and_names_it():
    b = components.bound({"clients": 4 * 900.0, "network": 1100.0,
                          "targets": components.targets_ceiling([400.0] * 6, 2)})
    assert (b.value, b.binding) == (1100.0, "network")
    assert b.parts == {"clients": 3600.0, "network": 1100.0, "targets": 1200.0}
    assert b.efficiency(990.0) == pytest.approx(0.9)
    assert components.bound({"clients": None, "targets": 5.0}).binding == "targets"
    assert components.bound({"clients": None}) is None
    # A tie binds to the first component, in the listed order.
    assert components.bound({"targets": 1.0, "clients": 1.0}).binding == "clients"


@pytest.mark.parametrize("parts, match", [({"disks": 1.0}, "not a component"),
                                          ({"network": float("nan")}, "not a figure"),
                                          ({"network": float("inf")}, "not a figure"),
                                          ({"clients": -1.0}, "not a figure")])
def test_a_bound_refuses_what_is_not_a_component_or_a_figure(parts, match):
    with pytest.raises(ValueError, match=match):
        components.bound(parts)


def test_a_layout_factor_below_one_is_refused():
    assert components.targets_ceiling([100.0, 100.0, 100.0], 1.25) == 240.0
    with pytest.raises(ValueError, match="at least 1"):
        components.targets_ceiling([1.0], 0.5)
