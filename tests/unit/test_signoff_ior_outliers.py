"""The sign-off counts IOR's slow clients again from the job's own output: IOR's per-rank
counts until the stonewall and the job's rank lines (``fsaccept-rank RANK NODE``), both in
``rfm_job.out``, by the function the live check counts them with
(``fsaccept.benchmarks.ior.figures.node_figures``), with the ``outlier_fraction`` of the
verified reference's entry.  A run report whose ``outlier_nodes`` was edited, whose
recorded fraction is not the entry's, or whose output cannot tell the nodes apart, is
never ACCEPTED.

The run directory is ``test_manifest``'s: the real ``local-spack-accepted`` run report
with each test's output beside it.  IORWriteBandwidth's output is a real wear-out run of
8 ranks on 4 nodes (``tests/data/ior/srun-write-8ranks-4nodes``: its rank lines, as the
job prints them first, then IOR's output), and its entry seeks slow clients.  Per node
until the stonewall (2.05 s): n1 1040, n2 1028, n3 1039, n4 1024 transfers of 1 MiB; the
median is 1033.5.  At 0.5 of the median no node is an outlier; at 0.992 n4 is (1024 <
1025.2), and n2 is not."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
import yaml
from reframe.core.exceptions import SanityError

from fsaccept.benchmarks import registry
from fsaccept.benchmarks.ior.parse import parse_ior
from fsaccept.core import joboutput
from fsaccept.core.pernode import OUTLIER_FIGURE
from fsaccept.rfm.ior import IORTest
from tests.unit.test_manifest import (DATA, _case, _outdir, _signoff, job_lines,  # noqa: F401
                                      run)

TEST = "IORWriteBandwidth"
KEY = "ior_write_bandwidth"
CAPTURE = "srun-write-8ranks-4nodes"
#: The job's output: where every rank ran (each task prints its line before IOR starts),
#: then IOR's.
OUTPUT = ((DATA / "ior" / f"{CAPTURE}.ranks").read_text()
          + (DATA / "ior" / f"{CAPTURE}.txt").read_text())
#: n4 alone is below this fraction of the median node.
ONE_SLOW = 0.992
#: The sign-off's reason when n4, the slow client the output names at ONE_SLOW, is not
#: the one the run report names (class 10: the report shows the output's).
N4_UNNAMED = ("; outlier_nodes_named is recorded as '', but its output (rfm_job.out) gives "
              "'n4 (write_bandwidth 499.51 MiB/s, 0.99 x the median 504.15 MiB/s)'")


class _Live:
    """IORTest's per-node figures and outlier count, on an output (no ReFrame session):
    what the live check would have recorded."""

    node_figures = IORTest.node_figures
    outlier_count = IORTest.outlier_count
    record_rank_map = IORTest.record_rank_map
    figure_name = IORTest.figure_name
    unit = IORTest.unit

    def __init__(self, output: str, fraction: float):
        self.output, self.outlier_fraction = output, fraction
        self.operation, self.figure_kind = "write", "bandwidth"

    def _stdout_text(self) -> str:
        return joboutput.counted_stdout(self.output)

    def ior_run(self):
        return parse_ior(self._stdout_text())


def _rebuilt(output: str, fraction: float) -> dict[str, float]:
    """The figures the sign-off rebuilds from ``output`` for the test's entry."""
    entry = {"outlier_fraction": fraction}
    given, names = registry.BENCHMARKS["ior"].output_figures(output, registry.TESTS[TEST],
                                                              entry)
    assert OUTLIER_FIGURE in names
    return given


