"""IO500 results read and judged, on the real io500-isc26_v1 captures of
``../shared/captures/io500-isc26_v1/`` (see its README) and on edited copies made in
tmp_path (the captures are never edited)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from fsaccept import cli
from fsaccept.benchmarks import registry
from fsaccept.benchmarks.io500 import parse, score, validity
from fsaccept.core import reduction
from fsaccept.core.units import MIB

REPO = Path(__file__).resolve().parents[2]


def _captures() -> Path | None:
    # ``../shared`` of the main checkout; a worktree (/work/wt/NAME) finds it one
    # level further up.
    for base in (REPO.parent, *REPO.parent.parents):
        d = base / "shared" / "captures" / "io500-isc26_v1"
        if d.is_dir():
            return d
    return None


CAPTURES = _captures()
ABSENT = ("the IO500 captures are absent: ../shared/captures/io500-isc26_v1/ next to the "
          "repository (real io500 runs; IO500 is never built here)")
pytestmark = pytest.mark.skipif(CAPTURES is None, reason=ABSENT)


def io500_captures() -> Path:
    """The captures' directory, for a test of another file that needs them: without it,
    that test skips with the reason (as every test here does)."""
    if CAPTURES is None:
        pytest.skip(ABSENT)
    return CAPTURES


def _copy(tmp_path: Path, capture: str = "standard-2rank") -> Path:
    dest = tmp_path / capture
    shutil.copytree(CAPTURES / capture / "result", dest)
    return dest


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def _reasons(path: Path | str, **kw) -> list[str]:
    return validity.invalid_reasons(parse.read_io500(path, **kw))


# ------------------------------------------------------------------ the real captures


def test_standard_run_gives_io500s_own_figures_and_phases():
    run = parse.read_io500(CAPTURES / "standard-2rank" / "result")
    assert (run.version, run.mode, run.procs, run.config_hash) == (
        "io500-isc26_v1", "standard", 2, "EAF7B39E")
    assert [p.name for p in run.phases] == run.expected_phases()
    assert len(run.phases) == 14
    easy = run.phase("ior-easy-write")
    assert (easy.score, easy.unit, easy.time_s, easy.group, easy.io500_invalid) == (
        0.341397, "GiB/s", 1.4676, "BW", True)
    assert easy.messages[0].startswith("Write phase needed 1.464571s instead of stonewall 5s")
    assert easy.data_pattern == "timestamp"
    assert run.phase("find").group == "MD" and run.phase("timestamp").group == "none"
    assert run.phase("ior-rnd4K-easy-read").scored is False
    s = run.scores["SCORE"]
    assert (s.bw, s.md, s.total, s.io500_invalid, s.hash) == (
        1.107868, 47.581283, 7.260427, True, "DD205A28")
    assert run.printed_scores["SCORE"].total == 7.260427
    assert run.io500_valid is False and not run.leftover_stonewall_files


@pytest.mark.parametrize("capture", ["standard-2rank", "dry-run"])
def test_the_recomputed_score_matches_the_printed_one_on_every_real_capture(capture):
    for path in (CAPTURES / capture / "result", CAPTURES / capture / "stdout.txt"):
        run = parse.read_io500(path)
        assert score.mismatches(run) == []
    run = parse.read_io500(CAPTURES / "standard-2rank" / "result")
    total = score.recompute(run)["TOTAL"]
    assert abs(total["value"] - 7.260427) < 3e-6 and total["low"] <= 7.260427 <= total["high"]


def test_standard_run_is_invalid_for_io500s_reasons_and_fsaccepts():
    reasons = _reasons(CAPTURES / "standard-2rank" / "result")
    assert reasons[0].startswith("IO500 marked [SCORE] INVALID: run: stonewall-time 5s != 300s")
    assert any(r.startswith("stonewall time 5 s (from config.ini), IO500's rules ask for 300 s")
               for r in reasons)
    short = [r for r in reasons if "less than the 5 s stonewall" in r]
    assert [r.split()[0] for r in short] == ["ior-easy-write", "mdtest-easy-write",
                                             "ior-hard-write", "mdtest-hard-write"]
    assert not any("died" in r for r in reasons)


def test_dry_run_is_invalid():
    reasons = _reasons(CAPTURES / "dry-run" / "result")
    assert "io500 ran with --dry-run: no I/O was done, every score is 0" in reasons
    assert not any("measured nothing" in r or "less than the" in r for r in reasons)
    assert parse.read_io500(CAPTURES / "dry-run" / "stdout.txt").dry_run


def test_setup_error_died_before_its_first_phase():
    reasons = _reasons(CAPTURES / "setup-error" / "result")
    assert reasons[0] == ("the run died in phase ior-easy-write (before its first phase): no "
                          "ior-easy-write phase in the results; no [SCORE]")
    stdout = (CAPTURES / "setup-error" / "stdout.txt").read_text()
    reasons = _reasons(CAPTURES / "setup-error" / "result", stdout=stdout, exit_status=1)
    assert "FATAL (src/util.c:110) Couldn't create directory" in reasons[0]
    assert "io500 exited with status 1" in reasons[0]


def test_other_outputs_are_refused_naming_the_path(tmp_path):
    for name in ("io500-help.txt", "io500-list.txt", "io500-version.txt"):
        with pytest.raises(ValueError, match=f"^{CAPTURES / name}: no 'IO500 version' line"):
            parse.read_io500(CAPTURES / name)
    with pytest.raises(ValueError, match="no result.txt"):
        parse.read_io500(tmp_path)
    (tmp_path / "empty").write_text("")
    with pytest.raises(ValueError, match="empty"):
        parse.read_io500(tmp_path / "empty")
    (tmp_path / "bin").write_bytes(b"IO500 version x (standard)\n\x00\x01")
    with pytest.raises(ValueError, match="binary"):
        parse.read_io500(tmp_path / "bin")
    head = (CAPTURES / "standard-2rank" / "result" / "result.txt").read_text()[:60]
    (tmp_path / "result.txt").write_text(head)  # cut inside its [run] header
    with pytest.raises(ValueError, match="no complete \\[run\\] header"):
        parse.read_io500(tmp_path)


# ------------------------------------------------------------------ edited copies


def test_an_edited_score_line_is_invalid_naming_both_values(tmp_path):
    d = _copy(tmp_path)
    _edit(d / "result.txt", "SCORE           = 7.260427", "SCORE           = 7.260437")
    reasons = _reasons(d)
    assert ("[SCORE] TOTAL: result.txt says 7.260437, the phase scores give 7.260428"
            in "\n".join(reasons))
    d2 = _copy(tmp_path / "b")
    _edit(d2 / "result.txt", "score           = 2.527627", "score           = 3.527627")
    text = "\n".join(_reasons(d2))
    assert "[SCORE] BW: result.txt says 1.107868" in text
    assert "[SCORE] TOTAL: the printed line says 7.260427" in text


def test_a_removed_phase_means_the_run_died_there(tmp_path):
    d = _copy(tmp_path)
    text = (d / "result.txt").read_text()
    start = text.index("[mdtest-hard-stat]")
    (d / "result.txt").write_text(text[:start] + text[text.index("[mdtest-easy-delete]"):])
    (d / "result_summary.txt").write_text(
        "".join(line for line in (d / "result_summary.txt").read_text().splitlines(True)
                if "mdtest-hard-stat" not in line))
    reasons = _reasons(d)
    assert any(r.startswith("the run died in phase mdtest-hard-stat: no mdtest-hard-stat "
                            "phase in the results") for r in reasons)


def test_a_result_cut_short_at_an_exe_line_with_stonewall_files_left(tmp_path):
    # As on a full file system: IOR asserts, result.txt stops at the exe line,
    # result_summary.txt is empty, stonewall files are left.
    d = _copy(tmp_path)
    text = (d / "result.txt").read_text()
    cut = text.index("\n", text.index("exe", text.index("[ior-hard-write]")))
    (d / "result.txt").write_text(text[:cut + 1])
    (d / "result_summary.txt").write_text("")
    (d / "ior-hard.stonewall").write_text("")
    stderr = "ior: aiori-POSIX.c:600: POSIX_Xfer: Assertion `rc >= 0' failed.\n"
    reasons = _reasons(d, stderr=stderr, exit_status=134)
    assert reasons[0].startswith("the run died in phase ior-hard-write: ior: aiori-POSIX.c")
    assert "io500 exited with status 134" in reasons[0]
    assert "ior-hard-write started and has no end (result.txt stops at its exe line)" in reasons[0]
    assert "no [SCORE]" in reasons[0]
    assert any(r.startswith("stonewall files left in the result directory (ior-hard.stonewall)")
               for r in reasons)
    # The same run read from its stdout alone.
    stdout = (CAPTURES / "standard-2rank" / "stdout.txt").read_text()
    stdout = stdout[:stdout.index("ERROR INVALID (src/phase_ior.c:24) Write phase needed 0.2")]
    (tmp_path / "stdout.txt").write_text(stdout)
    assert _reasons(tmp_path / "stdout.txt")[0].startswith(
        "the run died in phase ior-hard-write: no ior-hard-write phase in the results")


def test_a_valid_looking_run_is_judged_by_fsaccepts_rules_alone(tmp_path):
    # IO500 would call this run valid: every [INVALID] removed, stonewall 300 s.
    d = _copy(tmp_path)
    for name in ("result.txt", "result_summary.txt"):
        text = (d / name).read_text().replace(" [INVALID]", "")
        text = "\n".join(line for line in text.splitlines() if "ERROR INVALID" not in line)
        (d / name).write_text(text + "\n")
    _edit(d / "config.ini", "stonewall-time = 5", "stonewall-time = 300")
    run = parse.read_io500(d)
    assert run.io500_valid is True
    reasons = validity.invalid_reasons(run)
    assert not any(r.startswith("IO500 marked") or r.startswith("stonewall time")
                   for r in reasons)
    assert "ior-easy-write ran 1.4676 s, less than the 300 s stonewall" in reasons[0]


def test_error_lines_in_a_phase_output_are_invalid(tmp_path):
    d = _copy(tmp_path)
    with open(d / "mdtest-hard-read.txt", "a") as fh:
        fh.write("WARNING: unable to open file /x/file.mdtest.1.7 (errno 5)\n")
    with open(d / "ior-easy-read.txt", "a") as fh:
        fh.write("ERROR: cannot read from file, (ior.c:1234)\n")
    reasons = _reasons(d)
    assert any(r.startswith("mdtest-hard-read: error lines in its output") for r in reasons)
    assert any(r.startswith("ior-easy-read: error lines in its output") and "cannot read" in r
               for r in reasons)


def test_a_zero_phase_is_invalid_outside_a_dry_run(tmp_path):
    d = _copy(tmp_path)
    _edit(d / "result.txt", "score           = 0.749930", "score           = 0.000000")
    assert any(r.startswith("mdtest-hard-delete: score 0.000000: the phase measured nothing")
               for r in _reasons(d))


def _probe(default_space: int) -> reduction.ProbeResult:
    vol = 64 * MIB
    return reduction.ProbeResult("/t", 4096, vol, {
        p: reduction.Measurement(p, vol, [s] * 3, 4096)
        for p, s in (("zeros", default_space), ("ior-default", default_space),
                     ("random", 64 * MIB))})


def test_ios500s_default_reducible_pattern_on_a_reducing_file_system_is_invalid(tmp_path):
    run = parse.read_io500(CAPTURES / "standard-2rank" / "result")
    assert validity.data_pattern(run) == "timestamp"
    reasons = validity.invalid_reasons(run, probe=_probe(1 * MIB))
    assert any(r.startswith("written with IO500's IOR timestamp pattern, reducible data, on a "
                            "file system that reduces it") for r in reasons)
    assert not validity.reduction_reasons(run, _probe(64 * MIB))  # not reducing
    d = _copy(tmp_path)
    text = (d / "result.txt").read_text().replace("--dataPacketType=timestamp",
                                                  "--dataPacketType=random")
    (d / "result.txt").write_text(text)
    assert not validity.reduction_reasons(parse.read_io500(d), _probe(1 * MIB))


def test_extended_mode_scores_count_the_optional_phases():
    assert "ior-rnd4K-write" not in score.group_phases(parse.BW, extended=False)
    assert "ior-rnd1MB-read" in score.group_phases(parse.BW, extended=True)
    assert {"find-easy", "find-hard", "mdworkbench-bench"} <= set(
        score.group_phases(parse.MD, extended=True))
    assert "ior-rnd4K-easy-read" not in score.group_phases(parse.BW, extended=True)


# ------------------------------------------------------------------ fsaccept parse io500


def test_fsaccept_parse_io500_prints_the_same_shape(capsys):
    assert cli.main(["parse", "io500", str(CAPTURES / "standard-2rank" / "result")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["kind"], out["verdict"], out["valid"], out["version_note"]) == (
        "io500", "INVALID", False, "tested")
    assert out["scores"]["SCORE"]["total"] == 7.260427
    assert round(out["recomputed"]["SCORE"]["TOTAL"]["value"], 5) == 7.26043
    assert any("data reduction" in r for r in out["rules_not_applied"])
    assert registry.BENCHMARKS["io500"].spack_package == ""
    assert "" not in registry.spack_packages()


@pytest.mark.parametrize("bad", ["missing", "empty", "binary", "help"])
def test_fsaccept_parse_io500_bad_input_is_one_line_and_exit_2(bad, tmp_path, capsys):
    path = {"missing": tmp_path / "nope", "empty": tmp_path / "e", "binary": tmp_path / "b",
            "help": CAPTURES / "io500-help.txt"}[bad]
    if bad == "empty":
        path.write_text("")
    if bad == "binary":
        path.write_bytes(b"\x7fELF\x00\x00")
    assert cli.main(["parse", "io500", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"fsaccept: {path}")


# ------------------------------------------------------------------ the reference entry

_ENTRY = {"node_fraction": 0.5, "ranks_per_node": 4,
          "thresholds": {"total": {"value": 10, "unit": "score"},
                         "bw": {"value": 1.5, "unit": "GiB/s"},
                         "md": {"value": 20, "unit": "kIOPS"},
                         "ior-easy-write": {"value": 2, "unit": "GiB/s"}}}


def _ref_errors(tmp_path, entry):
    import yaml

    from fsaccept.suite.reference import REFERENCE_DIR, ReferenceError, load_reference
    data = yaml.safe_load((REFERENCE_DIR / "local.yaml").read_text())
    data["tests"]["io500"] = entry
    path = tmp_path / "sys.yaml"
    path.write_text(yaml.safe_dump(data))
    try:
        load_reference(path)
    except ReferenceError as e:
        return str(e)
    return ""


def test_the_io500_entry_is_validated_with_clear_errors(tmp_path):
    assert _ref_errors(tmp_path, dict(_ENTRY, extended=True, data_pattern="random",
                                      datadir="scratch/io500", stonewall_s=300,
                                      ior_easy_block_size="512GiB",
                                      ior_hard_segments=10000000)) == ""
    for edit, message in [
        ({"datadir": "/etc"}, "tests.io500.datadir: '/etc' does not match"),
        ({"datadir": "a/../../x"}, "tests.io500.datadir: 'a/../../x' does not match"),
        ({"data_pattern": "zeros"}, "tests.io500.data_pattern: 'zeros' is not one of"),
        ({"thresholds": {"total": {"value": 1, "unit": "MiB/s"}}},
         "tests.io500.thresholds.total.unit: 'MiB/s' is not allowed here: use 'score'"),
        ({"thresholds": {"timestamp": {"value": 1, "unit": "kIOPS"}}},
         "tests.io500.thresholds: unknown key(s) 'timestamp'"),
        ({"ior_easy_block_size": "256m"}, "tests.io500.ior_easy_block_size: '256m' is not"),
        ({"stonewall_s": 0}, "tests.io500.stonewall_s: 0 is less than the minimum of 1"),
        ({"extended": "yes"}, "tests.io500.extended: 'yes' is not of type 'boolean'"),
    ]:
        assert message in _ref_errors(tmp_path, {**_ENTRY, **edit}), edit
    assert "'ranks_per_node' is a required property" in _ref_errors(
        tmp_path, {k: v for k, v in _ENTRY.items() if k != "ranks_per_node"})
