"""One verdict, live or re-read: ``fsaccept parse`` holds a captured IOR output to the
rules the live check applies (the same functions, from the output's own command line),
and with ``--reference FILE --test KEY`` to the reference entry's settings and threshold."""

import dataclasses
import json
from pathlib import Path

import pytest

from fsaccept.benchmarks.ior.parse import parse_ior
from fsaccept.benchmarks.ior.validity import ior_invalid_reasons, output_expectation
from fsaccept.cli import main
from fsaccept.suite.reference import REFERENCE_DIR

DATA = Path(__file__).resolve().parents[1] / "data" / "ior"
CAPTURES = sorted(DATA.glob("*.txt"))


def reread(capsys, path, *args):
    assert main(["parse", "ior", str(path), *args]) == 0
    return json.loads(capsys.readouterr().out)


def live_reasons(run):
    """What ``IORTest.benchmark_reasons`` gives for this output when the job asked for
    what it ran (``IORTest.expectation``: the output's own expectation, with the ranks
    and nodes requested filled in by the check)."""
    reasons = []
    for op in ("write", "read"):
        if run.summary_for(op) is None:
            continue
        own = output_expectation(run, op)
        exp = dataclasses.replace(own, tasks=run.params.tasks or 0, nodes=run.params.nodes or 0)
        reasons += ior_invalid_reasons(run, exp)
    return reasons or list(run.reasons)


@pytest.mark.parametrize("capture", CAPTURES, ids=[p.stem for p in CAPTURES])
def test_live_and_reread_verdicts_agree_on_every_captured_ior_output(capture, capsys):
    run = parse_ior(capture.read_text())
    out = reread(capsys, capture)
    live = live_reasons(run)
    assert out["valid"] == (not live), (out["reasons"], live)
    assert out["verdict"] == ("not judged" if not live else "INVALID")
    for reason in live:
        if not reason.startswith("(+"):
            assert reason in out["reasons"]


def test_a_30s_style_read_that_ran_short_is_invalid_when_re_read(capsys):
    # -D 3 asked, the read phase ran 1.5 s: the dataset was exhausted.
    out = reread(capsys, DATA / "read-ended-early.txt")
    assert out["valid"] is False and out["verdict"] == "INVALID"
    assert any("read iteration 0 ran 1.5 s of the 3 s deadline: the dataset" in r
               for r in out["reasons"])
    assert "cache-suspect reads: needs the nodes' memory (Slurm)" in out["rules_not_applied"]


def test_a_dataset_generation_may_end_on_its_size(capsys):
    # Writes with a stonewall status file are datasets: the live fixture allows an early end.
    out = reread(capsys, DATA / "read-generate.txt")
    assert out["valid"] is True and out["verdict"] == "not judged"


def reference_with(tmp_path, **read_entry):
    import yaml
    data = yaml.safe_load((REFERENCE_DIR / "local.yaml").read_text())
    data["tests"]["ior_read_bandwidth"].update(read_entry)
    path = tmp_path / "ref.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_with_the_reference_the_figure_is_judged_and_settings_checked(capsys, tmp_path):
    capture = DATA / "read-stonewalled.txt"
    run = parse_ior(capture.read_text())
    argv = run.command_line.split()
    sizes = {"transfer_size": argv[argv.index("-t") + 1].replace("m", "MiB"),
             "block_size": argv[argv.index("-b") + 1].replace("m", "MiB")}
    mean = run.summary_for("read").mean_mib
    # The capture wrote IOR's default pattern (no -l): the entry says so.
    ok = reference_with(tmp_path, ranks_per_node=run.params.tasks // run.params.nodes,
                        deadline_s=3, threshold={"value": mean / 2, "unit": "MiB/s"},
                        data_pattern="timestamp", **sizes)
    out = reread(capsys, capture, "--reference", str(ok), "--test", "ior_read_bandwidth")
    assert out["verdict"] == "PASS" and out["judged"]["value"] == mean
    assert "node fraction: needs the partition's node count" in out["rules_not_applied"]

    high = reference_with(tmp_path, ranks_per_node=run.params.tasks // run.params.nodes,
                          deadline_s=3, threshold={"value": mean * 2, "unit": "MiB/s",
                                                   "tolerance": 0.1},
                          data_pattern="timestamp", **sizes)
    out = reread(capsys, capture, "--reference", str(high), "--test", "ior_read_bandwidth")
    assert out["verdict"] == "FAIL" and out["judged"]["lower"] == pytest.approx(mean * 1.8)

    other = reference_with(tmp_path, ranks_per_node=64, deadline_s=30,
                           threshold={"value": 1, "unit": "MiB/s"}, **sizes)
    out = reread(capsys, capture, "--reference", str(other), "--test", "ior_read_bandwidth")
    assert out["verdict"] == "INVALID"
    assert any("ranks per node, tests.ior_read_bandwidth.ranks_per_node is 64" in r
               for r in out["reasons"])
    assert "-D 3 is not tests.ior_read_bandwidth.deadline_s 30" in out["reasons"]