def _entry(run: Path, **fields) -> None:  # noqa: F811
    """The test's entry in the reference file updated, every case's digest of it
    renewed."""
    ref = run.parent.parent / "reference" / "local-spack.yaml"
    spec = yaml.safe_load(ref.read_text())
    spec["tests"][KEY].update(fields)
    ref.write_text(yaml.safe_dump(spec))
    sha = hashlib.sha256(ref.read_bytes()).hexdigest()
    path = run / "run-report.json"
    data = json.loads(path.read_text())
    for tc in (c for r in data["runs"] for c in r["testcases"]):
        if tc.get("reference_sha256"):
            tc["reference_sha256"] = sha
    path.write_text(json.dumps(data))


def _record(run: Path, fraction: float, recorded: float | None = None,  # noqa: F811
            edit=lambda tc: None) -> dict:
    """The test's entry made to seek slow clients at ``fraction`` (2 ranks per node, as
    the capture ran); the test's output the capture, and its record what the live check
    records of it (``recorded``: the outlier_fraction it ran with, the entry's unless
    said), its verdict that of its figures; then ``edit``, the run's counts made to
    agree with its result.  The record as written."""
    _entry(run, outlier_fraction=fraction, ranks_per_node=2)
    path = run / "run-report.json"
    data = json.loads(path.read_text())
    tc = _case(data, TEST)
    # The job's own lines around it (its mount check, fstype, servers), as recorded;
    # where its ranks ran, the capture's.
    before, after = job_lines({**tc, "rank_map": ""})
    (_outdir(run, TEST) / "rfm_job.out").write_text(before + OUTPUT + after)
    live = _Live(OUTPUT, fraction if recorded is None else recorded)
    count = live.outlier_count()
    given = _rebuilt(OUTPUT, live.outlier_fraction)
    for key, values in tc["perfvalues"].items():
        values[0] = given[key.rsplit(":", 1)[-1]]
    tc["perfvalues"][f"local-spack:compute:{OUTLIER_FIGURE}"] = [
        count, 0, None, 0, "nodes", "fail" if count else "pass"]
    tc.update(outlier_fraction=live.outlier_fraction, rank_map=live.rank_map,
              per_node_figures=live.per_node_figures, slowest_nodes=live.slowest_nodes,
              outlier_nodes_named=live.outlier_nodes_named, num_tasks=8, ranks_per_node=2,
              num_tasks_per_node=2)
    if count:
        tc.update(result="fail", fail_phase="performance",
                  fail_reason=f"performance error: failed to meet reference(s): "
                              f"{OUTLIER_FIGURE}={count} nodes, expected 0 (l=-inf, u=0)")
    edit(tc)
    if tc["result"] == "fail":
        for where in (data["runs"][0], data["session_info"]):
            where["num_failures"] += 1
    path.write_text(json.dumps(data))
    return tc


def _verdict(md: str) -> str:
    [line] = [ln for ln in md.splitlines() if ln.startswith(f"- {TEST}: ")]
    return line


def _not_accepted(run: Path, capsys) -> str:  # noqa: F811
    """The sign-off's verdict line of the test, the report NOT ACCEPTED."""
    code, md, _ = _signoff(run, capsys)
    assert code == 1 and "**Overall verdict: NOT ACCEPTED**" in md, md[:2000]
    return _verdict(md)


def _output(run: Path) -> str:  # noqa: F811
    return f"ior output ({_outdir(run, TEST) / 'rfm_job.out'})"


def _passed(tc: dict) -> None:
    """The case made to say it passed: no outlier, no failure."""
    tc["perfvalues"][f"local-spack:compute:{OUTLIER_FIGURE}"][0] = 0
    tc["perfvalues"][f"local-spack:compute:{OUTLIER_FIGURE}"][5] = "pass"
    tc.update(result="pass", fail_phase=None, fail_reason=None, outlier_nodes_named="")


@pytest.mark.parametrize("fraction, slow", [(0.5, []), (ONE_SLOW, ["n4"]),
                                            (0.995, ["n2", "n4"])])
