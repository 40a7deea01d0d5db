"""The cross-node semantics check: its parser on real captures (tests/data/semantics/)
and hostile inputs, its rules, its judgement naming the node pair, and the sign-off's
re-judgement of the recorded case lines."""

from __future__ import annotations

import math
import re
import shutil
from pathlib import Path

import pytest

from fsaccept.benchmarks import registry
from fsaccept.benchmarks.semantics import command, parse, validity
from fsaccept.benchmarks.semantics.parse import parse_semantics
from fsaccept.core import inputs
from fsaccept.reporting.case import case_of
from fsaccept.reporting.signoff.common import RunFiles
from fsaccept.reporting.signoff.semantics import semantics_reasons

DATA = Path(__file__).resolve().parents[1] / "data" / "semantics"
SPEC = registry.TESTS["CrossNodeSemantics"]


def _text(name: str) -> str:
    return (DATA / f"{name}.txt").read_text()


def _exp(run: parse.SemanticsRun) -> validity.SemanticsExpectation:
    return validity.expectation_from_output(run)


#: The rate floors every promised namespace case needs (entries/s).
FLOORS = {key: 100 for key in command.RATE_FLOORS.values()}
#: The uid the captures' ACL denies (-u 4242).
ACL = {"acl_test_uid": 4242}
#: Every key a promised case needs: the floors and root squash's anonymous uid (and
#: the captures' ACL uid, which the default 65534 would clash with).
NEEDED = {**FLOORS, "root_squash_uid": 65534, **ACL}
#: The captures ran as root on a local disk: root is not squashed there.
NO_SQUASH = {"root-squash": "a local disk squashes no root"}


def _entry(**entry) -> dict:
    """An entry of the captures' machine: root squash not promised, besides what the
    test lists under not_promised."""
    return {"node_fraction": 1.0, **FLOORS, **ACL, **entry,
            "not_promised": {**NO_SQUASH, **entry.get("not_promised", {})}}


def _params(**entry) -> command.SemanticsParameters:
    return command.parameters("semantics", _entry(**entry))


def _promising_all(**entry) -> command.SemanticsParameters:
    """An entry that promises every case."""
    return command.parameters("semantics", {"node_fraction": 1.0, **NEEDED, **entry})


def _listed(run: parse.SemanticsRun, p: command.SemanticsParameters) -> list[str]:
    """The cases listed as not promised, but root squash (never promised in _params)."""
    return [x for x in validity.not_promised(run, p) if not x.startswith("root-squash:")]


def _line(text: str, case: str) -> str:
    return next(x for x in text.splitlines() if x.startswith(f"{parse.PREFIX} {case} "))


def _edit(text: str, case: str, old: str, new: str) -> str:
    """A capture's case line edited in the test (never in the capture)."""
    line = _line(text, case)
    assert old in line
    return text.replace(line, line.replace(old, new, 1), 1)


def _set(text: str, case: str, **fields: str) -> str:
    """A capture's case line with fields (``value=``, ``ok=``, ``wrong=``...) set, in the
    test (never in the capture)."""
    line = new = _line(text, case)
    for key, value in fields.items():
        assert re.search(rf" {key}=\S+", new), (key, new)
        new = re.sub(rf" {key}=\S+", lambda _: f" {key}={value}", new, count=1)
    return text.replace(line, new, 1)


def _value(text: str, case: str) -> str:
    """A case's value as the capture prints it."""
    return re.search(r" value=(\S+)", _line(text, case)).group(1)


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
    judged = command.thresholds(_promising_all())
    assert set(judged) == set(SPEC.figures) - {parse.P50_FIGURE}
    assert all(v == (0, None, 0, "violations") for k, v in judged.items()
               if parse.FIGURES[k] == parse.VIOLATIONS)
    # A rate is a floor: no upper bound.
    assert all(v == (100, 0, None, parse.RATE) for k, v in judged.items()
               if parse.FIGURES[k] == parse.RATE)
    assert {k for k, unit in parse.FIGURES.items() if unit == parse.RATE} == {
        parse.figure_of(c) for c in parse.COUNTED}
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
    text = _set(_text("two-names"), "visibility", value="3.5")
    text = _set(text, "flock", value="1")
    run = parse_semantics(text)
    failed = validity.failures(run, _params())
    assert any(f.startswith("visibility: writer n1, reader n2: 3.5s (at most 1s")
               for f in failed), failed
    assert any(f.startswith("flock: writer n1, reader n2: 1 violations") for f in failed)


def test_a_change_never_seen_fails_at_the_bound():
    text = _set(_text("two-names"), "attr-truncate", value="5.000321", ok="0")
    failed = validity.failures(parse_semantics(text), _params())
    assert failed and failed[0].startswith("attr-truncate: writer n1, reader n2: 5.00032s")


def test_xattr_not_supported_is_never_a_pass():
    real = _text("two-names")
    line = _line(real, "xattr")
    text = real.replace(line, line[:line.index(" value=")] + (
        " value=0.000000000 unit=s ok=unsupported detail=user.fsaccept setxattr on the "
        "writer: ENOTSUP"), 1)
    run = parse_semantics(text)
    assert run.valid and "xattr_s" not in run.figures()
    assert run.figures()["xattr_unsupported"] == 1
    failed = validity.failures(run, _params())
    assert failed == ["xattr: writer n1, reader n2: not supported (user.fsaccept setxattr "
                      "on the writer: ENOTSUP), and the reference promises it"]
    # Not promised: listed as such, not judged.
    silent = _params(not_promised={"xattr": "the contract is silent"})
    assert validity.failures(run, silent) == []
    assert _listed(run, silent) == [
        "xattr: not promised (the contract is silent); seen: user.fsaccept setxattr on the "
        "writer: ENOTSUP"]


def test_a_case_not_promised_is_listed_with_what_was_seen_and_never_judged():
    text = _edit(_text("two-names"), "rename", "ok=1", "ok=0")
    run = parse_semantics(text)
    assert validity.failures(run, _params())[0].startswith("rename: writer ")
    p = _params(not_promised={"rename": "GlusterFS DHT"})
    assert validity.failures(run, p) == []
    [listed] = _listed(run, p)
    assert listed.startswith("rename: not promised (GlusterFS DHT); seen: ")


