"""Nightly regression through ReFrame's own results storage and comparison query."""

import copy
import json
import math
import uuid
from pathlib import Path

import pytest
import yaml

from fsaccept.reporting import trends
from fsaccept.suite.reference import load_reference
from fsaccept.benchmarks.ior.command import parameters

DATA = Path(__file__).resolve().parent.parent / "data" / "reframe"
DAY = 86400.0


def nightly_session(base, day, scale=1.0, system="local", scales=None):
    """A copy of a real run report as a nightly session ``day`` days later, every
    figure × ``scale`` (or × ``scales[figure]``)."""
    r = copy.deepcopy(base)
    u = str(uuid.uuid4())
    info = r["session_info"]
    info.update(uuid=u, time_start_unix=info["time_start_unix"] + day * DAY,
                time_end_unix=info["time_end_unix"] + day * DAY,
                fsaccept_kind="nightly", fsaccept_system=system)
    for run in r["runs"]:
        for i, tc in enumerate(run["testcases"]):
            tc.update(uuid=f"{u}:{run['run_index']}:{i}", session_uuid=u)
            if tc.get("job_completion_time_unix"):
                tc["job_completion_time_unix"] += day * DAY
            for key, vals in tc["perfvalues"].items():
                if vals[0] is not None:
                    vals[0] = round(vals[0] * (scales or {}).get(key.rsplit(":", 1)[-1], scale),
                                    2)
    return r


@pytest.fixture
def base():
    return json.loads((DATA / "ior-pass.json").read_text())


@pytest.fixture
def store(tmp_path):
    return trends.Store(tmp_path / "results.db")


def test_median_of_the_last_sessions_through_reframes_comparison(store, base):
    history = [nightly_session(base, d, s) for d, s in enumerate([0.5, 1.0, 1.1, 0.9, 1.0])]
    for r in history:
        store.store(r)
    # Another system's and an acceptance session are never part of the history.
    store.store(nightly_session(base, 2.5, 0.1, system="other"))
    acc = nightly_session(base, 3.5, 0.1)
    acc["session_info"]["fsaccept_kind"] = "acceptance"
    store.store(acc)
    now = nightly_session(base, 6, scales={"write_bandwidth": 0.85, "read_iops": 0.95})
    store.store(now)
    settings = trends.NightlySettings(sessions=3, tolerance=0.1)
    comps, sessions = trends.nightly_compare(store, "local", now["session_info"]["uuid"], now,
                                             settings)
    assert len(sessions) == 6
    c = {x.figure: x for x in comps}
    # Median of the last 3 (1.1, 0.9, 1.0) = the base figure; 0.5 is outside the window.
    assert c["write_bandwidth"].median == 1987.01
    assert c["write_bandwidth"].now == round(1987.01 * 0.85, 2)
    assert c["write_bandwidth"].pdiff == pytest.approx(-15.0, abs=0.01)
    assert c["write_bandwidth"].sessions == 3
    # The history is each figure in those sessions: 10 % apart.  15 % below the median
    # is within that noise (a fixed 10 % tolerance would have called it a regression).
    assert c["write_bandwidth"].history == (round(1987.01 * 1.1, 2), round(1987.01 * 0.9, 2),
                                            1987.01)
    assert trends.regressions(comps, 0.1) == []
    said = c["write_bandwidth"].describe(0.1)
    assert "15.00 % below the median 1,987.0 MiB/s of the last 3 sessions (noise bound" in said
    assert said.endswith("stay above it: within the noise)"), said


def steady(base, store, spread, now_scale, sessions=7):
    """``sessions`` nightly sessions whose figures differ by ``spread`` (fractions of
    the base figure, repeated), then one × ``now_scale``; its comparisons by figure."""
    for d in range(sessions):
        store.store(nightly_session(base, d, 1.0 + spread[d % len(spread)]))
    now = nightly_session(base, sessions, now_scale)
    store.store(now)
    comps, _ = trends.nightly_compare(store, "local", now["session_info"]["uuid"], now,
                                      trends.NightlySettings(sessions=sessions, tolerance=0.1))
    return {x.figure: x for x in comps}


