"""Per-node IOR figures from a real ``-v`` wear-out run on the emulated cluster: 8 ranks on
4 nodes (``tests/data/ior/srun-write-8ranks-4nodes.*``, the rank map from Slurm)."""

from pathlib import Path

import pytest

from fsaccept.benchmarks.ior.command import entry_errors
from fsaccept.benchmarks.ior.figures import per_node
from fsaccept.benchmarks.ior.parse import parse_ior
from fsaccept.core.pernode import by_figure, find_outliers, slowest
from fsaccept.core.placement import parse_rank_map

DATA = Path(__file__).resolve().parents[1] / "data" / "ior"
NAME = "srun-write-8ranks-4nodes"


@pytest.fixture(scope="module")
def run():
    return parse_ior((DATA / f"{NAME}.txt").read_text())


@pytest.fixture(scope="module")
def ranks():
    return parse_rank_map((DATA / f"{NAME}.ranks").read_text())


def test_every_rank_is_read_even_when_printed_after_the_summary(run):
    # Ranks 1-7 flushed their lines after the phase's summary line and result row.
    assert run.rank_pairs == {0: [519], 1: [521], 2: [517], 3: [511], 4: [520], 5: [519],
                              6: [514], 7: [510]}


def test_each_node_sums_its_ranks_over_the_stonewall_time(run, ranks):
    nodes = per_node(run, ranks, "write")
    # n1 holds ranks 0 and 1: (519 + 521) transfers of 1 MiB in Stonewall(s) 2.05 s.
    assert nodes == pytest.approx({"n1": 1040 / 2.05, "n2": 1028 / 2.05,
                                   "n3": 1039 / 2.05, "n4": 1024 / 2.05})
    row = run.summary_for("write")
    # The nodes together: IOR's per-rank mean Stonewall(MiB) times the ranks (within the
    # rounding of the printed 2.05 s: +-0.005 s is 0.25 %).
    assert sum(nodes.values()) == pytest.approx(row.stonewall_mib * row.tasks, rel=2.5e-3)
    assert per_node(run, ranks, "write", kind="iops")["n1"] == pytest.approx(1040 / 2.05)


def test_the_slowest_and_outlier_nodes_are_named(run, ranks):
    nodes = per_node(run, ranks, "write")
    assert slowest(nodes, "MiB/s", 2).startswith("n4 499.51 MiB/s (0.99 x the median), n2 ")
    assert find_outliers(nodes, 0.5) == []
    assert [o.node for o in find_outliers(nodes, 0.995)] == ["n2", "n4"]
    assert by_figure({n: {"write_bandwidth": v} for n, v in nodes.items()},
                     ["write_bandwidth"]) == {"write_bandwidth": dict(sorted(nodes.items()))}


def test_no_per_node_figure_is_made_up(run, ranks):
    assert per_node(run, {r: n for r, n in ranks.items() if r != 7}, "write") is None
    assert per_node(run, ranks, "read") is None  # no read phase
    plain = parse_ior((DATA / "random-write-iops-deadline.txt").read_text())
    assert plain.rank_pairs == {} and per_node(plain, ranks, "write", "iops") is None


def test_outlier_fraction_only_where_ior_prints_per_rank_counts():
    entry = {"transfer_size": "1MiB", "block_size": "1MiB", "outlier_fraction": 0.8}
    assert entry_errors("tests.ior_write_bandwidth", entry) == []
    assert entry_errors("tests.ior_read_bandwidth", entry) == [
        "tests.ior_read_bandwidth.outlier_fraction: IOR prints per-rank counts only in "
        "wear-out phases: per-node figures exist for ior_write_bandwidth and ior_shared_write "
        "alone"]
