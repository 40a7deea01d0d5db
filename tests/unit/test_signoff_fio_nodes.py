"""The sign-off judges each fio node again from the files it kept (``fio-<node>.json``,
``fio-<node>.log``, its exit status in ``rfm_job.out``), by the function the live check
judges it with (``fsaccept.benchmarks.fio.figures.judge_node``): a test recorded as
passed whose node fio exited 1, could not make its directory, left no report, a report
that is not fio's, or a log with an error, is INVALID, worded as the live check words it
and naming the node.  So is a node that did not report.

The run directory is ``test_manifest``'s: the real ``local-spack-accepted`` run report
(every test recorded as passed) with each test's output beside it, the fio tests' node
reports real captures (``tests/data/fio``).  Each test spoils one file the way a failed
node (or a hostile reviewer) leaves it."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from fsaccept.benchmarks.fio import command as fio_command
from fsaccept.core import joboutput
from fsaccept.rfm.benchmark import BenchmarkTest
from fsaccept.rfm.fio import FioTest
from fsaccept.suite.reference import load_reference
from tests.unit.test_manifest import DATA, _case, _outdir, _signoff, run  # noqa: F401

#: A fio test of 4 nodes, each node's report a real capture of its own.
TEST = "FioRandomReadDirect"


class _Live:
    """FioTest's results, on the files the sign-off reads (no ReFrame session): what the
    live check would have said of them."""

    fio_results = FioTest.fio_results
    _placement_reasons = FioTest._placement_reasons
    _parse_node = FioTest._parse_node
    _read_stage = FioTest._read_stage
    figure_kinds = FioTest.figure_kinds
    specs = FioTest.specs
    job_info = BenchmarkTest.job_info

    def __init__(self, run: Path, name: str):  # noqa: F811
        case = _case(json.loads((run / "run-report.json").read_text()), name)
        ref = run.parent.parent / "reference" / "local-spack.yaml"
        entry = load_reference(str(ref), ref.read_bytes()).entries[case["reference_key"]]
        self.params = fio_command.parameters(case["reference_key"], case["kind"], entry)
        self.stagedir = str(_outdir(run, name))
        self.num_tasks, self.target_dir = case["num_tasks"], case["target_dir"]
        self.outlier_fraction = self.params.outlier_fraction
        self.current_partition = SimpleNamespace(
            launcher_type=SimpleNamespace(registered_name="local"))
        self.node_memory_bytes, self.version_note, self.fio_settings = 0, "", ""

    def _stdout_text(self) -> str:
        return joboutput.counted_stdout(
            joboutput.decoded((Path(self.stagedir) / "rfm_job.out").read_bytes()))


def _exit(run: Path, node: str, status: str, name: str = TEST) -> None:  # noqa: F811
    """The node's exit status in the job's output, as its node script prints it."""
    out = _outdir(run, name) / "rfm_job.out"
    line = f"{fio_command.NODE_MARKER} {node} exit 0\n"
    assert line in out.read_text()
    out.write_text(out.read_text().replace(line, f"{fio_command.NODE_MARKER} {node} exit "
                                                 f"{status}\n"))


def _verdict(md: str, name: str = TEST) -> str:
    [line] = [ln for ln in md.splitlines() if ln.startswith(f"- {name}: ")]
    return line


def _invalid_as_live(run: Path, capsys, name: str = TEST) -> str:  # noqa: F811
    """The sign-off's verdict line of ``name``: INVALID for the reasons the live check
    gives of the same files, and nothing else; the report NOT ACCEPTED."""
    live = _Live(run, name).fio_results().reasons
    assert live, "the live check finds nothing wrong"
    code, md, _ = _signoff(run, capsys)
    assert code == 1 and "**Overall verdict: NOT ACCEPTED**" in md
    assert _verdict(md, name) == f"- {name}: INVALID ({'; '.join(live)})", md[:3000]
    return "; ".join(live)


def test_a_run_whose_files_agree_with_it_gains_no_reason(run, capsys):  # noqa: F811
    """Every node exited 0 with its report: the live check finds nothing, nor does the
    sign-off (the buffered read's cache notes are notes, not reasons)."""
    for name in ("FioRandomReadDirect", "FioRandomReadBuffered", "FioFsync", "FioMetadata"):
        assert _Live(run, name).fio_results().reasons == []
    code, md, _ = _signoff(run, capsys)
    assert code == 0 and "**Overall verdict: ACCEPTED**" in md, md[:2000]
    assert f"- {TEST}: " not in md


def test_a_pass_whose_node_fio_exited_1_is_invalid_naming_the_node(run, capsys):  # noqa: F811
    """The case says pass, its figures are those its four reports give, but n2's fio
    exited with status 1."""
    _exit(run, "n2", "1")
    assert _invalid_as_live(run, capsys) == "n2: fio exited with status 1"


def test_a_node_that_could_not_make_its_directory_is_invalid(run, capsys):  # noqa: F811
    """mkdir failed: the node script ended before fio, which left no report and no log."""
    _exit(run, "n3", "mkdir-failed")
    for suffix in ("json", "log"):
        (_outdir(run, TEST) / f"fio-n3.{suffix}").unlink()
    target = _case(json.loads((run / "run-report.json").read_text()), TEST)["target_dir"]
    said = _invalid_as_live(run, capsys)
    assert said.split("; ") == [
        "n3: fio-n3.json missing: fio wrote no report",
        f"n3: could not create {target}/n3",
        "n3: fio version not found in its output: cannot certify the figure"]


def test_a_node_that_wrote_no_report_is_invalid_with_fio_s_messages(run, capsys):  # noqa: F811
    """fio refused its directory (a real capture's log) and wrote no report: exit 1."""
    _exit(run, "n2", "1")
    out = _outdir(run, TEST)
    (out / "fio-n2.json").unlink()
    (out / "fio-n2.log").write_text((DATA / "fio" / "missing-dir.log").read_text())
    said = _invalid_as_live(run, capsys)
    assert "n2: fio-n2.json missing: fio wrote no report" in said
    assert "n2: fio said: fio: /var/tmp/fsaccept-missing-dir is not a directory" in said
    assert "n2: fio exited with status 1" in said


def test_a_node_log_removed_after_an_exit_of_0_is_evidence_missing(run, capsys):  # noqa: F811
    out = _outdir(run, TEST) / "fio-n2.log"
    out.unlink()
    code, md, _ = _signoff(run, capsys)
    assert code == 1 and _verdict(md) == f"- {TEST}: INVALID (evidence missing: {out})"


def _killed(_: str) -> str:
    return (DATA / "fio" / "killed.json").read_text()  # SIGKILL: 0 bytes


SPOILED = {
    "not JSON (fio's own words without a report)": (
        lambda text: (DATA / "fio" / "missing-dir.txt").read_text(),
        "n2: no JSON report in the output"),
    "truncated": (lambda text: text[:len(text) // 2], "n2: truncated JSON report at line "),
    "empty (fio killed)": (_killed, "n2: empty output: fio wrote no report"),
    "JSON, not fio's": (lambda text: '{"jobs": "none"}\n',
                        "n2: fio-n2.json: jobs: missing or not a list"),
}


@pytest.mark.parametrize("what", sorted(SPOILED))
def test_a_node_report_that_is_not_a_whole_fio_report_is_invalid(run, capsys, what):  # noqa: F811
    spoil, said = SPOILED[what]
    report = _outdir(run, TEST) / "fio-n2.json"
    report.write_text(spoil(report.read_text()))
    assert said in _invalid_as_live(run, capsys)


def test_a_binary_node_report_is_invalid(run, capsys):  # noqa: F811
    (_outdir(run, TEST) / "fio-n2.json").write_bytes(bytes(range(256)) * 64)
    assert "n2: no JSON report in the output" in _invalid_as_live(run, capsys)


def test_a_huge_node_report_is_refused_unread(run, capsys):  # noqa: F811
    """Beyond what the sign-off reads of a file (1 GiB, sparse here): refused by its
    size, never read."""
    report = _outdir(run, TEST) / "fio-n2.json"
    with open(report, "r+b") as fh:
        fh.truncate((1 << 30) + 1)
    code, md, _ = _signoff(run, capsys)
    assert code == 1
    assert _verdict(md).startswith(f"- {TEST}: INVALID (evidence missing: {report}: "
                                   "1,073,741,825 bytes, more than the 1,073,741,824 read as "
                                   "a node's fio report: refused"), md[:2000]


def test_a_node_log_with_an_error_is_invalid(run, capsys):  # noqa: F811
    """A whole report, exit 0, but fio said it ran out of space (a real capture's log)."""
    (_outdir(run, TEST) / "fio-n4.log").write_text((DATA / "fio" / "enospc.log").read_text())
    said = _invalid_as_live(run, capsys)
    assert said.startswith("n4: fio said: fio: io_u error on file "), said
    assert "No space left on device" in said


def test_the_same_error_on_every_node_is_said_once(run, capsys):  # noqa: F811
    for node in ("n1", "n2", "n3", "n4"):
        _exit(run, node, "1")
    assert _invalid_as_live(run, capsys) == \
        "all 4 nodes: n1: fio exited with status 1 (and 3 more like it)"


def test_a_node_that_did_not_report_is_invalid(run, capsys):  # noqa: F811
    """n4 never printed its exit status (the node failed): its report is not read, and
    the figures are recorded for four nodes."""
    out = _outdir(run, TEST) / "rfm_job.out"
    out.write_text(out.read_text().replace(f"{fio_command.NODE_MARKER} n4 exit 0\n", ""))
    live = _Live(run, TEST).fio_results().reasons
    assert live == ["fio reported from 3 node(s) (n1,n2,n3), 4 were planned: a node did "
                    "not run it"]
    code, md, _ = _signoff(run, capsys)
    assert code == 1
    assert _verdict(md).startswith(f"- {TEST}: INVALID ({live[0]}; "), md[:2000]


def test_fewer_tasks_recorded_than_the_job_had_nodes_is_invalid(run, capsys):  # noqa: F811
    """n4 did not report, and num_tasks was edited to the three that did: the job had
    four nodes, one fio each."""
    out = _outdir(run, TEST) / "rfm_job.out"
    out.write_text(out.read_text().replace(f"{fio_command.NODE_MARKER} n4 exit 0\n", ""))
    path = run / "run-report.json"
    data = json.loads(path.read_text())
    _case(data, TEST)["num_tasks"] = 3
    path.write_text(json.dumps(data))
    code, md, _ = _signoff(run, capsys)
    assert code == 1
    assert ("num_tasks is recorded as 3, but the job had 4 node(s) (n1,n2,n3,n4): fio runs "
            "once per node") in _verdict(md), md[:2000]