def test_a_steady_tests_drop_below_the_tolerance_is_a_regression(store, base):
    # Nights within ±0.5 %; tonight 4 % lower: far less than the tolerance, far more
    # than the noise.
    c = steady(base, store, (0.0, 0.005, -0.005), 0.96)["write_bandwidth"]
    assert c.regressed(0.1) and len(c.history) == 7
    bound = c.noise_bound
    assert 0.96 * 1987.01 < bound < 1987.01
    assert "beyond the noise" in c.describe(0.1)


def test_a_noisy_tests_drop_beyond_the_tolerance_within_its_noise_is_not(store, base):
    # Nights 20 % apart: a night 25 % below the median is within that noise; one at a
    # tenth of it is not.
    assert not steady(base, store, (0.0, 0.2, -0.2), 0.75)["write_bandwidth"].regressed(0.1)
    store2 = trends.Store(Path(store.db_file).with_name("other.db"))
    assert steady(base, store2, (0.0, 0.2, -0.2), 0.1)["write_bandwidth"].regressed(0.1)


def test_with_fewer_than_three_sessions_or_no_spread_the_tolerance_judges(store, base):
    c = steady(base, store, (0.0, 0.01), 0.85, sessions=2)["write_bandwidth"]
    assert c.noise_bound is None and c.regressed(0.1) and not c.regressed(0.2)
    assert "(tolerance 10 %; fewer than 3 sessions give no spread to judge by)" in \
        c.describe(0.1)
    flat = trends.Comparison("T", "s:p+e", "f", "MiB/s", 95.0, 100.0, -5.0, 3,
                             history=(100.0, 100.0, 100.0))
    assert flat.noise_bound is None and not flat.regressed(0.1) and flat.regressed(0.04)
    assert "the sessions' figures have no spread to judge by" in flat.describe(0.1)
    # A time: worse when larger, bounded above.
    slow = trends.Comparison("T", "s:p+e", "f", "s", 12.0, 10.0, 20.0, 3, True,
                             history=(10.0, 10.1, 9.9, 10.0))
    assert slow.noise_bound > 10.0 and slow.regressed(0.5)
    assert "stay below it: beyond the noise" in slow.describe(0.5)


def test_first_session_has_no_history(store, base):
    first = nightly_session(base, 0)
    store.store(first)
    comps, _ = trends.nightly_compare(store, "local", first["session_info"]["uuid"], first,
                                      trends.NightlySettings())
    assert comps and all(c.median is None and not c.regressed(0.1) for c in comps)
    assert "no history" in comps[0].describe(0.1)


def test_unknown_session_is_a_clear_error(store, base):
    with pytest.raises(trends.NightlyError, match="not in the results database"):
        trends.nightly_compare(store, "local", "nope", base, trends.NightlySettings())


def test_trend_report_writes_plots_and_summary(store, base, tmp_path):
    runs = [nightly_session(base, d, 1.0 + 0.01 * d) for d in range(4)]
    runs.append(nightly_session(base, 4, 0.5))
    for r in runs:
        store.store(r)
    settings = trends.NightlySettings(sessions=3, tolerance=0.1, trend_sessions=3)
    summary, comps = trends.write_trends(store, tmp_path / "out", "local",
                                         runs[-1]["session_info"]["uuid"], runs[-1], settings)
    text = summary.read_text()
    assert text.startswith("# Nightly local: REGRESSION")
    assert "| IORWriteBandwidth | write_bandwidth | 993.5 MiB/s |" in text
    plots = sorted(p.name for p in (tmp_path / "out" / "trends").iterdir())
    assert "IORWriteBandwidth-write_bandwidth.png" in plots and len(plots) == 5
    series = trends.trend_series(store.testcases(store.sessions("local")))
    pts = series[("IORWriteBandwidth", "write_bandwidth", "MiB/s")]
    assert len(pts) == 5 and pts[-1].value == 993.5 and pts[-1].threshold == 45.0
    assert len(trends.last_sessions(pts, 3)) == 3


