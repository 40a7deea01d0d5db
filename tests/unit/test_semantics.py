"""The cross-node semantics check: its parser on real captures (tests/data/semantics/)
and hostile inputs, its rules, its judgement naming the node pair, and the sign-off's
re-judgement of the recorded case lines."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from fsaccept.benchmarks import registry
from fsaccept.benchmarks.semantics import command, parse, validity
from fsaccept.benchmarks.semantics.parse import parse_semantics
from fsaccept.reporting.case import case_of
from fsaccept.reporting.evidence import semantics_reasons

DATA = Path(__file__).resolve().parents[1] / "data" / "semantics"
SPEC = registry.TESTS["CrossNodeSemantics"]


def _text(name: str) -> str:
    return (DATA / f"{name}.txt").read_text()


def _exp(run: parse.SemanticsRun) -> validity.SemanticsExpectation:
    return validity.expectation_from_output(run)


def _params(**entry) -> command.SemanticsParameters:
    return command.parameters("semantics", {"node_fraction": 1.0, **entry})


def _edit(text: str, case: str, old: str, new: str) -> str:
    """A capture's case line edited in the test (never in the capture)."""
    line = next(x for x in text.splitlines() if x.startswith(f"{parse.PREFIX} {case} "))
    assert old in line
    return text.replace(line, line.replace(old, new, 1), 1)


@pytest.mark.parametrize("name, ranks", [("two-names", 2), ("four-ranks", 4)])
def test_a_real_run_on_named_nodes_gives_every_case_and_is_valid(name, ranks):
    run = parse_semantics(_text(name))
    assert run.valid and run.ended and run.version == parse.VERSION, run.reasons
    assert list(run.cases) == list(parse.CASES)
    assert run.ranks == ranks and len(set(run.nodes.values())) == ranks
    assert validity.invalid_reasons(run, _exp(run)) == []
    assert validity.failures(run, _params()) == []
    figures = run.figures()
    assert set(figures) <= set(SPEC.figures) and SPEC.main_figure in figures
    assert figures["xattr_unsupported"] == 0 and figures["flock_violations"] == 0
    # Taken as printed: the visibility line's own numbers.
    vis = run.cases["visibility"]
    assert figures["visibility_max_s"] == vis.value and figures["visibility_p50_s"] == vis.p50
    assert vis.writer != vis.reader


def test_every_figure_has_a_threshold_live_and_in_the_catalogue():
    judged = command.thresholds(_params())
    assert set(judged) == set(SPEC.figures) - {parse.P50_FIGURE}
    assert all(v == (0, None, 0, "violations") for k, v in judged.items()
               if parse.FIGURES[k] == parse.VIOLATIONS)
    assert command.thresholds(_params(max_visibility_s=0.5))["visibility_max_s"] == (
        0.5, None, 0, "s")
    # xattrs not promised: neither the xattr delay nor its support is judged.
    assert not {"xattr_s", "xattr_unsupported"} & set(command.thresholds(
        _params(not_promised={"xattr": "the contract is silent"})))
    assert "rename_violations" not in command.thresholds(
        _params(not_promised={"rename": "DHT"}))


def test_one_host_is_invalid_nothing_crossed_nodes():
    run = parse_semantics(_text("one-host"))
    assert run.valid  # the output itself is whole
    reasons = validity.invalid_reasons(run, _exp(run))
    assert any("same node vm" in r and "nothing crossed nodes" in r for r in reasons), reasons
    assert any("one rank per node" in r for r in reasons)


@pytest.mark.parametrize("name, kind", [
    ("alarm", "abort"), ("missing-dir", "error"), ("usage", "usage"), ("one-rank", "usage")])
def test_failed_runs_are_invalid_and_say_why(name, kind):
    run = parse_semantics(_text(name))
    assert not run.valid
    assert kind in {f.kind for f in run.findings}
    assert run.figures() == {} or name != "alarm"


def test_the_alarm_names_the_case_it_stopped_in():
    run = parse_semantics(_text("alarm"))
    assert any("case=visibility reason=alarm" in r for r in run.reasons)
    assert any("did not finish" in r for r in run.reasons)


def test_a_failing_case_names_its_node_pair():
    text = _edit(_text("two-names"), "visibility", "value=0.002094899", "value=3.5")
    text = _edit(text, "flock", "value=0 ", "value=1 ")
    run = parse_semantics(text)
    failed = validity.failures(run, _params())
    assert any(f.startswith("visibility: writer n1, reader n2: 3.5s (at most 1s")
               for f in failed), failed
    assert any(f.startswith("flock: writer n1, reader n2: 1 violations") for f in failed)


def test_a_change_never_seen_fails_at_the_bound():
    text = _edit(_text("two-names"), "attr-truncate", "value=0.000001462 unit=s ok=1",
                 "value=5.000321 unit=s ok=0")
    failed = validity.failures(parse_semantics(text), _params())
    assert failed and failed[0].startswith("attr-truncate: writer n1, reader n2: 5.00032s")