def test_the_live_check_and_the_signoff_count_the_same_slow_clients(fraction, slow):
    live = _Live(OUTPUT, fraction)
    assert live.outlier_count() == len(slow) == _rebuilt(OUTPUT, fraction)[OUTLIER_FIGURE]
    assert [part.split(" ")[0] for part in live.outlier_nodes_named.split("; ") if part] \
        == slow
    assert live.rank_map == "n1:0-1,n2:2-3,n3:4-5,n4:6-7"


def test_a_run_without_slow_clients_is_accepted(run, capsys):  # noqa: F811
    tc = _record(run, 0.5)
    assert tc["perfvalues"][f"local-spack:compute:{OUTLIER_FIGURE}"][0] == 0
    code, md, _ = _signoff(run, capsys)
    assert code == 0 and "**Overall verdict: ACCEPTED**" in md, md[:2000]


def test_a_run_with_a_slow_client_stays_failed(run, capsys):  # noqa: F811
    """The record agrees with its output: FAIL, for the slow client, and nothing else."""
    _record(run, ONE_SLOW)
    assert _not_accepted(run, capsys) == (
        f"- {TEST}: FAIL ({OUTLIER_FIGURE} 1 nodes above the limit 0 nodes)")


def test_a_slow_client_edited_away_is_invalid_naming_the_output(run, capsys):  # noqa: F811
    """outlier_nodes edited from 1 to 0 and the case made to pass."""
    _record(run, ONE_SLOW, edit=_passed)
    assert _not_accepted(run, capsys) == (
        f"- {TEST}: INVALID ({OUTLIER_FIGURE} is recorded as 0, but its {_output(run)} "
        f"gives 1{N4_UNNAMED})")


def test_a_run_judged_with_a_looser_fraction_than_the_reference_is_invalid(run, capsys):  # noqa: F811
    """Run (or recorded) at 0.5, where n4 is no outlier; the reference says 0.992."""
    _record(run, ONE_SLOW, recorded=0.5)
    assert _not_accepted(run, capsys) == (
        f"- {TEST}: INVALID (outlier_fraction is recorded as 0.5, but the reference file's "
        f"tests.{KEY} says {ONE_SLOW}; {OUTLIER_FIGURE} is recorded as 0, but its "
        f"{_output(run)} gives 1{N4_UNNAMED})")


@pytest.mark.parametrize("recorded", ["0.992", None, True, float("nan")])
def test_an_outlier_fraction_that_is_not_a_number_is_invalid(run, capsys, recorded):  # noqa: F811
    _record(run, 0.5, edit=lambda tc: tc.update(outlier_fraction=recorded))
    assert _not_accepted(run, capsys).startswith(f"- {TEST}: INVALID (outlier_fraction ")


@pytest.mark.parametrize("alone", [False, True], ids=["with its run", "read alone"])
def test_a_slow_client_count_dropped_from_the_run_report_is_invalid(run, capsys, alone):  # noqa: F811
    """Seen from the record and the reference alone: also in a run report read without
    its run directory."""
    def dropped(tc):
        _passed(tc)
        del tc["perfvalues"][f"local-spack:compute:{OUTLIER_FIGURE}"]
    _record(run, ONE_SLOW, edit=dropped)
    if alone:
        for kept in ("output", "stage"):
            shutil.rmtree(run / kept)
    assert _not_accepted(run, capsys) == (
        f"- {TEST}: INVALID ({OUTLIER_FIGURE}: tests.{KEY} seeks slow clients "
        f"(outlier_fraction {ONE_SLOW}), but the run report records no such figure"
        f"{'' if alone else N4_UNNAMED})")


@pytest.mark.parametrize("threshold, shown", [((1, None, 0), "≤ 1"),
                                              ((0, None, None), "no limit"),
                                              ((None, None, None), "no limit")])
