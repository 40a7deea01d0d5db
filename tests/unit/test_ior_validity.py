"""Validity rules on real IOR 4.0.0 outputs (tests/data/ior/)."""

from pathlib import Path

import pytest

from fsaccept.benchmarks.ior.parse import parse_ior
from fsaccept.benchmarks.ior.validity import IorExpectation, ior_invalid_reasons
from fsaccept.core.slurm import slurm_job_failures, slurm_task_failures
from fsaccept.core.versions import known_bugs, version_reasons

DATA = Path(__file__).resolve().parent.parent / "data" / "ior"


def run(name):
    return parse_ior((DATA / f"{name}.txt").read_text())


def test_read_that_ran_its_whole_deadline_is_valid():
    exp = IorExpectation("read", tasks=4, nodes=1, deadline_s=3, direct_io=True)
    assert ior_invalid_reasons(run("read-stonewalled"), exp) == []


def test_read_that_ended_early_is_invalid_and_says_how_much_to_generate():
    exp = IorExpectation("read", tasks=4, nodes=1, deadline_s=3, direct_io=True,
                         generation_deadline_s=5)
    [reason] = ior_invalid_reasons(run("read-ended-early"), exp)
    assert reason.startswith("read iteration 0 ran 1.5 s of the 3 s deadline: the dataset")
    assert "not a sustained 3 s read" in reason
    assert "At 680.71 MiB/s it needs at least 2042 MiB" in reason
    assert "raise generation_deadline_s from 5 to at least 10" in reason


def test_eof_exhausted_read_is_invalid_with_the_offending_line():
    exp = IorExpectation("read", tasks=4, nodes=1, deadline_s=10, direct_io=True)
    reasons = ior_invalid_reasons(run("read-eof-exhausted"), exp)
    assert any("line 40: WARNING: read(20, 0x7f0350eff000, 1048576) returned EOF prematurely"
               in r for r in reasons)
    assert any("ERROR: cannot read from file" in r for r in reasons)


def test_stonewalled_write_with_wearout_is_valid():
    exp = IorExpectation("write", tasks=4, nodes=1, deadline_s=3, direct_io=True)
    assert ior_invalid_reasons(run("write-stonewall-wearout"), exp) == []


def test_random_write_that_ran_out_of_block_before_the_deadline_is_invalid():
    exp = IorExpectation("write", tasks=4, nodes=1, deadline_s=3, figure_kind="iops")
    [reason] = ior_invalid_reasons(run("random-write-iops"), exp)
    assert reason.startswith("write iteration 0 ran 0.09993 s of the 3 s deadline: the data "
                             "ran out first")


def test_rank_count_mismatch_is_invalid():
    exp = IorExpectation("read", tasks=8, nodes=2, deadline_s=3, direct_io=True)
    assert "IOR ran 4 ranks, 8 were requested" in ior_invalid_reasons(run("read-stonewalled"), exp)


def test_buffered_read_smaller_than_node_memory_is_cache_suspect():
    exp = IorExpectation("read", tasks=4, nodes=1, deadline_s=3, direct_io=False,
                         node_memory_bytes=2000 * 2**20)
    [reason] = ior_invalid_reasons(run("read-stonewalled"), exp)
    assert reason.startswith("cache-suspect: buffered read of 0.59 GiB per node, less than "
                             "1.5 x node memory (1.95 GiB)")


def test_the_same_read_with_o_direct_is_not_cache_suspect():
    exp = IorExpectation("read", tasks=4, nodes=1, deadline_s=3, direct_io=True,
                         node_memory_bytes=2000 * 2**20)
    assert ior_invalid_reasons(run("read-stonewalled"), exp) == []


def test_refused_run_is_invalid():
    exp = IorExpectation("write", tasks=4, nodes=1, deadline_s=3, figure_kind="iops")
    reasons = ior_invalid_reasons(run("refuse-z-block-eq-xfer"), exp)
    assert any("choose blocksize > transferSize" in r for r in reasons)