def test_unsupported_is_only_an_outcome_of_a_case_that_may_be_unsupported():
    text = _edit(_text("two-names"), "flock", "ok=1", "ok=unsupported")
    assert "bogus" in {f.kind for f in parse_semantics(text).findings}


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "-inf", "1e999", "x"])
def test_a_value_that_is_no_measurement_is_invalid(value):
    run = parse_semantics(_set(_text("two-names"), "visibility", value=value))
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
    run = parse_semantics(text.replace(f"version {parse.VERSION} ", "version 9 ", 1))
    assert "version" in {f.kind for f in run.findings}


def test_ranks_other_than_asked_are_invalid():
    run = parse_semantics(_text("four-ranks"))
    reasons = validity.invalid_reasons(run, validity.SemanticsExpectation(
        8, 8, 50, 100, 300, 120))
    assert any("ranks, trials, records, renames, files, tree entries (4, 8, 50, 100, 300, "
               "120), (8, 8, 50, 100, 300, 120) asked" in r for r in reasons), reasons
    # Another directory size than asked is as wrong as another rank count.
    reasons = validity.invalid_reasons(run, validity.SemanticsExpectation(
        4, 8, 50, 100, 1000, 120))
    assert any("(4, 8, 50, 100, 300, 120), (4, 8, 50, 100, 1000, 120) asked" in r
               for r in reasons), reasons


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
    assert opts[opts.index("-n") + 1] == str(p.namespace_files)
    assert opts[opts.index("-m") + 1] == str(p.namespace_tree_entries)
    # Each namespace case: its entries created, listed and removed at a tenth of its floor.
    namespace = command.NAMESPACE_SLACK * (p.namespace_files + p.namespace_tree_entries) / 100
    assert command.alarm_s(p) == int(2 * (5 + command.OTHER_WAITS) + namespace) + \
        command.ALARM_MARGIN_S
    assert command.deadline_s(p) == command.alarm_s(p)
    # A case not promised has no floor: the alarm allows for UNJUDGED_RATE.
    silent = _params(trials=5, bound_s=2, not_promised={"namespace-walk": "silent"},
                     min_walk_rate=None)
    assert command.alarm_s(silent) == int(2 * (5 + command.OTHER_WAITS) + command.NAMESPACE_SLACK * (
        p.namespace_files / 100 + p.namespace_tree_entries / command.UNJUDGED_RATE)) + \
        command.ALARM_MARGIN_S


def test_the_entry_rule_wants_the_bound_above_the_threshold():
    assert command.entry_rules("tests.semantics", {"bound_s": 1, "max_visibility_s": 1,
                                                   **NEEDED}) == [
        "tests.semantics.bound_s: 1 s is not above max_visibility_s 1 s: a change that "
        "never shows would stop at the bound and pass"]
    assert command.entry_rules("tests.semantics", {"node_fraction": 1, **NEEDED}) == []


def test_a_promised_namespace_case_needs_its_rate_floor():
    """Every promised figure is judged: a namespace case without a floor is refused,
    unless the contract does not promise it."""
    rules = command.entry_rules("tests.semantics", {"node_fraction": 1, "root_squash_uid": 1})
    assert rules == [
        f"tests.semantics.{command.RATE_FLOORS[c]}: missing: the {c} case is promised, so "
        f"its rate needs a floor (entries/s), or list {c} under not_promised"
        for c in parse.COUNTED]
    silent = {"node_fraction": 1, "root_squash_uid": 1,
              "not_promised": {c: "silent" for c in parse.COUNTED}}
    assert command.entry_rules("tests.semantics", silent) == []
    judged = command.thresholds(command.parameters("semantics", silent))
    assert not {parse.figure_of(c) for c in parse.COUNTED} & set(judged)
    assert not {parse.wrong_figure(c) for c in parse.COUNTED} & set(judged)


def test_the_catalogue_of_cases_is_the_one_place():
    """The schema's not_promised names, the floors' and sizes' keys: each case of CASES,
    each a field of the typed entry."""
    import dataclasses
    import json
    schema = json.loads((REPO / "fsaccept/benchmarks/semantics/schema.json").read_text())
    assert schema["properties"]["not_promised"]["propertyNames"]["enum"] == list(parse.CASES)
    fields = {f.name for f in dataclasses.fields(command.SemanticsParameters)}
    for table in (command.RATE_FLOORS, command.SIZES):
        assert set(table) == set(parse.COUNTED) and set(table.values()) <= fields
        assert set(table.values()) <= set(schema["properties"])
    keys = {key for key, _ in command.PROMISE_KEYS.values()} | set(command.UIDS.values())
    assert keys <= fields and keys <= set(schema["properties"])
    assert set(command.PROMISE_KEYS) | set(command.UIDS) <= set(parse.CASES)
    assert set(command.UIDS) == set(parse.UID_DETAIL) == set(parse.UID_WORDS)
    assert set(parse.UID_DETAIL) <= set(parse.MAY_BE_UNSUPPORTED)
    assert parse.COUNTED == tuple(c for c, u in parse.CASES.items() if u == parse.RATE)


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
    # A promised namespace case without its floor, a floor that is no rate.
    data = yaml.safe_load((repo / "local-gluster.yaml").read_text())
    del data["tests"]["semantics"]["min_walk_rate"]
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ReferenceError) as err:
        load_reference(path)
    assert "tests.semantics.min_walk_rate: missing: the namespace-walk case is promised" in \
        str(err.value)
    for bad in (0, -5, float("nan"), float("inf"), "fast", True):
        data = yaml.safe_load((repo / "local-gluster.yaml").read_text())
        data["tests"]["semantics"]["min_list_rate"] = bad
        path.write_text(yaml.safe_dump(data))
        with pytest.raises(ReferenceError) as err:
            load_reference(path)
        assert "min_list_rate" in str(err.value), bad