UNSUPPORTED = ("value=0.000007261 unit=s ok=1 detail=name=user.fsaccept seen=same "
               "errno=none bound_s=5")


def test_xattr_not_supported_is_never_a_pass():
    text = _edit(_text("two-names"), "xattr", UNSUPPORTED,
                 "value=0.000000000 unit=s ok=unsupported detail=user.fsaccept setxattr "
                 "on the writer: ENOTSUP")
    run = parse_semantics(text)
    assert run.valid and "xattr_s" not in run.figures()
    assert run.figures()["xattr_unsupported"] == 1
    failed = validity.failures(run, _params())
    assert failed == ["xattr: writer n1, reader n2: not supported (user.fsaccept setxattr "
                      "on the writer: ENOTSUP), and the reference promises it"]
    # Not promised: listed as such, not judged.
    silent = _params(not_promised={"xattr": "the contract is silent"})
    assert validity.failures(run, silent) == []
    assert validity.not_promised(run, silent) == [
        "xattr: not promised (the contract is silent); seen: user.fsaccept setxattr on the "
        "writer: ENOTSUP"]


def test_a_case_not_promised_is_listed_with_what_was_seen_and_never_judged():
    text = _edit(_text("two-names"), "rename", "ok=1", "ok=0")
    run = parse_semantics(text)
    assert validity.failures(run, _params())[0].startswith("rename: writer ")
    p = _params(not_promised={"rename": "GlusterFS DHT"})
    assert validity.failures(run, p) == []
    [listed] = validity.not_promised(run, p)
    assert listed.startswith("rename: not promised (GlusterFS DHT); seen: ")


def test_unsupported_is_only_an_outcome_of_a_case_that_may_be_unsupported():
    text = _edit(_text("two-names"), "flock", "ok=1", "ok=unsupported")
    assert "bogus" in {f.kind for f in parse_semantics(text).findings}


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "-inf", "1e999", "x"])
def test_a_value_that_is_no_measurement_is_invalid(value):
    run = parse_semantics(_edit(_text("two-names"), "visibility", "value=0.002094899",
                                f"value={value}"))
    assert not run.valid and "bogus" in {f.kind for f in run.findings}
    assert "visibility_max_s" not in run.figures()
    assert all(math.isfinite(v) for v in run.figures().values())


def test_a_duplicate_case_line_is_invalid_and_the_first_counts():
    text = _text("two-names")
    line = next(x for x in text.splitlines() if x.startswith(f"{parse.PREFIX} rename "))
    run = parse_semantics(text.replace(line, line + "\n" + line.replace("value=0", "value=0"), 1))
    assert "duplicate" in {f.kind for f in run.findings} and not run.valid
    run = parse_semantics(text + text)
    assert not run.valid and {"duplicate", "unreadable"} <= {f.kind for f in run.findings}


def test_every_cut_of_a_real_run_is_invalid_until_its_end_line():
    text = _text("two-names")
    end = text.index(f"{parse.PREFIX} end")
    for cut in range(0, end, 37):
        run = parse_semantics(text[:cut])
        assert not run.valid, cut
    assert parse_semantics(text[:end + len(f"{parse.PREFIX} end")]).valid


@pytest.mark.parametrize("blob", [
    b"\x00" * 1000, bytes(range(256)) * 20, b"fsaccept-semantics \x00\xff version 1\n",
    b"\xff\xfe" + "fsaccept-semantics".encode("utf-16-le")])
def test_binary_input_is_invalid_never_an_exception(blob):
    run = parse_semantics(blob.decode("utf-8", errors="replace"))
    assert not run.valid and run.figures() == {}
    run.to_dict()


def test_an_unknown_case_or_output_format_is_invalid():
    text = _text("two-names")
    assert "unknown-case" in {f.kind for f in parse_semantics(
        text.replace(f"{parse.PREFIX} end", f"{parse.PREFIX} quota writer=n1 reader=n2 "
                     "value=0 unit=s ok=1 detail=x\n" f"{parse.PREFIX} end")).findings}
    run = parse_semantics(text.replace("version 1 ", "version 2 ", 1))
    assert "version" in {f.kind for f in run.findings}


def test_ranks_other_than_asked_are_invalid():
    run = parse_semantics(_text("four-ranks"))
    reasons = validity.invalid_reasons(run, validity.SemanticsExpectation(8, 8, 50, 100))
    assert any("ranks, trials, records, renames (4, 8, 50, 100), (8, 8, 50, 100) asked" in r
               for r in reasons)


