"""fsaccept.cli: ``fsaccept parse ior FILE [--json-summary]``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fsaccept.benchmarks import registry
from fsaccept.cli import main

DATA = Path(__file__).resolve().parents[1] / "data" / "ior"


def test_parse_valid_capture(capsys: pytest.CaptureFixture[str]) -> None:
    path = DATA / "write-stonewall-wearout.txt"
    assert main(["parse", "ior", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith('{\n  "kind": "ior",')  # indent 2
    d = json.loads(out)
    assert d["valid"] is True and d["reasons"] == []
    assert d["file"] == str(path)
    assert d["summary"][0]["max_mib"] == 204.36
    assert d["summary"][0]["stonewall_mib"] == 50.21
    assert d["stonewall"][0]["pairs_max"] == 154
    assert d["params"]["stonewalling_time"] == 3


def test_parse_invalid_capture_still_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parse", "ior", str(DATA / "read-eof-exhausted.txt")]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["valid"] is False
    assert any("returned EOF prematurely" in r for r in d["reasons"])
    assert d["summary"] == []


def test_parse_json_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parse", "ior", str(DATA / "json-summary.json"), "--json-summary"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["valid"] is True and d["source"] == "json"
    assert [s["max_mib"] for s in d["summary"]] == [874.9355, 7639.0283]


def test_missing_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = tmp_path / "nope.txt"
    assert main(["parse", "ior", str(missing)]) == 2
    cap = capsys.readouterr()
    assert cap.out == ""
    err = cap.err.strip()
    assert str(missing) in err and "\n" not in err


def test_directory_is_unreadable(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["parse", "ior", str(tmp_path)]) == 2
    assert str(tmp_path) in capsys.readouterr().err


def test_unparseable_json_summary(capsys: pytest.CaptureFixture[str]) -> None:
    path = DATA / "json-summary-verbose.json"
    assert main(["parse", "ior", str(path), "--json-summary"]) == 2
    cap = capsys.readouterr()
    assert cap.out == ""
    err = cap.err.strip()
    assert str(path) in err and "not valid JSON" in err and "\n" not in err


def test_unknown_kind_is_a_usage_error() -> None:
    with pytest.raises(SystemExit) as e:
        main(["parse", "nosuchbench", str(DATA / "multi-iteration.txt")])
    assert e.value.code == 2


def test_parsers_registry_is_extensible() -> None:
    assert {"ior", "mdtest"} <= set(registry.BENCHMARKS)
    ior = registry.BENCHMARKS["ior"]
    assert callable(ior.parser) and callable(ior.json_parser)


@pytest.mark.parametrize("version", ["4.0.0" + "9" * 5000, "4.0.0\u00b2"])
def test_a_version_that_cannot_be_read_is_invalid_not_a_traceback(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, version: str) -> None:
    # More digits than Python's int() reads (4,300), or a digit it does not read.
    path = tmp_path / "ior.txt"
    text = (DATA / "write-stonewall-wearout.txt").read_text()
    path.write_text(text.replace("IOR-4.0.0:", f"IOR-{version}:", 1))
    assert main(["parse", "ior", str(path)]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["verdict"] == "INVALID" and len(d["reasons"]) == 1
    assert d["reasons"][0].startswith(f"ior version '{version[:20]}") and \
        d["reasons"][0].endswith("cannot be read: cannot certify the figure")
    assert len(d["reasons"][0]) < 200


@pytest.mark.parametrize("name", ["json-summary.json", "suite-json-05-wr-shared.json"])
def test_an_ior_json_summary_without_the_flag_is_read_as_json(
        capsys: pytest.CaptureFixture[str], name: str) -> None:
    # Issue 22: it was read as text and called "truncated".
    assert main(["parse", "ior", str(DATA / name)]) == 0
    without = json.loads(capsys.readouterr().out)
    assert main(["parse", "ior", "--json-summary", str(DATA / name)]) == 0
    with_flag = json.loads(capsys.readouterr().out)
    assert without == with_flag and without["valid"] and without["source"] == "json"
    assert not any("truncated" in r for r in without["reasons"])


def test_a_broken_ior_json_summary_without_the_flag_names_its_cause(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parse", "ior", str(DATA / "json-summary-verbose.json")]) == 2
    err = capsys.readouterr().err
    assert "not valid JSON" in err and "truncated" not in err


def test_per_rank_pairs_are_printed_compactly_and_whole(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # Issue 22: one JSON object (4 lines) per rank made the output of a 44,080-rank -vv
    # log cost most of the process; now one list per rank, all on one line, at any size.
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from bench_parse_ior import expand

    src = (DATA / "write-stonewall-wearout.txt").read_text()
    lines = {}
    for ranks in (100, 2000):
        path = tmp_path / f"{ranks}.txt"
        path.write_text(expand(src, ranks))
        assert main(["parse", "ior", str(path)]) == 0
        text = capsys.readouterr().out
        out = json.loads(text)
        assert [row[0] for row in out["rank_pairs"]] == list(range(ranks))
        assert all(len(row) == 2 for row in out["rank_pairs"])
        lines[ranks] = text.count("\n")
    assert lines[100] == lines[2000]


def test_rank_pairs_keep_every_value_of_every_rank() -> None:
    from fsaccept.benchmarks.ior.parse import parse_ior
    run = parse_ior((DATA / "srun-write-8ranks-4nodes.txt").read_text())
    assert run.rank_pairs
    assert run.to_dict()["rank_pairs"] == [[r, *v] for r, v in sorted(run.rank_pairs.items())]


def test_parse_ior_without_a_reference_does_not_import_the_schema_machinery() -> None:
    # Lazy imports keep the whole `fsaccept parse ior` process small (bench/bench_parse_ior.py).
    import subprocess
    import sys
    root = Path(__file__).resolve().parents[2]
    code = ("import sys, io, contextlib; from fsaccept.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    assert main(['parse', 'ior', {str(DATA / 'read-stonewalled.txt')!r}]) == 0\n"
            "print(sorted(m for m in ('jsonschema', 'polars', 'matplotlib', 'jinja2') "
            "if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"}, check=True)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr

# --------------------------------------------------------------------------- bounded inputs

REFRAME = Path(__file__).resolve().parents[1] / "data" / "reframe"


def special_files(tmp_path: Path) -> dict[str, Path]:
    """Inputs that are not regular files: reading any of them whole never ends (or
    waits forever for a writer)."""
    import os
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    return {"/dev/zero": Path("/dev/zero"), "a FIFO": fifo, "a directory": tmp_path}


KINDS = {"/dev/zero": "a character device", "a FIFO": "a FIFO (named pipe)", "a directory": "a directory"}


def one_line_naming(err: str, path: Path) -> bool:
    lines = err.strip().splitlines()
    return len(lines) == 1 and f"{path}: " in lines[0] and "Traceback" not in err


@pytest.mark.parametrize("what", list(KINDS))
def test_every_input_that_is_not_a_regular_file_is_refused(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, what: str) -> None:
    from fsaccept.reporting import report, trends
    bad = special_files(tmp_path)[what]
    log = DATA / "write-stonewall-wearout.txt"
    fio = Path(__file__).resolve().parents[1] / "data" / "fio" / "bare-flags.json"
    run_report = REFRAME / "ior-pass.json"
    ref = REFRAME / "ior-fail.reference.yaml"
    out = tmp_path / "out"
    commands = [
        lambda: main(["parse", "ior", str(bad)]),
        lambda: main(["parse", "mdtest", str(bad)]),
        lambda: main(["parse", "md-workbench", str(bad)]),
        lambda: main(["parse", "fio", str(bad)]),
        lambda: main(["parse", "ior", "--json-summary", str(bad)]),
        lambda: main(["parse", "fio", str(fio), "--job-file", str(bad)]),
        lambda: main(["parse", "ior", str(log), "--reference", str(bad), "--test", "x"]),
        lambda: main(["reference", str(bad)]),
        lambda: report.main([str(bad), "--out", str(out)]),
        lambda: report.main([str(run_report), "--out", str(out), "--ceilings", str(bad)]),
        lambda: report.main([str(run_report), "--out", str(out), "--reference", str(bad)]),
        lambda: trends.main(["compare", str(bad), "--db", str(tmp_path / "r.db"), "--system",
                             "local", "--reference", str(ref), "--out", str(out)]),
        lambda: trends.main(["compare", str(run_report), "--db", str(tmp_path / "r.db"),
                             "--system", "local", "--reference", str(bad), "--out", str(out)]),
        lambda: trends.main(["reference", str(bad), "-o", str(tmp_path / "n.yaml")]),
        lambda: trends.main(["keys", str(bad)]),
    ]
    for i, command in enumerate(commands):
        assert command() == 2, i
        err = capsys.readouterr().err
        assert one_line_naming(err, bad), (i, err)
        assert f"{KINDS[what]}, not a regular file" in err, (i, err)


def test_an_input_over_its_cap_is_refused_not_cut_short(
        capsys: pytest.CaptureFixture[str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from fsaccept.core import inputs
    from fsaccept.reporting import report
    log = DATA / "write-stonewall-wearout.txt"
    size = log.stat().st_size
    monkeypatch.setattr(inputs, "MAX_LOG_BYTES", size)
    assert main(["parse", "ior", str(log)]) == 0  # exactly at the cap: read whole
    capsys.readouterr()
    monkeypatch.setattr(inputs, "MAX_LOG_BYTES", size - 1)
    assert main(["parse", "ior", str(log)]) == 2
    err = capsys.readouterr().err
    assert one_line_naming(err, log) and f"more than {size - 1:,} bytes" in err
    monkeypatch.undo()
    job = tmp_path / "job.fio"
    job.write_text("[global]\n" + "; padding\n" * 200_000)  # 2 MB: no fio job file is
    fio = Path(__file__).resolve().parents[1] / "data" / "fio" / "bare-flags.json"
    assert main(["parse", "fio", str(fio), "--job-file", str(job)]) == 2
    err = capsys.readouterr().err
    assert one_line_naming(err, job) and f"more than {inputs.MAX_JOB_FILE_BYTES:,} bytes" in err
    run_report = REFRAME / "ior-pass.json"
    monkeypatch.setattr(inputs, "MAX_RUN_REPORT_BYTES", 1000)
    assert report.main([str(run_report), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert one_line_naming(err, run_report) and "more than 1,000 bytes" in err


#: A real capture of each kind's tool (IO500 runs IOR: its ior phases print this).
CAPTURED = {"ior": DATA / "write-stonewall-wearout.txt",
            "io500": DATA / "write-stonewall-wearout.txt",
            "mdtest": DATA.parent / "mdtest" / "easy-dirs.txt",
            "md-workbench": DATA.parent / "md-workbench" / "basic.txt",
            "fio": DATA.parent / "fio" / "bare-flags.json"}


@pytest.mark.parametrize("kind", sorted(CAPTURED))
def test_binary_output_is_refused_at_its_first_piece_not_read_whole(
        capsys: pytest.CaptureFixture[str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    """A real capture whose file goes on as a hole (NUL bytes: a log on a node that
    crashed, a sparse file) larger than the cap: refused as binary at the piece that
    holds the first NUL, before the rest is read (a 900 MB sparse file took 1.9 GB
    before it was refused), naming the file and where; exit 2, one line."""
    from fsaccept.core import inputs
    head = CAPTURED[kind].read_bytes()
    path = tmp_path / f"{kind} output.txt"
    path.write_bytes(head)
    with open(path, "ab") as fh:
        fh.truncate(64 << 20)  # sparse: nothing is written
    monkeypatch.setattr(inputs, "MAX_LOG_BYTES", 32 << 20)
    assert main(["parse", kind, str(path)]) == 2
    err = capsys.readouterr().err
    assert one_line_naming(err, path), err
    assert f"binary data (a NUL byte at byte {len(head):,})" in err, err


def test_text_inputs_read_as_before_crlf_and_undecodable_bytes(tmp_path: Path) -> None:
    from fsaccept.core import inputs
    path = tmp_path / "log.txt"
    path.write_bytes(b"a\r\nb\rc\n\xff\n")
    assert inputs.read_text(path, 100) == "a\nb\nc\n\ufffd\n" == \
        open(path, encoding="utf-8", errors="replace").read()


def test_parse_reads_each_benchmark_of_the_registry_by_its_own_spec():
    from fsaccept import cli
    from fsaccept.benchmarks import registry
    assert {k: f() for k, f in cli.PARSED.items()} == registry.BENCHMARKS