class _Run:
    """A test case's run directory as ReFrame leaves it: the job's own output
    (``rfm_job.out``, ``rfm_job.err``) copied to the case's output directory, read by the
    sign-off's reader (:class:`RunFiles`)."""

    def __init__(self, root: Path):
        self.root = root
        self.outputdir = root / "output" / "CrossNodeSemantics"
        self.outputdir.mkdir(parents=True, exist_ok=True)

    def files(self) -> RunFiles:  # a new reader: each sign-off reads once
        return RunFiles(inputs.Reader(self.root))

    def case(self, text: str, result: str = "pass", limit: float = 1.0, floor: float = 100,
             stdout: str | bytes | None = None, recorded: str | None = None):
        """The case the live check records of ``text`` (its stdout), the job's output
        holding ``stdout`` (default: ``text``)."""
        out = text if stdout is None else stdout
        (self.outputdir / "rfm_job.out").write_bytes(out if isinstance(out, bytes)
                                                     else out.encode())
        (self.outputdir / "rfm_job.err").write_text("")
        return self.record(text, result, limit, floor, recorded,
                           outputdir=str(self.outputdir))

    @staticmethod
    def record(text: str, result: str, limit: float, floor: float, recorded: str | None,
               **more: str):
        run = parse_semantics(text)
        perf = {}
        params = _params(max_visibility_s=limit, min_list_rate=floor)
        for name, value in run.figures().items():
            ref, lower, upper, unit = command.thresholds(params).get(name) or (
                0, None, None, parse.FIGURES[name])
            perf[f"local-gluster:compute:{name}"] = [value, ref, lower, upper, unit, result]
        return case_of({"name": "CrossNodeSemantics", "result": result, "perfvalues": perf,
                        "semantics_cases": run.case_lines() if recorded is None else recorded,
                        **more})


def _case(text: str, result: str = "pass"):
    """The case the live check records of ``text``, without its run directory (what a
    report section shows)."""
    return _Run.record(text, result, 1.0, 100, None)


@pytest.fixture
def job(tmp_path):
    return _Run(tmp_path)


class _Reference:
    def __init__(self, **entry):
        self.entries = {"semantics": _entry(**entry)}


def test_the_sign_off_judges_the_case_lines_its_output_gives(job):
    text = _text("two-names")
    assert semantics_reasons(job.case(text), SPEC, _Reference(), job.files()) == []
    # A passed test whose case lines fail.
    failing = _set(text, "visibility", value="3.5")
    reasons = semantics_reasons(job.case(failing), SPEC, _Reference(), job.files())
    assert any("recorded as passed, but its case lines fail: visibility: writer n1, "
               "reader n2" in r for r in reasons), reasons
    # Judged looser than the verified reference says.
    reasons = semantics_reasons(job.case(text, limit=5), SPEC, _Reference(max_visibility_s=1),
                                job.files())
    assert any(r.startswith("visibility_max_s: the reference file says at most 1 s")
               for r in reasons), reasons
    # A rate judged against a lower floor than the verified reference's.
    reasons = semantics_reasons(job.case(text, floor=10), SPEC, _Reference(min_list_rate=100),
                                job.files())
    assert reasons == ["namespace_list_rate: the reference file says at least 100 "
                       "entries/s, but the test was judged against 10.0"], reasons
    # A namespace case whose count was wrong, in a test recorded as passed.
    wrong = _set(text, "namespace-list", wrong="5", ok="0")
    reasons = semantics_reasons(job.case(wrong), SPEC, _Reference(), job.files())
    assert any("recorded as passed, but its case lines fail: namespace-list: writer n1, "
               "reader n2: 5 wrong entries" in r for r in reasons), reasons


def test_the_output_is_judged_not_the_run_reports_field(job):
    """The field edited to pass, the output failing: the output's verdict, and the
    field named as not what the output says."""
    text = _text("two-names")
    failing = _set(text, "visibility", value="3.5")
    case = job.case(text, stdout=failing)  # figures and field of a passing run
    reasons = semantics_reasons(case, SPEC, _Reference(), job.files())
    out = job.outputdir / "rfm_job.out"
    assert f"its semantics_cases are not what its output {out} says" in reasons
    assert any("visibility_max_s is recorded as" in r and "3.5" in r for r in reasons)
    assert any("recorded as passed, but its case lines fail: visibility" in r
               for r in reasons), reasons
    # The field alone edited (the output untouched): named, and the output still judged.
    recorded = parse_semantics(text).case_lines()
    edited = _set(recorded, "visibility", value="0.5")
    reasons = semantics_reasons(job.case(text, recorded=edited), SPEC, _Reference(),
                                job.files())
    assert reasons == [f"its semantics_cases are not what its output {out} says"], reasons


def test_the_case_lines_are_recorded_as_the_program_printed_them():
    """The record holds the program's own characters (``value=0.000005728``), not the
    numbers re-formatted (``value=5.728e-06``)."""
    text = _text("two-names")
    printed = [x for x in text.splitlines()
               if x.startswith(parse.PREFIX + " ") and not parse._SPECIAL.match(x)]
    assert parse_semantics(text).case_lines() == "\n".join(printed)
    assert "value=0.000005728 " in _line(parse_semantics(text).case_lines(), "attr-truncate")
    # Read again from the record, the very same characters.
    assert parse.parse_case_lines("\n".join(printed)).case_lines() == "\n".join(printed)


def test_an_older_run_report_recorded_with_repr_is_still_read_and_judged_as_before(job):
    """Checks before this one recorded each number by ``repr``: the sign-off takes that
    form of the same output as well, and still refuses an edit of either."""
    text = _text("two-names")
    older = parse_semantics(text).repr_case_lines()
    assert "value=5.728e-06 " in _line(older, "attr-truncate")
    assert semantics_reasons(job.case(text, recorded=older), SPEC, _Reference(),
                             job.files()) == []
    out = job.outputdir / "rfm_job.out"
    edited = older.replace("value=5.728e-06 ", "value=5.7e-06 ", 1)
    assert semantics_reasons(job.case(text, recorded=edited), SPEC, _Reference(),
                             job.files()) == [
        f"its semantics_cases are not what its output {out} says"]
    # The report's section reads the older record as it did.
    again = parse.parse_case_lines(older)
    assert again.valid and again.figures() == parse_semantics(text).figures()


#: A real run's lines edited as a hostile user would, each field alone readable, the
#: fields together no line the program prints -> the INVALID reason that says so.
CONTRADICTIONS = [
    (lambda t: _set(t, "visibility", p50="0.5"),
     "visibility: its median trial p50=0.5 s is above its worst trial value=0.003510620 s"),
    (lambda t: _edit(t, "visibility", "not_seen_within_bound=0", "not_seen_within_bound=3"),
     "visibility: ok=1 with not_seen_within_bound=3: a trial never seen within the bound "
     "is ok=0, and ok=0 is such a trial"),
    (lambda t: _set(_edit(t, "visibility", "not_seen_within_bound=0",
                          "not_seen_within_bound=3"), "visibility", ok="0"),
     "visibility: not_seen_within_bound=3, but its worst trial value=0.003510620 s is "
     "within bound_s=5"),
    (lambda t: _edit(t, "visibility", "trials=20 ", "trials=200 "),
     "visibility: its detail says trials=200 bound_s=5, the header trials 20 bound_s 5.0"),
    (lambda t: _set(t, "rename", reader="n9"),
     "rename: its reader n9 is no rank's node (the rank lines name n1, n2)"),
    (lambda t: _set(t, "visibility", writer="all"),
     "visibility: writer=all, but its writer is one rank"),
    (lambda t: _set(t, "append", reader="n3"),
     "append: its reader n3 is no rank's node (the rank lines name n1, n2)"),
    (lambda t: _set(t, "flock", value="0", ok="0"),
     "flock: ok=0 with 0 violations: the program prints ok=1 for none, ok=0 for any"),
    (lambda t: _set(t, "rename", value="0.5"), "rename: value=0.5 is not a count of violations"),
]


