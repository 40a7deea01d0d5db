"""Issue 11, sections 2 and 3: no bogus figure is ever judged, and outputs are read the
way the tools mean them. Inputs are real captures (tests/data/) edited here, never
hand-made files on disk."""

from __future__ import annotations

import copy
import json
import math
import re
import sqlite3
from pathlib import Path

import pytest

from fsaccept import cli
from fsaccept.benchmarks.fio import figures
from fsaccept.benchmarks.fio import parse as fio
from fsaccept.benchmarks.ior import parse as ior
from fsaccept.benchmarks.ior import validity
from fsaccept.benchmarks.ior.parse_json import parse_ior_json
from fsaccept.benchmarks.mdtest import parse as mdtest
from fsaccept.benchmarks.mdtest import validity as mdtest_validity
from fsaccept.reporting import runreport, trends, verdicts
from fsaccept.reporting import verdict as judging
from fsaccept.reporting import report as signoff
from fsaccept.core.findings import INVALID, MAX_PER_KIND, Findings, Finding, figure_problem

DATA = Path(__file__).resolve().parents[1] / "data"


def text(tool: str, name: str) -> str:
    return (DATA / tool / name).read_text()


def kinds(run, severity=INVALID) -> list[str]:
    return [f.kind for f in run.findings if f.severity == severity]


# --------------------------------------------------------------------------- figures


@pytest.mark.parametrize("value, io_done, problem", [
    (1.0, True, None), (0, False, None), (0.0, True, "0 although I/O was done"),
    (-1.5, False, "-1.5 is negative"), (math.inf, True, "inf is not a finite number"),
    (math.nan, False, "nan is not a finite number"), ("12", True, "'12' is not a number"),
    (True, True, "True is not a number")])
def test_figure_problem(value, io_done, problem) -> None:
    assert figure_problem(value, io_done) == problem


def test_findings_are_capped_per_kind_with_a_count() -> None:
    found = Findings()
    for i in range(MAX_PER_KIND + 500):
        found.append(Finding(INVALID, "error", i + 1, "ERROR x" * 1000))
    found += [Finding(INVALID, "eof", 1, "EOF")]
    assert len(found) == MAX_PER_KIND + 2
    assert found[MAX_PER_KIND].text == ("(and 500 more 'error' finding(s) like the above, "
                                        "not listed)")
    assert len(found[0].text) < 400  # one line is cut, saying how much more there was
    assert found[-1].kind == "eof"


# --------------------------------------------------------------------------- IOR


def summary_line(t: str, operation: str = "write") -> str:
    return next(li for li in t.splitlines()
                if li.startswith(operation + " ") and len(li.split()) == 27)


def with_column(line: str, index: int, value: str) -> str:
    """``line`` with its ``index``-th whitespace-separated token replaced, spacing kept."""
    parts = re.split(r"(\s+)", line)
    parts[2 * index] = value
    return "".join(parts)


def test_every_ior_capture_is_internally_consistent() -> None:
    for path in sorted((DATA / "ior").glob("*.txt")):
        run = ior.parse_ior(path.read_text())
        assert not [f for f in run.findings if f.kind in ("bogus-figure", "non-finite")], path


@pytest.mark.parametrize("value, why", [
    ("-204.36", "Mean(MiB) -204.36 is negative"), ("0.00", "Mean(MiB) 0 although I/O was done"),
    ("nan", "Mean(MiB) nan is not a finite number")])
def test_ior_bogus_summary_figure_is_invalid_never_judged(value, why) -> None:
    t = text("ior", "write-stonewall-wearout.txt")
    line = summary_line(t)
    run = ior.parse_ior(t.replace(line, with_column(line, 3, value)))
    assert not run.valid
    assert any(why in r for r in run.reasons), run.reasons
    exp = validity.IorExpectation(operation="write", tasks=4, nodes=4)
    assert any(why in r for r in validity.ior_invalid_reasons(run, exp))


