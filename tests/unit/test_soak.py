"""A soak judged on its time series: fio's interval logs (real captures of fio 3.37,
tests/data/soak/), the compact record, and the stall, drift and slow-node judges."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from fsaccept.benchmarks.fio import logs
from fsaccept.benchmarks.fio import soak
from fsaccept.core.inputs import InputError
from fsaccept.reporting import soak as section

DATA = Path(__file__).resolve().parents[1] / "data" / "soak"
RUNS = {"one-job": 5, "two-jobs-randrw": 5, "job1-stopped": 10, "fio-main-stopped": 10}


def clients(run: str, kinds=("bw", "clat")) -> list[logs.ClientLogs]:
    d = DATA / run
    jobs = sorted({logs.log_name(p).job for p in d.glob("soak_bw.*.log")})
    return [logs.ClientLogs(f"job{j}", f"n{j}", [logs.read_log(d / f"soak_{k}.{j}.log")
                                                  for k in kinds]) for j in jobs]


def evidence(run: str, **settings) -> soak.Evidence:
    return logs.soak_evidence(clients(run), soak.Settings(duration_s=RUNS[run], **settings))


# --------------------------------------------------------------------------- the parser


def test_log_names():
    assert logs.log_name("/x/soak_bw.2.log") == logs.LogName("soak", "bw", 2)
    assert logs.log_name("a_b_clat.log") == logs.LogName("a_b", "clat", None)
    assert logs.log_name("soak_slat.1.log").kind == "slat"
    with pytest.raises(logs.LogError, match="not a fio interval log's name"):
        logs.log_name("soak.json")


@pytest.mark.parametrize("run", RUNS)
def test_every_capture_parses(run):
    for path in sorted((DATA / run).glob("soak_*.log")):
        if path.stat().st_size == 0:  # slat of a synchronous engine: fio writes none
            with pytest.raises(logs.LogError, match=f"{path}: empty"):
                logs.read_log(path)
            continue
        log = logs.read_log(path)
        assert len(log) and not log.notes
        assert all(t >= 0 for t in log.times_ms) and all(v > 0 for v in log.values)


def test_capture_values_as_printed():
    log = logs.read_log(DATA / "one-job" / "soak_bw.1.log")
    assert list(log.times_ms) == [1000, 2000, 3000, 4003]
    assert list(log.values) == [884736, 821820, 811795, 866790]
    assert log.seen_directions() == [1]
    mixed = logs.read_log(DATA / "two-jobs-randrw" / "soak_clat.1.log")
    assert mixed.seen_directions() == [0, 1]
    times, values = mixed.direction(0)
    assert list(times) == [1000, 2000, 3179, 4000, 5000]
    assert list(values)[:2] == [96522, 104611]


def _text(run="one-job", name="soak_bw.1.log") -> str:
    return (DATA / run / name).read_text()


@pytest.mark.parametrize("text, message", [
    ("", "empty: no interval logged"),
    ("\n\n", "empty: no interval logged"),
    (_text()[:-1], "line 4: cut short"),
    (_text()[:30], "line 2: cut short"),
    (_text().replace("2000, 821820", "2000, \0\0"), "line 2: binary data"),
    (_text().replace("821820", "nan"), "line 2: value 'nan' is not a whole number"),
    (_text().replace("821820", "inf"), "line 2: value 'inf' is not a whole number"),
    (_text().replace("821820", "8.2e5"), "line 2: value '8.2e5'"),
    (_text().replace("821820", "-821820"), "line 2: value -821820 is negative"),
    (_text().replace("2000,", "-2000,"), "line 2: time '-2000'"),
    (_text().replace("3000,", "900,"), "line 3: time 900 ms goes back from 2000 ms"),
    (_text().replace("3000,", "2000,"), "line 3: time 2000 ms repeats line 2's"),
    (_text().replace("2000, 821820, 1, 0, 0", "2000, 821820, 1, 0"), "line 2: 4 fields"),
    (_text().replace("2000, 821820, 1,", "2000, 821820, 7,"), "line 2: direction 7"),
    (_text().replace("2000, 821820, 1, 0, 0", "2000, 821820, 1, 0, prio"),
     "line 2: priority 'prio'"),
    (_text().replace("\n2000", "\n\n2000"), "line 2: empty line"),
    (_text().replace("821820", "9" * 25), "line 2: value '9999"),
    ("a,b;c\n" * 3, "line 1: 2 fields"),
    ("{\"jobs\": []}\n", "line 1: 1 fields"),
])
def test_hostile_logs_name_file_and_line(text, message):
    with pytest.raises(logs.LogError) as err:
        logs.parse_log(text, "n1/soak_bw.1.log")
    assert str(err.value).startswith("n1/soak_bw.1.log: ")
    assert message in str(err.value)


def test_the_final_flush_may_repeat_its_time():
    """fio's HOWTO: the final interval may repeat a timestamp; only the last line."""
    text = _text() + "4003, 5, 1, 0, 0\n"
    log = logs.parse_log(text, "soak_bw.1.log")
    assert list(log.times_ms) == [1000, 2000, 3000, 4003]
    assert log.notes == ["line 5: time 4003 ms repeats line 4's (write): fio's final "
                         "flush, not kept"]
    # Another direction's lines after it do not make it any less the last of its own.
    assert logs.parse_log(text + "4003, 7, 0, 0, 0\n", "soak_bw.1.log").notes