@pytest.mark.parametrize("edit, reason", CONTRADICTIONS)
def test_case_lines_that_contradict_each_other_are_invalid_live(edit, reason):
    run = parse_semantics(edit(_text("two-names")))
    assert reason in validity.invalid_reasons(run, _exp(run)), validity.invalid_reasons(
        run, _exp(run))
    # The re-read rules of `fsaccept parse`: the same function.
    assert reason in validity.reread_reasons(run)[0]


@pytest.mark.parametrize("edit, reason", CONTRADICTIONS)
def test_the_sign_off_refuses_case_lines_that_contradict_each_other(job, edit, reason):
    """The job's output and its record edited alike, the test recorded as passed: the
    sign-off finds what the live check finds, with its ranks recorded or not, and
    without a verified reference."""
    text = edit(_text("two-names"))
    case = job.case(text)
    assert reason in semantics_reasons(case, SPEC, _Reference(), job.files())
    with_tasks = case_of(dict(case.record, num_tasks=2))
    assert reason in semantics_reasons(with_tasks, SPEC, _Reference(), job.files())
    out = job.outputdir / "rfm_job.out"
    assert f"its output ({out}): {reason}" in semantics_reasons(case, SPEC, None,
                                                               job.files())


def test_the_report_section_shows_a_contradicted_case_invalid():
    from fsaccept.reporting.runreport import Test
    from fsaccept.reporting.semantics import semantics_section
    from fsaccept.reporting.verdicts import verdict_of
    text = _edit(_text("two-names"), "visibility", "not_seen_within_bound=0",
                 "not_seen_within_bound=3")
    case = _case(text)
    rows = {r.case: r for r in semantics_section(
        [Test("CrossNodeSemantics", [case], [verdict_of(case)])], _Targets())}
    assert rows["visibility"].verdict == "INVALID"
    assert rows["attr-append"].verdict == "PASS"


