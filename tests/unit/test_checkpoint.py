"""AI checkpoint and restore (issue 31): IOR's per-rank times read from real job outputs of
the checks on the emulated cluster, the figures taken from them, the phases' options and
the reference entries' rules."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from fsaccept.benchmarks import registry
from fsaccept.benchmarks.ior import command, figures, validity
from fsaccept.benchmarks.ior.parse import INVALID, parse_ior
from fsaccept.core.units import MIB

DATA = Path(__file__).resolve().parents[1] / "data" / "ior"
CAPTURES = ("checkpoint-write-job", "checkpoint-restore-job", "checkpoint-shared-restore-job",
            "checkpoint-shared-write-gluster-job")


def _text(name: str) -> str:
    return (DATA / f"{name}.txt").read_text()


def _iors_own_rank_times(text: str) -> dict[str, dict[int, float]]:
    """The per-rank CSV IOR wrote, read with the csv module (not with fsaccept's parser)."""
    lines = text.splitlines()
    start = lines.index("access,rank,runtime-with-openclose,runtime,throughput-withopenclose,"
                        "throughput")
    out: dict[str, dict[int, float]] = {}
    for row in csv.DictReader(lines[start:]):
        if row["access"] not in ("write", "read"):
            break
        out.setdefault(row["access"], {})[int(row["rank"])] = float(
            row["runtime-with-openclose"])
    return out


@pytest.mark.parametrize("name", CAPTURES)
def test_the_figures_are_iors_own_per_rank_times(name):
    text = _text(name)
    run = parse_ior(text)
    assert run.valid, run.reasons
    own = _iors_own_rank_times(text)
    assert run.rank_times == own
    (access, times), = own.items()
    burst = figures.burst(run, access)
    assert burst.seconds == max(times.values()) and burst.first_s == min(times.values())
    assert times[burst.slowest_rank] == burst.seconds
    assert times[burst.fastest_rank] == burst.first_s
    # 4 nodes x 2 ranks, 256 MiB in all: IOR's summary row says so too.
    assert burst.volume_bytes == 256 * MIB == round(run.summary_for(access).agg_mib * MIB)
    assert burst.bandwidth_mib_s == 256 / burst.seconds
    # IOR's own phase time runs from the first open to the last close: no rank took longer.
    (row,) = [r for r in run.results if r.access == access]
    assert burst.seconds <= row.total_s + 5e-7
    assert figures.burst_reasons(run, access) == []
    # No barriers between open, transfer and close (-g): each rank's time is its own.
    assert " -g " not in run.command_line and "saveRankPerformanceDetailsCSV=" in run.command_line


def test_the_slowest_and_fastest_rank_are_recorded_as_the_sign_off_reads_them():
    burst = figures.burst(parse_ior(_text("checkpoint-write-job")), "write")
    text = figures.rank_text(burst.slowest_rank, "n2", burst.seconds)
    assert text == f"rank {burst.slowest_rank} on n2: {burst.seconds:.6g} s"
    assert figures.RANK_TEXT.fullmatch(text).group(1) == str(burst.slowest_rank)


def test_the_rank_times_are_in_the_parsed_json():
    d = parse_ior(_text("checkpoint-write-job")).to_dict()
    assert [rank for rank, _ in d["rank_times"]["write"]] == list(range(8))


def _edited(old: str, new: str, name: str = "checkpoint-write-job") -> str:
    text = _text(name)
    assert old in text
    return text.replace(old, new, 1)


@pytest.mark.parametrize("bad", ["nan", "inf", "-1.0e+00", "0", "x"])
def test_a_rank_time_that_is_no_time_is_invalid(bad):
    line = next(l for l in _text("checkpoint-write-job").splitlines() if l.startswith("write,3,"))
    cols = line.split(",")
    run = parse_ior(_edited(line, ",".join([*cols[:2], bad, *cols[3:]])))
    assert not run.valid and any("bad per-rank time line: write,3," in r for r in run.reasons)
    assert figures.burst(run, "write") is None
    assert "not every rank" in figures.burst_reasons(run, "write")[0]


def test_a_rank_printed_twice_is_invalid_and_a_missing_rank_gives_no_figure():
    text = _text("checkpoint-write-job")
    line = next(l for l in text.splitlines() if l.startswith("write,3,"))
    twice = parse_ior(text.replace(line, line + "\n" + line, 1))
    assert not twice.valid and any("rank 3's write time is printed twice" in r
                                   for r in twice.reasons)
    missing = parse_ior(text.replace(line + "\n", "", 1))
    assert figures.burst(missing, "write") is None
    assert figures.burst_reasons(missing, "write") == [
        "IOR's per-rank write times (saveRankPerformanceDetailsCSV) cover ranks 0..7 (7), "
        "not every rank of its summary: no checkpoint time"]


def test_no_rank_times_at_all_is_named():
    text = re.sub(r"(?m)^(access,rank|write,\d).*\n", "", _text("checkpoint-write-job"))
    run = parse_ior(text)
    assert run.valid and run.rank_times == {}
    assert figures.burst_reasons(run, "write") == [
        "IOR's per-rank write times (saveRankPerformanceDetailsCSV) are missing from the "
        "output: no checkpoint time"]


# ---------------------------------------------- the per-rank rows against IOR's own output

def _rank_rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if re.match(r"(write|read),\d+,", line)]