def test_a_slow_client_passed_by_a_looser_limit_is_invalid(run, capsys, threshold, shown):  # noqa: F811
    """The count is right (1), its limit edited so that it passes."""
    def loosened(tc):
        values = tc["perfvalues"][f"local-spack:compute:{OUTLIER_FIGURE}"]
        values[1:4], values[5] = threshold, "pass"
        tc.update(result="pass", fail_phase=None, fail_reason=None)
    _record(run, ONE_SLOW, edit=loosened)
    assert _not_accepted(run, capsys) == (
        f"- {TEST}: INVALID ({OUTLIER_FIGURE}: tests.{KEY} seeks slow clients "
        f"(outlier_fraction {ONE_SLOW}): its limit is 0, but the test was judged against "
        f"{shown})")


def _without(pattern: str):
    return lambda text: "".join(ln for ln in text.splitlines(keepends=True)
                                if pattern not in ln)


#: The output spoiled: what the nodes cannot be told apart without.
SPOILED = {
    "no per-rank counts": _without(": stonewalling pairs accessed: "),
    "rank 7's count missing": _without("7: stonewalling pairs accessed: "),
    "no rank lines": _without(joboutput.RANK_MARKER + " "),
    "rank 3's line missing": _without(joboutput.RANK_MARKER + " 3 "),
    # Ends after the summary: ranks 1-3 had not flushed their counts yet.
    "cut short": lambda text: text[:text.index("Finished ")],
}


@pytest.mark.parametrize("what", sorted(SPOILED))
def test_an_output_that_cannot_tell_the_nodes_apart_gives_no_count(run, capsys, what):  # noqa: F811
    """The live check would have been INVALID (no count); the run report says 0."""
    spoiled = SPOILED[what](OUTPUT)
    with pytest.raises(SanityError, match="IOR printed no per-rank counts"):
        _Live(spoiled, 0.5).outlier_count()
    assert OUTLIER_FIGURE not in _rebuilt(spoiled, 0.5)
    _record(run, 0.5)
    (_outdir(run, TEST) / "rfm_job.out").write_text(spoiled)
    assert f"{OUTLIER_FIGURE} is recorded as 0, but its {_output(run)} gives none" \
        in _not_accepted(run, capsys)


def test_without_slow_client_detection_a_recorded_count_is_not_the_output_s(run, capsys):  # noqa: F811
    """The entry seeks none (0): the live check reports no count, so a recorded one is
    not what the output gives."""
    _record(run, 0.5)
    _entry(run, outlier_fraction=0)
    assert _not_accepted(run, capsys) == (
        f"- {TEST}: INVALID (outlier_fraction is recorded as 0.5, but the reference file's "
        f"tests.{KEY} says 0.0; {OUTLIER_FIGURE} is recorded as 0, but its {_output(run)} "
        "gives none)")


def test_per_node_figures_or_slowest_nodes_edited_are_invalid_showing_the_output_s(run, capsys):  # noqa: F811
    """Class 10: the report would show the recorded per-node figures and slowest nodes;
    n4 made as fast as n1, and n2 named the slowest, point the reader away from n4.  The
    sign-off rebuilds both from the output and names what it gives."""
    def away_from_n4(tc):
        tc["per_node_figures"]["write_bandwidth"]["n4"] = \
            tc["per_node_figures"]["write_bandwidth"]["n1"]
        tc["slowest_nodes"] = "n2 " + tc["slowest_nodes"].split(", ")[1].split(" ", 1)[1]
    tc = _record(run, 0.5, edit=away_from_n4)
    line = _not_accepted(run, capsys)
    live = _Live(OUTPUT, 0.5)
    live.outlier_count()
    assert line.startswith(f"- {TEST}: INVALID (per_node_figures is recorded as "), line
    assert f", but its output (rfm_job.out) gives {str(live.per_node_figures)[:200]!r}" in line
    assert (f"slowest_nodes is recorded as {tc['slowest_nodes']!r}, but its output "
            f"(rfm_job.out) gives {live.slowest_nodes!r})") in line, line
    assert live.slowest_nodes.startswith("n4 ")
