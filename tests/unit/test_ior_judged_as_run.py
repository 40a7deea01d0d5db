"""`fsaccept parse ior LOG --reference REF --test KEY` judges what IOR ran, not the
command-line text: sizes, wear-out and the deadline from IOR's Options block and summary
(or the JSON's), a repeated option last-wins as IOR applies it, the data pattern against
the entry's, versions by their sort key.  Real captures of tests/data/ior, edited copies
in tmp_path."""

import json
from pathlib import Path

import pytest
import yaml

from fsaccept.cli import main
from fsaccept.core import versions
from fsaccept.suite.reference import REFERENCE_DIR

DATA = Path(__file__).resolve().parents[1] / "data" / "ior"
READ = "read-stonewalled.txt"  # -r -t 1m -b 1m -D 3, 4 ranks on 1 node, IOR's default pattern
WRITE = "write-stonewall-wearout.txt"  # -w -t 1m -b 1m -D 3 -O stoneWallingWearOut=1


def reference(tmp_path, key, **changes):
    data = yaml.safe_load((REFERENCE_DIR / "local.yaml").read_text())
    data["tests"][key].update({"ranks_per_node": 4, "transfer_size": "1MiB",
                               "block_size": "1MiB", "deadline_s": 3,
                               "data_pattern": "timestamp",
                               "threshold": {"value": 1, "unit": "MiB/s"}, **changes})
    path = tmp_path / "ref.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def capture(tmp_path, name, *edits):
    text = (DATA / name).read_text()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / name
    path.write_text(text)
    return path