def _row(line: str, seconds: float, transfer: float) -> str:
    """A per-rank row with other times, its rates recomputed from them as IOR does
    (its share of the 256 MiB, 8 ranks, over each time, ``%.10e``): a consistent edit."""
    access, rank = line.split(",")[:2]
    share = 32 * MIB
    return (f"{access},{rank},{seconds:.10e},{transfer:.10e},{share / seconds:.10e},"
            f"{share / transfer:.10e}")


def _invalid(text: str) -> list[str]:
    """Every INVALID reason of a re-read log (``fsaccept parse ior``'s, the live check's)."""
    run = parse_ior(text)
    return run.reasons + validity.reread_reasons(run)[0]


def _parse_text(capsys, tmp_path, text: str, key: str = "checkpoint_write") -> dict:
    import json
    from fsaccept.cli import main
    log = tmp_path / "edited-job.txt"
    log.write_text(text)
    main(["parse", "ior", str(log), "--reference",
          str(Path(__file__).resolve().parents[2] / "reference" / "local.yaml"), "--test", key])
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("name", CAPTURES)
def test_the_real_rank_rows_agree_with_iors_own_output(name):
    run = parse_ior(_text(name))
    (access,) = run.rank_rows
    assert validity.rank_time_reasons(run, access) == [] and _invalid(_text(name)) == []


def test_a_rank_row_shorter_than_its_own_transfers_is_invalid(tmp_path, capsys):
    """IOR times a rank's open, transfers and close in that order on the rank's own clock:
    its open-to-close time is never shorter than its transfer time (PASS until now)."""
    text = _text("checkpoint-write-job")
    line = next(l for l in _rank_rows(text) if l.startswith("write,3,"))
    text = text.replace(line, _row(line, 0.835, float(line.split(",")[3])), 1)
    assert _invalid(text) == [
        "rank 3's write open-to-close time 0.835 s (line 63) is shorter than its own transfer "
        "time 0.8358390331 s: IOR times both on one clock, open before the transfers before "
        "the close: not IOR's row"]
    out = _parse_text(capsys, tmp_path, text)
    assert out["verdict"] == "INVALID" and "shorter than its own transfer" in out["reasons"][0]


@pytest.mark.parametrize("name", CAPTURES)
def test_ranks_ten_times_faster_than_iors_own_phase_are_invalid(tmp_path, capsys, name):
    """Every rank ten times faster, consistently (times and rates), than the phase IOR timed
    in the same log: the slowest rank took at least IOR's total(s) less the ranks' spread
    in opening or closing (PASS until now)."""
    text = _text(name)
    for line in _rank_rows(text):
        cols = line.split(",")
        text = text.replace(line, _row(line, float(cols[2]) / 10, float(cols[3]) / 10), 1)
    (reason,) = _invalid(text)
    assert reason.startswith(f"IOR's per-rank {'read' if 'restore' in name else 'write'} "
                             "times are shorter than its own phase allows: the slowest, rank ")
    assert "MiB/s, where IOR's summary says Max(MiB) " in reason
    if name == "checkpoint-write-job":
        assert reason == (
            "IOR's per-rank write times are shorter than its own phase allows: the slowest, "
            "rank 2's 0.08456590176 s (line 62), is under total(s) 0.851967 less the ranks' "
            "spread in opening (open(s) 0.011716) or in closing (close(s) 0.021606), 0.84025 s "
            "at least (line 51); 256MiB over it would be 3,027.22 MiB/s, where IOR's summary "
            "says Max(MiB) 300.48")
        out = _parse_text(capsys, tmp_path, text)
        assert out["verdict"] == "INVALID" and out["reasons"] == [reason]


