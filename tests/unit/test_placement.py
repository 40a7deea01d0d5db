import pytest

from fsaccept.core.placement import (format_rank_map, is_block_placement, is_usable,
                                node_memory_bytes, node_of_rank, nodes_for_fraction,
                                parse_rank_map, unreported_ranks)


@pytest.mark.parametrize("fraction, total, nodes", [
    (0.9, 4, 4), (0.15, 4, 1), (0.9, 10, 9), (0.9, 1536, 1383), (0.15, 1536, 231),
    (1.0, 7, 7), (0.01, 5, 1), (0.5, 4, 2), (0.3, 10, 3),
])
def test_fraction_is_rounded_up_and_at_least_one(fraction, total, nodes):
    assert nodes_for_fraction(fraction, total) == nodes


@pytest.mark.parametrize("fraction", [0, -0.1, 1.01])
def test_fraction_outside_zero_one_is_refused(fraction):
    with pytest.raises(ValueError, match=r"node fraction must be in \(0, 1\]"):
        nodes_for_fraction(fraction, 10)


def test_empty_partition_is_refused():
    with pytest.raises(ValueError, match="the partition has no nodes"):
        nodes_for_fraction(0.5, 0)


@pytest.mark.parametrize("states, usable", [
    ({"IDLE"}, True), ({"ALLOCATED"}, True), ({"MIXED"}, True),
    ({"IDLE", "DRAIN"}, False), ({"DOWN"}, False), ({"IDLE", "NOT_RESPONDING"}, False),
    ({"down*"}, False), (set(), True),
])
def test_usable_states(states, usable):
    assert is_usable(states) is usable


def test_node_memory_comes_from_slurm_realmemory():
    line = "NodeName=n1 Arch=x86_64 CoresPerSocket=1 CPUAlloc=0 RealMemory=2000 AllocMem=0"
    assert node_memory_bytes(line) == 2000 * 2**20
    assert node_memory_bytes("NodeName=n1") is None


def test_rank_map_round_trip():
    text = "noise\nfsaccept-rank 1 n1\nfsaccept-rank 0 n1\nfsaccept-rank 3 n2\nfsaccept-rank 2 n2\n"
    ranks = parse_rank_map(text)
    assert ranks == {0: "n1", 1: "n1", 2: "n2", 3: "n2"}
    assert format_rank_map(ranks) == "n1:0-1,n2:2-3"
    assert is_block_placement(ranks, 2)


def test_a_formatted_rank_map_places_each_rank_on_its_node():
    # The sign-off reads a recorded rank map back (a checkpoint's slowest rank's node).
    for ranks in ({0: "n1", 1: "n1", 2: "n2", 3: "n2"}, {0: "n1", 1: "n2", 2: "n1"},
                  {0: "a:b", 5: "c"}):
        text = format_rank_map(ranks)
        assert {r: node_of_rank(text, r) for r in ranks} == ranks
    assert node_of_rank("n1:0-1,n2:2-3", 4) is None
    # Not a map it writes: no node, whatever the rank (a 5,000-digit rank is not read).
    for text in ("", "n1:0-1,garbage", "n1 0", "n1:" + "9" * 5000):
        assert node_of_rank(text, 0) is None


def test_cyclic_or_packed_placement_is_not_block():
    cyclic = {0: "n1", 1: "n2", 2: "n1", 3: "n2"}
    assert format_rank_map(cyclic) == "n1:0,n2:1,n1:2,n2:3"
    assert not is_block_placement(cyclic, 2)
    # srun -N4 -n8 without --ntasks-per-node packed 4,2,1,1 on 4-CPU nodes:
    packed = {0: "n1", 1: "n1", 2: "n1", 3: "n1", 4: "n2", 5: "n2", 6: "n3", 7: "n4"}
    assert not is_block_placement(packed, 2)


@pytest.mark.parametrize("fraction, rounding, nodes", [
    (0.9, "up", 1383), (0.9, "down", 1382), (0.15, "up", 231), (0.15, "down", 230),
    (0.0001, "down", 1),  # never fewer than one node
])
def test_rounding_both_ways_on_1536_nodes_as_published(fraction, rounding, nodes):
    assert nodes_for_fraction(fraction, 1536, rounding) == nodes


def test_unknown_rounding_is_refused():
    with pytest.raises(ValueError, match="node rounding must be one of up, down"):
        nodes_for_fraction(0.5, 10, "nearest")


def test_every_rank_reported_once_has_no_reason():
    assert unreported_ranks({0: "n1", 1: "n1", 2: "n2", 3: "n2"}, 4, ["n1", "n2"]) == ""


def test_ranks_of_a_dead_node_are_counted_and_the_node_named():
    reported = {r: f"n{r // 2 + 1}" for r in range(8) if r not in (2, 3)}
    assert unreported_ranks(reported, 8, ["n1", "n2", "n3", "n4"]) == (
        "6 of 8 ranks reported (missing: 2-3); none from n2")


def test_without_the_jobs_nodes_the_count_and_ranks_alone():
    assert unreported_ranks({0: "n1", 3: "n2"}, 5) == "2 of 5 ranks reported (missing: 1-2,4)"


def test_a_rank_outside_the_job_is_named():
    assert unreported_ranks({0: "n1", 1: "n1", 7: "n1"}, 2, ["n1"]) == (
        "2 of 2 ranks reported; ranks outside 0-1 reported: 7")