def direction_case(unit, lower, upper, now, median, pdiff):
    c = trends.Comparison("T", "s:p+e", "f", unit, now, median, pdiff, 3,
                          trends.smaller_is_better(unit, lower, upper))
    return c.regressed(0.1)


def test_direction_of_a_regression():
    assert direction_case("MiB/s", -0.1, None, 80, 100, -20.0)
    assert not direction_case("MiB/s", -0.1, None, 95, 100, -5.0)
    assert not direction_case("MiB/s", -0.1, None, 150, 100, 50.0)
    # Latency judged by an upper bound: larger is worse.
    assert direction_case("us", None, 0.0, 150, 100, 50.0)
    assert not direction_case("us", None, 0.0, 50, 100, -50.0)
    # No bounds: time units are smaller-better, others larger-better.
    assert direction_case("s", None, None, 12, 10, 20.0)
    assert direction_case("ops/s", None, None, 8, 10, -20.0)
    # A count whose median is 0 (outlier nodes): any rise is a regression.
    assert direction_case("nodes", None, 0, 1, 0, float("inf"))
    assert not direction_case("nodes", None, 0, 0, 0, float("nan"))


def test_comparison_table_columns_are_checked():
    with pytest.raises(trends.NightlyError, match="unexpected performance-comparison columns"):
        trends.comparisons_from_table([["name", "x"]], 1, [])


def test_nightly_reference_merges_smaller_sizes_and_stays_valid(tmp_path):
    raw = yaml.safe_load((DATA / "ior-fail.reference.yaml").read_text())
    raw["nightly"] = {"sessions": 5, "tests": {"ior_write_bandwidth": {"segments": 64,
                                                                       "deadline_s": 1}}}
    merged = trends.nightly_reference(raw, "r.yaml")
    assert merged["tests"]["ior_write_bandwidth"]["segments"] == 64
    assert merged["tests"]["ior_write_bandwidth"]["transfer_size"] == "1MiB"
    assert raw["tests"]["ior_write_bandwidth"]["segments"] == 4096  # the source is untouched
    path = tmp_path / "n.yaml"
    path.write_text(yaml.safe_dump(merged))
    assert parameters(load_reference(path), "ior_write_bandwidth").segments == 64
    s = trends.nightly_settings(raw)
    assert (s.sessions, s.tolerance, s.trend_sessions) == (5, 0.1, 30)
    raw["nightly"]["tests"]["ior_nope"] = {}
    with pytest.raises(trends.NightlyError, match=r"r.yaml: nightly.tests.ior_nope: no such test"):
        trends.nightly_reference(raw, "r.yaml")


def test_cli_reference_writes_a_valid_file_and_names_bad_input(tmp_path, capsys):
    raw = yaml.safe_load((DATA / "ior-fail.reference.yaml").read_text())
    raw["nightly"] = {"tests": {"ior_write_bandwidth": {"segments": 8}}}
    src = tmp_path / "r.yaml"
    src.write_text(yaml.safe_dump(raw))
    assert trends.main(["reference", str(src), "-o", str(tmp_path / "n.yaml")]) == 0
    assert parameters(load_reference(tmp_path / "n.yaml"), "ior_write_bandwidth").segments == 8
    raw["nightly"]["tests"]["ior_write_bandwidth"]["segments"] = 0
    src.write_text(yaml.safe_dump(raw))
    assert trends.main(["reference", str(src), "-o", str(tmp_path / "m.yaml")]) == 2
    err = capsys.readouterr().err
    assert f"{src}: nightly.tests: the test entries with the nightly values are not valid" in err
    assert "tests.ior_write_bandwidth.segments" in err


def test_cli_reference_never_overwrites_its_source_nor_leaves_an_invalid_file(tmp_path, capsys):
    raw = yaml.safe_load((DATA / "ior-fail.reference.yaml").read_text())
    raw["nightly"] = {"tests": {"ior_write_bandwidth": {"segments": 8}}}
    src = tmp_path / "r.yaml"
    src.write_text("# the site's own comments\n" + yaml.safe_dump(raw))
    before = src.read_text()
    assert trends.main(["reference", str(src), "-o", str(src)]) == 2
    assert "that is the reference file itself" in capsys.readouterr().err
    assert src.read_text() == before
    raw["nightly"]["tests"]["ior_write_bandwidth"]["segments"] = 0
    src.write_text(yaml.safe_dump(raw))
    assert trends.main(["reference", str(src), "-o", str(tmp_path / "m.yaml")]) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.yaml"]