def test_a_rank_longer_than_iors_phase_or_an_edited_time_is_invalid():
    text = _text("checkpoint-write-job")
    rows = {int(l.split(",")[1]): l for l in _rank_rows(text)}
    longer = text.replace(rows[4], _row(rows[4], 0.86, 0.86), 1)
    assert [r.split(":")[0] for r in _invalid(longer)] == [
        "rank 4's write open-to-close time 0.86 s (line 64) is longer than IOR's whole phase, "
        "total(s) 0.851967 (line 51)",
        "rank 4's write transfer time 0.86 s (line 64) is longer than IOR's transfer phase, "
        "wr/rd(s) 0.851883 (line 51)"]
    # One time edited, its rates left: the row no longer holds together.
    cols = rows[5].split(",")
    edited = text.replace(rows[5], ",".join([*cols[:2], "8.2422192192e-01", *cols[3:]]), 1)
    assert _invalid(edited) == [
        "rank 5's write rates (line 65) times its times give 33,595,192 and 33,554,432 bytes: "
        "IOR writes each rank's share of the 268,435,456 bytes moved, 33,554,432: a time or a "
        "rate was edited"]


@pytest.mark.parametrize("before", ["Finished            :", "Summary of all tests:",
                                    "Commencing write performance test"])
def test_the_per_rank_block_printed_before_ior_finished_is_invalid(tmp_path, capsys, before):
    """The job shows IOR's per-rank file after the benchmark has ended (the real captures):
    rows before IOR's Finished line are not that file (PASS until now)."""
    text = _text("checkpoint-write-job")
    block = "\n".join(["access,rank,runtime-with-openclose,runtime,throughput-withopenclose,"
                       "throughput", *_rank_rows(text)]) + "\n"
    assert block in text
    at = text.index(before)
    moved = text[:at] + block + text[at:].replace(block, "", 1)
    run = parse_ior(moved)
    assert run.rank_times == parse_ior(text).rank_times  # the same rows, elsewhere
    (reason,) = _invalid(moved)
    assert re.fullmatch(r"line \d+: IOR's per-rank write times are printed before IOR's "
                        r"'Finished' line \d+: the job shows that file after the benchmark "
                        r"has ended, so these rows are not IOR's per-rank file of this run",
                        reason), reason
    assert _parse_text(capsys, tmp_path, moved)["verdict"] == "INVALID"


def _params(**over) -> command.TestParameters:
    base = dict(name="checkpoint_write", node_fraction=0.9, ranks_per_node=2,
                transfer_size=4 * MIB, checkpoint_size=256 * MIB)
    return command.TestParameters(**{**base, **over})


def test_each_rank_writes_its_shard_in_whole_transfers():
    assert command.checkpoint_block(_params(), 8) == 32 * MIB
    # 100 MiB over 3 ranks: 33.3 MiB each, rounded up to 9 transfers of 4 MiB.
    assert command.checkpoint_block(_params(checkpoint_size=100 * MIB), 3) == 36 * MIB
    assert command.checkpoint_block(_params(checkpoint_size=MIB, transfer_size=MIB), 4) == MIB


@pytest.mark.parametrize("phase", ["checkpoint_write", "checkpoint_restore",
                                   "checkpoint_shared_write", "checkpoint_shared_restore"])
def test_a_burst_has_no_barriers_and_asks_for_its_rank_times(phase):
    p = _params(block_size=32 * MIB)
    opts = command.ior_options(phase, p, "/t/testfile", seed=7, rank_times_file="/s/r t.csv")
    assert "-g" not in opts and "-D" not in opts
    assert opts[opts.index("-G") + 1] == "7" and "-C" in opts
    assert "saveRankPerformanceDetailsCSV=/s/r t.csv" in opts
    assert ("-R" in opts) == phase.endswith("restore")
    assert ("-F" in opts) == ("shared" not in phase)
    # The other phases keep their barriers and ask for no rank times.
    other = command.ior_options("integrity_write", p, "/t/testfile", rank_times_file="/s/x")
    assert "-g" in other and not any("saveRank" in o for o in other)