def test_reference_without_a_test_key_or_of_another_benchmark_exits_2(capsys):
    capture = str(DATA / "read-stonewalled.txt")
    ref = str(REFERENCE_DIR / "local.yaml")
    assert main(["parse", "ior", capture, "--reference", ref]) == 2
    assert "--reference needs --test KEY" in capsys.readouterr().err
    assert main(["parse", "ior", capture, "--reference", ref, "--test", "fio_seq_write"]) == 2
    assert "tests.fio_seq_write is not a ior test" in capsys.readouterr().err
    assert main(["parse", "ior", capture, "--reference", ref, "--test", "nope"]) == 2
    assert "tests.nope: missing" in capsys.readouterr().err


@pytest.mark.parametrize("cut, reason", [
    (" --posix.odirect", "the command lacks --posix.odirect (direct I/O)"),
    (" -F", "the command lacks -F (a file per process)"),
    (" -O stoneWallingStatusFile=/var/tmp/iorcap/sw.status",
     "the command lacks -O stoneWallingStatusFile (the dataset's status file)"),
])
def test_a_log_of_another_command_than_the_entry_prescribes_is_invalid(capsys, tmp_path, cut,
                                                                      reason):
    text = (DATA / "read-stonewalled.txt").read_text()
    assert cut in text
    capture = tmp_path / "other command.txt"
    capture.write_text(text.replace(cut, ""))
    run = parse_ior(text)
    ok = reference_with(tmp_path, ranks_per_node=run.params.tasks // run.params.nodes,
                        deadline_s=3, transfer_size="1MiB", block_size="1MiB",
                        threshold={"value": 1, "unit": "MiB/s"})
    out = reread(capsys, capture, "--reference", str(ok), "--test", "ior_read_bandwidth")
    assert out["verdict"] == "INVALID" and any(r.startswith(reason) for r in out["reasons"]), \
        out["reasons"]


@pytest.mark.parametrize("edit", ["removed", "spliced"])
def test_a_short_read_without_its_readable_row_is_invalid_when_re_read(edit, capsys, tmp_path):
    # Issue 22: with the `read` row removed or a rank's late line spliced into it, the
    # 1.50 s read of a -D 3 run was PASS; the summary's Mean(s) 1.50431 says it ran short.
    text = (DATA / "read-ended-early.txt").read_text()
    row = next(line for line in text.splitlines() if line.startswith("read      680.71"))
    edited = (text.replace(row + "\n", "") if edit == "removed" else
              text.replace(row, row[:30] + "3: stonewalling pairs accessed: 256" + row[30:]))
    path = tmp_path / "edited.txt"
    path.write_text(edited)
    out = reread(capsys, path)
    assert out["valid"] is False and out["verdict"] == "INVALID"
    assert any("Mean(s) 1.50431 is shorter than the 3 s deadline" in r for r in out["reasons"])
    assert any("0 readable per-iteration read row(s)" in r for r in out["reasons"])