def test_log_offset_and_prio_columns():
    log = logs.parse_log("1000, 5, 0, 4096, 81920, 0x2001\n", "x_clat.1.log")
    assert list(log.values) == [5]


def test_read_refuses_what_is_not_a_file(tmp_path):
    with pytest.raises(InputError, match="a directory"):
        logs.read_log(tmp_path)
    big = tmp_path / "soak_bw.1.log"
    big.write_bytes(b"\0" * 100)
    with pytest.raises(InputError, match="binary data"):
        logs.read_log(big)


def test_a_huge_line_costs_a_clipped_message():
    with pytest.raises(logs.LogError) as err:
        logs.parse_log("1" * 1_000_000 + ", 1, 1, 0, 0\n", "soak_bw.1.log")
    assert len(str(err.value)) < 300


# --------------------------------------------------------------------------- stalls


def test_a_stopped_job_is_a_stall_naming_its_node_and_time():
    ev = evidence("job1-stopped", max_stall_s=2)
    assert [(s.client, s.node, s.start_s, s.no_progress_s) for s in ev.stalls] == [
        ("job1", "n1", 4.002, 2.28)]  # records at 4002 (bw) then 7282 (clat)
    j = soak.judge(ev)[0]
    assert j.verdict == soak.FAIL and j.named == ("job1",)
    assert "from t+4.0 s for 2.3 s" in j.reasons[0] and "on n1 (job1)" in j.reasons[0]
    assert soak.judge(evidence("job1-stopped", max_stall_s=3))[0].verdict == soak.PASS


def test_a_lagging_monitor_is_no_stall():
    """fio's helper thread stopped: the bandwidth logs have a gap, the clat logs none."""
    ev = evidence("fio-main-stopped", max_stall_s=2)
    assert ev.stalls == []
    only_bw = logs.soak_evidence(clients("fio-main-stopped", ("bw",)),
                                 soak.Settings(duration_s=10, max_stall_s=2))
    assert {s.client for s in only_bw.stalls} == {"job1", "job2"}


@pytest.mark.parametrize("run", ["one-job", "two-jobs-randrw"])
def test_healthy_captures_pass_stall_and_shortfall(run):
    judged = {(j.what, j.figure): j for j in soak.judge(evidence(run, max_stall_s=1))}
    assert judged[("stall", "progress")].verdict == soak.PASS
    assert all(j.verdict == soak.PASS for (what, _), j in judged.items()
               if what == "shortfall")


