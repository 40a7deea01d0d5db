"""fsaccept.benchmarks.ior.parse against real IOR 4.0.0 captures (tests/data/ior/, see its README.md).

Expected figures are copied by hand from the capture files.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fsaccept.benchmarks.ior.parse import (
    INVALID,
    WARNING,
    IorRun,
    parse_ior,
    parse_size,
)
from fsaccept.benchmarks.ior.parse_json import parse_ior_json

DATA = Path(__file__).resolve().parents[1] / "data" / "ior"


def load(name: str) -> str:
    return (DATA / name).read_text()


def run(name: str) -> IorRun:
    return parse_ior(load(name + ".txt"))


def kinds(r: IorRun, severity: str | None = None) -> list[str]:
    return [f.kind for f in r.findings if severity is None or f.severity == severity]


def cmd_exit(name: str) -> int:
    first, second = load(name + ".cmd").splitlines()[:2]
    ours = first.startswith(("mpirun --oversubscribe -np 4 ior ", "srun -N4 -n8 ", "env IOR_HINT"))
    suite = "suite-" in name and re.match(r"mpirun --oversubscribe -np [123] ior ", first)
    assert ours or suite, first
    return int(second.removeprefix("exit="))


# ---------------------------------------------------------------- captures as a whole


def _captures() -> list[str]:
    return sorted(p.stem for p in DATA.glob("*.txt"))


@pytest.mark.parametrize("name", _captures())
def test_every_capture_parses_and_serialises(name: str) -> None:
    r = run(name)
    d = r.to_dict()
    json.dumps(d, allow_nan=False)  # strictly JSON-serialisable
    assert d["valid"] is r.valid
    assert isinstance(d["reasons"], list)
    # a run is valid exactly when it has a summary and none of the bad lines
    if r.valid:
        assert r.summary and r.finished and r.version == "IOR-4.0.0"
        assert r.reasons == []
    else:
        assert r.reasons


@pytest.mark.parametrize("name", _captures())
def test_nonzero_exit_is_never_valid(name: str) -> None:
    if cmd_exit(name) != 0:
        assert not run(name).valid


# ---------------------------------------------------------------- write with wear-out


def test_write_stonewall_wearout() -> None:
    r = run("write-stonewall-wearout")
    assert r.valid
    assert r.version == "IOR-4.0.0"
    assert r.command_line == (
        "ior -w -a POSIX --posix.odirect -F -e -g -C -t 1m -b 1m -s 450 -D 3 "
        "-O stoneWallingWearOut=1 -k -vv -o /var/tmp/iorcap/bw/testfile"
    )
    assert r.began == "Sun Nov 22 02:36:16 2026"
    assert r.start_time == "Sun Nov 22 02:36:16 2026"
    assert r.finished == "Sun Nov 22 02:36:19 2026"
    assert r.machine == "Linux vm 6.18.44-fc-v595 #1 SMP PREEMPT_DYNAMIC @0 x86_64"
    assert r.header["Participating tasks"] == "4"

    p = r.params
    assert (p.api, p.access, p.type) == ("POSIX", "file-per-process", "independent")
    assert p.test_filename == "/var/tmp/iorcap/bw/testfile"
    assert (p.segments, p.nodes, p.tasks, p.clients_per_node, p.repetitions) == (450, 1, 4, 4, 1)
    assert (p.ordering_in_file, p.ordering_inter_file) == ("sequential", "constant task offset")
    assert (p.xfersize, p.blocksize, p.aggregate_filesize) == ("1 MiB", "1 MiB", "1.76 GiB")
    assert (p.xfer_bytes, p.block_bytes) == (1048576, 1048576)
    assert (p.stonewalling_time, p.stonewalling_wearout) == (3, 1)
    assert r.parameters["apiVersion"] == ""
    assert r.parameters["task offset"] == "1"

    [row] = r.results
    assert (row.access, row.bw_mib, row.iops, row.latency_s) == ("write", 204.36, 204.38, 3.01)
    assert (row.block_kib, row.xfer_kib) == (1024.0, 1024.0)
    assert (row.open_s, row.wrrd_s, row.close_s, row.total_s) == (0.000141, 3.01, 0.000064, 3.01)
    assert (row.iteration, row.line) == (0, 48)

    [s] = r.summary
    assert s.operation == "write"
    assert (s.max_mib, s.min_mib, s.mean_mib, s.stddev_mib) == (204.36, 204.36, 204.36, 0.0)
    assert (s.max_ops, s.min_ops, s.mean_ops, s.stddev_ops) == (204.36, 204.36, 204.36, 0.0)
    assert s.mean_s == 3.01432
    assert (s.stonewall_s, s.stonewall_mib) == (3.01, 50.21)
    assert (s.test_id, s.tasks, s.tasks_per_node, s.reps, s.fpp, s.reord) == (0, 4, 4, 1, 1, 1)
    assert (s.reordoff, s.reordrand, s.seed, s.segments) == (1, 0, 0, 450)
    assert (s.block_bytes, s.xfer_bytes, s.agg_mib, s.api, s.ref_num) == (
        1048576, 1048576, 616.0, "POSIX", 0)
    assert s.printed["mean_s"] == "3.01432" and s.printed["stonewall_mib"] == "50.21"
    assert s.line == 54
    assert r.summary_for("write") is s and r.summary_for("read") is None

    [mx] = r.max_bandwidth
    assert (mx.operation, mx.mib_per_s, mx.mb_per_s, mx.line) == ("write", 204.36, 214.29, 49)

    [sw] = r.stonewall
    assert (sw.pairs_min, sw.pairs_max) == (142, 154)
    assert (sw.min_data_gib, sw.mean_data_gib, sw.time_s) == (0.1, 0.1, 3.0)
    assert (sw.ranks_reported, sw.rank_pairs_min, sw.rank_pairs_max) == (4, 142, 154)
    assert sw.line == 43
    assert r.pairs_deadline_accessed == [154]

    # expected-size warnings + "Maybe caused by deadlineForStonewalling": warnings only
    assert kinds(r) == ["warning"] * 4
    assert r.findings[3].line == 47
    assert r.findings[3].text == "WARNING: Maybe caused by deadlineForStonewalling"
    assert r.findings[3].severity == WARNING


# ---------------------------------------------------------------- stonewalled reads


def test_read_generate_stores_pairs_in_status_file() -> None:
    r = run("read-generate")
    assert r.valid
    [sw] = r.stonewall
    assert (sw.pairs_min, sw.pairs_max, sw.time_s, sw.ranks_reported) == (242, 256, 5.0, 4)
    assert (sw.min_data_gib, sw.mean_data_gib) == (0.2, 0.2)
    assert r.pairs_deadline_accessed == []  # goes to the status file instead
    s = r.summary_for("write")
    assert (s.max_mib, s.mean_s, s.stonewall_s, s.stonewall_mib, s.agg_mib) == (
        200.32, 5.11175, 5.01, 50.09, 1024.0)


def test_read_stonewalled_runs_full_deadline() -> None:
    r = run("read-stonewalled")
    assert r.valid
    assert "ended-before-deadline" not in kinds(r)
    assert r.params.stonewalling_time == 3
    assert r.params.stonewalling_wearout == 0
    [row] = r.results
    assert (row.access, row.bw_mib, row.iops, row.wrrd_s, row.total_s) == (
        "read", 200.69, 200.71, 3.01, 3.01)
    s = r.summary_for("read")
    assert (s.max_mib, s.min_mib, s.mean_mib, s.max_ops, s.mean_s) == (
        200.69, 200.69, 200.69, 200.69, 3.00964)
    assert (s.stonewall_s, s.stonewall_mib, s.agg_mib) == (None, None, 604.0)
    assert s.printed["stonewall_s"] == "NA"
    [mx] = r.max_bandwidth
    assert (mx.operation, mx.mib_per_s, mx.mb_per_s) == ("read", 200.69, 210.44)
    assert r.stonewall == []


def test_read_ended_early_is_flagged_as_warning() -> None:
    r = run("read-ended-early")
    assert cmd_exit("read-ended-early") == 0
    assert r.valid  # IOR's figures are real, but the deadline was not exercised
    assert r.summary_for("read").max_mib == 680.71
    assert r.summary_for("read").mean_s == 1.50431
    ended = [f for f in r.findings if f.kind == "ended-before-deadline"]
    assert len(ended) == 1
    assert ended[0].severity == WARNING and ended[0].line == 44
    assert "1.5 s < stonewall deadline 3 s" in ended[0].text


def test_read_eof_exhausted() -> None:
    r = run("read-eof-exhausted")
    assert cmd_exit("read-eof-exhausted") == 255
    assert not r.valid
    assert r.summary == [] and r.results == []
    eof = [f for f in r.findings if f.kind == "eof"]
    assert len(eof) == 4 and all(f.severity == INVALID for f in eof)
    assert eof[0].line == 40
    assert eof[0].text == "WARNING: read(20, 0x7f0350eff000, 1048576) returned EOF prematurely"
    cannot = [f for f in r.findings if f.kind == "cannot-read"]
    assert len(cannot) == 4 and cannot[0].text == "ERROR: cannot read from file, (ior.c:1666)"
    assert cannot[0].line == 41
    assert "mpi-abort" in kinds(r, INVALID)
    assert kinds(r, INVALID).count("truncated") == 2
    assert any("returned EOF prematurely" in reason for reason in r.reasons)


def test_read_status_missing_is_invalid_despite_exit_0() -> None:
    r = run("read-status-missing")
    assert cmd_exit("read-status-missing") == 0
    assert r.summary_for("read").max_mib == 11157.29
    assert not r.valid
    [f] = [f for f in r.findings if f.severity == INVALID]
    assert f.kind == "stonewall-status" and f.line == 38
    assert f.text == "WARNING: Could not read back the stonewalling status from the file!"


def test_incorrect_data() -> None:
    r = run("read-check-incorrect")
    assert cmd_exit("read-check-incorrect") == 32
    assert not r.valid
    assert r.summary_for("read").max_mib == 4729.64  # printed, but not trustworthy
    bad = [f for f in r.findings if f.kind == "incorrect-data"]
    assert len(bad) == 1 and bad[0].line == 38 and bad[0].severity == INVALID
    assert bad[0].text == "WARNING: Incorrect data on read (16 errors found)."


# ---------------------------------------------------------------- random IOPS


def test_random_write_iops_size_bound() -> None:
    r = run("random-write-iops")
    assert r.params.ordering_in_file == "random"
    assert r.params.xfersize == "4096 bytes" and r.params.xfer_bytes == 4096
    assert r.params.block_bytes == 16 * 1024 * 1024
    [row] = r.results
    # the row's IOPS is over wr/rd time only; the summary's OPs over the whole phase
    assert (row.bw_mib, row.iops, row.block_kib, row.xfer_kib) == (638.31, 163955.0, 16384.0, 4.0)
    s = r.summary_for("write")
    assert (s.max_mib, s.max_ops, s.min_ops, s.mean_ops) == (
        638.31, 163406.93, 163406.93, 163406.93)
    assert (s.segments, s.block_bytes, s.xfer_bytes, s.agg_mib) == (1, 16777216, 4096, 64.0)
    assert r.valid
    assert kinds(r) == ["ended-before-deadline"]


def test_random_read_iops_size_bound() -> None:
    r = run("random-read-iops")
    [row] = r.results
    assert (row.bw_mib, row.iops, row.latency_s) == (5482.0, 1432044.0, 0.000001)
    s = r.summary_for("read")
    assert (s.max_mib, s.max_ops, s.mean_s) == (5481.85, 1403354.78, 0.01167)
    assert kinds(r) == ["ended-before-deadline"]


def test_random_iops_deadline_bound() -> None:
    w = run("random-write-iops-deadline")
    assert w.valid and "ended-before-deadline" not in kinds(w)
    assert w.summary_for("write").max_ops == 47023.64
    assert w.results[0].iops == 47034.0
    rd = run("random-read-iops-deadline")
    assert rd.valid and "ended-before-deadline" not in kinds(rd)
    s = rd.summary_for("read")
    assert (s.max_mib, s.max_ops, s.mean_s, s.agg_mib) == (199.87, 51167.11, 3.0007, 599.8)


def test_refusal_block_equals_transfer() -> None:
    r = run("refuse-z-block-eq-xfer")
    assert cmd_exit("refuse-z-block-eq-xfer") == 255
    assert not r.valid
    refused = [f for f in r.findings if f.kind == "refused"]
    assert len(refused) == 4
    assert refused[0].line == 1
    assert "choose blocksize > transferSize" in refused[0].text
    assert r.version is None and r.summary == []


def test_open_failure() -> None:
    r = run("open-missing-dir")
    assert not r.valid
    errors = [f for f in r.findings if f.kind == "error"]
    assert len(errors) == 4
    assert errors[0].text.startswith('ERROR: open64("/var/tmp/iorcap/missing/testfile.00000000"')
    # a statfs warning before the failure is only a warning
    assert r.findings[0].severity == WARNING and r.findings[0].line == 8


# ---------------------------------------------------------------- multi-iteration, DUMMY


def test_multi_iteration() -> None:
    r = run("multi-iteration")
    assert r.valid and r.findings == []
    assert r.params.repetitions == 3
    assert [(x.access, x.iteration) for x in r.results] == [
        (op, i) for i in range(3) for op in ("write", "read", "remove")
    ]
    assert [x.bw_mib for x in r.results if x.access == "write"] == [907.20, 1660.42, 1602.34]
    # values >= 3600 are printed without decimals in the per-iteration table
    assert [x.bw_mib for x in r.results if x.access == "read"] == [9612.0, 8238.0, 5634.0]
    rm = r.results[2]
    assert rm.access == "remove" and rm.bw_mib is None and rm.wrrd_s is None
    assert rm.total_s == 0.378122
    w, rd = r.summary
    assert (w.max_mib, w.min_mib, w.mean_mib, w.stddev_mib) == (1660.42, 907.20, 1389.99, 342.20)
    assert (w.mean_s, w.reps) == (0.19871, 3)
    assert (rd.max_mib, rd.min_mib, rd.mean_mib, rd.stddev_mib) == (
        9612.13, 5634.16, 7828.14, 1649.67)
    assert rd.mean_s == 0.03438
    assert [(m.operation, m.mib_per_s, m.mb_per_s) for m in r.max_bandwidth] == [
        ("write", 1660.42, 1741.08), ("read", 9612.13, 10079.05)]


def test_dummy_stonewall_two_phases() -> None:
    r = run("dummy-stonewall")
    assert r.valid
    assert r.params.api == "DUMMY"
    assert [(p.pairs_min, p.pairs_max, p.ranks_reported) for p in r.stonewall] == [
        (1846, 1863, 4), (1863, 1863, 4)]
    assert r.pairs_deadline_accessed == [1863]
    w, rd = r.summary
    assert (w.max_mib, w.stonewall_s, w.stonewall_mib, w.agg_mib) == (3691.12, 2.0, 928.10, 7452.0)
    assert (rd.max_mib, rd.stonewall_s, rd.stonewall_mib) == (3728.32, 2.0, 932.45)
    assert w.segments == 100000
    assert set(kinds(r)) == {"warning"}


# ---------------------------------------------------------------- truncated / empty


@pytest.mark.parametrize("text", ["", "   \n\n"])
def test_empty_output_is_invalid(text: str) -> None:
    r = parse_ior(text)
    assert not r.valid
    assert kinds(r) == ["empty"]
    assert r.summary == [] and r.results == []


def test_truncated_output_is_invalid_not_zero() -> None:
    text = load("write-stonewall-wearout.txt")
    half = text[: len(text) // 2]
    r = parse_ior(half)
    assert not r.valid
    assert "truncated" in kinds(r, INVALID)
    assert r.summary == []
    assert r.version == "IOR-4.0.0"  # what was there is still parsed


def test_cut_after_results_before_summary() -> None:
    text = load("multi-iteration.txt")
    cut = text[: text.index("Summary of all tests:")]
    r = parse_ior(cut)
    assert not r.valid
    assert len(r.results) == 9 and r.summary == []
    assert kinds(r, INVALID) == ["truncated", "truncated"]


def test_missing_finished_line_is_invalid() -> None:
    text = load("multi-iteration.txt")
    cut = text[: text.index("Finished")]
    r = parse_ior(cut)
    assert len(r.summary) == 2
    assert not r.valid
    assert kinds(r, INVALID) == ["truncated"]


def test_per_rank_lines_without_phase_line_are_kept() -> None:
    text = load("write-stonewall-wearout.txt")
    cut = text[: text.index("stonewalling pairs accessed min")]
    r = parse_ior(cut)
    [sw] = r.stonewall
    assert sw.pairs_min is None and sw.ranks_reported == 4
    assert not r.valid


def test_text_stdout_of_json_summary_run() -> None:
    r = run("json-summary")
    assert r.summary_file == "/var/tmp/iorcap/s.json"
    assert not r.valid
    assert kinds(r, INVALID) == ["no-summary"]
    assert "parse_ior_json" in r.reasons[0]


def test_launcher_lines_are_findings() -> None:
    text = load("multi-iteration.txt") + (
        "srun: error: n3: task 5: Killed\n"
        "slurmstepd: error: *** STEP 12.0 ON n1 CANCELLED AT 2026-01-01T00:00:00 ***\n"
        "Tue Jan 01 00:00:00 2026: Process 3: FAILED in aiori-POSIX.c:123, write failed\n"
    )
    r = parse_ior(text)
    assert not r.valid
    assert kinds(r, INVALID) == ["launcher", "launcher", "error"]


# ---------------------------------------------------------------- JSON summary file


def test_json_summary() -> None:
    r = parse_ior_json(load("json-summary.json"))
    assert r.valid and r.source == "json"
    assert r.version == "IOR-4.0.0"
    assert r.command_line.startswith("ior -w -r -a POSIX -F -e -g -C -t 1m -b 16m -s 4 -O ")
    assert (r.began, r.finished) == ("Sun Nov 22 02:37:23 2026", "Sun Nov 22 02:37:24 2026")
    assert r.machine == "Linux vm"
    assert r.params.tasks == 4 and r.params.block_bytes == 16777216
    assert r.params.stonewalling_time is None
    assert [(x.access, x.bw_mib, x.iops, x.wrrd_s, x.iteration) for x in r.results] == [
        ("write", 874.9355, 876.7988, 0.2920, 0), ("read", 7639.0283, 7708.9552, 0.0332, 0)]
    w, rd = r.summary
    assert (w.operation, w.max_mib, w.max_ops, w.mean_s, w.agg_mib) == (
        "write", 874.9355, 874.9355, 0.2926, 256.0)
    assert (rd.operation, rd.mean_mib, rd.stddev_mib, rd.mean_s) == ("read", 7639.0283, 0.0, 0.0335)
    assert (w.stonewall_s, w.stonewall_mib) == (None, None)
    assert (w.tasks, w.tasks_per_node, w.reps, w.segments, w.api) == (4, 4, 1, 4, "POSIX")
    json.dumps(r.to_dict(), allow_nan=False)


def test_json_summary_written_with_verbose_is_rejected() -> None:
    with pytest.raises(ValueError, match=r"not valid JSON .*-v"):
        parse_ior_json(load("json-summary-verbose.json"))


@pytest.mark.parametrize(
    "text, match",
    [
        ("", "empty"),
        ("{", "not valid JSON"),
        ("[1, 2]", "not an IOR JSON summary"),
        ('{"tests": [], "summary": [{"operation": "write"}]}', "unexpected structure"),
    ],
)
def test_json_errors(text: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        parse_ior_json(text)


def test_json_nan_and_inf() -> None:
    doc = json.loads(load("json-summary.json"))
    text = json.dumps(doc).replace('"bwMaxMIB": 874.9355', '"bwMaxMIB": inf', 1)
    text = text.replace('"bwMinMIB": 874.9355', '"bwMinMIB": -nan', 1)
    r = parse_ior_json(text)
    assert not r.valid
    assert "non-finite" in kinds(r, INVALID)
    d = r.to_dict()
    assert d["summary"][0]["max_mib"] is None
    json.dumps(d, allow_nan=False)


# ---------------------------------------------------------------- helpers


@pytest.mark.parametrize(
    "text, expected",
    [("1 MiB", 1 << 20), ("4096 bytes", 4096), ("16 GiB", 16 << 30), ("2 TiB", 2 << 40),
     ("390.62 GiB", None), ("", None), (None, None), ("lots", None)],
)
def test_parse_size(text: str | None, expected: int | None) -> None:
    assert parse_size(text) == expected


def test_missing_per_rank_line_is_a_warning() -> None:
    text = load("write-stonewall-wearout.txt").replace("2: stonewalling pairs accessed: 154\n", "")
    r = parse_ior(text)
    assert r.valid
    [f] = [f for f in r.findings if f.kind == "rank-lines"]
    assert f.severity == WARNING and f.line == 42
    assert r.stonewall[0].ranks_reported == 3


def test_incorrect_data_counts_the_bad_transfers_per_access():
    # Captured: IOR -r -R -G 2 over files written with -G 1: every transfer differs.
    run = parse_ior(load("read-check-incorrect.txt"))
    assert run.data_errors == {"read": 16}
    assert any(f.kind == "incorrect-data" and f.severity == INVALID for f in run.findings)
    assert parse_ior(load("read-check-generate.txt")).data_errors == {}


def test_mpiio_hints_passed_and_returned_are_read():
    # Captured on the emulated cluster, Open MPI 4.1 (OMPIO): it echoes every hint back,
    # even one no MPI-IO layer knows.
    run = parse_ior(load("mpiio-shared-hints.txt"))
    assert run.hints_passed == run.hints_returned == {"romio_cb_write": "disable"}
    assert run.valid and run.params.api == "MPIIO"
    ignored = parse_ior(load("mpiio-shared-hint-ignored.txt"))
    assert ignored.hints_returned == {"romio_cb_write": "disable", "fsaccept_unknown_hint": "yes"}


def test_a_hint_the_mpi_library_overrode_makes_the_run_invalid():
    from fsaccept.benchmarks.ior.validity import hint_reasons
    assert hint_reasons(parse_ior(load("mpiio-shared-hints.txt"))) == []
    # The same output as an MPI library that kept collective buffering on would print it.
    text = load("mpiio-shared-hints.txt")
    head, _, tail = text.partition("hints returned from opened file {\n")
    overridden = head + _ + tail.replace("romio_cb_write = disable", "romio_cb_write = enable", 1)
    assert hint_reasons(parse_ior(overridden)) == [
        "MPI-IO hint romio_cb_write=disable was passed to MPI_File_open(), but the opened "
        "file reports romio_cb_write=enable"]