# Issue 22, item 5: every IOR key of the registry is judged, access mode and operation first.
def _ref(tmp_path, key, **entry):
    import yaml
    data = yaml.safe_load((REFERENCE_DIR / "local.yaml").read_text())
    data["tests"][key].update(entry)
    data["tests"][key] = {k: v for k, v in data["tests"][key].items() if v is not None}
    path = tmp_path / "ref.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_a_shared_file_log_is_judged_by_the_shared_write_entry(capsys, tmp_path):
    # mpiio-shared-hints: -w -a MPIIO, one shared file, -t 1m -b 1m -D 2, 2 ranks per node.
    ref = _ref(tmp_path, "ior_shared_write", hints={"romio_cb_write": "disable"},
               data_pattern="timestamp")  # the capture's (no -l)
    out = reread(capsys, DATA / "mpiio-shared-hints.txt", "--reference", str(ref),
                 "--test", "ior_shared_write")
    assert not any("not an IOR test key" in r for r in out["rules_not_applied"])
    assert out["judged"]["name"] == "write_bandwidth"
    assert out["verdict"] in ("PASS", "FAIL"), out["reasons"]


def test_a_file_per_process_log_against_a_shared_file_entry_is_flagged(capsys, tmp_path):
    ref = _ref(tmp_path, "ior_shared_write", api="POSIX", hints=None, ranks_per_node=4,
               deadline_s=3)
    out = reread(capsys, DATA / "write-stonewall-wearout.txt", "--reference", str(ref),
                 "--test", "ior_shared_write")
    assert out["verdict"] == "INVALID"
    assert "the command has -F (a file per process): tests.ior_shared_write runs without it" \
        in out["reasons"]
    assert any(r.startswith("IOR ran a file per process (access: file-per-process)")
               for r in out["reasons"])


def test_a_shared_file_log_against_a_file_per_process_entry_is_flagged(capsys, tmp_path):
    ref = _ref(tmp_path, "ior_write_bandwidth", ranks_per_node=2, deadline_s=2)
    out = reread(capsys, DATA / "mpiio-shared-hints.txt", "--reference", str(ref),
                 "--test", "ior_write_bandwidth")
    assert out["verdict"] == "INVALID"
    assert any(r.startswith("IOR ran one shared file (access: single-shared-file)")
               for r in out["reasons"]), out["reasons"]


def test_a_read_log_judged_as_a_write_entry_says_so_first(capsys, tmp_path):
    out = reread(capsys, DATA / "read-stonewalled.txt", "--reference",
                 str(REFERENCE_DIR / "local.yaml"), "--test", "ior_write_bandwidth")
    assert out["verdict"] == "INVALID" and "judged" not in out
    first = out["reasons"][0]
    assert first.startswith("the log is a read run (IOR -r), tests.ior_write_bandwidth is a "
                            "write test"), out["reasons"]
    assert not any("ran without a deadline" in r for r in out["reasons"])


@pytest.mark.parametrize("capture", ["read-check-generate", "read-check-incorrect"])
def test_the_data_integrity_entry_judges_both_of_its_phases(capsys, tmp_path, capture):
    ref = _ref(tmp_path, "ior_data_integrity", ranks_per_node=4, transfer_size="1MiB",
               block_size="4MiB", direct_io=False, data_pattern="timestamp")
    out = reread(capsys, DATA / f"{capture}.txt", "--reference", str(ref),
                 "--test", "ior_data_integrity")
    assert not any("not an IOR test key" in r for r in out["rules_not_applied"])
    settings = [r for r in out["reasons"] if "tests.ior_data_integrity" in r]
    assert settings == [], settings
    if capture == "read-check-incorrect":  # IOR found 16 wrong transfers
        assert out["verdict"] == "INVALID"
        assert any("Incorrect data" in r for r in out["reasons"])


def test_a_data_integrity_read_without_verification_is_flagged(capsys, tmp_path):
    text = (DATA / "read-check-generate.txt").read_text()
    ref = _ref(tmp_path, "ior_data_integrity", ranks_per_node=4, transfer_size="1MiB",
               block_size="4MiB", direct_io=False)
    reread_text = (DATA / "read-check-incorrect.txt").read_text().replace(" -R ", " ", 1)
    path = tmp_path / "no-verify.txt"
    path.write_text(reread_text)
    assert text  # the write of the same dataset is a capture too
    out = reread(capsys, path, "--reference", str(ref), "--test", "ior_data_integrity")
    assert any(r.startswith("the command lacks -R (verify every transfer read)")
               for r in out["reasons"]), out["reasons"]