def judged(capsys, log, ref, key):
    assert main(["parse", "ior", str(log), "--reference", str(ref), "--test", key]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_unedited_captures_pass(tmp_path, capsys):
    out = judged(capsys, DATA / READ, reference(tmp_path, "ior_read_bandwidth"),
                 "ior_read_bandwidth")
    assert out["verdict"] == "PASS", out["reasons"]
    out = judged(capsys, DATA / WRITE, reference(tmp_path, "ior_write_bandwidth"),
                 "ior_write_bandwidth")
    assert out["verdict"] == "PASS", out["reasons"]


@pytest.mark.parametrize("edits, reason", [
    # IOR ran 4 KiB transfers (Options block and summary); the command line claims -t 1m.
    ([("xfersize            : 1 MiB", "xfersize            : 4096 bytes"),
      (" 1048576  1048576 ", " 1048576     4096 ")],
     "IOR ran a transfer size of 4KiB (its Options block and summary), "
     "tests.ior_read_bandwidth.transfer_size is 1MiB"),
    # Options block and summary disagree: one of them was edited.
    ([("blocksize           : 1 MiB", "blocksize           : 16 MiB")],
     "IOR's Options block says a block size of 16MiB, its summary 1MiB: the log was edited"),
    # The command line (last -t) says another size than IOR ran.
    ([(" -t 1m ", " -t 4k ")],
     "the command line's -t 4k is not what IOR ran (1MiB, its Options block): the log "
     "was edited"),
    ([(" -D 3 ", " -D 30 ")],
     "the command line's -D 30 is not what IOR ran (3, its Options block)"),
    # The deadline IOR applied (Options block) against the entry's.
    ([(" -D 3 ", " -D 30 -D 3 "), ("stonewallingTime    : 3", "stonewallingTime    : 3")],
     None),
])
def test_sizes_and_deadline_are_what_ior_ran(tmp_path, capsys, edits, reason):
    log = capture(tmp_path, READ, *edits)
    out = judged(capsys, log, reference(tmp_path, "ior_read_bandwidth"), "ior_read_bandwidth")
    if reason is None:  # -D 30 -D 3: IOR applied the last, 3, as the entry asks
        assert out["verdict"] == "PASS", out["reasons"]
    else:
        assert out["verdict"] == "INVALID" \
            and any(r.startswith(reason) for r in out["reasons"]), out["reasons"]


def test_a_repeated_option_is_applied_last_wins(tmp_path, capsys):
    # IOR applies the last -t: 1m, as its Options block says.  First-wins read 4k.
    log = capture(tmp_path, READ, (" -t 1m ", " -t 4k -t 1m "))
    out = judged(capsys, log, reference(tmp_path, "ior_read_bandwidth"), "ior_read_bandwidth")
    assert out["verdict"] == "PASS", out["reasons"]
    # ... and the deadline: -D 30 -D 3 ran 3 s, judged against an entry of 30 s.
    log = capture(tmp_path, READ, (" -D 3 ", " -D 30 -D 3 "))
    out = judged(capsys, log, reference(tmp_path, "ior_read_bandwidth", deadline_s=30),
                 "ior_read_bandwidth")
    assert "-D 3 is not tests.ior_read_bandwidth.deadline_s 30" in out["reasons"]


@pytest.mark.parametrize("edits", [
    # The Options block says no wear-out; the command line still shows it.
    [("stoneWallingWearOut : 1", "stoneWallingWearOut : 0")],
    # Repeated: IOR applies the last (=0), as its Options block says.
    [("-O stoneWallingWearOut=1", "-O stoneWallingWearOut=1 -O stoneWallingWearOut=0"),
     ("stoneWallingWearOut : 1", "stoneWallingWearOut : 0")],
])
def test_wear_out_is_what_ior_ran(tmp_path, capsys, edits):
    log = capture(tmp_path, WRITE, *edits)
    out = judged(capsys, log, reference(tmp_path, "ior_write_bandwidth"), "ior_write_bandwidth")
    assert out["verdict"] == "INVALID"
    assert ("IOR ran without wear-out (its Options block: stoneWallingWearOut 0): "
            "tests.ior_write_bandwidth runs with it") in out["reasons"], out["reasons"]


def test_a_data_pattern_other_than_the_entrys_is_invalid(tmp_path, capsys):
    # The capture wrote IOR's default (timestamp, no -l); the entry asks random (default).
    ref = reference(tmp_path, "ior_read_bandwidth", data_pattern="random")
    out = judged(capsys, DATA / READ, ref, "ior_read_bandwidth")
    assert out["verdict"] == "INVALID"
    assert ("IOR wrote the timestamp data pattern (-l), tests.ior_read_bandwidth.data_pattern "
            "is random") in out["reasons"], out["reasons"]
    # Repeated -l: the last wins, as IOR reads it.
    log = capture(tmp_path, READ, (" -t 1m ", " -l random -l timestamp -t 1m "))
    out = judged(capsys, log, ref, "ior_read_bandwidth")
    assert any(r.startswith("IOR wrote the timestamp data pattern") for r in out["reasons"])
    log = capture(tmp_path, READ, (" -t 1m ", " -l timestamp -l random -t 1m "))
    assert judged(capsys, log, ref, "ior_read_bandwidth")["verdict"] == "PASS"


@pytest.mark.parametrize("spelling", ["3.3", "3.3.0.0", "03.3.0", "3.3.0"])
def test_versions_match_by_sort_key(spelling, tmp_path, capsys):
    assert [b["reason"] for b in versions.known_bugs("ior", spelling)] == \
        [b["reason"] for b in versions.known_bugs("ior", "3.3.0")]
    assert any("32-bit overflow" in r for r in versions.version_reasons("ior", spelling,
                                                                       "bandwidth"))
    log = capture(tmp_path, READ, ("IOR-4.0.0:", f"IOR-{spelling}:"))
    out = judged(capsys, log, reference(tmp_path, "ior_read_bandwidth"), "ior_read_bandwidth")
    assert out["verdict"] == "INVALID" and any("32-bit overflow" in r for r in out["reasons"])


@pytest.mark.parametrize("spelling, note", [("4.0", "tested"), ("04.0.0.0", "tested"),
                                            ("4.0.0+dev", "untested"), ("4.0.0rc1", "untested")])
def test_tested_versions_match_by_sort_key(spelling, note):
    assert versions.version_note("ior", spelling).startswith(note)


def test_a_json_summary_is_judged_by_its_own_options_and_summary(tmp_path, capsys):
    # json-summary.json: -w -r -t 1m -b 16m; both summary rows edited to 4 KiB transfers.
    text = (DATA / "json-summary.json").read_text()
    assert text.count('"transferSize": 1048576, \n') == 3
    log = tmp_path / "json-summary.json"
    edited = text.replace('"transferSize": 1048576, \n    "numTasks"',
                          '"transferSize": 4096, \n    "numTasks"')
    assert edited.count('"transferSize": 4096') == 2
    log.write_text(edited)
    ref = reference(tmp_path, "ior_write_bandwidth", block_size="16MiB")
    out = judged(capsys, log, ref, "ior_write_bandwidth")
    assert out["verdict"] == "INVALID"
    assert "IOR's Options block says a transfer size of 1MiB, its summary 4KiB: the log was " \
        "edited" in out["reasons"], out["reasons"]