def test_stalls_at_the_edges_and_the_longest_kept():
    found = soak.stalls_of([5000, 6000, 7000], 1, 20, "c", "n")
    assert [(s.start_s, s.no_progress_s) for s in found.stalls] == [(0.0, 4.0), (7.0, 12.0)]
    assert soak.stalls_of([5000, 6000], 1, None, "c", "n").count == 1  # end unknown
    many = [i * 3000 for i in range(1, 200)] + [700_000]
    found = soak.stalls_of(many, 1, 700, "c", "n")
    assert found.count == 200 and len(found.stalls) == soak.MAX_STALLS_PER_CLIENT
    assert max(s.no_progress_s for s in found.stalls) == 700 - 597 - 1
    # The verdict does not depend on which were dropped: the longest are kept.
    j = soak.judge_stalls(found.stalls, 1.5, 1, found.count - len(found.stalls))
    assert j.verdict == soak.FAIL and "180 shorter stall(s) not kept" in j.reasons[-1]
    with pytest.raises(ValueError, match="before the run's start"):
        soak.stalls_of([-5, 1000], 1, 2, "c", "n")


def test_stalls_of_many_clients_at_once_are_one_span():
    stalls = [soak.Stall(f"c{i}", f"n{i}", 100.0 + i * 0.1, 40.0) for i in range(8)]
    stalls.append(soak.Stall("c9", "n9", 5000.0, 31.0))
    j = soak.judge_stalls(stalls, 30, 1)
    assert j.verdict == soak.FAIL and len(j.reasons) == 2
    assert "n0, n1, n2, n3, n4 and 3 more (8 clients)" in j.reasons[0]
    assert j.reasons[1].startswith("no progress from t+1:23:20.0 for 31.0 s")


@pytest.mark.parametrize("bad", [math.nan, math.inf, -1.0])
def test_a_stall_that_is_no_time_is_invalid(bad):
    j = soak.judge_stalls([soak.Stall("c", "n", 3.0, bad)], 30, 1)
    assert j.verdict == soak.INVALID and "is not a time a run can have" in j.reasons[0]


# --------------------------------------------------------------------------- drift, nodes


def _series(aggregate, clients=(("c1", "n1", 10.0), ("c2", "n2", 10.0)),
            kind=soak.BANDWIDTH) -> soak.Series:
    b = soak.SeriesBuilder("write bandwidth", kind, "MiB/s", 1, len(aggregate))
    s = b.series()
    s.aggregate = np.asarray(aggregate, dtype=float)
    s.clients = [soak.ClientLine(*c) for c in clients]
    return s


def test_drift_is_the_least_squares_line_over_the_mean():
    flat = _series([100.0] * 101)
    assert soak.judge_drift(flat, 0.1).value == 0
    # 110 falling to 90 over the judged span (the last interval is left out).
    line = list(np.linspace(110, 90, 100)) + [0.0]
    j = soak.judge_drift(_series(line), 0.1)
    assert j.value == pytest.approx(-0.2) and j.verdict == soak.FAIL
    assert "fell by 20.0% of its mean" in j.reasons[0]
    assert soak.judge_drift(_series(line), 0.25).verdict == soak.PASS
    rising = soak.judge_drift(_series(list(np.linspace(90, 110, 100)) + [5.0]), 0.1)
    assert rising.verdict == soak.FAIL and "rose by 20.0%" in rising.reasons[0]


@pytest.mark.parametrize("n", [2, 3, 10, 1000])
def test_no_series_drifts_to_the_ceiling_which_the_schema_allows(n):
    """The extremes of a non-negative series' drift: all of it in one end interval."""
    last, first = np.zeros(n), np.zeros(n)
    last[-1] = first[0] = 1.0
    assert soak.drift(last, 1) == pytest.approx(6 * (n - 1) / (n + 1))
    assert soak.drift(first, 1) == pytest.approx(-6 * (n - 1) / (n + 1))
    rng = np.random.default_rng(n)
    assert max(abs(soak.drift(rng.random(n) ** 8, 1)) for _ in range(2000)) < 6
    schema = json.loads((Path(soak.__file__).parent / "schema.json").read_text())
    assert _find(schema, "max_drift")["maximum"] == soak.DRIFT_CEILING
    rose = list(np.linspace(0, 200, n)) + [0.0]
    assert soak.judge_drift(_series(rose), soak.DRIFT_CEILING).verdict == soak.PASS


