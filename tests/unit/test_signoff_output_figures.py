"""The sign-off rebuilds IOR's, mdtest's and md-workbench's figures from the job's own
output (``rfm_job.out``), by the function the live check reports them with
(``Benchmark.output_figures``), and fio's from the reports its nodes kept
(``fio-<node>.json``, each node its ``rfm_job.out`` names): a figure the run report
records that is not the one its output gives is INVALID, and a wrong transfer the output
counts is never a passed integrity test.  The run directory is ``test_manifest``'s: the
real ``local-spack-accepted`` run report with each test's output beside it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fsaccept.benchmarks.ior import figures as ior_figures
from fsaccept.benchmarks.ior import parse as ior_parse
from tests.unit.test_manifest import DATA, _case, _outdir, _signoff, run  # noqa: F401


def _edit(run: Path, name: str, edit) -> None:  # noqa: F811
    path = run / "run-report.json"
    data = json.loads(path.read_text())
    edit(_case(data, name))
    path.write_text(json.dumps(data))


def test_the_run_with_its_own_outputs_is_accepted(run, capsys):  # noqa: F811
    code, md, _ = _signoff(run, capsys)
    assert code == 0 and "**Overall verdict: ACCEPTED**" in md, md[:1500]


def test_a_figure_edited_in_the_run_report_is_invalid_naming_the_output(run, capsys):  # noqa: F811
    def faster(tc):
        tc["perfvalues"]["local-spack:compute:write_bandwidth"][0] = 9999.0
    _edit(run, "IORWriteBandwidth", faster)
    code, md, _ = _signoff(run, capsys)
    out = _outdir(run, "IORWriteBandwidth") / "rfm_job.out"
    assert code == 1 and "**Overall verdict: NOT ACCEPTED**" in md
    assert (f"IORWriteBandwidth: INVALID (write_bandwidth is recorded as 9999.0, but its ior "
            f"output ({out}) gives 3691.12)") in md, md[:1500]


def test_an_output_that_counts_wrong_transfers_is_never_a_passed_integrity_test(run, capsys):  # noqa: F811
    wrong = (DATA / "ior" / "read-check-incorrect.txt").read_text()
    count = ior_figures.incorrect_transfers(ior_parse.parse_ior(wrong))
    assert count > 0
    (_outdir(run, "IORDataIntegrity") / "rfm_job.out").write_text(wrong)
    code, md, _ = _signoff(run, capsys)
    assert code == 1 and "**Overall verdict: NOT ACCEPTED**" in md
    assert (f"incorrect_transfers is recorded as 0, but its ior output "
            f"({_outdir(run, 'IORDataIntegrity') / 'rfm_job.out'}) gives {count}") in md


@pytest.mark.parametrize("name, kept", [("IORRandomWriteIOPS", "rfm_job.out"),
                                        ("FioMetadata", "fio-n3.json")])
def test_a_file_removed_from_a_kept_directory_is_evidence_missing(run, capsys, name, kept):  # noqa: F811
    """The job's output, or a fio node's report."""
    out = _outdir(run, name) / kept
    out.unlink()
    code, md, _ = _signoff(run, capsys)
    assert code == 1 and f"- {name}: INVALID (evidence missing: {out})" in md, md[:1500]


def test_a_run_report_without_its_run_directory_shows_its_figures_as_recorded(run, capsys):  # noqa: F811
    """No directory of the test is there (a report read alone): nothing to rebuild from;
    the integrity row says no manifest verified it."""
    import shutil
    shutil.rmtree(run / "output")
    code, md, _ = _signoff(run, capsys)
    assert "not verified: no manifest" in md
    assert "write_bandwidth is recorded" not in md


def test_an_mdtest_rate_or_a_md_workbench_latency_edited_is_invalid(run, capsys):  # noqa: F811
    def creates_faster(tc):
        tc["perfvalues"]["local-spack:compute:file_creation"][0] *= 2
    _edit(run, "MdtestEasy", creates_faster)

    def quicker(tc):
        tc["perfvalues"]["local-spack:compute:read_latency_q99"][0] /= 2
    _edit(run, "MdWorkbench", quicker)
    code, md, _ = _signoff(run, capsys)
    assert code == 1
    assert "- MdtestEasy: INVALID (file_creation is recorded as " in md, md[:2000]
    assert ", but its mdtest output (" in md
    assert "- MdWorkbench: INVALID (read_latency_q99 is recorded as " in md
    assert ", but its md-workbench output (" in md


def _fio_output(run: Path, name: str) -> str:  # noqa: F811
    """How the sign-off names a fio test's output: its node reports."""
    return f"fio output (4 node reports fio-NODE.json in {_outdir(run, name)})"