def test_the_catalogue_declares_the_checkpoint_tests_once():
    write, restore = registry.TESTS["IORCheckpointWrite"], registry.TESTS["IORCheckpointRestore"]
    assert write.main_figure == "checkpoint_time_s" and restore.main_figure == "restore_time_s"
    assert restore.fixed_thresholds == {"incorrect_transfers": (0, None, 0, "transfers")}
    assert "checkpoint" in write.all_tags and write.reduction_matters
    fixture = registry.TESTS["IORCheckpointDataset"]
    assert fixture.key == restore.key and fixture.attrs["phase"] == write.attrs["phase"]


@pytest.mark.parametrize("entry, message", [
    ({"transfer_size": "512MiB"}, "tests.checkpoint_write.transfer_size: 512MiB is more "
                                  "than the whole checkpoint_size 256MiB"),
    ({"collective": True}, "tests.checkpoint_write.collective: collective I/O needs api: MPIIO"),
])
def test_entry_rules(entry, message):
    base = {"node_fraction": 0.9, "ranks_per_node": 2, "transfer_size": "4MiB",
            "checkpoint_size": "256MiB"}
    assert command.entry_errors("tests.checkpoint_write", {**base, **entry}) == [message]


def _reference(tmp_path, entry: str) -> Path:
    text = (Path(__file__).resolve().parents[2] / "reference" / "local-gluster.yaml").read_text()
    start = text.index("  checkpoint_write:\n")
    end = text.index("  checkpoint_restore:\n")
    path = tmp_path / "my ref's.yaml"
    path.write_text(text[:start] + "  checkpoint_write:\n" + entry + text[end:])
    return path