def _find(node, key):
    if isinstance(node, dict):
        if key in node:
            return node[key]
        for v in node.values():
            if (found := _find(v, key)) is not None:
                return found
    return None


@pytest.mark.parametrize("bad", [math.nan, math.inf, -3.0])
def test_a_bandwidth_that_is_no_figure_is_invalid_not_judged(bad):
    y = [100.0] * 10
    y[4] = bad
    j = soak.judge_drift(_series(y), 0.1)
    assert j.verdict == soak.INVALID and "t+4.0 s" in j.reasons[0]
    assert soak.judge_drift(_series([0.0] * 10), 0.1).verdict == soak.INVALID


def test_the_slow_node_against_the_others_median():
    nodes = [(f"c{i}", f"n{i}", 100.0) for i in range(9)] + [("c9", "n9", 55.0)]
    j = soak.judge_shortfall(_series([1.0] * 5, nodes), 0.3)
    assert j.verdict == soak.FAIL and j.named == ("c9",) and j.value == pytest.approx(0.45)
    assert j.reasons[0].startswith("n9: 55 MiB/s over the run, 45.0% below")
    assert soak.judge_shortfall(_series([1.0] * 5, nodes), 0.5).verdict == soak.PASS
    # Two nodes: each against the other.
    two = soak.judge_shortfall(_series([1.0] * 5, [("a", "n1", 10.0), ("b", "n2", 4.0)]), 0.5)
    assert two.verdict == soak.FAIL and two.named == ("b",)
    # Two clients of one node are the node's mean.
    same = [("a", "n1", 10.0), ("b", "n1", 2.0), ("c", "n2", 6.0)]
    assert soak.judge_shortfall(_series([1.0] * 5, same), 0.01).verdict == soak.PASS
    one = soak.judge_shortfall(_series([1.0] * 5, [("a", "n1", 10.0)]), 0.3)
    assert one.verdict == soak.PASS and "no other node" in one.reasons[0]


@pytest.mark.parametrize("bad", [math.nan, math.inf, -1.0])
def test_a_client_mean_that_is_no_figure_is_invalid(bad):
    j = soak.judge_shortfall(_series([1.0] * 5, [("a", "n1", 10.0), ("b", "n2", bad)]), 0.3)
    assert j.verdict == soak.INVALID and "b on n2" in j.reasons[0]
    assert soak.verdict([j]) == soak.INVALID


# --------------------------------------------------------------------------- the record


def test_the_record_round_trips_and_re_judges_the_same():
    ev = evidence("job1-stopped", max_stall_s=2)
    again = soak.Evidence.from_dict(json.loads(json.dumps(ev.to_dict())))
    assert soak.judge(again) == soak.judge(ev)
    assert np.array_equal(again.series[0].aggregate, ev.series[0].aggregate)
    assert set(again.series[0].kept) == {"job1"}  # named by the stall and the shortfall


def test_the_aggregate_is_exact_at_each_interval():
    ev = evidence("two-jobs-randrw")
    read = next(s for s in ev.series if s.name == "read bandwidth")
    # Interval 0: job 1 read 30,144 KiB/s and job 2 31,956 KiB/s.
    assert read.aggregate[0] == (30144 + 31956) / 1024
    lat = next(s for s in ev.series if s.name == "read completion latency")
    assert lat.aggregate[0] == (96522 + 97818) / 2 / 1000


def test_a_day_of_a_thousand_clients_is_compact():
    """The record's size does not grow with the clients' series (a day at 1 s)."""
    n, clients = 86400, 30
    b = soak.SeriesBuilder("write bandwidth", soak.BANDWIDTH, "MiB/s", 1, n)
    rng = np.random.default_rng(0)
    for i in range(clients):
        b.add(f"c{i}", f"n{i}", rng.normal(100, 5, n))
    s = b.series()
    assert s.bucket_s == 300 and s.n_buckets == soak.MAX_BUCKETS
    size = len(json.dumps(s.to_dict()))
    assert size < 1_000_000  # the exact 1 s aggregate, compressed, and the buckets