def test_ior_summary_row_must_be_consistent() -> None:
    t = text("ior", "write-stonewall-wearout.txt")
    line = summary_line(t)
    run = ior.parse_ior(t.replace(line, with_column(line, 1, "100.00")))  # Max below Mean
    assert any("Min(MiB) 204.36 <= Mean(MiB) 204.36 <= Max(MiB) 100 does not hold" in r
               for r in run.reasons)
    # The phase "took" ten times longer than the data moved at that bandwidth allows.
    run = ior.parse_ior(t.replace(line, with_column(line, 9, "30.14320")))
    assert any("data moved / time" in r and "Mean(MiB) is 204.36" in r for r in run.reasons)
    # Mean(OPs) that does not fit the transfer size
    run = ior.parse_ior(t.replace(line, with_column(line, 7, "2043.60")))
    assert any("Mean(OPs) x transfer size" in r for r in run.reasons)


def test_ior_multi_iteration_rows_agree_with_the_iteration_table() -> None:
    t = text("ior", "multi-iteration.txt")
    assert ior.parse_ior(t).valid
    line = summary_line(t)
    run = ior.parse_ior(t.replace(line, with_column(line, 3, "1500.00")))
    assert any("disagrees with the per-iteration rows" in r for r in run.reasons)


def test_ior_json_negative_figure_is_invalid() -> None:
    doc = json.loads(text("ior", "json-summary.json"))
    doc["summary"][0]["bwMeanMIB"] = -874.9355
    run = parse_ior_json(json.dumps(doc))
    assert not run.valid and "bogus-figure" in kinds(run)


def test_ior_log_holding_two_runs_is_flagged() -> None:
    t = text("ior", "write-stonewall-wearout.txt")
    run = ior.parse_ior(t + t)
    assert "two-runs" in kinds(run) and not run.valid


# --------------------------------------------------------------------------- mdtest


def test_mdtest_negative_rate_is_invalid() -> None:
    t = text("mdtest", "easy.txt")
    run = mdtest.parse_mdtest(t.replace("   10.913         10.913         10.913",
                                        "  -10.913        -10.913        -10.913", 1))
    assert not run.valid and "bogus-figure" in kinds(run)


def test_mdtest_min_above_mean_is_invalid() -> None:
    t = text("mdtest", "easy.txt")
    run = mdtest.parse_mdtest(t.replace("5718.659       5718.659       5718.659",
                                        "5718.659       9000.000       5718.659", 1))
    assert any("min 9000.000 <= mean 5718.659 <= max 5718.659 does not hold" in r
               for r in run.reasons)


def sweep(t: str) -> str:
    """easy.txt as a sweep over task counts (``-f 4 -l 8 -s 4``: mdtest prints
    ``N tasks, M files`` and both tables per count): the 4-task block first, every
    rate halved (a different table), then the real 8-task block."""
    start, end = t.index("8 tasks, 1600 files"), t.index("-- finished at")
    block = t[start:end]
    small = block.replace("8 tasks, 1600 files", "4 tasks, 800 files").replace(
        "5718.659", "2859.330")
    return t[:start] + small + "\n" + block + t[end:]


def test_mdtest_sweep_takes_figures_and_tasks_from_the_same_table() -> None:
    run = mdtest.parse_mdtest(sweep(text("mdtest", "easy.txt")))
    assert run.valid
    assert [t.tasks for t in run.tables] == [4, 4, 8, 8]
    assert run.rate.tasks == 8 and run.figures()["file_creation"] == 5718.659
    assert run.time.tasks == 8 and run.time.line > run.rate.line
    [note] = [f for f in run.findings if f.kind == "tables"]
    assert "swept task counts (4, 8" in note.text and "table of 8 tasks" in note.text


def test_mdtest_sweep_without_all_tasks_says_so_and_is_invalid_for_the_check() -> None:
    t = sweep(text("mdtest", "easy.txt")).replace("8 tasks, 1600 files", "6 tasks, 1200 files")
    run = mdtest.parse_mdtest(t)
    assert run.rate.tasks == 6 and run.figures()["file_creation"] == 5718.659
    exp = mdtest_validity.MdtestExpectation(tasks=8, nodes=4, ranks_per_node=2, items_per_rank=200)
    assert any("SUMMARY table of 6 tasks, 8 were requested" in r
               for r in mdtest_validity.invalid_reasons(run, exp))