def test_a_missing_truncated_binary_huge_or_swapped_output_is_invalid(job, monkeypatch):
    text = _text("two-names")
    out = job.outputdir / "rfm_job.out"
    case = job.case(text)
    assert semantics_reasons(case_of(dict(case.record, semantics_cases="")), SPEC) == [
        "evidence missing: no semantics_cases, which the semantics check records"]
    # No run directory read (a run report alone).
    assert semantics_reasons(case, SPEC) == [
        "evidence missing: rfm_job.out: the run directory was not read"]
    # Missing.
    out.unlink()
    assert semantics_reasons(case, SPEC, None, job.files()) == [f"evidence missing: {out}"]
    # Truncated (cut inside the case lines): not the field, and not a whole run.
    out.write_text(text[:len(text) // 2])
    reasons = semantics_reasons(case, SPEC, _Reference(), job.files())
    assert f"its semantics_cases are not what its output {out} says" in reasons
    assert any("no 'fsaccept-semantics end' line" in r for r in reasons), reasons
    # Binary: the NUL's line is not a case line.
    out.write_bytes(text.encode().replace(b"visibility writer", b"visibility\0writer", 1))
    reasons = semantics_reasons(case, SPEC, _Reference(), job.files())
    assert f"its semantics_cases are not what its output {out} says" in reasons, reasons
    # Huge: refused unread, by its size.
    monkeypatch.setattr(inputs, "MAX_LOG_BYTES", 100)
    out.write_text(text)
    reasons = semantics_reasons(case, SPEC, _Reference(), job.files())
    assert len(reasons) == 1 and reasons[0].startswith(f"evidence missing: {out}: ") and \
        "refused" in reasons[0], reasons
    monkeypatch.undo()
    # A link to another file: not read.
    other = job.root / "other.txt"
    other.write_text(text)
    out.unlink()
    out.symlink_to(other)
    reasons = semantics_reasons(case, SPEC, _Reference(), job.files())
    assert len(reasons) == 1 and "symbolic link" in reasons[0], reasons
    # Swapped for another run's output: not its case lines.
    out.unlink()
    out.write_text(_text("four-ranks"))
    reasons = semantics_reasons(case, SPEC, _Reference(), job.files())
    assert f"its semantics_cases are not what its output {out} says" in reasons, reasons


def test_the_run_directory_moved_is_read_where_it_is_now(job, tmp_path):
    """A run directory copied elsewhere (to the vendor): its test directories rebased."""
    from fsaccept.reporting.manifest import rebaser
    text = _text("two-names")
    case = job.case(text)
    moved = tmp_path / "moved"
    shutil.copytree(job.root / "output", moved / "output")
    (job.outputdir / "rfm_job.out").unlink()
    info = {"session_info": {"prefix_output": str(job.root / "output"),
                             "prefix_stage": str(job.root / "stage")}}
    files = RunFiles(inputs.Reader(moved), rebaser(info, moved))
    assert semantics_reasons(case, SPEC, _Reference(), files) == []


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
    assert listing.main_session_dirs(gluster) == ["checks", "checks/interference",
                                                  "checks/semantics", "checks/quota",
                                                  "checks/components"]
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
    text = _set(text, "namespace-walk", wrong="2", ok="0")
    case = _case(text, result="pass")  # a recorded pass is not taken on trust
    test = Test("CrossNodeSemantics", [case], [verdict_of(case)])
    rows = {r.case: r for r in semantics_section([test], _Targets(
        not_promised={"rename": "the volume moves names"}))}
    assert list(rows) == list(parse.CASES)
    assert rows["hardlink"].verdict == "FAIL" and rows["hardlink"].pair == "writer n1, reader n2"
    assert rows["visibility"].verdict == "PASS" and rows["visibility"].promise == "≤ 1 s"
    assert rows["rename"].verdict == "not promised"
    assert rows["rename"].promise == "not promised: the volume moves names"
    assert rows["namespace-list"].verdict == "PASS"
    assert rows["namespace-list"].promise == "≥ 100 entries/s, every entry listed"
    assert rows["namespace-list"].seen.endswith(" entries/s (0 wrong entries)")
    assert rows["namespace-walk"].verdict == "FAIL"
    assert rows["namespace-walk"].seen.endswith(" entries/s (2 wrong entries)")
    assert rows["root-squash"].verdict == "not promised"
    assert rows["acl-deny"].verdict == "PASS"
    assert rows["acl-deny"].promise == "uid 4242 refused by the ACL (EACCES)"
    promising = _Targets(root_squash_uid=65534)
    promising.entries["semantics"]["not_promised"] = {}
    rows = {r.case: r for r in semantics_section([test], promising)}
    assert rows["root-squash"].verdict == "FAIL"
    assert rows["root-squash"].promise == "root's file owned by uid 65534"
    # Without a verified reference nothing is judged.
    assert {r.promise for r in semantics_section([test])} == {UNVERIFIED}
    # Another benchmark's test, or one without lines: no section.
    assert semantics_section([Test("x", [case_of({"name": "IORWriteBandwidth"})], [])]) == []


# ------------------------------------------------------------------ namespace scale


@pytest.mark.parametrize("name", ["two-names", "four-ranks"])
def test_a_real_listing_counts_every_entry_and_gives_its_rate(name):
    text = _text(name)
    run = parse_semantics(text)
    figures = run.figures()
    for case, size in (("namespace-list", run.files), ("namespace-walk", run.tree_entries)):
        c = run.cases[case]
        assert c.wrong == 0 and c.ok == "1" and c.writer != c.reader
        assert f"entries_expected={size} entries_seen={size} errors=0 " in c.detail
        assert figures[parse.figure_of(case)] == c.value > 0
        assert figures[parse.wrong_figure(case)] == 0
        assert parse.FIGURES[parse.figure_of(case)] == parse.RATE
    # The writer removed what it made, and said how long it took.
    assert "remove_errors=0" in run.cases["namespace-list"].detail
    assert validity.failures(run, _params()) == []


def test_a_wrong_count_fails_naming_the_pair_and_what_was_seen():
    text = _text("two-names")
    run = parse_semantics(text)
    files = run.files
    line = _line(text, "namespace-list")
    edited = text.replace(line, _set(line, "namespace-list", wrong="3", ok="0").replace(
        f"entries_seen={files} ", f"entries_seen={files - 3} "), 1)
    run = parse_semantics(edited)
    assert run.valid, run.reasons
    assert run.figures()["namespace_list_violations"] == 3
    [failed] = validity.failures(run, _params())
    assert failed.startswith("namespace-list: writer n1, reader n2: 3 wrong entries, ")
    assert f"(at least 100 entries/s; entries_expected={files} entries_seen={files - 3} " \
        in failed
    # Judged by its own figure: a count of violations, 0 the limit.
    assert command.thresholds(_params())["namespace_list_violations"] == (
        0, None, 0, parse.VIOLATIONS)


def test_a_reader_that_listed_nothing_fails_and_has_no_rate():
    """A rate of 0 is no measurement (INVALID by the bogus-figure rule), so the case's
    wrong entries carry the FAIL."""
    text = _set(_text("two-names"), "namespace-walk", value="0.000", wrong="501", ok="0")
    run = parse_semantics(text)
    assert run.valid, run.reasons
    figures = run.figures()
    assert "namespace_walk_rate" not in figures and figures["namespace_walk_violations"] == 501
    assert validity.failures(run, _params())[0].startswith(
        "namespace-walk: writer n1, reader n2: 501 wrong entries, 0 entries/s")


def test_a_rate_below_its_floor_fails():
    text = _text("two-names")
    rate = parse_semantics(text).cases["namespace-list"].value
    [failed] = validity.failures(parse_semantics(text), _params(min_list_rate=rate * 2))
    assert failed.startswith(f"namespace-list: writer n1, reader n2: 0 wrong entries, "
                             f"{rate:g} entries/s (at least {rate * 2:g} entries/s; ")
    assert validity.failures(parse_semantics(text), _params(min_list_rate=rate)) == []


@pytest.mark.parametrize("fields, why", [
    ({"value": "nan"}, "is not a finite number"),
    ({"value": "inf"}, "is not a finite number"),
    ({"value": "-1"}, "is not a finite number"),
    ({"value": "x"}, "is not a finite number"),
    ({"value": "0"}, "a rate of 0 with every entry listed"),
    ({"wrong": "-1"}, "is not a count of entries"),
    ({"wrong": "nan"}, "is not a count of entries"),
    ({"wrong": "1.5"}, "is not a count of entries"),
    ({"wrong": "007"}, "is not a count of entries"),
    ({"wrong": "9" * 40}, "is not a count of entries"),
    ({"wrong": "2"}, "ok=1 with 2 wrong entries"),
    ({"ok": "0"}, "ok=0 with 0 wrong entries"),
    ({"ok": "unsupported"}, "ok='unsupported'"),
    ({"unit": "s"}, "unit 's', not 'entries/s'"),
])
def test_a_namespace_line_that_is_no_measurement_is_invalid(fields, why):
    run = parse_semantics(_set(_text("two-names"), "namespace-list", **fields))
    assert not run.valid
    [bogus] = [f for f in run.findings if f.kind == "bogus"]
    assert why in bogus.text, bogus.text
    assert not {"namespace_list_rate", "namespace_list_violations"} & set(run.figures())
    assert all(math.isfinite(v) for v in run.figures().values())


def test_the_wrong_field_belongs_to_a_namespace_case_only():
    text = _text("two-names")
    no_count = text.replace(" wrong=0 unit=entries/s", " unit=entries/s", 1)
    run = parse_semantics(no_count)
    assert any("wrong=None is not a count" in f.text for f in run.findings)
    line = _line(text, "flock")
    run = parse_semantics(text.replace(line, line.replace(" unit=", " wrong=0 unit=", 1), 1))
    assert any("wrong= on a case that counts no entries" in f.text for f in run.findings)


@pytest.mark.parametrize("case", ["namespace-list", "namespace-walk"])
def test_a_missing_or_duplicate_namespace_case_is_invalid(case):
    text = _text("two-names")
    line = _line(text, case)
    run = parse_semantics(text.replace(line + "\n", "", 1))
    assert not run.valid and any(f"no result for {case}" in r for r in run.reasons)
    run = parse_semantics(text.replace(line, line + "\n" + line, 1))
    assert "duplicate" in {f.kind for f in run.findings}
    # The sign-off's re-read of recorded lines holds them to the same catalogue.
    lines = parse_semantics(text).case_lines()
    kept = "\n".join(x for x in lines.splitlines() if not x.startswith(f"{parse.PREFIX} {case} "))
    assert any(f"no result for {case}" in r for r in parse.parse_case_lines(kept).reasons)


def test_recorded_case_lines_keep_the_count():
    run = parse_semantics(_set(_text("two-names"), "namespace-list", wrong="4", ok="0"))
    again = parse.parse_case_lines(run.case_lines())
    assert again.valid and again.figures() == run.figures()
    assert again.cases["namespace-list"].wrong == 4


def test_a_real_run_in_format_4_is_read_and_its_acl_case_judged_as_it_was():
    """Format 4's acl-deny tried the deny and the control only (no ``granted_open=``):
    still read, every case present, judged as the line says."""
    run = parse_semantics(_text("two-names-format4"))
    assert run.valid and run.ended and run.version == "4", run.reasons
    assert list(run.cases) == list(parse.CASES)
    assert "granted_open" not in run.cases["acl-deny"].detail
    assert validity.failures(run, _params()) == []


def test_the_acl_case_names_the_refused_grant_on_its_pair():
    """A reader whose client checks the mode bits only (GlusterFS mounted without acl)
    is refused the file of mode 0600 the ACL grants: the line says so, and the failure
    names the pair and the open (the capture edited in code)."""
    text = _text("two-names").replace(
        "value=0 unit=violations ok=1 detail=uid=4242 owner=0 create=none setxattr=none "
        "become=none denied_open=EACCES control_open=granted granted_open=granted",
        "value=1 unit=violations ok=0 detail=uid=4242 owner=0 create=none setxattr=none "
        "become=none denied_open=EACCES control_open=granted granted_open=EACCES")
    assert "granted_open=EACCES" in text
    failed = [f for f in validity.failures(parse_semantics(text), _params())
              if f.startswith("acl-deny")]
    assert failed == ["acl-deny: writer n1, reader n2: 1 violations (at most 0 violations; "
                      "uid=4242 owner=0 create=none setxattr=none become=none "
                      "denied_open=EACCES control_open=granted granted_open=EACCES)"]


def test_an_output_of_the_former_format_is_refused():
    """Format 1 had no namespace cases and no sizes in its header; format 2 no
    root-squash and acl-deny cases and no uids in its header."""
    for former in ("1", "2"):
        text = _text("two-names").replace(f"version {parse.VERSION} ", f"version {former} ", 1)
        assert "version" in {f.kind for f in parse_semantics(text).findings}
    old = re.sub(r" files \d+ tree_entries \d+", "", _text("two-names"), count=1)
    assert not parse_semantics(old).valid
    old = re.sub(r" squash_uid \d+ acl_uid \d+", "", _text("two-names"), count=1)
    assert not parse_semantics(old).valid


def test_a_case_not_promised_lists_its_rate_and_count():
    text = _set(_text("two-names"), "namespace-walk", wrong="7", ok="0")
    p = _params(not_promised={"namespace-walk": "the contract names no tree"})
    run = parse_semantics(text)
    assert validity.failures(run, p) == []
    [listed] = _listed(run, p)
    assert listed.startswith("namespace-walk: not promised (the contract names no tree); "
                             "seen: ")
    assert " entries/s, 7 wrong entries on writer n1, reader n2 (entries_expected=" in listed


def test_the_alarm_in_a_namespace_case_names_it():
    run = parse_semantics(_text("namespace-alarm"))
    assert not run.valid
    assert any("case=namespace-list reason=alarm" in r for r in run.reasons)
    assert run.files == 5000000


def test_a_file_count_the_program_refuses_is_its_usage():
    run = parse_semantics(_text("bad-files"))
    assert not run.valid and "usage" in {f.kind for f in run.findings}


def test_the_namespace_line_parses_in_linear_time():
    from . import stepcount
    real = _text("two-names")
    line = _line(real, "namespace-list")
    stepcount.assert_linear(lambda n: real.replace(line, line.replace(
        " wrong=0 ", " wrong=0" + "wrong=" * n + " ", 1), 1), parse_semantics, [parse], n=100)


def test_the_bench_reads_the_programs_listing_line():
    """bench/namespace_listing.py times the program's -L: the namespace cases' own
    listing function (``walk``), without MPI."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "namespace_listing", REPO / "bench" / "namespace_listing.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    m = bench.LISTING.match(_text("listing"))
    assert m and m.group(1) == "1000" and m.group(2) == "0" and float(m.group(4)) > 0
    assert not bench.LISTING.match(_text("listing-missing"))
    source = SOURCE.read_text()
    assert source.count("timed_walk(path, &w)") == 2  # the check's reader and -L


# ------------------------------------------------------------------ contract features


def test_a_real_run_tells_root_squash_and_the_acl_apart():
    """Run as root on a local disk: root is not squashed (the case fails where promised,
    naming what it saw), and the ACL denied uid 4242 while the control opened."""
    run = parse_semantics(_text("two-names"))
    assert (run.squash_uid, run.acl_uid) == (65534, 4242)
    squash, acl = run.cases["root-squash"], run.cases["acl-deny"]
    assert squash.uid == 65534 and squash.ok == "0" and squash.value == 1
    assert squash.detail.startswith("owner=0 expected=65534 ")
    assert acl.uid == 4242 and acl.ok == "1" and acl.value == 0
    assert "denied_open=EACCES control_open=granted" in acl.detail
    figures = run.figures()
    assert figures["root_squash_violations"] == 1 and figures["root_squash_unsupported"] == 0
    assert figures["acl_deny_violations"] == 0 and figures["acl_deny_unsupported"] == 0
    failed = validity.failures(run, _promising_all(acl_test_uid=4242))
    assert failed == ["root-squash: writer n1, reader n2: 1 violations (at most 0 violations; "
                      "owner=0 expected=65534 writer_euid=0 errno=none)"]
    # Not promised: listed with what was seen.
    [listed] = validity.not_promised(run, _params(acl_test_uid=4242))
    assert listed == ("root-squash: not promised (a local disk squashes no root); seen: 1 "
                      "violations on writer n1, reader n2 (owner=0 expected=65534 "
                      "writer_euid=0 errno=none)")


def test_a_squashed_root_passes():
    """Edited in the test (the capture machine squashes no root): the owner the anonymous
    uid, ok=1."""
    text = _set(_edit(_text("two-names"), "root-squash", "owner=0 ", "owner=65534 "),
                "root-squash", value="0", ok="1")
    run = parse_semantics(text)
    assert run.valid, run.reasons
    assert validity.failures(run, _promising_all(acl_test_uid=4242)) == []


def test_not_run_as_root_is_never_a_pass():
    """A real run as nobody: nothing to squash, and no uid to become: both unsupported,
    a FAIL where promised, and their figures not judged as passes."""
    run = parse_semantics(_text("not-root"))
    assert run.valid, run.reasons
    assert not run.cases["root-squash"].supported and not run.cases["acl-deny"].supported
    assert "writer_euid=65534" in run.cases["root-squash"].detail
    assert "become=EPERM" in run.cases["acl-deny"].detail
    figures = run.figures()
    assert figures["root_squash_unsupported"] == figures["acl_deny_unsupported"] == 1
    assert "root_squash_violations" not in figures and "acl_deny_violations" not in figures
    failed = validity.failures(run, _promising_all(acl_test_uid=4242))
    assert [f.split(":", 1)[0] for f in failed] == ["root-squash", "acl-deny"]
    assert all("not supported (" in f and "the reference promises it" in f for f in failed)
    judged = command.thresholds(_promising_all())
    assert judged["root_squash_unsupported"] == judged["acl_deny_unsupported"] == (
        0, None, 0, parse.VIOLATIONS)


@pytest.mark.parametrize("detail, seen", [
    ("uid=4242 owner=0 create=none setxattr=EOPNOTSUPP", "unsupported"),
    ("uid=4242 owner=0 create=none setxattr=none become=none denied_open=granted "
     "control_open=granted", "0"),
    ("uid=4242 owner=0 create=none setxattr=none become=none denied_open=EACCES "
     "control_open=EACCES", "0")])
def test_an_acl_that_is_not_enforced_or_proves_nothing_fails(detail, seen):
    """ENOTSUP on the ACL xattr (no ACLs), an open the ACL should have refused, or a
    control the uid could not open either (a directory it cannot search): never PASS."""
    value = "0" if seen == "unsupported" else "1"
    text = _set(_text("two-names"), "acl-deny", value=value, ok=seen)
    line = _line(text, "acl-deny")
    text = text.replace(line, line[:line.index("detail=") + 7] + detail, 1)
    run = parse_semantics(text)
    assert run.valid, run.reasons
    [failed] = validity.failures(run, _params())
    assert failed.startswith("acl-deny: writer n1, reader n2: ")
    assert validity.failures(run, _params(not_promised={"acl-deny": "no acl mount option"})) == []


def test_a_run_asked_for_another_uid_than_the_reference_fails_and_is_invalid_live():
    run = parse_semantics(_text("two-names"))
    failed = validity.failures(run, _promising_all(root_squash_uid=99, acl_test_uid=4242))
    assert any(f.startswith("root-squash: writer n1, reader n2: run with uid 65534, the "
                            "reference names 99") for f in failed), failed
    failed = validity.failures(run, _promising_all(acl_test_uid=65534))
    assert any(f.startswith("acl-deny: writer n1, reader n2: run with uid 4242, the "
                            "reference names 65534") for f in failed), failed
    asked = validity.expectation(_promising_all(root_squash_uid=99, acl_test_uid=4242), 2)
    exp = validity.expectation_from_output(run)
    asked = validity.SemanticsExpectation(exp.tasks, exp.trials, exp.records, exp.renames,
                                          exp.files, exp.tree_entries, 99, 4242)
    assert validity.invalid_reasons(run, asked) == [
        "the program ran with squash uid 65534 and ACL uid 4242, 99 and 4242 asked"]
    assert validity.invalid_reasons(run, exp) == []


def test_the_command_passes_both_uids():
    opts = command.semantics_options(_promising_all(root_squash_uid=99, acl_test_uid=7), "/d")
    assert opts[opts.index("-s") + 1] == "99" and opts[opts.index("-u") + 1] == "7"
    # Root squash not promised and no uid named: the usual anonymous uid, never judged.
    opts = command.semantics_options(command.parameters("semantics", {
        "node_fraction": 1, "not_promised": NO_SQUASH}), "/d")
    assert opts[opts.index("-s") + 1] == str(command.ANON_UID)
    assert opts[opts.index("-u") + 1] == "65534"  # acl_test_uid's default


def test_promised_root_squash_needs_its_uid_and_the_acl_another():
    rules = command.entry_rules("tests.semantics", {"node_fraction": 1, **FLOORS})
    assert rules == ["tests.semantics.root_squash_uid: missing: the root-squash case is "
                     "promised, so it needs the anonymous uid the contract names (e.g. "
                     "65534), or list root-squash under not_promised"]
    assert command.entry_rules("tests.semantics", {
        "node_fraction": 1, **FLOORS, "not_promised": NO_SQUASH}) == []
    # The ACL's uid is the anonymous uid: the squashed root owns the file, and a named
    # user's entry never applies to the owner.
    [clash] = command.entry_rules("tests.semantics", {"node_fraction": 1, **NEEDED,
                                                      "acl_test_uid": 65534})
    assert clash.startswith("tests.semantics.acl_test_uid: 65534 is root_squash_uid too: ")
    assert command.entry_rules("tests.semantics", {
        "node_fraction": 1, **NEEDED, "acl_test_uid": 65534,
        "not_promised": {"acl-deny": "no ACLs"}}) == []
    assert command.entry_rules("tests.semantics", {"node_fraction": 1, **NEEDED}) == []


@pytest.mark.parametrize("case, old, new, why", [
    ("root-squash", "owner=0 expected=65534", "owner=0", "does not begin with owner=<uid|none>"),
    ("root-squash", "owner=0 expected=65534", "owner=0 expected=0", "does not begin with"),
    ("root-squash", "owner=0 expected=65534", "owner=-1 expected=65534", "does not begin with"),
    ("root-squash", "owner=0 expected=65534", "owner=0 expected=99999999999", "does not begin"),
    ("root-squash", "owner=0 expected=65534", "owner=0 expected=65534x", "does not begin"),
    ("root-squash", "owner=0 expected=65534", "owner=0 expected=65534 ok=1", "ok=1 with owner 0, not 65534"),
    ("root-squash", "detail=owner", "detail=$(rm -rf /) owner", "does not begin"),
    ("acl-deny", "uid=4242", "uid=0", "does not begin with uid=<uid>"),
    ("acl-deny", "uid=4242", "uid=nan", "does not begin with uid=<uid>"),
    ("acl-deny", "uid=4242", "uid=4242\x00", "unreadable"),
    ("acl-deny", "ok=1", "ok=maybe", "ok='maybe'"),
])
def test_a_feature_line_that_is_no_measurement_is_invalid(case, old, new, why):
    text = _edit(_text("two-names"), case, old, new)
    if "ok=1 with owner" in why:  # the line claims a pass its owner contradicts
        text = _set(text, case, ok="1", value="0")
    run = parse_semantics(text)
    assert not run.valid
    assert any(why in f.text or why == f.kind for f in run.findings), run.findings
    assert parse.figure_of(case) not in run.figures()


def test_a_bad_uid_is_the_programs_usage():
    run = parse_semantics(_text("bad-uid"))
    assert not run.valid and "usage" in {f.kind for f in run.findings}
    assert "-s SQUASH_UID" in _text("bad-uid")


def test_a_header_uid_that_is_no_uid_is_unreadable():
    text = _text("two-names")
    for bad in ("squash_uid -1 ", "squash_uid 99999999999 ", "squash_uid x "):
        run = parse_semantics(text.replace("squash_uid 65534 ", bad, 1))
        assert not run.valid and "unreadable" in {f.kind for f in run.findings}


def test_the_reference_files_declare_the_features(tmp_path):
    import yaml

    from fsaccept.suite.reference import ReferenceError, load_reference
    repo = REPO / "reference"
    lab = load_reference(repo / "local-gluster.yaml").entries["semantics"]
    # The lab promises POSIX ACLs (its clients mount with acl), not root squash.
    assert "root-squash" in lab["not_promised"] and "acl-deny" not in lab["not_promised"]
    lustre = load_reference(repo / "example-lustre.yaml").entries["semantics"]
    assert "not_promised" not in lustre or not {"root-squash", "acl-deny"} & set(
        lustre["not_promised"])
    assert lustre["root_squash_uid"] != lustre["acl_test_uid"]
    data = yaml.safe_load((repo / "local-gluster.yaml").read_text())
    del data["tests"]["semantics"]["not_promised"]["root-squash"]
    path = tmp_path / "sys.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ReferenceError) as err:
        load_reference(path)
    assert "tests.semantics.root_squash_uid: missing: the root-squash case is promised" in \
        str(err.value)
    for bad in (0, -1, 2 ** 32, 1.5, "nobody", True, None):
        data = yaml.safe_load((repo / "example-lustre.yaml").read_text())
        data["tests"]["semantics"]["root_squash_uid"] = bad
        path.write_text(yaml.safe_dump(data))
        with pytest.raises(ReferenceError) as err:
            load_reference(path)
        assert "root_squash_uid" in str(err.value), bad


def test_a_lock_whose_holder_never_goes_fails_at_the_bound_naming_the_pair():
    """The fixture FSACCEPT_TEST_LOCK_HOLDER=stop (the holder stopped, never killed): the
    lock-killed case waits its bound and fails; the other cases are as the run says."""
    run = parse_semantics(_text("lock-stopped"))
    assert run.valid and run.version == parse.VERSION, run.reasons
    case = run.cases["lock-killed"]
    assert (case.value, case.ok) == (3.0, "0") and case.pair == "writer n1, reader n2"
    assert run.figures()["lock_killed_s"] == 3.0
    failed = [f for f in validity.failures(run, _params()) if f.startswith("lock-killed")]
    assert failed == ["lock-killed: writer n1, reader n2: 3s (at most 1s; "
                      "second_holder_before=refused errno=EAGAIN released_seen_s=>3.000064)"]


def test_output_format_3_is_still_read_without_the_lock_killed_case():
    run = parse_semantics(_text("one-host"))
    assert run.version == "3" and "lock-killed" not in run.cases
    assert not any(f.kind in ("version", "missing-case") for f in run.findings), run.findings


def test_a_large_hostile_output_is_read_line_by_line(job):
    """Issue 49: a 300 MiB rfm_job.out took 1.9 GiB, read whole (bytes, text, counted
    text, lines).  The real capture with 24 MiB of short lines after its end: the
    sign-off reads it a piece at a time (tracemalloc's peak far below the file), and
    judges it as before: a line after the end is no line of the program's."""
    import tracemalloc
    text = _text("two-names")
    case = job.case(text)
    junk = ("fsaccept-rank 0 n1\n" * 20 + "slurmstepd x\n") * 70_000
    out = job.outputdir / "rfm_job.out"
    out.write_text(text + junk)
    size = out.stat().st_size
    assert size > 24 << 20
    tracemalloc.start()
    try:
        reasons = semantics_reasons(case, SPEC, _Reference(), job.files())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < size // 4, (peak, size)
    assert reasons == [], reasons  # a rank line and a slurmstepd line without "error"


def test_the_lines_read_in_pieces_are_those_of_the_whole_text():
    """joboutput.decoded_lines and counted_stdout_lines: the live check's whole-text
    functions, line by line (bad UTF-8, CRLF and CR split across pieces, retries)."""
    import random

    from fsaccept.core import joboutput
    rng = random.Random(49)
    alphabet = [b"a", b"\n", b"\r", b"\r\n", b"\xc3\xa9", b"\xc3", b"\xff", b"\x0b",
                b"\xe2\x80\xa8", b"fsaccept-rank 1 n2\n", b"fsaccept-retry again ",
                b"fsaccept-info k v\n", b" "]
    for _ in range(400):
        data = b"".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 60)))
        cut = sorted(rng.randrange(0, len(data) + 1) for _ in range(rng.randrange(0, 5)))
        pieces = [data[a:b] for a, b in zip([0, *cut], [*cut, len(data)])]
        text = joboutput.decoded(data)
        assert list(joboutput.decoded_lines(pieces)) == text.splitlines(), data
        assert list(joboutput.counted_stdout_lines(
            lambda: joboutput.decoded_lines(pieces))) == \
            joboutput.counted_stdout(text).splitlines(), data
        assert joboutput.job_info(joboutput.decoded_lines(pieces)) == joboutput.job_info(
            joboutput.counted_stdout(text)), data