@pytest.mark.parametrize("option", [["--tolerance", "10"], ["--tolerance", "nan"],
                                    ["--tolerance", "0"], ["--sessions", "0"],
                                    ["--confidence", "0.5"], ["--confidence", "1"],
                                    ["--confidence", "nan"]])
def test_compare_options_out_of_range_exit_2(option, capsys):
    with pytest.raises(SystemExit) as exit_:
        trends.main(["compare", "r.json", "--db", "d.db", "--system", "local", "--reference",
                     "r.yaml", "--out", "o", *option])
    assert exit_.value.code == 2 and option[0] in capsys.readouterr().err


@pytest.mark.parametrize("nightly", [5, [1], {"tolerance": "abc"}, {"tests": 3},
                                     {"confidence": 0.5}, {"confidence": 1}])
def test_a_bad_nightly_section_exits_2_naming_the_file(tmp_path, capsys, nightly):
    raw = yaml.safe_load((DATA / "ior-fail.reference.yaml").read_text())
    raw["nightly"] = nightly
    src = tmp_path / "r.yaml"
    src.write_text(yaml.safe_dump(raw))
    assert trends.main(["keys", str(src)]) == 2
    assert str(src) in capsys.readouterr().err


def test_a_stored_figure_that_is_not_a_number_is_a_damaged_history_not_ok(store, base, tmp_path):
    runs = [nightly_session(base, d) for d in range(4)]
    for vals in runs[1]["runs"][-1]["testcases"][0]["perfvalues"].values():
        vals[0] = float("nan")
    for r in runs:
        store.store(r)
    settings = trends.NightlySettings(sessions=3, tolerance=0.1, trend_sessions=3)
    with pytest.raises(trends.NightlyError, match=r"results.db: stored figures that are not "
                                                  r"numbers .*nan"):
        trends.write_trends(store, tmp_path / "out", "local", runs[-1]["session_info"]["uuid"],
                            runs[-1], settings)


def test_a_history_stored_in_another_unit_is_named_not_no_history(store, base, tmp_path):
    """ReFrame compares figures by unit: a history in MB/s beside today's MiB/s would
    silently be "no history".  It is refused, naming the figure and both units."""
    runs = [nightly_session(base, d) for d in range(4)]
    for r in runs[:-1]:
        for vals in r["runs"][-1]["testcases"][0]["perfvalues"].values():
            vals[4] = "MB/s"
    for r in runs:
        store.store(r)
    settings = trends.NightlySettings(sessions=3, tolerance=0.1, trend_sessions=3)
    with pytest.raises(trends.NightlyError, match=r"stored in another unit than today's, not "
                                                  r"compared: \S+ \S+: stored in MB/s, "
                                                  r"today in"):
        trends.write_trends(store, tmp_path / "out", "local", runs[-1]["session_info"]["uuid"],
                            runs[-1], settings)


# --------------------------------------------------------------------------- a busy database

# Another process holding a real lock on the results database: SQLite's own (a writer
# inside an exclusive transaction) or ReFrame's lock file beside it (a session storing).
SQLITE_HOLDER = """
import sqlite3, sys
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.readline()
con.execute("ROLLBACK")
print("released", flush=True)
sys.stdin.readline()
"""
REFRAME_HOLDER = """
import sys
from reframe.utility.osext import ReadWriteFileLock
lock = ReadWriteFileLock(sys.argv[1])
lock.acquire_write_lock()
print("locked", flush=True)
sys.stdin.readline()
lock.release_write_lock()
print("released", flush=True)
sys.stdin.readline()
"""