def test_reread_rules_hold_a_log_to_its_own_header():
    run = parse_semantics(_text("one-host"))
    reasons, not_applied = validity.reread_reasons(run)
    assert any("same node vm" in r for r in reasons) and not_applied
    assert validity.reread_reasons(parse_semantics(""))[0] == []


def test_parsing_cost_is_linear_in_a_lines_length():
    from . import stepcount
    real = _text("two-names")
    line = next(x for x in real.splitlines() if x.startswith(f"{parse.PREFIX} rename "))
    stepcount.assert_linear(lambda n: real.replace(line, line + " writer=" * n, 1),
                            parse_semantics, [parse], n=100)


def test_the_command_is_a_list_with_the_program_alarm_after_every_bound():
    p = _params(trials=5, bound_s=2)
    opts = command.semantics_options(p, "/mnt/x y/semantics")
    assert opts[:2] == ["-d", "/mnt/x y/semantics"]
    assert opts[opts.index("-a") + 1] == str(command.alarm_s(p))
    assert command.alarm_s(p) == 2 * (5 + command.OTHER_WAITS) + command.ALARM_MARGIN_S
    assert command.deadline_s(p) == command.alarm_s(p)


def test_the_entry_rule_wants_the_bound_above_the_threshold():
    assert command.entry_rules("tests.semantics", {"bound_s": 1, "max_visibility_s": 1}) == [
        "tests.semantics.bound_s: 1 s is not above max_visibility_s 1 s: a change that "
        "never shows would stop at the bound and pass"]
    assert command.entry_rules("tests.semantics", {"node_fraction": 1}) == []


def test_a_reference_without_the_entry_stays_valid_and_one_with_it_is_checked(tmp_path):
    import yaml

    from fsaccept.suite.reference import ReferenceError, load_reference
    repo = Path(__file__).resolve().parents[2] / "reference"
    assert "semantics" not in load_reference(repo / "local.yaml").entries
    assert load_reference(repo / "local-gluster.yaml").entries["semantics"][
        "max_visibility_s"] == 1
    data = yaml.safe_load((repo / "local-gluster.yaml").read_text())
    data["tests"]["semantics"]["bound_s"] = 0.5
    data["tests"]["semantics"]["colour"] = "red"
    path = tmp_path / "sys.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ReferenceError) as err:
        load_reference(path)
    assert "tests.semantics: unknown key(s) 'colour'" in str(err.value)


def _case(text: str, result: str = "pass", limit: float = 1.0):
    run = parse_semantics(text)
    perf = {}
    for name, value in run.figures().items():
        ref, lower, upper, unit = command.thresholds(
            _params(max_visibility_s=limit)).get(name) or (0, None, None, parse.FIGURES[name])
        perf[f"local-gluster:compute:{name}"] = [value, ref, lower, upper, unit, result]
    return case_of({"name": "CrossNodeSemantics", "result": result, "perfvalues": perf,
                    "semantics_cases": run.case_lines()})


class _Reference:
    def __init__(self, **entry):
        self.entries = {"semantics": {"node_fraction": 1.0, **entry}}


def test_the_sign_off_judges_the_recorded_case_lines_again():
    text = _text("two-names")
    assert semantics_reasons(_case(text), SPEC, _Reference()) == []
    # A passed test whose case lines fail.
    failing = _edit(text, "visibility", "value=0.002094899", "value=3.5")
    case = _case(failing)
    reasons = semantics_reasons(case, SPEC, _Reference())
    assert any("recorded as passed, but its case lines fail: visibility: writer n1, "
               "reader n2" in r for r in reasons), reasons
    # Judged looser than the verified reference says.
    reasons = semantics_reasons(_case(text, limit=5), SPEC, _Reference(max_visibility_s=1))
    assert any(r.startswith("visibility_max_s: the reference file says at most 1 s")
               for r in reasons), reasons


def test_the_sign_off_refuses_missing_or_edited_case_lines():
    case = _case(_text("two-names"))
    record = dict(case.record, semantics_cases="")
    assert semantics_reasons(case_of(record), SPEC) == [
        "evidence missing: no semantics_cases, which the semantics check records"]
    edited = dict(case.record, semantics_cases=case.record["semantics_cases"].replace(
        "value=0.002094899", "value=0.5"))
    assert any("visibility_max_s is recorded as 0.002094899, but its case lines give 0.5" in r
               for r in semantics_reasons(case_of(edited), SPEC))
    cut = dict(case.record, semantics_cases=case.record["semantics_cases"][:200])
    assert semantics_reasons(case_of(cut), SPEC)[0].startswith(
        "its recorded case lines (semantics_cases) cannot be read")


# ------------------------------------------------------------------ the check and its program

REPO = Path(__file__).resolve().parents[2]
SOURCE = REPO / "checks" / "semantics" / "src" / command.SOURCE