@pytest.mark.parametrize("entry, message", [
    # A single threshold is the checkpoint's time: a ceiling in seconds.
    ("    node_fraction: 0.9\n    ranks_per_node: 2\n    transfer_size: 4MiB\n"
     "    checkpoint_size: 256MiB\n    threshold: {value: 100, unit: MiB/s}\n",
     r"tests.checkpoint_write.threshold.unit: 'MiB/s' is not allowed here: use 's'"),
    ("    node_fraction: 0.9\n    ranks_per_node: 2\n    transfer_size: 4MiB\n"
     "    checkpoint_size: 256MiB\n    thresholds: {checkpoint_bandwith: {value: 1, unit: MiB/s}}\n",
     r"tests.checkpoint_write.thresholds: .*checkpoint_bandwith"),
    ("    node_fraction: 0.9\n    ranks_per_node: 2\n    transfer_size: 4MiB\n"
     "    checkpoint_size: 256MiB\n    threshold: {value: 9, unit: s}\n"
     "    thresholds: {checkpoint_time_s: {value: 9, unit: s}}\n",
     r"tests.checkpoint_write"),
    ("    node_fraction: 0.9\n    ranks_per_node: 2\n    transfer_size: 4MiB\n"
     "    checkpoint_size: .nan\n    threshold: {value: 9, unit: s}\n",
     r"tests.checkpoint_write.checkpoint_size"),
    ("    node_fraction: 0.9\n    ranks_per_node: 2\n    transfer_size: 4MiB\n"
     "    block_size: 4MiB\n    threshold: {value: 9, unit: s}\n",
     r"tests.checkpoint_write"),
])
def test_a_bad_checkpoint_entry_is_refused_naming_the_key(tmp_path, capsys, entry, message):
    from fsaccept.cli import main
    path = _reference(tmp_path, entry)
    assert main(["reference", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert all(line.startswith(f"{path}: ") for line in err), err
    assert re.search(message, err[0]), err


def test_the_shipped_entries_are_valid(capsys):
    from fsaccept.cli import main
    root = Path(__file__).resolve().parents[2] / "reference"
    for name in ("local", "local-gluster", "example-lustre"):
        assert main(["reference", str(root / f"{name}.yaml")]) == 0, capsys.readouterr().err


def _parse(capsys, capture: str, key: str, reference: Path) -> dict:
    import json
    from fsaccept.cli import main
    main(["parse", "ior", str(DATA / f"{capture}.txt"), "--reference", str(reference),
          "--test", key])
    return json.loads(capsys.readouterr().out)


def test_a_re_read_checkpoint_is_judged_by_its_time(tmp_path, capsys):
    root = Path(__file__).resolve().parents[2] / "reference"
    out = _parse(capsys, "checkpoint-write-job", "checkpoint_write", root / "local.yaml")
    assert out["verdict"] == "PASS" and out["judged"] == {
        "name": "checkpoint_time_s", "value": 0.84565901756, "unit": "s", "threshold": 120,
        "upper": 132.0}
    # A ceiling the slowest rank's 0.85 s exceeds fails it.
    text = (root / "local.yaml").read_text().replace(
        "    threshold: {value: 120, unit: s, tolerance: 0.1}\n  checkpoint_restore:",
        "    threshold: {value: 0.5, unit: s}\n  checkpoint_restore:", 1)
    strict = tmp_path / "strict.yaml"
    strict.write_text(text)
    assert _parse(capsys, "checkpoint-write-job", "checkpoint_write", strict)["verdict"] == "FAIL"
    # Another size than the entry's: named.
    text = (root / "local.yaml").read_text().replace("checkpoint_size: 256MiB", "checkpoint_size: 1GiB", 1)
    other = tmp_path / "other.yaml"
    other.write_text(text)
    out = _parse(capsys, "checkpoint-write-job", "checkpoint_write", other)
    assert out["verdict"] == "INVALID" and out["reasons"] == [
        "IOR's 8 ranks moved 256MiB, tests.checkpoint_write.checkpoint_size 1GiB in whole "
        "transfers is 1GiB"]
    # The restore's key does not take the checkpoint's write.
    out = _parse(capsys, "checkpoint-write-job", "checkpoint_restore", root / "local.yaml")
    assert out["verdict"] == "INVALID" and "is a read test" in out["reasons"][0]


# ------------------------------------------------------------------ the sign-off

SIGNOFF_CAPTURE = "local-gluster-checkpoint-accepted"


def _signoff(data, tmp_path):
    import json
    from fsaccept.reporting import report as signoff
    src = tmp_path / "run-report.json"
    src.write_text(json.dumps(data))
    code = signoff.main([str(src), "--out", str(tmp_path / "out")])
    return code, (tmp_path / "out" / "report.md").read_text().replace("\\", "")


def _checkpoint_case(data, name="IORCheckpointWrite"):
    return next(c for r in data["runs"] for c in r["testcases"] if c["name"].split()[0] == name)


@pytest.fixture
def signoff_run(tmp_path, monkeypatch):
    from fsaccept.reporting import report as signoff
    from tests.conftest import capture_with_reference
    for name in ("figure_plot", "check_plot", "per_node_plot"):
        monkeypatch.setattr(signoff, name, lambda *a, **k: b"")
    monkeypatch.setattr("fsaccept.reporting.degraded.timeline_plot", lambda *a, **k: b"")
    return capture_with_reference(SIGNOFF_CAPTURE, tmp_path)


def test_the_real_checkpoint_session_is_accepted(signoff_run, tmp_path):
    code, md = _signoff(signoff_run, tmp_path)
    assert code == 0 and "**Overall verdict: ACCEPTED**" in md, md[:3000]
    case = _checkpoint_case(signoff_run)
    assert case["burst_bytes"] == 256 * MIB
    assert case["slowest_rank"].startswith("rank ") and case["fastest_rank"].startswith("rank ")


def _perf(case, name):
    return next(v for k, v in case["perfvalues"].items() if k.endswith(":" + name))


def test_an_edited_checkpoint_bandwidth_is_invalid_at_the_signoff(signoff_run, tmp_path):
    case = _checkpoint_case(signoff_run)
    _perf(case, "checkpoint_bandwidth")[0] *= 2
    code, md = _signoff(signoff_run, tmp_path)
    assert code == 1 and "**Overall verdict: ACCEPTED**" not in md
    assert "figure checkpoint_bandwidth" in md and "is not its volume (268435456 bytes)" in md


def test_a_faster_first_rank_than_possible_is_invalid(signoff_run, tmp_path):
    case = _checkpoint_case(signoff_run, "IORCheckpointRestore")
    _perf(case, "first_rank_done_s")[0] = _perf(case, "restore_time_s")[0] * 2
    code, md = _signoff(signoff_run, tmp_path)
    assert code == 1 and "figure first_rank_done_s" in md


@pytest.mark.parametrize("volume", [None, 0, -5, "268435456", True, 1.5])
def test_a_checkpoint_without_its_volume_is_invalid(signoff_run, tmp_path, volume):
    case = _checkpoint_case(signoff_run)
    case["burst_bytes"] = volume
    code, md = _signoff(signoff_run, tmp_path)
    assert code == 1 and "the checkpoint's volume is not recorded" in md


# ------------------------------------------- the sign-off against the verified reference


def _rate_for(case, volume):
    """The bandwidth figure made consistent with ``volume`` over the recorded time (only
    the rule under test can then tell)."""
    time, rate = ("checkpoint_time_s", "checkpoint_bandwidth") \
        if "Write" in case["name"] else ("restore_time_s", "restore_bandwidth")
    _perf(case, rate)[0] = volume / MIB / _perf(case, time)[0]


@pytest.mark.parametrize("name, key", [("IORCheckpointWrite", "checkpoint_write"),
                                       ("IORCheckpointSharedRestore",
                                        "checkpoint_shared_restore")])
def test_a_volume_other_than_the_references_checkpoint_is_invalid(signoff_run, tmp_path,
                                                                  name, key):
    # A burst of 1 MiB does not sign off the time of the 256 MiB checkpoint the verified
    # reference asks for, however consistent its bandwidth.
    case = _checkpoint_case(signoff_run, name)
    case["burst_bytes"] = MIB
    _rate_for(case, MIB)
    code, md = _signoff(signoff_run, tmp_path)
    assert code == 1 and "**Overall verdict: ACCEPTED**" not in md
    assert (f"burst_bytes 1048576 is not the checkpoint tests.{key} asks: its "
            "checkpoint_size 256MiB split among 8 ranks in whole transfers of 4MiB is "
            "268435456 bytes") in md, md[:3000]


def test_without_a_verified_reference_a_checkpoint_is_never_accepted(signoff_run, tmp_path):
    # The volume has nothing to be compared with: the sign-off is INCOMPLETE, as always
    # without a verified reference.
    case = _checkpoint_case(signoff_run)
    case["burst_bytes"] = MIB
    _rate_for(case, MIB)
    ref = tmp_path / "reference.yaml"
    ref.write_text(ref.read_text() + "# edited after the run\n")
    code, md = _signoff(signoff_run, tmp_path)
    assert code == 1 and "**Overall verdict: INCOMPLETE**" in md, md[:2000]


@pytest.mark.parametrize("old, new, said", [
    (" -b 32m ", " -b 128k ", "gives -b 128k, tests.checkpoint_write among 8 ranks is -b 32m"),
    (" -t 4m ", " -t 1m ", "gives -t 1m, tests.checkpoint_write among 8 ranks is -t 4m"),
    (" -s 1 ", " -s 1 -s 8 ", "gives -s 8, tests.checkpoint_write among 8 ranks is -s 1"),
])
def test_a_recorded_command_not_splitting_the_references_checkpoint_is_invalid(
        signoff_run, tmp_path, old, new, said):
    case = _checkpoint_case(signoff_run)
    assert old in case["benchmark_command"]
    case["benchmark_command"] = case["benchmark_command"].replace(old, new)
    code, md = _signoff(signoff_run, tmp_path)
    assert code == 1 and f"the recorded IOR command (benchmark_command) {said}" in md, md[:3000]


@pytest.mark.parametrize("key, text, said", [
    # Rank 6 ran on n4, but the slowest rank took 1.56355 s (checkpoint_time_s).
    ("slowest_rank", "rank 6 on n4: 0.659957 s",
     "slowest_rank 'rank 6 on n4: 0.659957 s' is not what its checkpoint_time_s"),
    ("slowest_rank", "rank 0 on n3: 1.56355 s",
     "slowest_rank 'rank 0 on n3: 1.56355 s' is not what its checkpoint_time_s"),
    ("fastest_rank", "rank 1 on n1: 0.5 s",
     "fastest_rank 'rank 1 on n1: 0.5 s' is not what its first_rank_done_s"),
    ("fastest_rank", "rank 8 on n4: 0.433857 s",
     "fastest_rank 'rank 8 on n4: 0.433857 s' is not one of its 8 ranks"),
    ("slowest_rank", "n1 was slow", "slowest_rank 'n1 was slow' is not a rank as the check "
                                    "records it"),
    ("fastest_rank", None, "fastest_rank 'None' is not a rank as the check records it"),
])
def test_the_recorded_slowest_and_fastest_rank_are_those_of_its_figures(
        signoff_run, tmp_path, key, text, said):
    case = _checkpoint_case(signoff_run)
    case[key] = text
    code, md = _signoff(signoff_run, tmp_path)
    assert code == 1 and "**Overall verdict: ACCEPTED**" not in md
    assert said in md, md[:3000]


@pytest.mark.parametrize("name", ["IORCheckpointRestore", "IORCheckpointSharedRestore",
                                  "IORDataIntegrity"])
def test_a_read_whose_recorded_command_does_not_verify_proves_no_data(signoff_run, tmp_path,
                                                                      name):
    case = _checkpoint_case(signoff_run, name)
    assert " -R " in case["benchmark_command"]
    case["benchmark_command"] = case["benchmark_command"].replace(" -R ", " ")
    code, md = _signoff(signoff_run, tmp_path)
    assert code == 1 and f"{name}: INVALID" in md
    assert ("the recorded IOR command (benchmark_command) does not verify what it read "
            "(no -R): its figures prove no data") in md, md[:3000]


@pytest.mark.parametrize("name, label", [("IORCheckpointWrite", "ior bogus (irreducible)"),
                                         ("IORCheckpointRestore", "io500 zeros (irreducible)"),
                                         ("FioSequentialWrite", "fio zeros (irreducible)")])
def test_a_data_pattern_no_benchmark_writes_is_invalid_not_a_traceback(signoff_run, tmp_path,
                                                                       name, label):
    # IOR's rule raised KeyError on a pattern it does not know; fio's called it reducible,
    # which only counts where the probe finds the file system reducing data.
    _checkpoint_case(signoff_run, name)["data_pattern"] = label
    code, md = _signoff(signoff_run, tmp_path)
    assert code == 1 and f"data_pattern '{label}' is not one fsaccept writes" in md, md[:3000]


@pytest.mark.parametrize("key", ["burst_bytes", "num_tasks"])
@pytest.mark.parametrize("value", [10**400, -10**400, 10**4000],
                         ids=["1e400", "-1e400", "1e4000"])
def test_a_recorded_count_beyond_a_float_is_invalid_naming_it(signoff_run, tmp_path, key,
                                                               value):
    _checkpoint_case(signoff_run)[key] = value
    code, md = _signoff(signoff_run, tmp_path)
    assert code == 1 and "IORCheckpointWrite: INVALID" in md
    assert f"{key} '{str(value)[:40]}'" in md, md[:3000]


@pytest.mark.parametrize("slot", [0, 1, 2, 3])
@pytest.mark.parametrize("value", [10**400, -10**400, float("inf")],
                         ids=["1e400", "-1e400", "inf"])
def test_a_checkpoint_figure_beyond_a_float_is_invalid_not_a_traceback(signoff_run, tmp_path,
                                                                       slot, value):
    # value, reference, lower and upper tolerance of each figure: a float sum over an
    # integer of 401 digits raised OverflowError, a limit of 0 x (1 + inf) InvalidOperation.
    for name in ("checkpoint_time_s", "checkpoint_bandwidth", "first_rank_done_s"):
        _perf(_checkpoint_case(signoff_run), name)[slot] = value
    code, md = _signoff(signoff_run, tmp_path)
    assert code == 1 and "IORCheckpointWrite: INVALID" in md, md[:3000]


def test_per_node_figures_beyond_a_float_are_no_traceback(signoff_run, tmp_path):
    # float(10**400) raised OverflowError where the case is read (fio's per-node figures).
    edited = 0
    for case in (c for r in signoff_run["runs"] for c in r["testcases"]):
        for nodes in (case.get("per_node_figures") or {}).values():
            nodes.update(dict.fromkeys(nodes, 10**400))
            edited += len(nodes)
    assert edited
    code, md = _signoff(signoff_run, tmp_path)
    assert code in (0, 1) and "**Overall verdict: " in md