@pytest.mark.parametrize("edit, key", [
    (lambda d: d.update(version=9), "soak: not a soak record"),
    (lambda d: d["settings"].update(max_stall_s="x"), "soak.settings.max_stall_s"),
    (lambda d: d["settings"].pop("duration_s"), "soak.settings"),
    (lambda d: d["series"][0].update(aggregate="!!"), "soak.series[0].aggregate"),
    (lambda d: d["series"][0].update(intervals=7), "soak.series[0].aggregate"),
    (lambda d: d["series"][0].update(intervals=10**9), "soak.series[0].intervals"),
    (lambda d: d["series"][0].update(kind="colour"), "soak.series[0].kind"),
    (lambda d: d["series"][0]["buckets"].pop("agg_min"), "soak.series[0].buckets.agg_min"),
    (lambda d: d["series"][0]["clients"].append([1, 2]), "soak.series[0].clients[2]"),
    (lambda d: d["stalls"].append({"client": "x"}), "soak.stalls[1]"),
    (lambda d: d.update(stalls_not_kept=-1), "soak.stalls_not_kept"),
])
def test_a_spoiled_record_names_its_key(edit, key):
    data = json.loads(json.dumps(evidence("job1-stopped").to_dict()))
    edit(data)
    with pytest.raises(soak.EvidenceError, match=key.replace("[", r"\[").replace("]", r"\]")):
        soak.Evidence.from_dict(data)


def test_a_zip_bomb_in_the_record_is_refused():
    import base64
    import zlib
    bomb = base64.b64encode(zlib.compress(b"\0" * (soak.MAX_INTERVALS * 8 + 100))).decode()
    with pytest.raises(soak.EvidenceError, match="not 5 values"):
        soak.decode(bomb, 5, "float64", "x")


def test_a_recorded_nan_is_judged_invalid():
    data = json.loads(json.dumps(evidence("job1-stopped").to_dict()))
    data["series"][0]["clients"][0][2] = None  # a mean that was NaN
    data["stalls"][0]["no_progress_s"] = None
    judged = soak.judge(soak.Evidence.from_dict(data))
    assert [j.verdict for j in judged if j.what in ("stall", "shortfall")] == [
        soak.INVALID, soak.INVALID]


def test_settings_of_the_reference_section():
    st = soak.Settings.of({"duration_s": 600, "max_stall_s": 5})
    assert (st.interval_s, st.max_drift, st.max_node_shortfall, st.intervals) == (
        1, soak.DEFAULT_MAX_DRIFT, soak.DEFAULT_MAX_NODE_SHORTFALL, 600)


# --------------------------------------------------------------------------- the section


def test_the_section_table_and_plots():
    sec = section.soak_section(evidence("job1-stopped", max_stall_s=2))
    assert sec.verdict == soak.FAIL
    rows = {r["judgement"]: r for r in sec.rows()}
    assert rows["stall"]["measured"] == "2.3 s" and rows["stall"]["limit"] == "2 s"
    assert rows["shortfall"]["reasons"].startswith("n1: ")
    pngs = section.plots(sec)
    assert set(pngs) == {"write bandwidth", "write completion latency"}
    assert all(p.startswith(b"\x89PNG") for p in pngs.values())
    md = sec.markdown({k: f"{k}.png" for k in pngs})
    assert "| stall | progress | 2.3 s | 2 s | FAIL |" in md
    assert "![write bandwidth](write bandwidth.png)" in md


def test_a_series_with_nothing_drawable_has_no_plot():
    s = _series([0.0] * 4)
    s.buckets = {k: np.full(s.n_buckets, np.nan) for k in s.buckets}
    assert section.series_plot(s) is None


# --------------------------------------------------------------------------- the check's parts

