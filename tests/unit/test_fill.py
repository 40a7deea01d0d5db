"""Acceptance at a declared fill level, the pure half (issue 39 §1): the ``fill:`` section
read and refused as the rest of the reference file, the plan (how much each node writes,
the line none crosses, the ageing rounds), the filler job's lines read, the record kept
and judged (the level reached, every node's filler, each figure filled against empty),
and the sign-off's Fill level section on a real run report with filled re-runs added."""

from __future__ import annotations

import copy
import os
import hashlib
import json
import math
import random
import re
from pathlib import Path

import pytest
import yaml

from fsaccept.benchmarks import registry
from fsaccept.benchmarks.catalogue import ACCEPTANCE, FILL_DEFAULT, FIXTURE
from fsaccept.core import fill
from fsaccept.core.fill import FAIL, INVALID, PASS, Df, Limits, Settings
from fsaccept.core.reference import ReferenceError
from fsaccept.core.units import GIB, MIB, TIB
from fsaccept.suite.reference import fill_tests, load_reference

REPO = Path(__file__).resolve().parents[2]
PIB = 2**50

#: ``df -B1 --output=size,used,avail,itotal,iused,iavail /tmp`` on the lab's VM (GNU
#: coreutils 9.1), as printed: used + avail is not size (root's reserve, the overlay).
DF_CAPTURE = """\
   1B-blocks        Used       Avail   Inodes  IUsed    IFree
270553174016 21737447424 76055846912 16777216 787034 15990182
"""


def settings(fraction=0.8, max_degradation=0.3, **kw) -> Settings:
    lim = {k: kw.pop(k) for k in ("inode_fraction", "tolerance") if k in kw}
    return Settings(True, Limits(fraction, max_degradation, **lim), **kw)


def big_df(used_pib: float = 1.0) -> Df:
    """A 10 PiB file system with 4 billion inodes."""
    used = int(used_pib * PIB)
    return Df(size=10 * PIB, used=used, avail=10 * PIB - used, itotal=4 * 10**9,
              iused=10**6, iavail=4 * 10**9 - 10**6)


def nodes(n: int) -> list[str]:
    return [f"n{i:04d}" for i in range(n)]


# --------------------------------------------------------------------------- df


def test_df_is_read_from_dfs_own_output():
    df = fill.read_df(DF_CAPTURE)
    assert df == Df(270553174016, 21737447424, 76055846912, 16777216, 787034, 15990182)
    # The level is of what a user can fill (df's Use%), not of the size.
    assert df.capacity == 21737447424 + 76055846912
    assert df.level == pytest.approx(0.2223, abs=1e-4)
    assert df.inode_level == pytest.approx(787034 / 16777216)
    assert Df.parse(df.text()) == df


def test_df_without_inode_counts_has_no_inode_level():
    df = fill.read_df("1B-blocks Used Avail Inodes IUsed IFree\n100 10 90 - - -\n")
    assert (df.itotal, df.iused) == (0, 0) and math.isnan(df.inode_level)


@pytest.mark.parametrize("text, match", [
    ("", "0 lines"),
    ("1B-blocks Used Avail Inodes IUsed IFree\n1 2 3 4 5 6\n7 8 9 1 2 3\n", "3 lines"),
    ("1B-blocks Used Avail Inodes IUsed\n1 2 3 4 5\n", "no IFree column"),
    ("1B-blocks Used Used Inodes IUsed IFree\n1 2 3 4 5 6\n", "is not df"),
    ("Size Used Avail Use% Mounted\n1 2 3 4 5\n", "is not df"),
    ("1B-blocks Used Avail Inodes IUsed IFree\n1 2 3 4 5\n", "is not df"),
    ("1B-blocks Used Avail Inodes IUsed IFree\n1 -2 3 4 5 6\n", "Used: '-2' is not a count"),
    ("1B-blocks Used Avail Inodes IUsed IFree\n1 2 nan 4 5 6\n", "Avail: 'nan' is not"),
    ("1B-blocks Used Avail Inodes IUsed IFree\n1 2 1.5 4 5 6\n", "Avail: '1.5' is not"),
    ("1B-blocks Used Avail Inodes IUsed IFree\n- 2 3 4 5 6\n", "1B-blocks: '-' is not"),
    (f"1B-blocks Used Avail Inodes IUsed IFree\n1 {2**64} 3 4 5 6\n", "is not a count"),
])
def test_df_output_that_is_not_dfs_is_refused_naming_what(text, match):
    with pytest.raises(fill.OutputError, match=match):
        fill.read_df(text)


@pytest.mark.parametrize("text, match", [
    ("size=1 used=2 avail=3 itotal=4 iused=5", "missing iavail"),
    ("size=1 used=2 avail=3 itotal=4 iused=5 iavail=6 free=7", "unknown free"),
    ("size=1 used=2 used=2 avail=3 itotal=4 iused=5 iavail=6", "used given twice"),
    ("size=1 used=-2 avail=3 itotal=4 iused=5 iavail=6", "used: '-2' is not a count"),
    ("size=1 used=2 avail=inf itotal=4 iused=5 iavail=6", "avail: 'inf' is not"),
    ("size=1 used avail=3 itotal=4 iused=5 iavail=6", "'used' is not key=value"),
])
def test_a_df_marker_that_is_not_one_is_refused(text, match):
    with pytest.raises(fill.OutputError, match=match):
        Df.parse(text, "df before")


def test_a_df_no_file_system_has_is_named():
    assert Df(0, 0, 0).problems() == ["no capacity (used 0 + avail 0 bytes)"]
    assert Df(10, 5, 5, 10, 11, 0).problems() == ["11 inodes used of 10"]
    assert Df(10, -5, 5).problems() == ["used=-5 is not a count"]
    assert Df(10, 2**64, 5).problems() == [f"used={2**64} is not a count"]
    assert Df(10, True, 5).problems() == ["used=True is not a count"]


# --------------------------------------------------------------------------- the plan


def test_the_plan_of_80_percent_of_10_pib_on_1000_nodes():
    s = settings(churn_rounds=3, bandwidth_mib_s=500e9 / MIB, deadline_s=86400)
    df = big_df(1.0)
    p = fill.plan(df, s, nodes(1000))
    need = math.floor(0.8 * df.capacity) - df.used
    assert p.target_used == math.floor(0.8 * df.capacity)
    # Whole files: at least what is needed, less than one of the smallest beyond.
    assert need <= p.bytes < need + MIB
    assert p.bytes == sum(size * n for nd in p.nodes for size, n in nd.files)
    # Even among the nodes: within a file of each size.
    per_node = [nd.bytes for nd in p.nodes]
    assert max(per_node) - min(per_node) <= MIB + 64 * MIB + GIB
    # The line no batch starts above: half the tolerance below the target; every
    # node's batch in flight and df's lag fit between them.
    room = math.floor(0.02 * df.capacity)
    assert p.stop_used == p.target_used - room // 2
    assert 1000 * p.check_bytes <= room // 4 <= p.lag_bytes
    assert 1000 * p.check_bytes + p.lag_bytes == room // 2
    assert p.check_bytes >= GIB
    # The shares of the bytes: 10 % in 1 MiB files, 40 % in 64 MiB, 50 % in 1 GiB.
    by_size = {size: sum(dict(nd.files)[size] for nd in p.nodes) * size
               for size, _ in fill.DEFAULT_FILE_SIZES}
    assert by_size[GIB] / need == pytest.approx(0.5, abs=1e-3)
    assert by_size[MIB] / need == pytest.approx(0.1, abs=1e-3)
    # Fill time = bytes / bandwidth: 7 PiB and 3 rounds of 10 % at 500 GB/s, ~5.7 h.
    assert p.seconds == pytest.approx(p.written / 500e9)
    assert 5.5 * 3600 < p.seconds < 6 * 3600
    assert len(p.churn) == 3 and p.churn[0].stride == 10
    assert p.churn[0].bytes == pytest.approx(0.1 * p.bytes, rel=1e-3)
    assert p.summary().startswith("fill from 10.00% to 80.00% of 10 PiB: 7 PiB in ")
    json.dumps(p.to_dict())  # a record