def test_truncated_output_is_invalid_never_a_figure():
    text = (DATA / "write-stonewall-wearout.txt").read_text()
    truncated = parse_ior(text[: len(text) // 2])
    reasons = ior_invalid_reasons(truncated, IorExpectation("write", tasks=4, nodes=1))
    assert reasons and any("truncated" in r for r in reasons)


def test_known_bad_versions_are_data():
    assert version_reasons("ior", "3.2.1", "bandwidth")[0].startswith(
        "ior 3.2.1 has a known bug affecting bandwidth")
    assert version_reasons("ior", "3.3.0", "iops")
    # 4.0.0's bug affects latency only, which fsaccept does not report.
    assert known_bugs("ior", "4.0.0") and version_reasons("ior", "4.0.0", "bandwidth") == []
    assert version_reasons("ior", None, "bandwidth") == [
        "ior version not found in its output: cannot certify the figure"]


@pytest.mark.parametrize("version", ["4.0.0rc1", "4.0.0", "4.1.0"])
def test_releases_after_the_wearout_fix_are_not_refused_for_bandwidth(version):
    assert version_reasons("ior", version, "bandwidth") == []


SLURM = DATA.parent / "slurm"


def test_node_failure_names_the_job_and_the_node():
    assert slurm_job_failures((SLURM / "node-failure.err").read_text()) == [
        "Slurm cancelled job 109 at 2026-11-22T03:05:22 due to node failure: node n2 failed "
        "during the run"]


def test_aborted_tasks_are_named_by_node():
    assert slurm_job_failures((SLURM / "enospc-ior-abort.err").read_text()) == []
    [reason] = slurm_task_failures((SLURM / "enospc-ior-abort.err").read_text())
    assert reason.startswith("tasks ended abnormally: n")
    assert ": Aborted" in reason


def test_a_clean_stderr_has_no_job_failure():
    assert slurm_job_failures("") == [] and slurm_task_failures("") == []


def test_down_nodes_are_read_from_sinfo():
    from fsaccept.core.slurm import down_nodes
    assert down_nodes("n1 alloc\nn2 down*\nn3 idle*\nn4 mix\n") == ["n2", "n3"]
    assert down_nodes("n1 idle\n") == []


def test_a_failed_system_call_leads_the_reasons_before_its_symptoms():
    # Ranks print in any order: the few lines a verdict shows must name the cause.
    from fsaccept.benchmarks.ior.validity import root_causes_first
    reasons = ["line 41: WARNING: task 3, partial write(), 856064 of 1048576 bytes at offset 0",
               "line 43: WARNING: task 1, partial write(), 475136 of 1048576 bytes at offset 0",
               "line 44: other",
               "line 45: WARNING: write(20, 0x7ff04a173000, 573440) failed No space left on "
               "device"]
    assert root_causes_first(reasons) == [reasons[3], *reasons[:3]]


# Issue 22, item 1: the deadline rule must not be skipped when the per-iteration row is
# missing or garbled (derived from the real capture in code).
def _ended_early_variants():
    text = (DATA / "read-ended-early.txt").read_text()
    row = next(line for line in text.splitlines() if line.startswith("read      680.71"))
    removed = text.replace(row + "\n", "")
    # A rank's late per-rank line spliced into the row, as interleaved -vv output does.
    spliced = text.replace(row, row[:30] + "3: stonewalling pairs accessed: 256" + row[30:])
    return {"removed": removed, "spliced": spliced}


@pytest.mark.parametrize("variant", ["removed", "spliced"])
def test_deadline_rule_holds_when_the_per_iteration_row_is_missing_or_garbled(variant):
    edited = parse_ior(_ended_early_variants()[variant])
    assert edited.summary_for("read").mean_s == 1.50431
    exp = IorExpectation("read", tasks=4, nodes=1, deadline_s=3, direct_io=True)
    reasons = ior_invalid_reasons(edited, exp)
    assert any(r.startswith("IOR's summary reports 1 read iteration(s), but 0 readable "
                            "per-iteration read row(s)") for r in reasons), reasons
    assert any(r.startswith("read summary Mean(s) 1.50431 is shorter than the 3 s deadline")
               for r in reasons), reasons


def test_a_per_iteration_row_with_an_unreadable_time_is_invalid():
    text = (DATA / "read-stonewalled.txt").read_text()
    row = next(line for line in text.splitlines() if line.startswith("read "))
    toks = row.split()
    toks[7] = "3.0x1"  # wr/rd(s)
    garbled = text.replace(row, "   ".join(toks))
    exp = IorExpectation("read", tasks=4, nodes=1, deadline_s=3, direct_io=True)
    assert ior_invalid_reasons(run("read-stonewalled"), exp) == []
    reasons = ior_invalid_reasons(parse_ior(garbled), exp)
    assert any("0 readable per-iteration read row(s)" in r for r in reasons), reasons


# Issue 22, item 3: a version with a suffix is at most its base version.
@pytest.mark.parametrize("version", ["3.3.0+dev", "3.3.0rc1", "3.2.1+dev", "3.3.0.dirty"])
def test_a_suffixed_version_gets_the_rules_of_its_base_or_older(version):
    assert version_reasons("ior", version, "bandwidth"), version


def test_a_suffixed_release_after_the_fixes_is_not_refused_but_labelled():
    from fsaccept.core.versions import version_note
    assert version_reasons("ior", "4.0.0+dev", "bandwidth") == []
    assert known_bugs("ior", "4.0.0+dev") == known_bugs("ior", "4.0.0")
    assert "is a build of 4.0.0 or older, not a release" in version_note("ior", "4.0.0+dev")


def test_a_3_3_0_dev_log_is_invalid_live_and_re_read(tmp_path, capsys):
    import json
    from fsaccept.cli import main
    text = (DATA / "write-stonewall-wearout.txt").read_text()
    edited = text.replace("IOR-4.0.0:", "IOR-3.3.0+dev:", 1)
    exp = IorExpectation("write", tasks=4, nodes=1, deadline_s=3, direct_io=True)
    reasons = ior_invalid_reasons(parse_ior(edited), exp)
    assert any(r.startswith("ior 3.3.0+dev has a known bug affecting bandwidth") for r in reasons)
    path = tmp_path / "dev.txt"
    path.write_text(edited)
    assert main(["parse", "ior", str(path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "INVALID"
    assert any("3.3.0+dev has a known bug" in r for r in out["reasons"])