def test_a_soak_entry_is_typed_and_its_limits_refused_elsewhere():
    from fsaccept.benchmarks.fio import command
    p = command.parameters("fio_soak", "soak", {"node_fraction": 1, "file_size": "64MiB",
                                                 "runtime_s": 40, "max_stall_s": 5})
    assert p.soak == soak.Settings(duration_s=40, max_stall_s=5)
    opts = command.fio_options(p, "/d")
    assert "--log_avg_msec=1000" in opts
    assert f"--write_bw_log={command.SOAK_LOG}{command.NODE_PLACEHOLDER}" in opts
    assert command.soak_references(p.soak) == {
        "soak_longest_stall_s": (5, None, 0, "s"), "soak_drift_pct": (10.0, None, 0, "%"),
        "soak_node_shortfall_pct": (30.0, None, 0, "%")}
    with pytest.raises(command.FioEntryError, match=r"tests.fio_seq_write.max_stall_s: only"):
        command.parameters("fio_seq_write", "seq_write", {
            "node_fraction": 1, "file_size": "1MiB", "runtime_s": 1, "max_stall_s": 5})
    with pytest.raises(command.FioEntryError, match="is below interval_s"):
        command.parameters("fio_soak", "soak", {"node_fraction": 1, "file_size": "1MiB",
                                                "runtime_s": 9, "interval_s": 2,
                                                "max_stall_s": 1})
    assert command.entry_errors("tests.fio_soak", {"node_fraction": 1, "file_size": "1MiB",
                                                   "runtime_s": 9, "time_based": False})


def test_the_judged_figures_and_the_catalogue_agree():
    from fsaccept.benchmarks import registry
    from fsaccept.benchmarks.fio import command
    spec = registry.TESTS["FioSoak"]
    assert spec.checks_dir == "soak" and set(spec.may_be_zero) == set(command.SOAK_FIGURES)
    assert all(spec.reports(f) for f in command.SOAK_FIGURES)
    figs = command.soak_figures(soak.judge(evidence("job1-stopped", max_stall_s=2)))
    assert figs["soak_longest_stall_s"] == pytest.approx(2.28)
    assert set(figs) <= set(command.SOAK_FIGURES)


def _soak_case(ev: soak.Evidence, result: str = "pass", outputdir=None, kept=None,
               **figures):
    """The case the live check records of ``ev``; with ``outputdir``, the record's file
    it keeps there (``kept``: other bytes in it)."""
    from fsaccept.benchmarks.fio import command
    from fsaccept.reporting.case import case_of
    given = {**command.soak_figures(soak.judge(ev)), **figures}
    perf = {f"local-gluster:compute:{k}": [v, 100, None, 0, command.SOAK_FIGURES[k], result]
            for k, v in given.items()}
    record = json.dumps(ev.to_dict(), sort_keys=True)
    if outputdir is not None:
        outputdir.mkdir(parents=True, exist_ok=True)
        (outputdir / soak.RECORD_FILE).write_text(record if kept is None else kept)
    return case_of({"name": "FioSoak", "result": result, "perfvalues": perf,
                    "outputdir": str(outputdir), "soak_record": record})


class _Reference:
    def __init__(self, **entry):
        self.entries = {"fio_soak": {"node_fraction": 1, "file_size": "1MiB",
                                     "runtime_s": 10, **entry}}


def test_the_sign_off_judges_the_soaks_kept_record_again(tmp_path):
    from fsaccept.benchmarks import registry
    from fsaccept.core import inputs
    from fsaccept.reporting.signoff.common import RunFiles
    from fsaccept.reporting.signoff.soak import soak_reasons
    spec = registry.TESTS["FioSoak"]
    out = tmp_path / "output" / "FioSoak"
    kept = out / soak.RECORD_FILE

    def judged(case, ref=None):
        return soak_reasons(case, spec, ref, RunFiles(inputs.Reader(tmp_path)))
    stopped = evidence("job1-stopped", max_stall_s=2)
    # Recorded as passed while its record fails; a figure edited; a looser record.
    reasons = judged(_soak_case(stopped, outputdir=out), _Reference(max_stall_s=2))
    assert any(r.startswith("recorded as passed, but its soak record fails: no progress")
               for r in reasons), reasons
    edited = judged(_soak_case(stopped, "fail", out, soak_longest_stall_s=1.0),
                    _Reference(max_stall_s=2))
    assert any("soak_longest_stall_s is recorded as 1.0, but its soak record gives 2.28"
               in r for r in edited), edited
    looser = judged(_soak_case(stopped, "fail", out), _Reference(max_stall_s=1))
    assert any("the reference file says" in r for r in looser), looser
    assert judged(_soak_case(stopped, "fail", out), _Reference(max_stall_s=2)) == []
    # The run report's field edited (a passing record): the kept file is judged.
    case = _soak_case(stopped, "pass", out)
    passing = json.dumps(evidence("one-job", max_stall_s=1).to_dict(), sort_keys=True)
    forged = soak_reasons(type(case)(**{**vars(case), "record": {**case.record,
                                                                 "soak_record": passing}}),
                          spec, _Reference(max_stall_s=2), RunFiles(inputs.Reader(tmp_path)))
    assert f"its soak_record is not what its output {kept} says" in forged
    assert any(r.startswith("recorded as passed, but its soak record fails") for r in forged)
    # Missing, truncated, binary, no run directory read.
    assert soak_reasons(case, spec) == [
        "evidence missing: soak-record.json: the run directory was not read"]
    kept.unlink()
    assert judged(case) == [f"evidence missing: {kept}"]
    _soak_case(stopped, "fail", out, kept=case.record["soak_record"][:100])
    assert judged(case)[0].startswith(f"its soak record ({kept}) cannot be read")
    _soak_case(stopped, "fail", out, kept="{\0}")
    assert judged(case)[0].startswith(f"its soak record ({kept}) cannot be read")