def test_mdtest_stray_blank_line_in_a_table_keeps_its_rows() -> None:
    t = text("mdtest", "easy.txt")
    run = mdtest.parse_mdtest(t.replace("   File stat ", "\n   File stat ", 1))
    assert run.valid and run.figures()["file_removal"] == 40036.072


def test_mdtest_row_broken_by_another_ranks_line_is_flagged_not_wrong() -> None:
    t = text("mdtest", "easy.txt")
    broken = t.replace("   File stat                   39992.887      39992.887      39992.887"
                       "          0.000",
                       "   File stat                   39992.887      39992.887      39992V-1: "
                       "Rank   3 Line  1234 stray\n.887          0.000", 1)
    run = mdtest.parse_mdtest(broken)
    assert not run.valid and "file_stat" not in run.figures()
    assert any("broken by another rank's output" in r for r in run.reasons)


def test_mdtest_log_holding_two_runs_is_flagged() -> None:
    t = text("mdtest", "easy.txt")
    assert "two-runs" in kinds(mdtest.parse_mdtest(t + t))


# --------------------------------------------------------------------------- fio


def fio_doc(name: str = "randread-direct-n1.json") -> dict:
    return json.loads(text("fio", name))


@pytest.mark.parametrize("literal", ["Infinity", "1e400", "NaN", "-6086.97"])
def test_fio_iops_that_cannot_be_measured_is_invalid(literal: str) -> None:
    t = text("fio", "randread-direct-n1.json")
    iops = json.dumps(fio_doc()["jobs"][0]["read"]["iops"])
    t = t.replace(f'"iops" : {iops}', f'"iops" : {literal}', 1)
    run = fio.parse_fio(t)
    assert not run.valid and "bogus-figure" in kinds(run)
    spec = figures.FigureSpec("randread_4k_direct_iops", "IOPS", "randread_direct", ("read", "iops"))
    with pytest.raises(ValueError, match="not a figure"):
        figures.figure_value(run, spec)


def test_fio_zero_iops_with_io_done_is_invalid() -> None:
    doc = fio_doc()
    doc["jobs"][0]["read"]["iops"] = 0.0
    assert "bogus-figure" in kinds(fio.parse_fio(json.dumps(doc)))


@pytest.mark.parametrize("value, kb_base, nbytes", [
    ("1MiB", 1024, 10**6), ("1m", 1024, 2**20), ("1MB", 1024, 2**20), ("1Mi", 1024, 2**20),
    ("2TiB", 1024, 2 * 10**12), ("1KiB", 1000, 1024), ("1k", 1000, 1000),
    ("0x100000", 1024, 2**20), ("1.5m", 1024, None), ("4096", 1000, 4096), ("10%", 1024, None)])
def test_fio_sizes_follow_kb_base_as_fio_reads_them(value, kb_base, nbytes) -> None:
    assert fio.parse_fio_size(value, kb_base) == nbytes


@pytest.mark.parametrize("value, seconds", [
    ("10", 10), ("10s", 10), ("1m", 60), ("5m", 300), ("1M", 60), ("500ms", 0.5), ("2h", 7200),
    ("1d", 86400), ("1min", None), ("1.5", None)])
def test_fio_runtime_is_a_time(value, seconds) -> None:
    assert fio.parse_fio_time(value) == seconds


def test_fio_runtime_in_minutes_is_not_read_as_a_size() -> None:
    doc = fio_doc()
    job = doc["jobs"][0]
    job["job options"]["runtime"] = "1m"
    for d in ("read", "write", "trim"):
        job[d]["runtime"] = 60001 if job[d]["runtime"] else 0
    assert fio.parse_fio(json.dumps(doc)).valid  # 60 s of a 1 m runtime: not stopped early
    for d in ("read", "write", "trim"):
        job[d]["runtime"] = 3001 if job[d]["runtime"] else 0
    run = fio.parse_fio(json.dumps(doc))
    assert any("runtime of 60 s: it was stopped early" in r for r in run.reasons)


