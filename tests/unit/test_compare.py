"""``fsaccept compare RUN_A RUN_B`` (fsaccept/reporting/compare.py) on real captured run
reports (tests/data/reframe/), edited where a test needs another run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fsaccept.reporting import compare
from tests.conftest import REPO

CAPTURES = REPO / "tests" / "data" / "reframe"


def run_dir(tmp_path: Path, name: str, capture: str = "ior-repeat", edit=None) -> Path:
    """A run directory holding a copy of ``capture``'s run report, changed by
    ``edit(testcase)`` for each test case."""
    data = json.loads((CAPTURES / f"{capture}.json").read_text())
    for tc in data["runs"][-1]["testcases"]:
        if edit is not None:
            edit(tc)
    d = tmp_path / name
    d.mkdir()
    (d / compare.RUN_REPORT).write_text(json.dumps(data))
    return d


def scaled(factor: float):
    def edit(tc):
        for values in (tc.get("perfvalues") or {}).values():
            values[0] *= factor
    return edit


def main(*args: str) -> tuple[int, str, str]:
    proc = subprocess.run([sys.executable, "-m", "fsaccept", "compare", *args],
                          capture_output=True, text=True, cwd=REPO, timeout=300)
    return proc.returncode, proc.stdout, proc.stderr


def test_a_run_against_itself_is_equal_and_not_significant(tmp_path):
    a = run_dir(tmp_path, "a")
    code, out, err = main(str(a), str(a), "--out", str(tmp_path / "out"))
    assert code == 0, err
    assert ("IORRandomWriteIOPS write_iops: 1.00 ± 0.65 × (95 % CI 0.61 … 1.65: equal; "
            "not significant)") in out
    # No manifest beside the captures: said, on each side.
    assert "A: " in out and "manifest: not verified: no manifest" in out
    assert "unverified: A: its figures are as its run report and outputs give them" in out
    for name in (compare.MARKDOWN, compare.HTML, f"plots/{compare.FOREST_PLOT}"):
        assert (tmp_path / "out" / name).is_file()
    md = (tmp_path / "out" / compare.MARKDOWN).read_text()
    assert "39,500 ± 9,120 IOPS (n = 3, range 33,500 … 50,000" in md
    assert "![Forest plot: each figure of B over A](plots/forest-plot.png)" in md


def test_a_slower_b_is_significant_and_the_gate_exits_1(tmp_path):
    """Each repetition of B at half A's: the same spread on a log scale, the ratio 0.5,
    its interval far from 1."""
    a, b = run_dir(tmp_path, "a"), run_dir(tmp_path, "b", edit=scaled(0.5))
    code, out, _ = main(str(a), str(b), "--out", str(tmp_path / "out"))
    assert code == 0
    line = next(x for x in out.splitlines() if x.startswith("IORRandomWriteIOPS write_iops"))
    assert line.startswith("IORRandomWriteIOPS write_iops: 0.50 ± ")
    assert line.endswith("B is lower; significant): B is worse"), line
    code, out, _ = main(str(a), str(b), "--out", str(tmp_path / "out"), "--min-ratio", "0.9")
    assert code == 1
    assert ("compare: --min-ratio 0.9: 1 significant ratios worse than it: "
            "IORRandomWriteIOPS write_iops") in out
    # Within the factor: no alarm.
    assert main(str(a), str(b), "--out", str(tmp_path / "out"), "--min-ratio", "0.4")[0] == 0
    # B faster is better, never an alarm.
    assert main(str(b), str(a), "--out", str(tmp_path / "out"), "--min-ratio", "0.9")[0] == 0


def test_other_transfer_sizes_are_not_comparable_naming_them(tmp_path):
    def other_size(tc):
        opts = tc.get("executable_opts") or []
        if "-t" in opts:
            opts[opts.index("-t") + 1] = "8k"
    a, b = run_dir(tmp_path, "a"), run_dir(tmp_path, "b", edit=other_size)
    code, out, _ = main(str(a), str(b), "--out", str(tmp_path / "out"), "--min-ratio", "0.9")
    assert code == 0
    assert ("IORRandomWriteIOPS write_iops: not comparable: its configuration differs: "
            "-t 4k in A, -t 8k in B") in out
    assert "1 pairs not comparable" in out


def test_other_nodes_and_buffered_io_are_named(tmp_path):
    def lighter(tc):
        tc["num_nodes"], tc["direct_io"] = 2, False
    a, b = run_dir(tmp_path, "a"), run_dir(tmp_path, "b", edit=lighter)
    _, out, _ = main(str(a), str(b), "--out", str(tmp_path / "out"))
    assert ("its configuration differs: nodes 1 in A, nodes 2 in B; I/O direct in A, I/O "
            "buffered in B") in out


def test_a_test_that_did_not_measure_is_not_compared(tmp_path):
    def invalid(tc):
        if tc["name"].startswith("IORRandomWriteIOPS"):
            tc["result"], tc["fail_phase"] = "fail", "sanity"
            tc["fail_reason"] = "INVALID: the dataset ran out before the deadline"
    a, b = run_dir(tmp_path, "a"), run_dir(tmp_path, "b", edit=invalid)
    _, out, _ = main(str(a), str(b), "--out", str(tmp_path / "out"))
    assert "IORRandomWriteIOPS write_iops: not comparable: INVALID in B" in out


def test_tests_in_one_run_only_are_named(tmp_path):
    a, b = run_dir(tmp_path, "a", "ior-pass"), run_dir(tmp_path, "b")
    _, out, _ = main(str(a), str(b), "--out", str(tmp_path / "out"))
    assert "IORWriteBandwidth: in A only" in out
    assert ("IORRandomWriteIOPS write_iops: 1.25 × (no interval can be given: one "
            "repetition on side A)") in out


@pytest.mark.parametrize("args, said", [
    (["missing-a", "missing-b"], "missing-a: no run report"),
    (["RUN", "RUN", "--min-ratio", "1.5"], "--min-ratio 1.5: a factor above 0, at most 1"),
    (["RUN", "RUN", "--min-ratio", "nan"], "--min-ratio nan"),
    (["RUN", "BAD"], "B ("),
])
def test_bad_input_exits_2_naming_it(tmp_path, args, said):
    good = run_dir(tmp_path, "good")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / compare.RUN_REPORT).write_text('{"runs": [')
    args = [str(good) if x == "RUN" else str(bad) if x == "BAD" else str(tmp_path / x)
            if x.startswith("missing") else x for x in args]
    code, out, err = main(*args, "--out", str(tmp_path / "out"))
    assert code == 2 and said in err and err.startswith("fsaccept compare: error: "), err
    assert not (tmp_path / "out").exists()


def test_help_runs_nothing(tmp_path):
    code, out, _ = main("--help")
    assert code == 0 and out.startswith("usage: fsaccept compare")


def test_an_out_that_is_a_file_exits_2_naming_it(tmp_path):
    a = run_dir(tmp_path, "a")
    (tmp_path / "out").write_text("not a directory")
    code, _, err = main(str(a), str(a), "--out", str(tmp_path / "out"))
    assert code == 2 and "cannot write" in err and str(tmp_path / "out") in err, err
    assert (tmp_path / "out").read_text() == "not a directory"