def test_a_zero_stall_is_a_measurement_in_the_sign_off():
    from fsaccept.reporting.verdicts import PASS, verdict_of
    ev = evidence("one-job", max_stall_s=1)
    case = _soak_case(ev)
    assert case.figures and verdict_of(case).verdict == PASS, verdict_of(case)


# --------------------------------------------------------------------------- the record held
# to its own settings and to the job (issue 49, class 5): each record below was ACCEPTED.


def _signed(tmp_path, record: dict, nodes=None, **entry) -> list[str]:
    """The sign-off's reasons for a soak whose kept record (and its field) is ``record``,
    its job on ``nodes``, its entry ``entry``."""
    from fsaccept.benchmarks import registry
    from fsaccept.core import inputs
    from fsaccept.reporting.case import case_of
    from fsaccept.reporting.signoff.common import RunFiles
    from fsaccept.reporting.signoff.soak import soak_reasons
    out = tmp_path / "output" / "FioSoak"
    out.mkdir(parents=True, exist_ok=True)
    text = json.dumps(record, sort_keys=True)
    (out / soak.RECORD_FILE).write_text(text)
    ev = soak.Evidence.from_dict(record)
    given = command_figures(ev)
    perf = {f"local-gluster:compute:{k}": [v, 100, None, 0, "s", "pass"]
            for k, v in given.items()}
    case = case_of({"name": "FioSoak", "result": "pass", "perfvalues": perf,
                    "outputdir": str(out), "soak_record": text,
                    **({"job_nodelist": list(nodes)} if nodes else {})})
    return soak_reasons(case, registry.TESTS["FioSoak"], _Reference(**entry),
                        RunFiles(inputs.Reader(tmp_path)))


def command_figures(ev: soak.Evidence) -> dict[str, float]:
    from fsaccept.benchmarks.fio import command
    return command.soak_figures(soak.judge(ev))


def _record(run="one-job", **settings) -> dict:
    return evidence(run, **settings).to_dict()


def test_an_honest_soak_record_is_signed(tmp_path):
    assert _signed(tmp_path, _record("two-jobs-randrw", max_drift=0.5), ["n1", "n2"],
                   runtime_s=5, max_drift=0.5) == []


def test_an_empty_soak_record_is_invalid(tmp_path):
    record = {**_record(), "series": [], "stalls": []}
    assert "its soak record: no bandwidth series: a soak is judged on its bandwidth over " \
        "the run" in _signed(tmp_path, record, ["n1"], runtime_s=5)


def test_a_five_second_series_signed_as_an_eight_hour_soak_is_invalid(tmp_path):
    record = _record()
    record["settings"]["duration_s"] = 28800
    reasons = _signed(tmp_path, record, ["n1"], runtime_s=28800)
    assert ("its soak record: its write bandwidth is 5 intervals of 1 s over 5 s, but its "
            "settings ask 28,800 of 1 s over 28800 s") in reasons, reasons