def test_the_plan_makes_up_the_inodes_with_empty_files():
    df = Df(100 * GIB, 10 * GIB, 90 * GIB, 10**6, 1000, 10**6 - 1000)
    s = settings(0.5, inode_fraction=0.4, file_sizes=((16 * MIB, 1.0),))
    p = fill.plan(df, s, nodes(3))
    data = sum(n for nd in p.nodes for _, n in nd.files)
    assert p.target_inodes == 400_000
    assert sum(nd.empty_files for nd in p.nodes) == 400_000 - 1000 - data
    assert [nd.empty_files for nd in p.nodes] in (
        [e, e, e] for e in [sum(nd.empty_files for nd in p.nodes) // 3]) or \
        max(nd.empty_files for nd in p.nodes) - min(nd.empty_files for nd in p.nodes) == 1
    assert p.files == 400_000 - 1000


def test_a_fill_already_at_its_level_writes_nothing():
    df = Df(100 * GIB, 80 * GIB, 20 * GIB)
    p = fill.plan(df, settings(0.8, file_sizes=((MIB, 1.0),)), nodes(2))
    assert p.bytes == 0 and p.files == 0


@pytest.mark.parametrize("df, kw, n, match", [
    (Df(100 * GIB, 85 * GIB, 15 * GIB), {}, 2,
     r"at 85.00% already \(85 GiB used of 100 GiB\), above the declared 80.00%"),
    (Df(0, 0, 0), {}, 2, "no capacity"),
    (Df(100, -1, 5), {}, 2, "used=-1 is not a count"),
    (big_df(), {"fraction": 0.97}, 2, r"fill.fraction: 0.97: .* at most 95%"),
    (big_df(), {"fraction": math.nan}, 2, "fill.fraction: nan"),
    (big_df(), {"fraction": -0.5}, 2, "fill.fraction: -0.5"),
    (big_df(), {"fraction": 1.5}, 2, "fill.fraction: 1.5"),
    (big_df(), {"inode_fraction": 1.2}, 2, "fill.inode_fraction: 1.2"),
    (big_df(), {"tolerance": 0.9}, 2, "fill.tolerance: 0.9 is not above 0 and below"),
    (big_df(), {"tolerance": math.inf}, 2, "fill.tolerance: inf"),
    (big_df(), {}, 0, "the filler needs one or more nodes"),
    # 4 nodes x 1 GiB against 2 % of 10 GiB: the batches in flight could pass the level.
    (Df(10 * GIB, GIB, 9 * GIB), {}, 4,
     r"4 node\(s\) x the largest file \(1 GiB\) is 4 GiB in flight at once, more than a "
     r"quarter of the tolerance \(2.00% of 10 GiB: 205 MiB\)"),
    (Df(10 * GIB, 0, 10 * GIB, 0, 0, 0), {"inode_fraction": 0.5,
                                          "file_sizes": ((MIB, 1.0),)}, 1,
     "reports no inode count"),
    (Df(10 * GIB, 0, 10 * GIB, 100, 90, 10), {"inode_fraction": 0.5,
                                              "file_sizes": ((MIB, 1.0),)}, 1,
     r"inodes are at 90.00% already"),
    # 8 GiB in 4 KiB files: 2 million files on a file system of 100,000 inodes.
    (Df(10 * GIB, 0, 10 * GIB, 100_000, 10, 99_990), {"file_sizes": ((4096, 1.0),)}, 1,
     r"make 2,097,152 files; .* beyond 95% of the 100,000 inodes: larger file sizes"),
    (big_df(), {"deadline_s": 3600, "bandwidth_mib_s": 500e9 / MIB}, 1000,
     r"at 476,837 MiB/s takes 4.\d+ h, more than fill.deadline_s \(1 h\)"),
    (big_df(), {"deadline_s": 3600}, 1000, "fill.deadline_s: no rate to size"),
])
def test_a_fill_that_cannot_or_must_not_run_is_refused_with_its_numbers(df, kw, n, match):
    with pytest.raises(fill.PlanError, match=match):
        fill.plan(df, settings(**kw), nodes(n) if n else [])


def test_duplicate_nodes_and_a_reserve_beyond_what_is_left_are_refused():
    with pytest.raises(fill.PlanError, match="2 given, 1 distinct"):
        fill.plan(big_df(), settings(), ["n1", "n1"])
    with pytest.raises(fill.PlanError, match=r"keeps 2 PiB free; the filled tests need 3 PiB"):
        fill.plan(big_df(), settings(), nodes(10), reserve_bytes=3 * PIB)


def test_the_rate_of_the_target_sizes_a_fill_whose_section_gives_none():
    p = fill.plan(big_df(), settings(deadline_s=86400), nodes(10), bandwidth_mib_s=10**6)
    assert p.bandwidth_mib_s == 10**6 and p.seconds == pytest.approx(p.bytes / (10**6 * MIB))


def test_split_and_selected():
    assert fill.split(10, 3) == [4, 3, 3]
    assert fill.split(10, 3, start=2) == [3, 3, 4]
    assert fill.split(2, 4, start=3) == [1, 0, 0, 1]
    assert sum(fill.split(10**18 + 7, 1000, 999)) == 10**18 + 7
    for count in range(0, 40):
        for stride in (2, 3, 10):
            for offset in range(stride):
                assert fill.selected(count, stride, offset) == sum(
                    1 for i in range(count) if i % stride == offset)


def test_churn_rounds_rotate_over_the_files_and_keep_the_bytes():
    p = fill.plan(big_df(), settings(churn_rounds=12, delete_fraction=0.25), nodes(7))
    assert [r.offset for r in p.churn] == [0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3]
    # Four rounds rewrite each file once.
    assert sum(r.files for r in p.churn[:4]) == sum(
        n for nd in p.nodes for _, n in nd.files)
    assert sum(r.bytes for r in p.churn[:4]) == p.bytes
    assert fill.churn_plan(p.nodes, 0, 0.1) == []
    for bad in (0, 0.6, math.nan, -1):
        with pytest.raises(fill.PlanError, match="delete_fraction"):
            fill.churn_plan(p.nodes, 1, bad)


def _simulate(p: fill.Plan, seed: int, lag: bool) -> list[int]:
    """The nodes' protocol, interleaved at random: a node reads df (what has landed,
    less a lag of up to ``lag_bytes`` when ``lag``), starts a batch of at most
    ``check_bytes`` only while it reads at most ``stop_used``, and its batch lands later.
    Returns used after each landing."""
    rng = random.Random(seed)
    queues = {nd.node: [size for size, n in nd.files for _ in range(n)] for nd in p.nodes}
    used, flying, seen = p.df.used, {}, []
    active = set(queues)
    while active or flying:
        node = rng.choice(sorted(active | set(flying)))
        if node in flying:  # its batch lands
            used += flying.pop(node)
            seen.append(used)
            continue
        read = used - (rng.randint(0, p.lag_bytes) if lag else 0)
        if read > p.stop_used or not queues[node]:
            active.discard(node)
            continue
        batch = queues[node].pop(0)
        while queues[node] and batch + queues[node][0] <= p.check_bytes:
            batch += queues[node].pop(0)
        flying[node] = batch
    return seen


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("lag", [False, True])
def test_the_filler_never_passes_the_target_and_stops_within_the_tolerance(seed, lag):
    df = Df(20 * GIB, 3 * GIB, 17 * GIB)
    s = settings(0.7, tolerance=0.05, file_sizes=((MIB, 0.5), (8 * MIB, 0.5)))
    p = fill.plan(df, s, nodes(5))
    landed = _simulate(p, seed, lag)
    assert max(landed) <= p.target_used
    assert landed[-1] > p.stop_used >= p.target_used - 0.025 * df.capacity
    assert landed[-1] / df.capacity >= 0.7 - 0.025


# --------------------------------------------------------------------------- job output


def output(used_filled: int = 80 * GIB, rc: int = 0, rounds: int = 2, **extra) -> str:
    before = Df(100 * GIB, 10 * GIB, 90 * GIB, 10**6, 100, 10**6 - 100)
    filled = Df(100 * GIB, used_filled, 100 * GIB - used_filled, 10**6, 7000,
                10**6 - 7000)
    lines = ["+ srun --ntasks-per-node=1 fsaccept-filler",
             f"{fill.MARK} df before {before.text()}",
             "fsaccept-info filler started"]
    for node in ("n1", "n2"):
        lines.append(f"{fill.MARK} node {node} bytes={35 * GIB} files=3450 empty=0 "
                     f"rc={rc if node == 'n2' else 0} stop=level")
        lines += [f"{fill.MARK} churn {node} round={r} files=345 bytes={3 * GIB} rc=0"
                  for r in range(1, rounds + 1)]
    lines.append(f"{fill.MARK} df filled {filled.text()}")
    return "\n".join(lines + extra.get("more", [])) + "\n"


def fill_plan(**kw) -> fill.Plan:
    df = Df(100 * GIB, 10 * GIB, 90 * GIB, 10**6, 100, 10**6 - 100)
    return fill.plan(df, settings(file_sizes=((MIB, 0.5), (16 * MIB, 0.5)),
                                  churn_rounds=2, **kw), ["n1", "n2"])


def record(text: str | None = None, **kw) -> fill.Evidence:
    return fill.Evidence.of(fill_plan(**kw), fill.parse_output(text or output()))


def test_the_filler_lines_are_read_among_the_jobs_output():
    out = fill.parse_output(output())
    assert set(out.df) == {fill.BEFORE, fill.FILLED}
    assert out.nodes["n1"] == {"bytes": 35 * GIB, "files": 3450, "empty": 0, "rc": 0,
                               "stop": "level"}
    assert out.churn["n2"] == {1: (345, 3 * GIB, 0), 2: (345, 3 * GIB, 0)}
    ev = record()
    assert [(n.node, n.rounds, n.churn_bytes) for n in ev.nodes] == [
        ("n1", 2, 6 * GIB), ("n2", 2, 6 * GIB)]
    assert ev.written == 70 * GIB and ev.planned_nodes == ("n1", "n2")


@pytest.mark.parametrize("line, match", [
    (f"{fill.MARK} df", "is not a fill marker"),
    (f"{fill.MARK} disk before size=1", "is not a fill marker"),
    (f"{fill.MARK} df during size=1 used=1 avail=1 itotal=1 iused=1 iavail=1",
     "df stage 'during' is not one of before, filled"),
    (f"{fill.MARK} df before size=1 used=1 avail=1 itotal=1 iused=1 iavail=1",
     "df before given twice"),
    (f"{fill.MARK} node n1 bytes=1 files=1 empty=0 rc=0 stop=level", "n1 reported twice"),
    (f"{fill.MARK} node n3 bytes=1 files=1 empty=0 rc=0", "not one stop="),
    (f"{fill.MARK} node n3 bytes=1 files=1 empty=0 rc=0 stop=full", "not one stop="),
    (f"{fill.MARK} node n3 bytes=1 files=1 empty=0 rc=0 stop=level stop=level",
     "not one stop="),
    (f"{fill.MARK} node n3 bytes=1 files=1 rc=0 stop=level", "missing empty"),
    (f"{fill.MARK} node n3 bytes=1 files=1 empty=0 rc=0 wrote=3 stop=level",
     "unknown wrote"),
    (f"{fill.MARK} node n3 bytes=-1 files=1 empty=0 rc=0 stop=level", "bytes: '-1' is not"),
    (f"{fill.MARK} node n3 bytes=NaN files=1 empty=0 rc=0 stop=level",
     "bytes: 'NaN' is not"),
    (f"{fill.MARK} node n3 bytes={2**64} files=1 empty=0 rc=0 stop=level",
     "bytes: .* is not a count"),
    (f"{fill.MARK} node n3 bytes=1 bytes=1 files=1 empty=0 rc=0 stop=level",
     "bytes given twice"),
    (f"{fill.MARK} node ../n3 bytes=1 files=1 empty=0 rc=0 stop=level",
     "'../n3' is not a node's name"),
    (f"{fill.MARK} churn n1 round=1 files=1 bytes=1 rc=0", "round 1 of n1 reported twice"),
    (f"{fill.MARK} churn n1 round=3 files=1 rc=0", "missing bytes"),
])
def test_filler_lines_that_are_not_ones_are_refused_naming_the_line(line, match):
    with pytest.raises(fill.OutputError, match=r"filler output: line \d+: .*" + match):
        fill.parse_output(output(more=[line]))


# --------------------------------------------------------------------------- judges


def test_a_fill_at_its_level_passes():
    ev = record()
    level, filler = fill.judge_level(ev), fill.judge_filler(ev)
    assert (level.verdict, filler.verdict) == (PASS, PASS)
    assert level.value == pytest.approx(0.8) and level.limit == pytest.approx(0.78)


def test_a_fill_short_of_its_level_is_invalid_with_its_numbers():
    j = fill.judge_level(record(output(used_filled=70 * GIB)))
    assert j.verdict == INVALID
    assert j.reasons == ("df filled: 70.00% of the capacity used (70 GiB of 100 GiB), "
                         "below the declared 80.00% less its tolerance (78.00%)",)


def test_a_fill_beyond_95_percent_is_invalid():
    j = fill.judge_level(record(output(used_filled=96 * GIB)))
    assert j.verdict == INVALID and "beyond the 95% fsaccept never fills past" in j.reasons[0]


def test_the_filler_must_be_there_through_the_test():
    ev = record()
    gone = Df(100 * GIB, 11 * GIB, 89 * GIB, 10**6, 200, 10**6 - 200)
    j = fill.judge_level(ev, during=gone)
    assert j.verdict == INVALID and j.reasons[0].startswith(
        "df at the test's start: 11.00% of the capacity used")
    assert fill.judge_level(ev, during=ev.df[fill.FILLED]).verdict == PASS


def test_the_inode_level_is_judged_when_declared():
    ev = record(inode_fraction=0.5)
    j = fill.judge_level(ev)
    assert j.verdict == INVALID and "0.70% of the inodes used (7,000 of 1,000,000), " \
        "below the declared 50.00%" in j.reasons[0]
    none = copy.deepcopy(ev)
    none.df[fill.FILLED] = Df(100 * GIB, 80 * GIB, 20 * GIB)
    assert "reports no inode count" in fill.judge_level(none).reasons[0]


def test_a_df_missing_or_impossible_is_invalid():
    ev = record()
    del ev.df[fill.BEFORE]
    assert fill.judge_level(ev).reasons == ("no df before: the level is not proven",)
    ev = record()
    ev.df[fill.FILLED] = Df(0, 0, 0)
    assert fill.judge_level(ev).reasons == ("df filled: no capacity (used 0 + avail 0 bytes)",)


def test_a_node_that_failed_or_did_not_age_or_report_is_invalid():
    ev = record(output(rc=28, rounds=1))
    j = fill.judge_filler(ev)
    assert j.verdict == INVALID
    assert "n2: its filler ended with exit 28 (stop=level) after 35 GiB" in j.reasons
    assert "n1: 1 of 2 ageing round(s) done" in j.reasons
    ev = record()
    ev.nodes = ev.nodes[:1] + [fill.NodeFill("n9", 1, 1, 0, 0, "budget", 2), ev.nodes[0]]
    reasons = fill.judge_filler(ev).reasons
    assert reasons[:3] == ("n2: no filler line (the node's step was killed, or its output "
                           "cut short)", "n9: not a node of the plan", "n1: reported twice")
    ev.nodes = []
    assert "no node wrote filler" in fill.judge_filler(ev).reasons


def test_a_round_missing_ends_the_count_of_rounds():
    text = output().replace(f"{fill.MARK} churn n1 round=1 files=345 bytes={3 * GIB} rc=0\n",
                            "")
    assert [n.rounds for n in record(text).nodes] == [0, 2]


def test_each_figure_filled_against_empty():
    ok = fill.judge_figure(fill.Pair("FilledIORWriteBandwidth", "write_bandwidth", "MiB/s",
                                     1000.0, 800.0), 0.3)
    assert (ok.verdict, ok.value, ok.limit) == (PASS, 0.8, pytest.approx(0.7))
    bad = fill.judge_figure(fill.Pair("FilledIORWriteBandwidth", "write_bandwidth", "MiB/s",
                                      1000.0, 420.0), 0.3)
    assert bad.verdict == FAIL and bad.reasons == (
        "FilledIORWriteBandwidth: write_bandwidth: 420 MiB/s filled, 1000 MiB/s empty: "
        "42.0% of its empty figure (at least 700 MiB/s: max_degradation 0.3)",)
    # A time: smaller is better.
    slow = fill.judge_figure(fill.Pair("FilledFioFsync", "fsync_4k_write_clat_p99_us", "us",
                                       100.0, 200.0), 0.3)
    assert slow.verdict == FAIL and "at most 142.86 us" in slow.reasons[0]
    assert fill.judge_figure(fill.Pair("t", "f", "ms", 100.0, 130.0), 0.3).verdict == PASS
    # No degradation allowed: equal passes, a hair below fails.
    assert fill.judge_figure(fill.Pair("t", "f", "IOPS", 5.0, 5.0), 0).verdict == PASS
    assert fill.judge_figure(fill.Pair("t", "f", "IOPS", 5.0, 4.999), 0).verdict == FAIL


def test_the_live_threshold_is_the_judges_bound():
    assert fill.threshold_of(1000.0, "MiB/s", 0.3) == (pytest.approx(700.0), 0.0, None,
                                                       "MiB/s")
    value, lower, upper, unit = fill.threshold_of(100.0, "us", 0.3)
    assert (value, lower, upper, unit) == (pytest.approx(142.857, rel=1e-5), None, 0.0, "us")
    for unit, empty in (("MiB/s", 1000.0), ("ms", 100.0)):
        at = fill.threshold_of(empty, unit, 0.3)[0]
        assert fill.judge_figure(fill.Pair("t", "f", unit, empty, at), 0.3).verdict == PASS


@pytest.mark.parametrize("empty, filled, match", [
    (None, 5.0, "no empty figure"), (5.0, None, "no filled figure"),
    (math.nan, 5.0, "its empty figure nan"), (5.0, math.inf, "its filled figure inf"),
    (0.0, 5.0, "its empty figure 0.0"), (5.0, -1.0, "its filled figure -1.0"),
    (True, 5.0, "its empty figure True"),
])
def test_a_figure_that_is_none_is_invalid_never_judged(empty, filled, match):
    j = fill.judge_figure(fill.Pair("t", "f", "MiB/s", empty, filled, "why"), 0.3)
    assert j.verdict == INVALID and match in j.reasons[0]


def test_the_verdict_is_the_worst_invalid_first():
    ev = record()
    fail_pair = fill.Pair("t", "f", "MiB/s", 10.0, 1.0)
    assert fill.verdict(fill.judge(ev)) == PASS
    assert fill.verdict(fill.judge(ev, [fail_pair])) == FAIL
    assert fill.verdict(fill.judge(ev, [fail_pair], during=Df(0, 0, 0))) == INVALID
    assert fill.verdict([]) == INVALID


# --------------------------------------------------------------------------- the record


def test_the_record_survives_json_and_is_judged_the_same():
    ev = record()
    again = fill.Evidence.from_dict(json.loads(json.dumps(ev.to_dict())))
    assert again == ev
    assert fill.judge(again) == fill.judge(ev)
    assert len(json.dumps(ev.to_dict())) < 1000


def _edit(path: str, value):
    def edit(d):
        *keys, last = path.split(".")
        for k in keys:
            d = d[int(k)] if k.isdigit() else d[k]
        if value is KeyError:
            del d[last]
        else:
            d[int(last) if last.isdigit() else last] = value
    return edit


@pytest.mark.parametrize("edit, match", [
    (_edit("version", 2), "not a fill record of version 1"),
    (_edit("limits", KeyError), "fill.limits: missing"),
    (_edit("limits.fraction", math.nan), "fill.limits.fraction: nan"),
    (_edit("limits.fraction", 1.5), "fill.limits.fraction: 1.5"),
    (_edit("limits.fraction", "0.8"), "fill.limits.fraction: '0.8'"),
    (_edit("limits.inode_fraction", -0.1), "fill.limits.inode_fraction: -0.1"),
    (_edit("limits.tolerance", 0), "fill.limits.tolerance: 0"),
    (_edit("limits.max_degradation", 1), "fill.limits.max_degradation: 1"),
    (_edit("limits.max_degradation", math.inf), "fill.limits.max_degradation: inf"),
    (_edit("df.during", {}), "fill.df: missing, or stages other than"),
    (_edit("df.filled.used", -1), "fill.df.filled.used: -1 is not a count"),
    (_edit("df.filled.used", 1.5), "fill.df.filled.used: 1.5 is not a count"),
    (_edit("df.filled.itotal", KeyError), "fill.df.filled: not {size"),
    (_edit("nodes.0.bytes", 2**70), "fill.nodes\\[0\\].bytes: .* is not a count"),
    (_edit("nodes.0.rc", True), "fill.nodes\\[0\\].rc: True is not an exit status"),
    (_edit("nodes.1.stop", "full"), "fill.nodes\\[1\\].stop: 'full'"),
    (_edit("nodes.1.node", "a b"), "fill.nodes\\[1\\].node: 'a b'"),
    (_edit("nodes.1.extra", 1), "fill.nodes\\[1\\]: not {node"),
    (_edit("nodes", {}), "fill.nodes: missing or not a list"),
    (_edit("planned_nodes", [""]), "fill.planned_nodes"),
    (_edit("churn_rounds", -1), "fill.churn_rounds: -1"),
])
def test_a_record_that_is_not_one_is_refused_naming_the_key(edit, match):
    data = record().to_dict()
    edit(data)
    with pytest.raises(fill.EvidenceError, match=match):
        fill.Evidence.from_dict(data)


# --------------------------------------------------------------------------- the catalogue


def test_the_catalogue_says_which_tests_run_filled():
    assert registry.fill_defaults() == ["IORWriteBandwidth", "IORStonewalledRead",
                                        "IORRandomWriteIOPS", "IORRandomReadIOPS",
                                        "MdtestEasy"]
    for spec in registry.fill_checks().values():
        assert spec.role == ACCEPTANCE and spec.benchmark and not spec.degraded
    assert all(registry.TESTS[c].fill == FILL_DEFAULT for c in registry.fill_defaults())
    assert "IORDataIntegrity" not in registry.fill_checks()  # a count, not a rate
    filled = {t.check: t for t in registry.filled_tests()}
    write = filled["FilledIORWriteBandwidth"]
    assert write.filled and "filled" in write.tags and write.key == "ior_write_bandwidth"
    assert write.figures == registry.TESTS["IORWriteBandwidth"].figures
    # A read's dataset is written on the filled target too.
    dataset = filled["FilledIORReadDatasetGeneration"]
    assert dataset.role == FIXTURE and not dataset.filled and not dataset.all_tags


# --------------------------------------------------------------------------- the reference


SECTION = """\
fill:
  allowed: true
  fraction: 0.8
  max_degradation: 0.3
  file_sizes:
    - {size: 1MiB, share: 0.5}
    - {size: 16MiB, share: 0.5}
  churn: {rounds: 2}
"""


def reference_text(section: str = SECTION, dedicated: bool = True) -> str:
    text = (REPO / "reference" / "local.yaml").read_text()
    if dedicated:
        text = text.replace("  max_bandwidth_mib_s: 4096\n",
                            "  max_bandwidth_mib_s: 4096\n  dedicated: true\n", 1)
    return text + section


def load(tmp_path, text: str):
    path = tmp_path / "ref.yaml"
    path.write_text(text)
    return load_reference(path)


def test_a_fill_section_is_read_with_its_defaults(tmp_path):
    ref = load(tmp_path, reference_text())
    mode = ref.fill_settings()
    assert mode.limits == Limits(0.8, 0.3, None, fill.DEFAULT_TOLERANCE)
    assert mode.file_sizes == ((MIB, 0.5), (16 * MIB, 0.5))
    assert (mode.churn_rounds, mode.delete_fraction, mode.node_fraction) == (2, 0.1, 1.0)
    assert ref.target.dedicated
    # The catalogue's defaults the file has entries for.
    assert fill_tests(ref) == [c for c in registry.fill_defaults()
                               if registry.TESTS[c].key in ref.entries]
    listed = load(tmp_path, reference_text(SECTION + "  tests: [MdtestEasy]\n"))
    assert fill_tests(listed) == ["MdtestEasy"]
    assert fill_tests(load(tmp_path, reference_text(""))) == []


def test_a_fill_not_allowed_is_kept_and_refused_when_asked(tmp_path):
    ref = load(tmp_path, reference_text(SECTION.replace("allowed: true", "allowed: false"),
                                        dedicated=False))
    assert ref.fill_mode is not None and not ref.target.dedicated
    with pytest.raises(ReferenceError, match=r"ref.yaml: fill.allowed: false: filling the "
                                             "target is not allowed"):
        ref.fill_settings()
    with pytest.raises(ReferenceError, match="fill: missing"):
        load(tmp_path, reference_text("")).fill_settings()


@pytest.mark.parametrize("section, dedicated, match", [
    (SECTION, False, "fill.allowed: true, but target.dedicated is not true"),
    (SECTION.replace("0.8", "1.5"), True,
     "fill.fraction: 1.5 is above 0.95: fsaccept never fills a file system beyond 95%"),
    (SECTION.replace("0.8", "0.96"), True, "fill.fraction: 0.96 is above 0.95"),
    (SECTION.replace("0.8", "-0.8"), True, "fill.fraction: -0.8 is less than or equal"),
    (SECTION.replace("0.8", ".nan"), True, "fill.fraction: nan is not a finite number"),
    (SECTION.replace("0.8", ".inf"), True, "fill.fraction: inf is not a finite number"),
    (SECTION.replace("0.8", "'0.8'"), True, "fill.fraction: '0.8' is not of type 'number'"),
    (SECTION.replace("max_degradation: 0.3", "max_degradation: 1"), True,
     "fill.max_degradation: 1 is greater than or equal to the maximum of 1"),
    (SECTION.replace("  max_degradation: 0.3\n", ""), True,
     "fill: 'max_degradation' is a required property"),
    (SECTION.replace("allowed: true", "allowed: 'true'"), True,
     "fill.allowed: 'true' is not of type 'boolean'"),
    (SECTION + "  allowed: true\n", True, "duplicate key"),
    (SECTION + "  levle: 0.5\n", True, r"fill: unknown key\(s\) 'levle'"),
    (SECTION + "  tolerance: 0.9\n", True, "fill.tolerance: 0.9 is greater than the maximum"),
    (SECTION.replace("0.8", "0.05") + "  tolerance: 0.05\n", True,
     "fill.tolerance: 0.05 is not below fill.fraction 0.05"),
    (SECTION + "  inode_fraction: 0.01\n  tolerance: 0.02\n", True,
     "fill.tolerance: 0.02 is not below fill.inode_fraction 0.01"),
    (SECTION.replace("share: 0.5}\n  churn", "share: 0.4}\n  churn"), True,
     "fill.file_sizes: the shares sum to 0.9, not 1"),
    (SECTION.replace("16MiB", "1048576"), True,
     r"fill.file_sizes\[1\].size: 1MiB is fill.file_sizes\[0\]'s too"),
    (SECTION.replace("16MiB", "2TiB"), True,
     r"fill.file_sizes\[1\].size: '2TiB' is more than 1TiB"),
    (SECTION.replace("16MiB", "16MB"), True, r"fill.file_sizes\[1\].size: '16MB' is not a "
                                             "binary size"),
    (SECTION.replace("16MiB", "0"), True, r"fill.file_sizes\[1\].size: 0 is less than"),
    (SECTION.replace("rounds: 2", "rounds: -1"), True, "fill.churn.rounds: -1"),
    (SECTION.replace("rounds: 2", "rounds: 2.0"), True,
     "fill.churn.rounds: 2.0 is not a whole number: write 2"),
    (SECTION.replace("rounds: 2", "rounds: 2, delete_fraction: 0.9"), True,
     "fill.churn.delete_fraction: 0.9 is greater than the maximum of 0.5"),
    (SECTION + "  tests: [IORWriteBandwith]\n", True,
     r"fill.tests\[0\]: 'IORWriteBandwith' is no check of the catalogue; those that can: "
     "IORWriteBandwidth, "),
    (SECTION + "  tests: [IORWriteBandwidth, IORDataIntegrity]\n", True,
     r"fill.tests\[1\]: 'IORDataIntegrity' cannot run filled"),
    (SECTION + "  tests: [DegradedMdtestEasy]\n", True,
     r"fill.tests\[0\]: 'DegradedMdtestEasy' cannot run filled"),
    (SECTION + "  tests: [MdWorkbench, MdWorkbench]\n", True, "has non-unique elements"),
    (SECTION + "  tests: []\n", True, r"fill.tests: \[\] should be non-empty"),
    (SECTION + "  deadline_s: 3600\n", True, None),  # the target's rate sizes it
    (SECTION + "  deadline_s: 0\n", True, "fill.deadline_s: 0 is less than the minimum"),
])
def test_a_bad_fill_section_is_refused_naming_the_file_and_key(tmp_path, section, dedicated,
                                                               match):
    text = reference_text(section, dedicated)
    if match is None:
        load(tmp_path, text)
        return
    with pytest.raises(ReferenceError) as err:
        load(tmp_path, text)
    assert str(err.value).startswith(str(tmp_path / "ref.yaml")), err.value
    assert re.search(match, str(err.value)), err.value


def test_a_listed_test_whose_entry_the_file_lacks_is_refused(tmp_path):
    data = yaml.safe_load(reference_text(SECTION + "  tests: [MdtestEasy]\n"))
    del data["tests"]["mdtest_easy"]
    with pytest.raises(ReferenceError, match=r"fill.tests\[0\]: MdtestEasy reads "
                                             "tests.mdtest_easy, which the file has not"):
        load(tmp_path, yaml.safe_dump(data))
    for key in [registry.TESTS[c].key for c in registry.fill_defaults()]:
        data["tests"].pop(key, None)
    data["fill"].pop("tests")
    with pytest.raises(ReferenceError, match="fill.tests: none given, and none of the checks "
                                             "re-run filled by default"):
        load(tmp_path, yaml.safe_dump(data))


def test_a_deadline_needs_a_rate(tmp_path):
    text = reference_text(SECTION + "  deadline_s: 3600\n").replace(
        "  max_bandwidth_mib_s: 4096\n", "", 1)
    with pytest.raises(ReferenceError, match="fill.deadline_s: no rate to size the fill by"):
        load(tmp_path, text)
    load(tmp_path, text + "  bandwidth_mib_s: 500\n")


def test_fill_is_refused_with_several_targets(tmp_path):
    text = (REPO / "reference" / "local-gluster-cephfs.yaml").read_text() + SECTION
    with pytest.raises(ReferenceError, match="fill: not yet possible with targets:"):
        load(tmp_path, text)


def test_fsaccept_reference_exits_2_naming_the_key(tmp_path, capsys):
    from fsaccept import cli
    path = tmp_path / "ref.yaml"
    path.write_text(reference_text(SECTION, dedicated=False))
    assert cli.main(["reference", str(path)]) == 2
    assert "fill.allowed: true, but target.dedicated is not true" in capsys.readouterr().err


# --------------------------------------------------------------------------- the sign-off

#: The run report of ``scripts/acceptance --system local-gluster`` (ACCEPTED), its
#: reference given a ``fill:`` section, and filled re-runs of two of its tests added as
#: the filled checks will record them.
CAPTURE = "local-gluster-accepted"
FILL_SECTION = """\
fill:
  allowed: true
  fraction: 0.8
  max_degradation: 0.3
  file_sizes: [{size: 1MiB, share: 1}]
  tests: [IORWriteBandwidth, MdtestEasy]
"""


@pytest.fixture
def filled_catalogue(monkeypatch):
    """The report's other plots not drawn (their own tests draw them); the catalogue has
    the filled re-runs (``checks/fill``)."""
    from fsaccept.reporting import report as signoff
    for name in ("figure_plot", "check_plot", "per_node_plot"):
        monkeypatch.setattr(signoff, name, lambda *a, **k: b"")
    monkeypatch.setattr("fsaccept.reporting.degraded.timeline_plot", lambda *a, **k: b"")
    assert all(registry.TESTS[t.check] == t for t in registry.filled_tests())


def _cases(data):
    return [c for r in data["runs"] for c in r["testcases"]]


def filled_run(tmp_path, factor: float = 0.8, level: float = 0.8, section: str = FILL_SECTION,
               checks=("IORWriteBandwidth", "MdtestEasy")):
    from tests.conftest import capture_with_reference
    data = capture_with_reference(CAPTURE, tmp_path)
    ref = tmp_path / "reference.yaml"
    text = ref.read_text().replace("  max_bandwidth_mib_s: 1024\n",
                                   "  max_bandwidth_mib_s: 1024\n  dedicated: true\n", 1)
    ref.write_text(text + section)
    sha = hashlib.sha256(ref.read_bytes()).hexdigest()
    for case in _cases(data):
        if case.get("reference_sha256"):
            case["reference_sha256"] = sha
    mode = load_reference(ref).fill_settings()
    cap = 10 * GIB
    before = Df(cap, GIB, cap - GIB, 10**5, 100, 10**5 - 100)
    p = fill.plan(before, mode, ["n1", "n2", "n3", "n4"])
    used = int(level * cap)
    filled_df = Df(cap, used, cap - used, 10**5, 7000, 10**5 - 7000)
    lines = [f"{fill.MARK} df before {before.text()}",
             *(f"{fill.MARK} node {nd.node} bytes={nd.bytes} files={nd.file_count} empty=0 "
               f"rc=0 stop=level" for nd in p.nodes),
             *(f"{fill.MARK} churn {node} round={r.round} files={sum(n for _, n in cls)} "
               f"bytes={sum(size * n for size, n in cls)} rc=0"
               for r in p.churn for node, cls in r.nodes),
             f"{fill.MARK} df filled {filled_df.text()}"]
    ev = fill.Evidence.of(p, fill.parse_output("\n".join(lines)))
    run = data["runs"][0]
    session = data["session_info"]["uuid"]
    record = json.dumps(ev.to_dict())
    target = with_fill_target(data, tmp_path, record, output="\n".join(
        [f"fsaccept-info fill_nodes {','.join(nd.node for nd in p.nodes)}", *lines, ""]))
    for check in checks:
        empty = next(c for c in run["testcases"] if c["name"] == check)
        case = copy.deepcopy(empty)
        name = "Filled" + check
        case.update(name=name, unique_name=name, display_name=name,
                    uuid=f"{session}:0:{len(run['testcases'])}",
                    tags=[*empty["tags"], "filled"], fill_record=record,
                    fill_df=filled_df.text(),
                    dependencies_actual=[*empty.get("dependencies_actual", []),
                                         [target["unique_name"],
                                          f"{target['system']}:{target['partition']}",
                                          target["environ"]]])
        perf = {}
        for key, (value, ref_value, lower, upper, unit, result) in empty["perfvalues"].items():
            if ref_value:  # judged live against its empty figure: at least 70 % of it
                floor = value * (1 - mode.limits.max_degradation)
                perf[key] = [value * factor, floor, 0.0, None, unit,
                             "pass" if value * factor >= floor else "fail"]
            else:
                perf[key] = [value * factor, 0, None, None, unit, "pass"]
        case["perfvalues"] = perf
        if any(v[-1] == "fail" for v in perf.values()):
            case.update(result="fail", fail_phase="performance", fail_reason="below 70 %")
        run["testcases"].append(case)
    n = len(run["testcases"])
    fails = sum(c["result"] == "fail" for c in run["testcases"])
    run.update(num_cases=n, num_failures=fails)
    data["session_info"].update(num_cases=n, num_failures=fails)
    return data


def with_fill_target(data, tmp_path, record: str, kept: str | bytes | None = None,
                     output: str = "") -> dict:
    """The filler's own test case added to the run report (``data``), as FillTarget
    records it (no figure), and the record file it keeps in its output directory below
    the run directory ``tmp_path`` (``kept``: other bytes in it), beside its job's
    ``output`` (``rfm_job.out``); the case."""
    run = data["runs"][0]
    launch = next(c for c in run["testcases"] if c["name"] == "MPILaunchSanity")
    case = copy.deepcopy(launch)
    out, stage = (case[k].replace("MPILaunchSanity", "FillTarget")
                  for k in ("outputdir", "stagedir"))
    case.update(name="FillTarget", unique_name="FillTarget", display_name="FillTarget",
                uuid=f"{data['session_info']['uuid']}:0:{len(run['testcases'])}",
                tags=["preflight", "fill"], fill_record=record, outputdir=out,
                stagedir=stage, fill_plan="fill from 10.00% to 80.00% of 10 GiB",
                fill_reserve_bytes=0, job_nodelist=["n1", "n2", "n3", "n4"])
    run["testcases"].append(case)
    recorded = os.path.dirname(data["session_info"]["prefix_output"])
    kept_dir = tmp_path / os.path.relpath(out, recorded)
    kept_dir.mkdir(parents=True, exist_ok=True)
    kept = record if kept is None else kept
    path = kept_dir / fill.EVIDENCE_FILE
    path.write_bytes(kept if isinstance(kept, bytes) else kept.encode())
    (kept_dir / "rfm_job.out").write_text(output)
    (kept_dir / "rfm_job.err").write_text("")
    return case


def fill_target_file(tmp_path) -> Path:
    """Where :func:`with_fill_target` keeps FillTarget's record file."""
    return next(tmp_path.glob(f"output/**/FillTarget/{fill.EVIDENCE_FILE}"))


def _signoff(data, tmp_path):
    from fsaccept.reporting import report as signoff
    src = tmp_path / "run-report.json"
    src.write_text(json.dumps(data))
    code = signoff.main([str(src), "--out", str(tmp_path / "out")])
    md = (tmp_path / "out" / "report.md").read_text()
    return code, md, (tmp_path / "out" / "report.html").read_text()


def test_the_sign_off_shows_each_figure_filled_against_empty(filled_catalogue, tmp_path):
    code, md, html = _signoff(filled_run(tmp_path), tmp_path)
    assert code == 0 and "**Overall verdict: ACCEPTED**" in md, md[:3000]
    section = md[md.index("## Fill level"):md.index("\n## Tests")]
    assert ("Contract: at 80 % of the capacity, each figure at least 70 % of its empty "
            "figure (a time at most its empty figure / 0.7): **PASS**.") in section
    assert "| blocks | 10.00% (1 GiB of 10 GiB) | 80.00% (8 GiB of 10 GiB) | 80% (at " \
           "least 78%) | PASS |" in section
    assert "| inodes | 0.10% (100 of 100,000) | 7.00% (7,000 of 100,000) | — | — |" \
        in section
    assert ("| FilledIORWriteBandwidth | write_bandwidth | 175.29 MiB/s | 140.23 MiB/s | "
            "80.0% | at least 70% | PASS |") in section
    # mdtest's four judged rates, not its tree rates (no threshold: not the contract's).
    assert section.count("| FilledMdtestEasy |") == 4 and "tree_creation" not in section
    assert "![Fill level: each figure filled against empty](plots/fill-level.png)" in section
    assert (tmp_path / "out" / "plots" / "fill-level.png").read_bytes()[:4] == b"\x89PNG"
    assert '<table id="fill-figures">' in html


def test_a_figure_below_its_floor_is_not_accepted_naming_it(filled_catalogue, tmp_path):
    code, md, _ = _signoff(filled_run(tmp_path, factor=0.5), tmp_path)
    assert code == 1 and "**Overall verdict: NOT ACCEPTED**" in md
    assert ("fill: FilledIORWriteBandwidth: write_bandwidth: 87.645 MiB/s filled, 175.29 "
            "MiB/s empty: 50.0% of its empty figure (at least 122.7 MiB/s: max_degradation "
            "0.3)") in md


def test_a_level_short_of_the_declared_one_makes_the_filled_tests_invalid(filled_catalogue,
                                                                           tmp_path):
    code, md, _ = _signoff(filled_run(tmp_path, level=0.6), tmp_path)
    assert code == 1
    assert ("FilledIORWriteBandwidth: INVALID (its fill record: level: df filled: 60.00% of "
            "the capacity used (6 GiB of 10 GiB), below the declared 80.00% less its "
            "tolerance (78.00%)") in md


def test_a_filled_test_without_its_evidence_is_invalid(filled_catalogue, tmp_path):
    data = filled_run(tmp_path)
    case = next(c for c in _cases(data) if c["name"] == "FilledMdtestEasy")
    del case["fill_df"]
    code, md, _ = _signoff(data, tmp_path)
    assert code == 1
    assert ("FilledMdtestEasy: INVALID (evidence missing: no fill_df, df of the target at "
            "the filled test's start") in md
    case.pop("fill_record")
    code, md, _ = _signoff(data, tmp_path)
    assert ("FilledMdtestEasy: INVALID (evidence missing: no fill_record, which every "
            "filled test records") in md
    # No FillTarget it depended on: nothing to judge its record by.
    case["fill_record"] = next(c for c in _cases(data) if c["name"] == "FillTarget")[
        "fill_record"]
    case["dependencies_actual"] = []
    code, md, _ = _signoff(data, tmp_path)
    assert ("FilledMdtestEasy: INVALID (evidence missing: it depends on no FillTarget the "
            "run report holds, whose kept record (fill-record.json) it is judged by "
            "(dependencies_actual))") in md


def _forged(data, record: str) -> None:
    for case in _cases(data):
        if case["name"].startswith("Fill"):
            case["fill_record"] = record


def test_the_sign_off_judges_the_fill_targets_kept_record(filled_catalogue, tmp_path):
    """What is judged is the file FillTarget kept (fill-record.json), never a run
    report's fill_record: the field forged, the file edited, missing, truncated, binary."""
    # A fill short of its level, the run report's fields forged to a good one.
    (tmp_path / "short").mkdir()
    (tmp_path / "good").mkdir()
    short = filled_run(tmp_path / "short", level=0.6)
    good = filled_run(tmp_path / "good")
    _forged(short, next(c for c in _cases(good) if c["name"] == "FillTarget")["fill_record"])
    code, md, _ = _signoff(short, tmp_path / "short")
    kept = fill_target_file(tmp_path / "short")
    assert code == 1 and "**Overall verdict: NOT ACCEPTED**" in md
    for name in ("FillTarget", "FilledIORWriteBandwidth", "FilledMdtestEasy"):
        assert f"{name}: INVALID (its fill_record is not what {kept} says" in md, name
    assert ("FilledIORWriteBandwidth: INVALID (its fill_record is not what "
            f"{kept} says; its fill record: level: df filled: 60.00% of the capacity used"
            ) in md
    assert ("FillTarget: INVALID (its fill_record is not what "
            f"{kept} says; recorded as passed, but its fill record: level: df filled: "
            "60.00% ") in md
    # The file edited (the fields kept): its fields are not what it says.
    kept = fill_target_file(tmp_path / "good")
    record = json.loads(kept.read_text())
    record["limits"]["max_degradation"] = 0.9
    kept.write_text(json.dumps(record))
    code, md, _ = _signoff(good, tmp_path / "good")
    assert code == 1 and f"FilledMdtestEasy: INVALID (its fill_record is not what {kept} " \
        "says; its fill record was judged with {'fraction': 0.8, 'inode_fraction': None, " \
        "'tolerance': 0.02, 'max_degradation': 0.9}" in md
    # Truncated, binary, empty, missing: evidence that cannot be read.
    text = json.dumps(json.loads(next(c for c in _cases(good)
                                      if c["name"] == "FillTarget")["fill_record"]))
    for kept_bytes, said in ((text[:80].encode(), f"its fill record ({kept}) cannot be read"),
                             (b"\x00\xff" * 40, f"its fill record ({kept}) cannot be read"),
                             (b"", f"evidence missing: {kept} is empty"),
                             (None, f"evidence missing: {kept}")):
        if kept_bytes is None:
            kept.unlink()
        else:
            kept.write_bytes(kept_bytes)
        code, md, _ = _signoff(good, tmp_path / "good")
        assert code == 1
        for name in ("FillTarget", "FilledIORWriteBandwidth", "FilledMdtestEasy"):
            assert f"{name}: INVALID ({said}" in md, (name, said)


def test_the_fill_targets_record_is_not_read_without_the_run_directory(tmp_path):
    from fsaccept.reporting.case import case_of
    from fsaccept.reporting.signoff.common import SessionEvidence
    from fsaccept.reporting.signoff.fill import fill_reasons, fill_target_reasons
    target = case_of({"name": "FillTarget", "unique_name": "FillTarget", "system": "s",
                      "partition": "p", "result": "pass", "fill_record": "{}",
                      "outputdir": str(tmp_path)})
    assert fill_target_reasons(target, None) == [
        "evidence missing: fill-record.json: the run directory was not read"]
    filled = case_of({"name": "FilledMdtestEasy", "fill_record": "{}",
                      "dependencies_actual": [["FillTarget", "s:p", "e"]]})
    session = SessionEvidence(fill_targets={("FillTarget", "s:p"): target})
    assert fill_reasons(filled, None, session) == [
        "evidence missing: fill-record.json: the run directory was not read"]
    # A FillTarget that made no record (it failed first) is judged by its own reasons.
    failed = case_of({"name": "FillTarget", "result": "fail", "fill_record": ""})
    assert fill_target_reasons(failed, None) == []


def test_limits_other_than_the_references_are_a_contradiction(filled_catalogue, tmp_path):
    data = filled_run(tmp_path, section=FILL_SECTION.replace("0.3", "0.25"))
    kept = fill_target_file(tmp_path)
    rec = json.loads(kept.read_text())
    rec["limits"]["max_degradation"] = 0.5
    kept.write_text(json.dumps(rec))
    _forged(data, json.dumps(rec))
    code, md, _ = _signoff(data, tmp_path)
    assert code == 1 and "its fill record was judged with {'fraction': 0.8, " \
        "'inode_fraction': None, 'tolerance': 0.02, 'max_degradation': 0.5}, the reference " \
        "file says {'fraction': 0.8, 'inode_fraction': None, 'tolerance': 0.02, " \
        "'max_degradation': 0.25}" in md
    assert "is not what" not in md


def test_a_test_the_fill_section_lists_that_did_not_run_filled_is_incomplete(
        filled_catalogue, tmp_path):
    code, md, _ = _signoff(filled_run(tmp_path, checks=("IORWriteBandwidth",)), tmp_path)
    assert code == 1 and "**Overall verdict: INCOMPLETE**" in md
    assert "1 acceptance test(s) the reference file defines did not run: FilledMdtestEasy" \
        in md


def test_a_filled_test_without_its_empty_counterpart_cannot_be_judged(filled_catalogue,
                                                                       tmp_path):
    data = filled_run(tmp_path)
    case = next(c for c in _cases(data) if c["name"] == "IORWriteBandwidth")
    case.update(result="fail", fail_phase="sanity", fail_reason="the job refused to run")
    data["runs"][0]["num_failures"] += 1
    data["session_info"]["num_failures"] += 1
    for v in case["perfvalues"].values():
        v[0] = None
    code, md, _ = _signoff(data, tmp_path)
    assert code == 1
    assert "fill: FilledIORWriteBandwidth: write_bandwidth: no empty figure (the empty test " \
           "IORWriteBandwidth is ERROR)" in md


def test_a_session_without_filled_tests_has_no_section(filled_catalogue, tmp_path):
    from tests.conftest import capture_with_reference
    code, md, _ = _signoff(capture_with_reference(CAPTURE, tmp_path), tmp_path)
    assert code == 0 and "## Fill level" not in md


def test_the_section_and_its_plot_from_the_tests():
    from fsaccept.reporting import fill as section
    sec = section.FillSection()
    assert not sec and section.plot(sec) is None
    ev = record()
    sec = section.FillSection(ev, [fill.judge_level(ev), fill.judge_filler(ev)],
                              limits=ev.limits)
    assert sec and sec.verdict == PASS
    assert sec.filler_text() == ("70 GiB of irreducible filler written by 2 node(s) "
                                 f"({fill.human(ev.planned_bytes)} planned); df saw 70 GiB "
                                 "more used (1 x written); 2 of 2 round(s) of ageing, 12 GiB "
                                 "written again")
    assert [(r["judgement"], r["measured"], r["limit"], r["verdict"]) for r in sec.rows()] == [
        ("level", "80.00%", "at least 78.00%", PASS),
        ("filler", "70 GiB", f"{fill.human(ev.planned_bytes)} planned", PASS)]
    assert section.plot(sec)[:4] == b"\x89PNG"


# --------------------------------------------------------------------------- FillTarget's record
# rebuilt from its job's own output (issue 49, class 4): each edit below was ACCEPTED.


def _output_edited(tmp_path, edit) -> tuple[int, str]:
    """The sign-off of the fill session, FillTarget's rfm_job.out edited by ``edit`` (its
    kept record and the run report left as they were)."""
    data = filled_run(tmp_path)
    out = next(tmp_path.glob("output/**/FillTarget/rfm_job.out"))
    out.write_text(edit(out.read_text()))
    code, md, _ = _signoff(data, tmp_path)
    return code, md


def test_fill_targets_own_output_saying_50_percent_is_invalid(filled_catalogue, tmp_path):
    cap = 10 * GIB
    code, md = _output_edited(tmp_path, lambda text: re.sub(
        r"(df filled size=\d+ used=)\d+ avail=\d+",
        f"\\g<1>{cap // 2} avail={cap - cap // 2}", text))
    assert code == 1 and "**Overall verdict: NOT ACCEPTED**" in md
    assert "FillTarget: INVALID (its output (" in md and "level: df filled: 50.00% of the " \
        "capacity used" in md, md[md.index("not accepted"):][:1500]


def test_a_filler_node_with_rc_1_is_invalid(filled_catalogue, tmp_path):
    code, md = _output_edited(tmp_path, lambda text: text.replace(
        "empty=0 rc=0 stop=level", "empty=0 rc=1 stop=error", 1))
    assert code == 1 and "**Overall verdict: NOT ACCEPTED**" in md
    assert "its filler ended with exit 1 (stop=error)" in md and ".rc is 0, its files " \
        "give 1" in md, \
        md[-3000:]
