"""fsaccept.benchmarks.mdtest.parse against real mdtest 4.0.0 captures (tests/data/mdtest/, see its README.md):
the parser, the command line, the reference entry and the validity rules, and
``fsaccept parse mdtest FILE``.

Expected figures are copied by hand from the capture files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fsaccept.benchmarks.ior.parse import INVALID, WARNING
from fsaccept.benchmarks.mdtest import parse as mdtest
from fsaccept.benchmarks.mdtest.command import mdtest_options, parameters, planned_bytes
from fsaccept.benchmarks.mdtest.parse import MdtestRun, parse_mdtest
from fsaccept.benchmarks.mdtest.validity import MdtestExpectation, invalid_reasons
from fsaccept.benchmarks.registry import BENCHMARKS
from fsaccept.cli import main
from fsaccept.suite import reference

from . import stepcount

DATA = Path(__file__).resolve().parents[1] / "data" / "mdtest"
SRUN = "srun -N4 -n8 --ntasks-per-node=2 --distribution=block --mpi=pmix mdtest "


def load(name: str) -> str:
    return (DATA / f"{name}.txt").read_text()


def run(name: str) -> MdtestRun:
    return parse_mdtest(load(name))


def cmd_exit(name: str) -> int:
    first, second = (DATA / f"{name}.cmd").read_text().splitlines()[:2]
    assert first.startswith(SRUN)
    return int(second.removeprefix("exit="))


def kinds(r: MdtestRun, severity: str | None = None) -> list[str]:
    return [f.kind for f in r.findings if severity is None or f.severity == severity]


def _captures() -> list[str]:
    return sorted(p.stem for p in DATA.glob("*.txt"))


# ---------------------------------------------------------------- captures as a whole


def test_the_captures_are_all_there() -> None:
    assert len(_captures()) == 14
    assert {p.stem for p in DATA.glob("*.cmd")} == set(_captures())


@pytest.mark.parametrize("name", _captures())
def test_every_capture_parses_and_serialises(name: str) -> None:
    r = run(name)
    d = r.to_dict()
    json.dumps(d, allow_nan=False)  # strictly JSON-serialisable
    assert d["valid"] is r.valid and isinstance(d["reasons"], list)
    assert r.version == "mdtest-4.0.0" and r.tasks == 8 and r.nodes == 4
    if r.valid:
        assert r.rate and r.rate.rows and r.finished and r.reasons == []
    else:
        assert r.reasons


@pytest.mark.parametrize("name", _captures())
def test_nonzero_exit_is_never_valid_and_no_figure_is_ever_zero(name: str) -> None:
    r = run(name)
    if cmd_exit(name) != 0:
        assert not r.valid
    assert all(v > 0 for v in r.figures().values())


@pytest.mark.parametrize("name", _captures())
def test_figures_are_the_printed_mean_tokens(name: str) -> None:
    r = run(name)
    for row in r.rate.rows if r.rate else []:
        assert row.mean == float(row.printed["mean"])
        if row.measured:
            assert r.figures()[row.figure] == float(row.printed["mean"])


# ---------------------------------------------------------------- easy, hard, variants


def test_easy() -> None:
    r = run("easy")
    assert r.valid and cmd_exit("easy") == 0
    assert r.command_line == "/opt/ior-4.0.0/bin/mdtest -n 200 -u -N 1 -F -P -d /var/tmp/mdcap/easy"
    assert r.command_line_printed == ("/opt/ior-4.0.0/bin/mdtest '-n' '200' '-u' '-N' '1' "
                                      "'-F' '-P' '-d' '/var/tmp/mdcap/easy'")
    assert (r.started, r.finished) == ("11/22/2026 02:49:57", "11/22/2026 02:49:59")
    assert (r.tasks, r.nodes, r.rank_shift, r.iterations) == (8, 4, 2, 1)
    assert (r.items_total, r.items_kind) == (1600, "files")
    assert r.path == "/var/tmp/mdcap/easy"
    assert r.fs.startswith("252.0 GiB   Used FS: ")
    assert r.figures() == {
        "file_creation": 5718.659, "file_stat": 39992.887, "file_read": 39993.125,
        "file_removal": 40036.072, "tree_creation": 61.5, "tree_removal": 10.913}
    assert r.phase_times() == {
        "file_creation": 0.28, "file_stat": 0.04, "file_read": 0.04, "file_removal": 0.04,
        "tree_creation": 0.016, "tree_removal": 0.092}
    row = r.rate_row("file_creation")
    assert (row.operation, row.max, row.min, row.mean, row.sd) == (
        "File creation", 5718.659, 5718.659, 5718.659, 0.0)
    assert row.printed == {"max": "5718.659", "min": "5718.659", "mean": "5718.659",
                           "sd": "0.000"}
    assert row.line == 22 and r.rate.line == 19 and r.time.line == 29
    assert row.rank_max is None
    # "Read bytes is 0" once per rank (and rank 0 twice more): warnings only
    assert set(kinds(r)) == {"warning"}
    assert r.findings[0].text == ("WARNING: Read bytes is 0, thus, a read test will "
                                  "actually just open/close")
    assert r.stonewall == [] and r.phases == [] and r.stonewall_rate() is None


def test_hard_shared_directory_with_file_data() -> None:
    r = run("hard")
    assert r.valid and r.findings == []  # -e: no "Read bytes is 0" warning
    assert r.figures() == {
        "file_creation": 2721.052, "file_stat": 36366.863, "file_read": 25024.654,
        "file_removal": 25012.901, "tree_creation": 62.555, "tree_removal": 15.299}
    assert r.phase_times()["file_creation"] == 0.588


def test_multi_iteration_max_min_mean_sd() -> None:
    r = run("multi-iteration")
    assert r.valid and r.iterations == 3 and r.rate.iterations == r.time.iterations == 3
    row = r.rate_row("file_creation")
    assert (row.max, row.min, row.mean, row.sd) == (33674.144, 18185.353, 25621.119, 7762.822)
    assert r.figures()["file_removal"] == 26100.187
    tree = r.rate_row("tree_creation")
    assert (tree.max, tree.min, tree.mean, tree.sd) == (9619.963, 19.23, 3226.93, 5536.54)
    assert r.time.row("file_stat").sd == 0.014
    assert r.phase_times()["file_read"] == 0.053


def test_directories_rows_without_files_only() -> None:
    r = run("easy-dirs")
    assert r.valid and r.items_kind == "files/directories" and r.items_total == 800
    assert [row.figure for row in r.rate.rows] == [
        "directory_creation", "directory_stat", "directory_rename", "directory_removal",
        "file_creation", "file_stat", "file_read", "file_removal", "tree_creation",
        "tree_removal"]
    assert r.figures()["directory_rename"] == 15797.458
    # Tree creation took less than the 1 ms mdtest prints: its time shows as 0.000
    assert r.phase_times()["tree_creation"] == 0.0 and r.figures()["tree_creation"] == 7244.048


def test_rank_statistics_columns() -> None:
    r = run("rank-statistics")
    assert r.valid
    row = r.rate_row("file_stat")
    assert (row.rank_max, row.rank_min, row.rank_mean) == (376677.503, 324636.533, 358710.899)
    assert (row.max, row.min, row.mean, row.sd) == (49948.543, 49948.543, 49948.543, 0.0)
    assert r.figures()["file_creation"] == 1256.085
    assert r.time.row("file_creation").mean == 1.274
    assert r.time.row("file_creation").rank_mean == 1.094


def test_verbose_settings_and_rank0_phase_lines() -> None:
    r = run("easy-verbose")
    assert r.valid
    assert (r.options["items"], r.options["unique_dir_per_task"]) == ("200", "True")
    assert r.options["time_unique_dir_overhead"] == "False"
    assert r.options["stone_wall_timer_seconds"] == "0"
    assert "stonewall" not in r.options and "main" not in r.options
    assert [(p.figure, p.time_s, p.rank0_rate) for p in r.phases] == [
        ("tree_creation", 0.025, 40.763), ("file_creation", 0.456, 438.818),
        ("file_stat", 0.032, 6280.638), ("file_read", 0.036, 5569.348),
        ("file_removal", 0.036, 5579.127), ("tree_removal", 0.084, 11.911)]
    # rank 0's own rate is not the aggregate figure
    assert r.figures()["file_creation"] == 3510.542


# ---------------------------------------------------------------- stonewall


def test_stonewall_hit_derives_the_create_rate_from_items_and_time() -> None:
    r = run("stonewall")
    assert r.valid and r.stonewall_status_file == "/var/tmp/mdcap/stonewall.status"
    [w] = r.stonewall
    assert (w.iteration, w.hit, w.min_items, w.max_items, w.avg_items) == (
        1, True, 1329, 2663, 1943.9)
    assert w.rank_items == {0: 2227, 2: 2454, 6: 1341, 4: 1329, 5: 1381, 1: 2663, 7: 2637,
                            3: 1519}
    assert (w.items, w.items_source, w.time_s, w.line) == (15551, "rank lines", 1.988, 78)
    assert w.printed_ops == "0.000"  # what mdtest prints as "ops/sec": not a rate
    assert w.rate == round(15551 / 1.988, 3) == 7822.435
    assert r.stonewall_rate() == 7822.435
    assert r.phase_times()["file_creation_stonewall"] == 1.988
    [sw_line] = [p for p in r.phases if p.figure == "file_creation_stonewall"]
    assert sw_line.rank0_rate is None and sw_line.printed_rate == "0.000"
    # mdtest's own create rate (wear-out to 2663 files per rank included) is untouched
    assert r.figures()["file_creation"] == 9614.03
    assert r.to_dict()["stonewall_rate_derived"] == 7822.435


def test_hard_stonewall_with_interleaved_rank_lines() -> None:
    r = run("hard-stonewall")
    assert r.valid
    [w] = r.stonewall
    assert (w.hit, w.min_items, w.max_items, w.avg_items) == (True, 599, 711, 649.4)
    assert len(w.rank_items) == 8 and (w.items, w.time_s) == (5195, 2.052)
    assert r.stonewall_rate() == round(5195 / 2.052, 3)
    assert r.figures()["file_creation"] == 2571.369


def test_stonewall_not_hit() -> None:
    r = run("stonewall-not-hit")
    assert r.valid
    [w] = r.stonewall
    assert (w.hit, w.min_items, w.avg_items) == (False, None, None)
    assert (w.items, w.time_s, w.rate) == (800, 0.42, round(800 / 0.42, 3))


def test_stonewall_items_from_the_average_when_rank_lines_are_lost() -> None:
    text = "\n".join(line for line in load("stonewall").splitlines()
                     if not line.startswith("V-1: Rank   6 Line  1124"))
    [w] = parse_mdtest(text).stonewall
    assert len(w.rank_items) == 7
    assert (w.items, w.items_source) == (15551, "average")  # round(1943.9 x 8)


def test_rank_lines_that_disagree_with_the_average_are_a_warning() -> None:
    text = load("stonewall").replace("stonewall hit with 2227 items",
                                     "stonewall hit with 2327 items")
    r = parse_mdtest(text)
    assert r.valid and r.stonewall[0].items == 15651
    [f] = [f for f in r.findings if f.kind == "stonewall-items"]
    assert f.severity == WARNING and "average of 1943.9 over 8 tasks" in f.text


# ---------------------------------------------------------------- errors and findings


def test_error_lines_make_a_run_invalid_despite_exit_0() -> None:
    r = run("verify-read-errors")
    assert cmd_exit("verify-read-errors") == 0
    assert not r.valid and r.verification_errors == 400
    assert kinds(r, INVALID) == ["verification"]
    assert r.reasons == ["line 31: ERROR: verifying the data on read (400 errors)! Take the "
                         "performance values with care!"]
    assert r.figures() == {"file_read": 8152.947}  # the other phases did not run


def test_failed_operations_make_a_run_invalid_despite_exit_0() -> None:
    r = run("stat-missing-files")
    assert cmd_exit("stat-missing-files") == 0
    assert not r.valid and kinds(r, INVALID) == ["op-failed"] * 80
    [reason] = r.reasons
    assert reason.startswith("line 12: WARNING: unable to stat file /var/tmp/mdcap/split/"
                             "test-dir.0-0/mdtest_tree.4.0/file.mdtest.2.50 (and 79 more such "
                             "lines)")
    assert reason.endswith("an operation failed (mdtest goes on, and counts it in its rates)")
    assert r.figures() == {"file_stat": 7901.637}


def test_aborted_run() -> None:
    r = run("error-not-a-dir")
    assert not r.valid and r.rate is None and r.figures() == {} and r.phase_times() == {}
    invalid = kinds(r, INVALID)
    assert {"op-failed", "error", "mpi-abort", "launcher", "truncated"} == set(invalid)
    assert invalid.count("error") == 6 and invalid.count("truncated") == 2
    assert r.reasons[1] == (
        'line 30: ERROR: open64("/var/tmp/mdcap/notadir/easy/test-dir.0-0/mdtest_tree.1.0/'
        'file.mdtest.7.0", 66, 0664) failed. Error: Not a directory, (aiori-POSIX.c:569) '
        '(and 5 more such lines)')
    assert "no 'SUMMARY rate' table: output truncated or run aborted" in r.reasons
    assert "no '-- finished at' line: output truncated or run aborted" in r.reasons
    # Open MPI's "NOTE: invoking MPI_ABORT ..." boilerplate is not a finding of its own
    assert not any(f.text.startswith("NOTE:") for f in r.findings)


def test_error_findings_in_the_jobs_stderr() -> None:
    # The aborted run's own lines, as a job's stderr would carry them.
    findings = mdtest.error_findings(load("error-not-a-dir"))
    assert {f.kind for f in findings if f.severity == INVALID} == {
        "op-failed", "error", "mpi-abort", "launcher"}
    assert mdtest.error_findings(load("hard")) == []


def test_phases_not_run_print_zeros_and_are_not_figures() -> None:
    r = run("split-create")
    assert r.valid
    assert r.figures() == {"file_creation": 1587.22, "tree_creation": 33.075}
    stat = r.rate_row("file_stat")
    assert stat is not None and not stat.measured and stat.printed["mean"] == "0.000"
    assert set(r.phase_times()) == {"file_creation", "tree_creation"}
    assert run("split-remove").figures() == {"file_removal": 1587.289, "tree_removal": 19.841}


@pytest.mark.parametrize("cut_at", ["SUMMARY rate", "   File stat", "SUMMARY time",
                                    "-- finished at"])
def test_truncated_output_is_invalid(cut_at: str) -> None:
    text = load("easy")
    r = parse_mdtest(text[:text.index(cut_at)])
    assert not r.valid
    assert "no '-- finished at' line: output truncated or run aborted" in r.reasons


def test_truncated_inside_the_rate_table_keeps_only_what_was_printed() -> None:
    text = load("easy")
    r = parse_mdtest(text[:text.index("   File read")])
    assert r.figures() == {"file_creation": 5718.659, "file_stat": 39992.887}
    assert not r.valid


@pytest.mark.parametrize("text", ["", "\n\n  \n"])
def test_empty_output(text: str) -> None:
    r = parse_mdtest(text)
    assert not r.valid and r.reasons == ["mdtest output is empty"] and r.figures() == {}


def test_non_finite_figure_is_invalid() -> None:
    text = load("easy").replace("39992.887      39992.887      39992.887",
                                "      inf            inf            inf")
    r = parse_mdtest(text)
    assert not r.valid and kinds(r, INVALID) == ["non-finite"]
    assert r.reasons == ["line 23: non-finite figure in SUMMARY rate: File stat"]
    json.dumps(r.to_dict(), allow_nan=False)


def test_another_ranks_line_inside_the_table_does_not_end_it() -> None:
    text = load("easy").replace(
        "   File read", "WARNING: Read bytes is 0, thus, a read test will actually just "
        "open/close\n   File read", 1)
    r = parse_mdtest(text)
    assert r.valid and len(r.rate.rows) == 6 and r.figures()["file_read"] == 39993.125


def test_unreadable_stonewall_status_file_is_invalid() -> None:
    # mdtest.c: WARN("Could not read stonewall status file") when -x names no readable file
    text = load("easy").replace("Nodemap:", "WARNING: Could not read stonewall status file"
                                "\nNodemap:", 1)
    r = parse_mdtest(text)
    assert not r.valid and kinds(r, INVALID) == ["stonewall-status"]


def test_a_second_summary_table_is_a_warning_and_ignored() -> None:
    text = load("easy")
    table = text[text.index("SUMMARY rate"):text.index("SUMMARY time")]
    r = parse_mdtest(text.replace("SUMMARY time", table.replace("5718.659", "1.000")
                                  + "SUMMARY time"))
    assert r.valid and r.figures()["file_creation"] == 5718.659
    [f] = [f for f in r.findings if f.kind == "more-tables"]
    assert f.severity == WARNING and f.text == ("another SUMMARY rate table: only the first "
                                                "one is used")


def test_unparseable_row_is_invalid() -> None:
    text = load("easy").replace("   File stat                   39992.887",
                                "   File stat                   39992.887   12")
    r = parse_mdtest(text)
    assert not r.valid and kinds(r, INVALID) == ["unparseable"]


# ---------------------------------------------------------------- command and entry

ENTRY = {"node_fraction": 1.0, "ranks_per_node": 2, "items_per_rank": 2000,
         "thresholds": {"file_creation": {"value": 500, "unit": "ops/s"}}}


def test_command_line_easy_and_hard() -> None:
    easy = parameters("mdtest_easy", ENTRY)
    assert mdtest_options(easy, "/t/d", unique_dir=True, status_file="/t/s") == [
        "-F", "-P", "-v", "-N", "1", "-n", "2000", "-u", "-d", "/t/d"]
    hard = parameters("mdtest_hard", dict(ENTRY, stonewall_s=300, write_bytes=3901,
                                          read_bytes=3901, iterations=1))
    assert mdtest_options(hard, "/t/d", unique_dir=False, status_file="/t/s") == [
        "-F", "-P", "-v", "-N", "1", "-n", "2000", "-w", "3901", "-e", "3901",
        "-W", "300", "-x", "/t/s", "-d", "/t/d"]
    three = parameters("mdtest_easy", dict(ENTRY, iterations=3))
    assert mdtest_options(three, "/d", True)[6:10] == ["2000", "-i", "3", "-u"]
    assert planned_bytes(hard, tasks=8) == 8 * 2000 * 3901 and planned_bytes(easy, 8) == 0


def test_parameters_defaults() -> None:
    p = parameters("mdtest_easy", ENTRY)
    assert (p.iterations, p.stonewall_s, p.write_bytes, p.read_bytes) == (1, None, 0, 0)
    assert p.min_phase_s == mdtest.DEFAULT_MIN_PHASE_S == 1.0
    assert p.thresholds == ("file_creation",)


@pytest.mark.parametrize("change, message", [
    ({"read_bytes": 4096}, "/r.yaml: tests.mdtest_x.read_bytes: 4096 is more than "
                           "write_bytes 0: mdtest would fail to read every file"),
    ({"thresholds": {"file_creation_stonewall": {"value": 1, "unit": "ops/s"}}},
     "/r.yaml: tests.mdtest_x.thresholds.file_creation_stonewall: needs stonewall_s"),
    ({"stonewall_s": 30, "iterations": 2}, "/r.yaml: tests.mdtest_x.iterations: mdtest "
                                           "4.0.0 carries a stonewalled item count"),
])
def test_inconsistent_entries_name_file_and_key(change: dict, message: str) -> None:
    with pytest.raises(reference.ReferenceError) as err:
        parameters("mdtest_x", dict(ENTRY, **change), "/r.yaml")
    assert str(err.value).startswith(message)


def _errors(entry: dict) -> list[str]:
    doc = {"system": "s", "target": {"path": "/t", "fstype": "ext4"},
           "tests": {"mdtest_easy": entry}}
    return reference.validation_errors(doc)


def test_schema_accepts_the_shipped_reference_files() -> None:
    for name in ("local", "example-lustre"):
        ref = reference.load_reference(reference.REFERENCE_DIR / f"{name}.yaml")
        for key in ("mdtest_easy", "mdtest_hard"):
            p = parameters(key, ref.entry(key), ref.path)
            assert p.thresholds and all(t.unit == "ops/s"
                                        for t in ref.thresholds(key).values())


def test_schema_errors_are_clear() -> None:
    assert _errors(ENTRY) == []
    bad = dict(ENTRY, items_per_rank="10k", stonewall=3,
               thresholds={"file_create": {"value": 1, "unit": "IOPS"}})
    errors = _errors(bad)
    assert "tests.mdtest_easy.items_per_rank: '10k' is not of type 'integer'" in errors
    assert any(e.startswith("tests.mdtest_easy: unknown key(s) 'stonewall'; allowed: ")
               and "stonewall_s" in e for e in errors)
    assert any(e.startswith("tests.mdtest_easy.thresholds: 'file_create' is not one of")
               for e in errors)
    assert any(e.startswith("tests.mdtest_easy.thresholds.file_create.unit: 'IOPS'")
               and "'ops/s'" in e for e in errors)
    missing = {k: v for k, v in ENTRY.items() if k != "thresholds"}
    assert _errors(missing) == ["tests.mdtest_easy: 'thresholds' is a required property"]


# ---------------------------------------------------------------- validity rules


def expect(**kw) -> MdtestExpectation:
    base = dict(tasks=8, nodes=4, ranks_per_node=2, items_per_rank=200,
                judged=mdtest.FILE_FIGURES, min_phase_s=0.01)
    return MdtestExpectation(**{**base, **kw})


def test_a_valid_run_has_no_reasons() -> None:
    assert invalid_reasons(run("easy"), expect()) == []
    assert invalid_reasons(run("multi-iteration"), expect(iterations=3)) == []
    assert invalid_reasons(run("hard-stonewall"), expect(
        items_per_rank=100000, stonewall_s=2,
        judged=(*mdtest.FILE_FIGURES, mdtest.STONEWALL_FIGURE))) == []


def test_short_phases_are_invalid_with_how_many_items_are_needed() -> None:
    reasons = invalid_reasons(run("easy"), expect(min_phase_s=1.0))
    assert reasons[0] == (
        "file_creation: the phase took 0.28 s (mean over 1 iteration(s)), less than "
        "min_phase_s 1 s: too short to measure; raise items_per_rank from 200 to at least 715")
    assert reasons[1].startswith("file_stat: the phase took 0.04 s") and \
        reasons[1].endswith("from 200 to at least 5000")
    assert len(reasons) == 4


def test_short_phases_under_a_stonewall_say_raise_stonewall_s() -> None:
    reasons = invalid_reasons(run("stonewall"), expect(
        items_per_rank=100000, stonewall_s=2, min_phase_s=1.0,
        judged=("file_creation", "file_stat", mdtest.STONEWALL_FIGURE)))
    assert reasons == [
        "file_stat: the phase took 0.08 s (mean over 1 iteration(s)), less than min_phase_s "
        "1 s: too short to measure; it works on the files created in the stonewall's 2 s: "
        "raise stonewall_s to at least 25"]


def test_unjudged_short_phases_are_only_reported() -> None:
    assert invalid_reasons(run("easy"), expect(min_phase_s=1.0, judged=())) == []


def test_phase_shorter_than_a_millisecond() -> None:
    reasons = invalid_reasons(run("easy-dirs"), expect(
        items_per_rank=100, judged=("tree_creation",)))
    assert reasons == ["tree_creation: the phase took 0 s (mean over 1 iteration(s)), less "
                       "than min_phase_s 0.01 s: too short to measure; raise items_per_rank "
                       "from 100 to at least 10000 (it took less than the 1 ms mdtest prints)"]


def test_stonewall_that_was_not_hit_is_invalid() -> None:
    [reason] = invalid_reasons(run("stonewall-not-hit"), expect(
        items_per_rank=100, stonewall_s=5, min_phase_s=0.001))
    assert reason == ("iteration 1: every rank created all its 100 files in 0.469 s, before "
                      "the 5 s stonewall: the create phase ended on its item count, not on "
                      "time; raise items_per_rank")


def test_stonewall_without_verbose_lines_is_invalid() -> None:
    reasons = invalid_reasons(run("easy"), expect(stonewall_s=2))
    assert reasons == ["no stonewall figures for the create phase (-W 2): mdtest prints "
                       "them only with -v"]


def test_stonewall_time_missing() -> None:
    text = "\n".join(line for line in load("stonewall").splitlines()
                     if "(stonewall):" not in line)
    r = parse_mdtest(text)
    assert r.stonewall_rate() is None
    assert invalid_reasons(r, expect(items_per_rank=100000, stonewall_s=2)) == [
        "iteration 1: no 'File creation (stonewall)' time: the create rate up to the "
        "stonewall cannot be derived"]


def test_figures_for_phases_that_did_not_run_are_invalid() -> None:
    reasons = invalid_reasons(run("split-create"), expect(items_per_rank=50, judged=()))
    assert reasons == [
        "no file_stat rate: mdtest printed 0.000 for it (the phase did not run)",
        "no file_read rate: mdtest printed 0.000 for it (the phase did not run)",
        "no file_removal rate: mdtest printed 0.000 for it (the phase did not run)"]


def test_wrong_task_and_iteration_counts() -> None:
    reasons = invalid_reasons(run("multi-iteration"), expect(tasks=16, iterations=1))
    assert reasons[:2] == ["mdtest ran 8 ranks, 16 were requested",
                           "mdtest ran 3 iterations, 1 were requested"]


def test_stat_and_read_must_come_from_another_node() -> None:
    [one_node] = invalid_reasons(run("easy"), expect(nodes=1))
    assert one_node.startswith("stat and read ran on the node that created the files (1 node)")
    [shift] = invalid_reasons(run("easy"), expect(ranks_per_node=4, nodes=2))
    assert shift.startswith("mdtest shifted ranks by 2, not by the 4 ranks of one node")
    text = "\n".join(line for line in load("easy").splitlines() if "Shifting" not in line)
    [none] = invalid_reasons(parse_mdtest(text), expect())
    assert none.startswith("mdtest printed no 'Shifting ranks by' line: -N 1 was not in effect")


def test_missing_time_table_is_invalid_when_judged() -> None:
    text = load("easy")
    text = text[:text.index("SUMMARY time")] + text[text.index("-- finished at"):]
    r = parse_mdtest(text)
    assert r.valid and r.time is None
    assert invalid_reasons(r, expect()) == [
        "no 'SUMMARY time' table: the phase times are unknown (run mdtest with -P)"]


def test_invalid_output_reasons_come_first() -> None:
    reasons = invalid_reasons(run("verify-read-errors"), expect(items_per_rank=50))
    assert reasons[0].startswith("line 31: ERROR: verifying the data on read (400 errors)")
    assert invalid_reasons(run("error-not-a-dir"), expect()) == run("error-not-a-dir").reasons


def test_unknown_version_is_invalid() -> None:
    text = load("easy").replace("mdtest-4.0.0 was launched", "mdtest was launched")
    reasons = invalid_reasons(parse_mdtest(text), expect())
    assert "mdtest version not found in its output: cannot certify the figure" in reasons


# ---------------------------------------------------------------- fsaccept parse mdtest


def test_cli_parses_mdtest(capsys: pytest.CaptureFixture[str]) -> None:
    assert "mdtest" in BENCHMARKS
    path = DATA / "stonewall.txt"
    assert main(["parse", "mdtest", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith('{\n  "kind": "mdtest",')
    d = json.loads(out)
    assert d["valid"] is True and d["reasons"] == [] and d["file"] == str(path)
    assert d["figures"]["file_creation"] == 9614.03
    assert d["rate"]["rows"][0]["printed"]["mean"] == "9614.030"
    assert d["phase_times_s"]["file_creation_stonewall"] == 1.988
    assert d["stonewall_rate_derived"] == 7822.435
    assert d["stonewall"][0]["items"] == 15551


def test_cli_invalid_capture_still_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parse", "mdtest", str(DATA / "verify-read-errors.txt")]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["valid"] is False and "verifying the data on read" in d["reasons"][0]


def test_cli_missing_file_and_json_summary(capsys: pytest.CaptureFixture[str],
                                          tmp_path: Path) -> None:
    missing = tmp_path / "nope.txt"
    assert main(["parse", "mdtest", str(missing)]) == 2
    err = capsys.readouterr().err.strip()
    assert str(missing) in err and "\n" not in err
    assert main(["parse", "mdtest", str(DATA / "easy.txt"), "--json-summary"]) == 2
    assert capsys.readouterr().err.strip() == "fsaccept: mdtest has no JSON-summary parser"


# --------------------------------------------------------------------------- linear cost


def _linear_edits() -> dict[str, object]:
    """Real captures edited (in code) to grow one line by n units: a run of spaces in a
    SUMMARY row, at the start of a ``V-1:`` message, a launcher word repeated."""
    verbose = load("easy-verbose")
    row = next(line for line in verbose.splitlines()
               if line.startswith("   File creation") and "sec" not in line)
    v1 = next(line for line in verbose.splitlines()
              if line.startswith("V-1: Rank") and "File creation     :" in line)
    cut = v1.index("File creation")
    return {
        "summary-row-spaces": lambda n: verbose.replace(row, row + " " * n + "x", 1),
        "v1-line-spaces": lambda n: verbose.replace(v1, v1[:cut] + " " * n + "x" + v1[cut:], 1),
        "launcher-word": lambda n: verbose + "slurmstepd-" * n + "\n",
    }


@pytest.mark.parametrize("edit", sorted(_linear_edits()))
def test_parsing_cost_is_linear_in_a_lines_length(edit: str) -> None:
    """mdtest's parser did quadratic work on a long run of spaces in a SUMMARY row or a
    ``V-1:`` line (26 s for 62 KB). The work of parsing the capture grown by n and by 8n
    units, over that of the unedited capture, must grow about 8x, not 64x. The work is
    counted deterministically (no clock): every pattern call of the parser's module is
    replayed by a step-counting backtracking matcher, plus the Python lines the parser
    runs (``tests/unit/stepcount.py``)."""
    # n: the edited line well beyond what one pattern start may scan (64 characters)
    stepcount.assert_linear(_linear_edits()[edit], parse_mdtest, [mdtest],
                            n=60 if edit == "launcher-word" else 200)


@pytest.mark.parametrize("glue", ["cut-off", "command-line", "started"])
def test_a_second_run_glued_to_the_output_is_invalid(glue):
    """Two mdtest outputs concatenated, the second glued to a cut-off line of the first
    (or only its 'Command line used:' / '-- started at' line repeated): INVALID, as IOR's."""
    text = (DATA / "easy.txt").read_text()
    if glue == "cut-off":
        lines = text.splitlines()[:-3]
        lines[-1] = lines[-1][:10]
        text = "\n".join(lines) + text
    elif glue == "command-line":
        text += "Command line used: /opt/ior-4.0.0/bin/mdtest '-n' '1'\n"
    else:
        text += "-- started at 11/22/2026 02:50:57 --\n"
    run = parse_mdtest(text)
    assert [f.kind for f in run.findings if f.severity == INVALID] == ["two-runs"]
    assert not run.valid