def test_fio_bare_flags_are_inferred_from_the_report() -> None:
    run = fio.parse_fio(text("fio", "bare-flags.json"))
    [job] = run.jobs
    assert "time_based" not in job.job_options and "time_based" not in run.global_options
    assert job.flag("group_reporting") and job.flag("time_based")  # inferred, and said so
    assert sorted(f.text.split(": ", 1)[1][:25] for f in run.findings if f.kind == "inferred") \
        == ["group_reporting in effect", "time_based in effect (it "]
    assert job.direct_io  # buffered=0
    assert job.option_bytes("size") == 10**6  # size=1MiB, kb_base=1024
    assert not [f for f in run.findings if f.kind == "cache"]  # O_DIRECT: no cache note
    assert run.valid


def test_fio_bare_flags_from_the_job_file() -> None:
    doc = fio_doc("bare-flags.json")
    for d in ("read",):
        doc["jobs"][0][d]["io_bytes"] = 1000  # no wrap: time_based cannot be inferred
    alone = fio.parse_fio(json.dumps(doc))
    assert not alone.jobs[0].flag("time_based") and "flags-unknown" in kinds(alone, "note")
    run = fio.parse_fio(json.dumps(doc), job_file=text("fio", "bare-flags.fio"))
    assert run.jobs[0].flag("time_based") and "flags-unknown" not in kinds(run, "note")
    cmd = fio.job_file_options("fio --time_based --name=x --group_reporting --size=4k")
    assert cmd == {"global": {"time_based": "1"},
                   "x": {"name": "x", "group_reporting": "1", "size": "4k"}}


def test_fio_output_holding_two_reports_is_flagged() -> None:
    t = text("fio", "randread-direct-n1.json")
    assert "two-runs" in kinds(fio.parse_fio(t + t))


def test_parse_fio_does_not_echo_a_non_json_file(tmp_path, capsys) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("".join(f"line {i}: an error of some kind {'x' * 500}\n"
                            for i in range(20000)))
    assert cli.main(["parse", "fio", str(path)]) == 0
    out = capsys.readouterr().out
    assert len(out) < 200_000 < path.stat().st_size
    d = json.loads(out)
    assert d["valid"] is False and d["messages"][-1] == "(and 19,900 more lines, not listed)"


# --------------------------------------------------------------------------- the CLI


def test_parse_applies_the_version_rules(tmp_path, capsys) -> None:
    t = text("ior", "write-stonewall-wearout.txt")
    for version, valid, note in (("IOR-3.3.0", False, "untested"),
                                 ("IOR-4.0.1", True, "untested"), ("IOR-4.0.0", True, "tested")):
        path = tmp_path / f"{version}.txt"
        path.write_text(t.replace("IOR-4.0.0", version))
        assert cli.main(["parse", "ior", str(path)]) == 0
        d = json.loads(capsys.readouterr().out)
        assert (d["valid"], d["version_note"].split(":")[0]) == (valid, note), version
        if version == "IOR-3.3.0":
            assert any("known bug affecting bandwidth" in r for r in d["reasons"])
    path = tmp_path / "noversion.txt"
    path.write_text(t.replace("IOR-4.0.0: MPI Coordinated Test", "x"))
    assert cli.main(["parse", "ior", str(path)]) == 0
    d = json.loads(capsys.readouterr().out)
    assert not d["valid"] and any("version not found" in r for r in d["reasons"])