def test_a_soak_record_of_latency_only_is_invalid(tmp_path):
    record = _record()
    record["series"] = [s for s in record["series"] if s["kind"] == soak.LATENCY]
    assert record["series"]
    assert "its soak record: no bandwidth series: a soak is judged on its bandwidth over " \
        "the run" in _signed(tmp_path, record, ["n1"], runtime_s=5)


def test_a_soak_record_of_one_node_of_four_is_invalid(tmp_path):
    reasons = _signed(tmp_path, _record(), ["n1", "n2", "n3", "n4"], runtime_s=5)
    assert ("its soak record: its write bandwidth has clients on n1, but the job ran on "
            "n1, n2, n3, n4: no client on n2, n3, n4") in reasons, reasons


def test_a_gap_of_zeros_with_its_stalls_removed_is_invalid(tmp_path):
    """The real one-job logs with a minute of silence after their second record: the
    stall is there; the record edited to drop it."""
    d = DATA / "one-job"

    def gapped(kind: str) -> logs.IntervalLog:
        lines = (d / f"soak_{kind}.1.log").read_text().splitlines()
        moved = [line if i < 2 else f"{int(line.split(',')[0]) + 60000},"
                 f"{line.split(',', 1)[1]}" for i, line in enumerate(lines)]
        return logs.parse_log("\n".join(moved) + "\n", f"soak_{kind}.1.log")
    ev = logs.soak_evidence([logs.ClientLogs("job1", "n1", [gapped("bw"), gapped("clat")])],
                            soak.Settings(duration_s=65))
    assert [(s.start_s, s.no_progress_s) for s in ev.stalls] == [(2.0, 60.0)]
    assert _signed(tmp_path, ev.to_dict(), ["n1"], runtime_s=65)[0].startswith(
        "recorded as passed, but its soak record fails: no progress from t+2.0 s")
    record = {**ev.to_dict(), "stalls": []}
    reasons = _signed(tmp_path, record, ["n1"], runtime_s=65)
    assert ("its soak record: its series show no progress from t+2.0 s for 60.0 s (more "
            "than 30 s), but its stalls hold none of job1 there") in reasons, reasons


def _week_long(series: dict) -> dict:
    """A real record's series made a week of 1 s intervals of zeros, a bucket per
    interval: kilobytes on disk, tens of MB once decoded."""
    n = soak.MAX_INTERVALS
    zeros = np.zeros(n)
    return {**series, "intervals": n, "bucket_s": series["interval_s"],
            "aggregate": soak.encode(zeros),
            "buckets": {k: soak.encode(zeros, "float32") for k in soak.Series.BUCKET_KEYS},
            "kept": {}}


@pytest.mark.parametrize("count, message", [
    (7, r"soak.series: 7 series, more than the 6 a soak records \(a figure per kind "
        r"and fio direction\): refused before any is decoded"),
    (1, r"soak.series\[0\].intervals: 604,800 is not 2 to 10 \(its settings' intervals\): "
        r"refused before it is decoded"),
])
def test_a_record_of_more_series_or_points_than_its_settings_is_refused_undecoded(
        count, message):
    """Issue 49: a 2.3 MB soak-record.json took 4.1 GiB (the count of series was not
    capped, nor their points by the settings).  The real record of job1-stopped (10 s
    at 1 s), its series replaced by week-long ones: refused, without decoding them."""
    import tracemalloc
    data = json.loads(json.dumps(evidence("job1-stopped").to_dict()))
    data["series"] = [_week_long(data["series"][0]) for _ in range(count)]
    text = json.dumps(data)
    assert len(text) < 200_000 * count
    tracemalloc.start()
    try:
        with pytest.raises(soak.EvidenceError, match=message):
            soak.Evidence.from_dict(json.loads(text))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * len(text) + (1 << 20), peak  # the JSON, never a decoded series


def test_the_series_cap_is_fios_figures_by_direction():
    assert soak.MAX_SERIES == len(logs.SOAK_FIGURES) * len(logs.DIRECTIONS)