def test_the_program_prints_every_case_the_parser_reads():
    text = SOURCE.read_text()
    assert all(f'"{case}"' in text for case in parse.CASES)
    assert f'#define VERSION "{parse.VERSION}"' in text and f'"{parse.PREFIX}"' in text


def test_the_check_is_listed_with_its_program_as_a_fixture():
    """``reframe --list`` sets up nothing (no Slurm, no job): the check only loads."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([str(Path(sys.executable).parent / "reframe"), "-C",
                           str(REPO / "config" / "settings.py"), "--system", "local", "-c",
                           str(REPO / "checks" / "semantics"), "-t", "semantics", "-l"],
                          capture_output=True, text=True, env=env, timeout=120, cwd=REPO)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "- CrossNodeSemantics /" in proc.stdout and "^SemanticsProgram " in proc.stdout
    assert "Found 1 check(s)" in proc.stdout


def test_opt_in_folders_follow_the_reference_entries(tmp_path):
    """``checks/semantics`` is loaded only for a file that defines tests.semantics (a
    local file system's skip would leave the session INCOMPLETE), as checks/io500."""
    from fsaccept.suite import listing, reference
    ref_dir = REPO / "reference"
    gluster = reference.load_reference(ref_dir / "local-gluster.yaml")
    assert listing.main_session_dirs(gluster) == ["checks", "checks/semantics"]
    local = reference.load_reference(ref_dir / "local.yaml")
    assert listing.main_session_dirs(local) == ["checks"]
    for d in listing.main_session_dirs(reference.load_reference(ref_dir / "example-lustre.yaml")):
        assert (REPO / d).is_dir(), d


def test_a_plain_checks_run_does_not_load_it():
    assert not list((REPO / "checks").glob("semantics*.py"))


def test_no_site_module_or_spack_is_asked_for_the_program():
    from fsaccept.suite import provision
    assert command.EXECUTABLE not in registry.binaries()
    [line] = provision.session_commands({"benchmarks": "path"}, "local")
    assert command.EXECUTABLE not in line
    assert not registry.BENCHMARKS["semantics"].spack_package


@pytest.mark.skipif(not __import__("shutil").which("mpicc"), reason="no mpicc here")
def test_the_program_builds_without_a_warning(tmp_path):
    import subprocess
    proc = subprocess.run(["mpicc", "-O2", "-Wall", "-Wextra", "-o", str(tmp_path / "p"),
                           str(SOURCE)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and not proc.stderr, proc.stderr


class _Skipped(Exception):
    pass


def _fake_test(fstype: str, entries: dict):
    from types import SimpleNamespace

    def skip_because(reason):
        raise _Skipped(reason)
    return SimpleNamespace(expected_fstype=lambda: fstype, reference_key="semantics",
                           refdata=SimpleNamespace(entries=entries, path="reference/x.yaml"),
                           skip_because=skip_because)


@pytest.mark.parametrize("fstype, entries, why", [
    ("ext4", {"semantics": {"node_fraction": 1}}, "the target is ext4, a local file system: "
     "one client serves every node, so no change crosses nodes"),
    ("fuse.glusterfs", {}, "reference/x.yaml: no tests.semantics: the reference promises no "
     "cross-node semantics (docs/user/semantics.md)")])
def test_one_client_or_no_entry_skips_with_the_reason(fstype, entries, why):
    from fsaccept.rfm.semantics import SemanticsTest
    with pytest.raises(_Skipped) as skipped:
        SemanticsTest.load_entry(_fake_test(fstype, entries))
    assert str(skipped.value) == why


class _Targets(_Reference):
    def for_target(self, name):
        assert name == ""
        return self


def test_the_report_section_judges_each_case_from_its_lines_by_the_reference():
    from fsaccept.reporting.runreport import Test
    from fsaccept.reporting.semantics import UNVERIFIED, semantics_section
    from fsaccept.reporting.verdicts import verdict_of
    text = _edit(_text("two-names"), "hardlink", "ok=1", "ok=0")
    case = _case(text, result="pass")  # a recorded pass is not taken on trust
    test = Test("CrossNodeSemantics", [case], [verdict_of(case)])
    rows = {r.case: r for r in semantics_section([test], _Targets(
        not_promised={"rename": "the volume moves names"}))}
    assert list(rows) == list(parse.CASES)
    assert rows["hardlink"].verdict == "FAIL" and rows["hardlink"].pair == "writer n1, reader n2"
    assert rows["visibility"].verdict == "PASS" and rows["visibility"].promise == "≤ 1 s"
    assert rows["rename"].verdict == "not promised"
    assert rows["rename"].promise == "not promised: the volume moves names"
    # Without a verified reference nothing is judged.
    assert {r.promise for r in semantics_section([test])} == {UNVERIFIED}
    # Another benchmark's test, or one without lines: no section.
    assert semantics_section([Test("x", [case_of({"name": "IORWriteBandwidth"})], [])]) == []