def test_a_big_file_of_error_lines_gives_bounded_output(tmp_path, capsys) -> None:
    path = tmp_path / "errors.txt"
    line = b"ERROR: write(3) failed, errno 5, Input/output error (aiori-POSIX.c:1234)\n"
    with open(path, "wb") as fh:
        fh.write(line * (20 * 2**20 // len(line)))  # 20 MB: the cost does not grow with it
    assert cli.main(["parse", "ior", str(path)]) == 0
    out = capsys.readouterr().out
    assert len(out) < 100_000
    assert "more 'error' finding(s)" in out


# --------------------------------------------------------------------------- reference


REFERENCE = (Path(__file__).resolve().parents[2] / "reference" / "local.yaml").read_text()

BILLION_LAUGHS = "\n".join(
    [f'a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [f"a{i}: &a{i} [{','.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9)]) + "\n"


@pytest.mark.parametrize("edit, message", [
    (lambda t: t.replace("    node_fraction: 0.9          # of 4 nodes -> 3.6, rounded up: 4",
                         "    node_fraction: 0.9\n    node_fraction: 0.01", 1),
     "tests.ior_write_bandwidth.node_fraction: duplicate key (line "),
    (lambda t: t.replace("segments: 4096  ", "segments: 4096.0", 1),
     "tests.ior_write_bandwidth.segments: 4096.0 is not a whole number: write 4096"),
    (lambda t: t.replace("deadline_s: 2", "deadline_s: 2.0", 1),
     "tests.ior_write_bandwidth.deadline_s: 2.0 is not a whole number"),
    (lambda t: t.replace("{value: 1,", "{value: .nan,", 1),
     "tests.ior_write_bandwidth.threshold.value: nan is not a finite number"),
    (lambda t: t.replace("tolerance: 0.1}", "tolerance: -.inf}", 1),
     "tests.ior_write_bandwidth.threshold.tolerance: -inf is not a finite number"),
    (lambda t: t.replace("  ior_write_bandwidth:", "  1:", 1),
     "tests: key 1 is a int, not a name (quote it)"),
    (lambda t: t.replace("block_size: 1MiB", "block_size: 2048TiB", 1),
     "tests.ior_write_bandwidth.block_size: '2048TiB' is not a sensible size"),
    (lambda t: t.replace("segments: 4096  ", "segments: 2147483647", 1),
     "tests.ior_write_bandwidth.segments: block_size x segments = 2147483647MiB per rank is "
     "more than 1024TiB"),
    (lambda t: t.replace("deadline_s: 2", "deadline_s: 9999999", 1),
     "tests.ior_write_bandwidth.deadline_s: 9999999 is greater than the maximum of 86400"),
    (lambda t: BILLION_LAUGHS, "line 4: more than 20 YAML aliases"),
    (lambda t: t.encode() + b"\0\1\2", "a binary file (it holds NUL bytes)"),
    (lambda t: t.encode().replace(b"emulated", b"emul\xe9ted"), "line 1: not UTF-8 text"),
    (lambda t: t * 300, "more than 1,048,576 bytes"),
])
def test_bad_reference_files_exit_2_naming_file_and_key(tmp_path, capsys, edit, message):
    path = tmp_path / "bad ref.yaml"
    data = edit(REFERENCE)
    assert data != REFERENCE
    (path.write_bytes if isinstance(data, bytes) else path.write_text)(data)
    assert cli.main(["reference", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}: {message}" in err, err
    assert "Traceback" not in err


def test_aliases_that_expand_beyond_the_budget_are_refused_cheaply(tmp_path, capsys):
    # Few aliases, but each names a big sequence: the expanded size is what counts.
    big = "[" + ",".join(["1"] * 20000) + "]"
    path = tmp_path / "wide.yaml"
    path.write_text(f"a: &a {big}\nb: [*a, *a, *a, *a, *a, *a]\n")
    assert cli.main(["reference", str(path)]) == 2
    assert "more than 100,000 values once its YAML aliases are expanded" in \
        capsys.readouterr().err


def test_good_reference_file_is_valid(tmp_path, capsys):
    path = tmp_path / "ok.yaml"
    path.write_text(REFERENCE)
    assert cli.main(["reference", str(path)]) == 0


# --------------------------------------------------------------------------- report


def run_report() -> dict:
    return json.loads(text("reframe", "ior-pass.json"))


def set_first_figure(doc: dict, value) -> None:
    tc = doc["runs"][0]["testcases"][0]
    key = next(iter(tc["perfvalues"]))
    tc["perfvalues"][key][0] = value


@pytest.mark.parametrize("value", [-1987.01, math.nan, math.inf, 0.0])
def test_report_never_accepts_a_figure_that_cannot_be_measured(value, tmp_path):
    doc = run_report()
    set_first_figure(doc, value)
    path = tmp_path / "run-report.json"
    path.write_text(json.dumps(doc))
    tests = {t.name: t for t in runreport.tests_of(runreport.load_run_report(path))}
    assert tests["IORWriteBandwidth"].verdict == verdicts.INVALID
    assert "not a measurement" in tests["IORWriteBandwidth"].reason
    assert judging.overall_verdict(list(tests.values()))[0] == verdicts.NOT_ACCEPTED
    assert signoff.main([str(path), "--out", str(tmp_path / "out")]) == 1  # NOT ACCEPTED
    md = (tmp_path / "out" / "report.md").read_text()
    assert "ACCEPTED" in md and "| INVALID |" in md


def test_report_count_figures_may_be_zero():
    assert verdicts.bogus_figures([verdicts.Figure("outlier_nodes", 0, "nodes")]) == []


@pytest.mark.parametrize("edit, key", [
    (lambda d: d["runs"][0]["testcases"][0].update(perfvalues=[1, 2]),
     "runs.0.testcases.0.perfvalues"),
    (lambda d: d["runs"][0]["testcases"][0].update(tags="acceptance"), "runs.0.testcases.0.tags"),
    (lambda d: d["runs"][0]["testcases"][0].update(name=5), "runs.0.testcases.0.name"),
    (lambda d: d.update(runs={"a": 1}), "runs"),
])
def test_report_with_wrong_json_types_exits_2_naming_file_and_key(tmp_path, capsys, edit, key):
    doc = run_report()
    edit(doc)
    path = tmp_path / "run-report.json"
    path.write_text(json.dumps(doc))
    assert signoff.main([str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}: {key}:" in err and "Traceback" not in err


@pytest.mark.parametrize("content", [b"", b"\x00\xff binary", b'{"session_info": {}, "ru'])
def test_report_of_a_corrupt_file_exits_2(tmp_path, capsys, content):
    path = tmp_path / "run-report.json"
    path.write_bytes(content)
    assert signoff.main([str(path)]) == 2
    assert str(path) in capsys.readouterr().err


# --------------------------------------------------------------------------- trends


def test_trends_refuse_foreign_and_damaged_databases(tmp_path, capsys):
    base = run_report()
    ref = tmp_path / "ref.yaml"
    ref.write_text(REFERENCE)
    report_file = tmp_path / "run-report.json"
    report_file.write_text(json.dumps(base))
    good = tmp_path / "results.db"
    store = trends.Store(good)
    nightly = copy.deepcopy(base)
    nightly["session_info"].update(fsaccept_kind="nightly", fsaccept_system="local")
    store.store(nightly)
    trends.check_results_db(good)  # ReFrame's own database passes
    foreign = tmp_path / "foreign.db"
    with sqlite3.connect(foreign) as con:
        con.execute("CREATE TABLE x(a)")
    truncated = tmp_path / "truncated.db"
    truncated.write_bytes(good.read_bytes()[:1500])
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"\x00\x01" * 3000)
    for db, message in ((foreign, "not ReFrame's results database (tables: x)"),
                        (truncated, "results database"), (junk, "not a readable SQLite")):
        before = db.read_bytes()
        code = trends.main(["compare", str(report_file), "--db", str(db), "--system", "local",
                            "--reference", str(ref), "--out", str(tmp_path / "out")])
        err = capsys.readouterr().err
        assert code == 2 and str(db.resolve().name) in err and message in err, err
        assert db.read_bytes() == before  # nothing written into somebody else's file
        assert trends.main(["check-db", str(db)]) == 2
        capsys.readouterr()


# ------------------------------------------------ JSON integers beyond a float's range


@pytest.mark.parametrize("sign, exponent", [(1, 400), (-1, 400), (1, 5000)])
def test_an_integer_beyond_a_float_is_not_a_finite_number(sign, exponent) -> None:
    # math.isfinite(10**400) raises OverflowError; repr(10**5000) raises ValueError.
    digits = exponent + 1
    assert figure_problem(sign * 10**exponent, io_done=False) == (
        f"an integer of {digits:,} digits (beyond a float's range) is not a finite number")
    assert figure_problem(int(1.7e308)) is None


def test_fio_integer_beyond_a_float_is_invalid_not_a_traceback(tmp_path, capsys) -> None:
    # fsync-n1: time_based with a size, so the "wrapped" note divides io_bytes too.
    doc = fio_doc("fsync-n1.json")
    doc["jobs"][0]["write"]["io_bytes"] = 10**400
    run = fio.parse_fio(json.dumps(doc))
    assert not run.valid and "bogus-figure" in kinds(run)
    assert any("write.io_bytes an integer of 401 digits" in r for r in run.reasons)
    doc["jobs"][0]["error"] = 10**400  # no errno either
    path = tmp_path / "fio.json"
    path.write_text(json.dumps(doc))
    assert cli.main(["parse", "fio", str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "INVALID"


@pytest.mark.parametrize("exponent", [400, 5000])
def test_ior_json_integer_beyond_a_float_is_invalid_not_a_traceback(tmp_path, capsys,
                                                                    exponent) -> None:
    t = text("ior", "json-summary.json")
    assert '"bwMeanMIB": 874.9355,' in t
    t = t.replace('"bwMeanMIB": 874.9355,', f'"bwMeanMIB": 1{"0" * exponent},', 1)
    run = parse_ior_json(t)
    assert not run.valid
    assert any("Mean(MiB) inf is not a finite number" in r for r in run.reasons)
    path = tmp_path / "ior.json"
    path.write_text(t)
    assert cli.main(["parse", "ior", str(path), "--json-summary"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "INVALID"


def _glued_rerun(first: str, second: str) -> str:
    """A killed run's log cut in the middle of its last per-rank line (no newline), with
    the rerun's output appended to the same file."""
    cut = first.index(": stonewalling pairs accessed: ") + len(": stonewalling pairs acc")
    return first[:cut] + second


def test_ior_second_run_glued_to_a_cut_off_line_is_flagged() -> None:
    # Issue 22: `...pairs accIOR-4.0.0: MPI Coordinated Test...` went undetected.
    glued = _glued_rerun(text("ior", "srun-write-8ranks-4nodes.txt"),
                         text("ior", "write-stonewall-wearout.txt"))
    run = ior.parse_ior(glued)
    assert "two-runs" in kinds(run) and not run.valid
    [finding] = [f for f in run.findings if f.kind == "two-runs"]
    assert "glued to a cut-off line" in finding.text


@pytest.mark.parametrize("marker", ["Began               : ", "Command line        : ",
                                    "Options: "])
def test_ior_second_header_block_anywhere_in_a_line_is_flagged(marker) -> None:
    first = text("ior", "srun-write-8ranks-4nodes.txt")
    second = text("ior", "write-stonewall-wearout.txt")
    glued = _glued_rerun(first, second[second.index(marker):])
    assert "two-runs" in kinds(ior.parse_ior(glued))


def test_ior_single_runs_are_not_two_runs() -> None:
    for path in sorted((DATA / "ior").glob("*.txt")):
        assert "two-runs" not in kinds(ior.parse_ior(path.read_text())), path.name


def test_ior_glued_rerun_is_invalid_when_re_read(tmp_path, capsys) -> None:
    path = tmp_path / "glued.txt"
    path.write_text(_glued_rerun(text("ior", "srun-write-8ranks-4nodes.txt"),
                                 text("ior", "read-stonewalled.txt")))
    assert cli.main(["parse", "ior", str(path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "INVALID"
    assert any("more than one run" in r for r in out["reasons"])


def test_ior_run_start_search_is_linear_on_a_long_line() -> None:
    # A line of many "IOR-" pieces must not make the header search quadratic: the work
    # (regex steps are not counted; the pattern is bounded) is checked by its shape.
    assert "{0,40}" in ior._RUN_START_RE.pattern and "\\S*" not in ior._RUN_START_RE.pattern
    run = ior.parse_ior("IOR-" * 50_000 + "\n" + text("ior", "write-stonewall-wearout.txt"))
    assert "two-runs" not in kinds(run)