class Holder:
    """A process holding a lock until told to release it (no timing involved)."""

    def __init__(self, script, path):
        import subprocess
        import sys
        self.proc = subprocess.Popen([sys.executable, "-c", script, str(path)], text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self.proc.stdout.readline().strip() == "locked"

    def release(self):
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()
        assert self.proc.stdout.readline().strip() == "released"

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


@pytest.fixture
def nightly_db(store, base, tmp_path):
    """A healthy results database holding two nightly sessions, and the last one's
    run report file."""
    runs = [nightly_session(base, d) for d in range(2)]
    for r in runs:
        store.store(r)
    report = tmp_path / "run-report.json"
    report.write_text(json.dumps(runs[-1]))
    return Path(store.db_file), report


@pytest.fixture
def short_wait(monkeypatch):
    from fsaccept.reporting import results_db
    monkeypatch.setattr(results_db, "BUSY_WAIT_S", 0.3)
    monkeypatch.setattr(results_db, "BUSY_STEP_S", 0.1)
    return results_db


@pytest.mark.parametrize("holder", ["sqlite", "reframe"])
def test_a_database_locked_by_another_writer_is_busy_not_damaged(nightly_db, short_wait, tmp_path,
                                                               capsys, holder):
    db, report = nightly_db
    ref = tmp_path / "ref.yaml"
    ref.write_text((DATA / "ior-fail.reference.yaml").read_text())
    before = db.read_bytes()
    lock = Holder(SQLITE_HOLDER, db) if holder == "sqlite" else \
        Holder(REFRAME_HOLDER, db.parent / ".db.lock")
    try:
        assert trends.main(["check-db", str(db)]) == 2
        err = capsys.readouterr().err
        assert f"{db}: the results database is busy" in err and "not damaged" in err
        assert "move it aside" not in err and "Traceback" not in err
        assert trends.main(["compare", str(report), "--db", str(db), "--system", "local",
                            "--reference", str(ref), "--out", str(tmp_path / "out")]) == 2
        assert "the results database is busy" in capsys.readouterr().err
    finally:
        lock.release()
        lock.close()
    assert db.read_bytes() == before
    assert trends.main(["check-db", str(db)]) == 0  # the same file, now free


@pytest.mark.parametrize("holder", ["sqlite", "reframe"])
def test_a_lock_released_while_waiting_is_waited_for(nightly_db, short_wait, monkeypatch,
                                                     capsys, holder):
    db, _ = nightly_db
    lock = Holder(SQLITE_HOLDER, db) if holder == "sqlite" else \
        Holder(REFRAME_HOLDER, db.parent / ".db.lock")
    said = []
    waiting = short_wait._waiting

    def release_when_waiting(path, wait_s):
        waiting(path, wait_s)
        said.append(path)
        lock.release()  # the writer finishes while the check waits

    monkeypatch.setattr(short_wait, "_waiting", release_when_waiting)
    try:
        assert trends.main(["check-db", str(db)]) == 0
    finally:
        lock.close()
    assert said == [db]
    assert "busy (locked by another writer); waiting up to 0.3 s" in capsys.readouterr().err


def test_a_results_database_that_is_not_a_regular_file_is_refused(tmp_path, capsys):
    import os
    fifo = tmp_path / "results.db"
    os.mkfifo(fifo)
    assert trends.main(["check-db", str(fifo)]) == 2
    assert f"{fifo}: not a regular file" in capsys.readouterr().err


@pytest.mark.parametrize("value, shown", [("abc", "'abc'"), ("1e3", "'1e3'"), (True, "True"),
                                          (10**400, "1000000000"), ([1.0], "[1.0]")])
def test_a_stored_figure_that_is_a_string_exits_2_naming_it_not_1(store, base, tmp_path,
                                                                  capsys, value, shown):
    # Exit 1 is "regression" to cron; a polars traceback exited 1.
    runs = [nightly_session(base, d) for d in range(4)]
    damaged = runs[1]["session_info"]["uuid"]
    figures = runs[1]["runs"][-1]["testcases"][0]["perfvalues"]
    figures["local:compute:write_bandwidth"][0] = value
    for r in runs:
        store.store(r)
    report = tmp_path / "run-report.json"
    report.write_text(json.dumps(runs[-1]))
    ref = tmp_path / "ref.yaml"
    ref.write_text((DATA / "ior-fail.reference.yaml").read_text())
    assert trends.main(["compare", str(report), "--db", store.db_file, "--system", "local",
                        "--reference", str(ref), "--out", str(tmp_path / "out")]) == 2
    cap = capsys.readouterr()
    assert "Traceback" not in cap.err and len(cap.err.strip().splitlines()) == 1
    assert f"IORWriteBandwidth write_bandwidth: {shown}" in cap.err
    assert f"stored by session {damaged}" in cap.err
    assert "REGRESSION" not in cap.out and "ok" not in cap.out


def test_a_stored_reference_that_is_not_a_number_is_damaged_too(store, base, tmp_path):
    runs = [nightly_session(base, d) for d in range(3)]
    runs[0]["runs"][-1]["testcases"][0]["perfvalues"][
        "local:compute:write_bandwidth"][1] = "50"
    for r in runs:
        store.store(r)
    with pytest.raises(trends.NightlyError, match=r"write_bandwidth: reference and bounds "
                                                  r"\['50'"):
        trends.write_trends(store, tmp_path / "out", "local", runs[-1]["session_info"]["uuid"],
                            runs[-1], trends.NightlySettings(sessions=3, trend_sessions=3))


# --------------------------------------------------------------------------- plots drawn ahead

PLOT_AHEAD = """
import json, os, sys
from fsaccept.reporting import trends
pts = [trends.Point(1.7e9 + d * 86400, f"s{d}", 100.0 + d, 90.0) for d in range(12)]
jobs = [(f"T{i}", f"figure_{i}", "MiB/s", pts, 105.0 if i % 2 else None) for i in range(5)]
if sys.argv[1] == "broken":
    class Broken:
        def __init__(self):
            raise RuntimeError("no plotting here")
    trends.TrendPlotter = Broken
with trends.PlotAhead() as ahead:
    forked = ahead.forked
    if sys.argv[1] == "broken" and not forked:  # one CPU: nothing forked to fail
        print(json.dumps({"forked": 0}))
        sys.exit(0)
    try:
        pngs = ahead.draw(jobs)
    except trends.NightlyError as err:
        print(json.dumps({"forked": forked, "error": str(err)}))
        sys.exit(0)
import polars  # noqa: F401 - from now on, no fork: drawn in this process
with trends.PlotAhead() as here:
    assert not here.forked
    same = here.draw(jobs) == pngs == trends.draw_plots(jobs)
print(json.dumps({"forked": forked, "same": same, "n": len(pngs),
                  "cpus": len(os.sched_getaffinity(0))}))
"""


def _plot_ahead(mode):
    import subprocess
    import sys
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-c", PLOT_AHEAD, mode], capture_output=True,
                          text=True, cwd=root, env={**__import__("os").environ,
                                                    "PYTHONPATH": str(root)}, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_plots_drawn_ahead_in_child_processes_are_the_same_plots():
    # A fresh process (as scripts/nightly starts): children forked before polars.
    out = _plot_ahead("ok")
    assert out["forked"] == max(0, min(2, out["cpus"] - 1))
    assert out["same"] and out["n"] == 5


def test_plots_that_fail_in_a_child_are_an_error_not_a_hang():
    out = _plot_ahead("broken")
    if out["forked"]:
        assert out["error"] == "the trend plots failed: RuntimeError: no plotting here"


def test_no_fork_once_polars_is_loaded():
    import polars  # noqa: F401 - this test process has it (ReFrame's comparison)
    with trends.PlotAhead() as ahead:
        assert not ahead.forked


def test_trend_ylim_is_finite_and_above_zero_whatever_the_levels():
    from fsaccept.reporting.plots import trend_ylim
    assert trend_ylim([100.0, 50.0]) == pytest.approx(108.0)
    for levels in ([], [0.0], [-5.0, -1.0], [math.nan], [math.inf, -math.inf]):
        assert trend_ylim(levels) == 1.0
    assert trend_ylim([math.nan, 10.0, math.inf]) == pytest.approx(10.8)
    assert trend_ylim([1.7e308]) == 1.7e308  # 8 % more would overflow