def test_a_fio_aggregate_edited_is_invalid_naming_its_node_reports(run, capsys):  # noqa: F811
    key = "local-spack:compute:seq_write_1m_direct_bw"
    recorded = _case(json.loads((run / "run-report.json").read_text()),
                     "FioSequentialWrite")["perfvalues"][key][0]

    def faster(tc):
        tc["perfvalues"][key][0] = 9999.0
    _edit(run, "FioSequentialWrite", faster)
    code, md, _ = _signoff(run, capsys)
    assert code == 1 and "**Overall verdict: NOT ACCEPTED**" in md
    assert (f"- FioSequentialWrite: INVALID (seq_write_1m_direct_bw is recorded as 9999.0, "
            f"but its {_fio_output(run, 'FioSequentialWrite')} gives {recorded})") in md, \
        md[:2000]


def test_a_fio_slowest_node_or_outlier_count_edited_is_invalid(run, capsys):  # noqa: F811
    key = "local-spack:compute:randread_4k_direct_iops_node_min"
    slowest = _case(json.loads((run / "run-report.json").read_text()),
                    "FioRandomReadDirect")["perfvalues"][key][0]

    def faster_slowest(tc):
        tc["perfvalues"][key][0] *= 2
    _edit(run, "FioRandomReadDirect", faster_slowest)

    def no_outlier_detection(tc):
        tc["outlier_fraction"] = 0.0
    _edit(run, "FioFsync", no_outlier_detection)
    code, md, _ = _signoff(run, capsys)
    assert code == 1
    assert "- FioRandomReadDirect: INVALID (randread_4k_direct_iops_node_min is recorded as " \
        in md, md[:2000]
    assert f", but its {_fio_output(run, 'FioRandomReadDirect')} gives {slowest})" in md
    assert ("- FioFsync: INVALID (outlier_fraction is recorded as 0.0, but the reference "
            "file's tests.fio_fsync says 0.5; outlier_nodes is recorded as 0, but its "
            f"{_fio_output(run, 'FioFsync')} gives none)") in md, md[:2000]


def test_a_fio_outlier_count_dropped_or_passed_by_a_looser_limit_is_invalid(run, capsys):  # noqa: F811
    """Its entry seeks slow clients (0.5): the count is recorded, its limit 0, as live."""
    def dropped(tc):
        del tc["perfvalues"]["local-spack:compute:outlier_nodes"]
    _edit(run, "FioFsync", dropped)

    def loosened(tc):
        tc["perfvalues"]["local-spack:compute:outlier_nodes"][1:4] = [5, None, 0]
    _edit(run, "FioRandomReadDirect", loosened)
    code, md, _ = _signoff(run, capsys)
    assert code == 1 and "**Overall verdict: NOT ACCEPTED**" in md
    assert ("- FioFsync: INVALID (outlier_nodes: tests.fio_fsync seeks slow clients "
            "(outlier_fraction 0.5), but the run report records no such figure)") in md, \
        md[:2000]
    assert ("- FioRandomReadDirect: INVALID (outlier_nodes: tests.fio_randread_direct seeks "
            "slow clients (outlier_fraction 0.5): its limit is 0, but the test was judged "
            "against ≤ 5)") in md, md[:2000]
