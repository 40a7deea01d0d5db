"""The target survey as a check: its output parsed (real captures, tests/data/survey/),
its INVALID rules, its figures and failures, the sign-off's rebuilding of it from the
job's output and each target's fio report, and the report's Components section."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from fsaccept.benchmarks import registry
from fsaccept.benchmarks.survey import command, parse, validity
from fsaccept.core import inputs
from fsaccept.reporting.case import case_of
from fsaccept.reporting.components import survey_rows
from fsaccept.reporting.signoff.common import RunFiles
from fsaccept.reporting.signoff.survey import survey_reasons

DATA = Path(__file__).resolve().parents[1] / "data" / "survey"
SPEC = registry.TESTS["TargetSurvey"]
P = command.parameters("target_survey", {"size_mib": 32, "runtime_s": 5,
                                         "max_spread": 0.2})
B = "vm:/work/main/.state/gluster/bricks/b"


def _stdout(name: str) -> str:
    return (DATA / name / "stdout.txt").read_text()


def _reports(name: str):
    def read(file: str) -> str | None:
        path = DATA / name / file
        return path.read_text() if path.is_file() else None
    return read


def _values(name: str, spread: float = 0.2) -> dict:
    return validity.measured(parse.parse_survey(_stdout(name)), _reports(name))[0]


# -- the output, parsed ------------------------------------------------------------------

def test_a_real_survey_is_read_step_by_step():
    run = parse.parse_survey(_stdout("slow-b2"))
    assert run.valid and run.version == "1" and run.ended and run.bricks == 4
    assert (run.size, run.runtime_s, run.nodes, run.rounds) == (32 * 2**20, 5,
                                                                ["n1", "n2", "n3", "n4"], 4)
    assert [(s.round, s.node, s.target.name, s.target.server, s.exit, s.report)
            for s in run.steps][1] == (1, "n2", f"{B}2", "vm", 0, "r1-n2.json")


@pytest.mark.parametrize("edit, kind", [
    (lambda t: "", "eof"),
    (lambda t: t.split("fsaccept-survey end")[0], "eof"),
    (lambda t: t.replace("fsaccept-survey version 1 ", "fsaccept-survey version 1  "),
     "order"),
    (lambda t: t + "fsaccept-survey end\n", "after-end"),
    (lambda t: t.replace("fsaccept-survey result 1 n2 0 r1-n2.json",
                         "fsaccept-survey result 1 n2 0 r1-n2.json\n"
                         "fsaccept-survey result 1 n2 0 r1-n2.json"), "order"),
    (lambda t: t.replace("fsaccept-survey target 1 n2",
                         "fsaccept-survey target 0 n1 vm x\nfsaccept-survey target 1 n2"),
     "duplicate"),
    (lambda t: t.replace("r3-n4.json", "../../etc/passwd"), "malformed"),
    (lambda t: "fsaccept-survey end\n" + t, "order"),
    (lambda t: t.replace("n1,n2", "n1\x00,n2"), "malformed"),
    (lambda t: "fsaccept-survey " + "x" * (1 << 20) + "\n" + t, "malformed"),
])
def test_an_output_edited_cut_or_out_of_order_is_invalid(edit, kind):
    run = parse.parse_survey(edit(_stdout("healthy")))
    assert not run.valid and kind in {f.kind for f in run.findings}, run.findings


def test_a_target_figure_is_fios_own_and_nothing_else():
    report = (DATA / "healthy" / "r0-n1.json").read_text()
    value, why = parse.target_figure(report, 0)
    assert why == "" and value == pytest.approx(296.30, abs=0.01)
    assert parse.target_figure(report, None) == (None, "its step has no result line")
    assert parse.target_figure("fio: out of space", 1)[1] == "fio exited 1: fio: out of space"
    assert parse.target_figure(None, 0) == (None, "its fio report is missing")
    assert parse.target_figure("<html>", 0)[0] is None
    assert parse.target_figure(report[: len(report) // 2], 0)[0] is None
    two = json.loads(report)
    two["jobs"] = two["jobs"] * 2
    assert parse.target_figure(json.dumps(two), 0)[0] is None


# -- the rules ---------------------------------------------------------------------------

def test_the_lab_s_slow_brick_fails_named_with_its_server_and_a_healthy_one_passes():
    healthy, slow = _values("healthy"), _values("slow-b2")
    assert validity.failures(healthy, 0.2) == []
    assert validity.figures(healthy, 0.2)[command.SLOW] == 0
    assert validity.failures(slow, 0.2) == [
        f"slow target: {B}2 on vm (write 5.9230 MiB/s, 0.03 x the median 218.18 MiB/s), "
        "below 0.80 x the median"]
    figures = validity.figures(slow, 0.2)
    assert figures[command.SLOW] == 1 and figures[command.MIN] == pytest.approx(5.923, 1e-3)


def test_a_survey_that_saw_only_part_of_the_volume_judges_nothing():
    text = _stdout("healthy")
    run = parse.parse_survey(text)
    assert validity.invalid_reasons(run, _reports("healthy"), P) == []
    lost = _reports("healthy")
    reasons = validity.invalid_reasons(run, lambda f: None if f == "r2-n3.json" else lost(f),
                                       P)
    assert reasons == [f"target {B}3 (on n3): not measured (its fio report is missing)"]
    unplaced = text.replace("fsaccept-survey end", "fsaccept-survey unplaced b5\n"
                            "fsaccept-survey end")
    reasons = validity.invalid_reasons(parse.parse_survey(unplaced), lost, P)
    assert "brick b5: no file could be placed on it" in reasons
    assert any("do not add up" in r for r in reasons), reasons
    other = command.parameters("target_survey", {"size_mib": 64, "runtime_s": 5})
    assert validity.invalid_reasons(run, lost, other)[0].startswith(
        "the survey wrote 33554432 bytes for 5 s per target, not the entry's 67108864")
    assert validity.invalid_reasons(run, lost, P, "/elsewhere/survey") == [
        f"the survey ran in {run.directory}, not in the test's directory /elsewhere/survey"]


def test_a_plan_no_survey_makes_is_invalid():
    text = _stdout("healthy").replace("fsaccept-survey target 1 n2", "fsaccept-survey "
                                      "target 0 n2").replace("result 1 n2", "result 0 n2")
    reasons = validity.plan_reasons(parse.parse_survey(text))
    assert reasons == ["round 0 measured two targets of one server, or two on one node: "
                       "its figures are not each target's own"]
    stranger = _stdout("healthy").replace("target 3 n4", "target 3 n9").replace(
        "result 3 n4", "result 3 n9")
    assert "not a node of the survey" in validity.plan_reasons(parse.parse_survey(stranger))[0]


# -- the sign-off ------------------------------------------------------------------------

def _case(name: str, root: Path, edit=None, spread: float = 0.2, result: str | None = None):
    """A run report's case of TargetSurvey over a capture, its job's output and reports
    copied to ``root`` as ReFrame keeps them."""
    values = _values(name)
    figures = validity.figures(values, spread)
    failed = bool(figures[command.SLOW])
    result = result or ("fail" if failed else "pass")
    out = root / "output" / "TargetSurvey"
    out.mkdir(parents=True, exist_ok=True)
    shutil.copy(DATA / name / "stdout.txt", out / "rfm_job.out")
    (out / "rfm_job.err").write_text("")
    for report in (DATA / name).glob("r*-*.json"):
        shutil.copy(report, out / report.name)
    perf = {}
    for fig, unit in command.FIGURES.items():
        ref = command.references(P).get(fig, (0, None, None, unit))
        perf[f"local-gluster:compute:{fig}"] = [figures[fig], *ref[:3], unit, result]
    record = {"name": "TargetSurvey", "result": result, "perfvalues": perf,
              "fail_phase": "performance" if failed else None,
              "survey_lines": parse.program_lines(_stdout(name)), "max_spread": spread,
              "target_figures": {t.name: v for t, v in sorted(values.items())},
              "slow_targets_named": "; ".join(validity.failures(values, spread)),
              "outputdir": str(out)}
    if edit:
        edit(record)
    return case_of(record)


class _Reference:
    def __init__(self, **entry):
        self.entries = {"target_survey": {"size_mib": 32, "runtime_s": 5, "max_spread": 0.2,
                                          **entry}}


def _files(root: Path) -> RunFiles:
    return RunFiles(inputs.Reader(root))


@pytest.mark.parametrize("name", ["healthy", "slow-b2"])
def test_the_sign_off_rebuilds_the_survey_from_what_the_job_kept(tmp_path, name):
    assert survey_reasons(_case(name, tmp_path), SPEC, _Reference(), _files(tmp_path)) == []


def test_the_sign_off_refuses_a_record_the_reports_do_not_give(tmp_path):
    def judged(edit=None, ref=None, case_name="slow-b2"):
        root = tmp_path / str(len(list(tmp_path.iterdir())))
        return survey_reasons(_case(case_name, root, edit), SPEC, ref or _Reference(),
                              _files(root))

    # The slow brick hidden: its name dropped, its figure raised.
    assert judged(lambda r: r.update(slow_targets_named="")) == [
        "the slow targets are recorded as '', but its fio reports name "
        f"'slow target: {B}2 on vm (write 5.9230 MiB/s, 0.03 x the median 218.18 MiB/s), "
        "below 0.80 x the median'"]
    assert judged(lambda r: r["target_figures"].update({f"{B}2": 200.0})) == [
        "target_figures are not each target's figure its fio report gives"]
    assert judged(lambda r: r.update(target_figures={})) == [
        "target_figures are not each target's figure its fio report gives"]
    # Judged with a looser spread than the verified reference's.
    assert judged(lambda r: r.update(max_spread=0.99))[0] == (
        "max_spread is recorded as 0.99, but the reference file's tests.target_survey "
        "says 0.2")
    # A reference that asked for more than the survey wrote.
    assert judged(ref=_Reference(size_mib=64))[0].startswith("its output (")
    assert judged(lambda r: r.update(survey_lines="")) == [
        "evidence missing: no survey_lines, which the target survey records"]


def test_the_sign_off_refuses_an_output_or_a_report_edited_missing_or_binary(tmp_path):
    case = _case("slow-b2", tmp_path)
    out = tmp_path / "output" / "TargetSurvey"
    (out / "r1-n2.json").write_text((out / "r0-n1.json").read_text())
    reasons = survey_reasons(case, SPEC, _Reference(), _files(tmp_path))
    assert reasons and any("recorded as" in r or "target_figures" in r for r in reasons), \
        reasons
    (out / "r1-n2.json").unlink()
    reasons = survey_reasons(case, SPEC, _Reference(), _files(tmp_path))
    assert reasons[0] == f"evidence missing: {out / 'r1-n2.json'}", reasons
    (out / "r1-n2.json").write_bytes(b"\x00\xff" * 100)
    assert survey_reasons(case, SPEC, _Reference(), _files(tmp_path))
    (out / "rfm_job.out").write_text(_stdout("healthy"))
    assert survey_reasons(case, SPEC, _Reference(), _files(tmp_path)) == [
        f"its survey_lines are not what its output {out / 'rfm_job.out'} says"]


# -- the report's section ----------------------------------------------------------------

def test_the_components_section_has_a_row_per_target_the_slow_one_failing(tmp_path):
    case = _case("slow-b2", tmp_path)
    rows = survey_rows(SimpleNamespace(name="TargetSurvey", case=case, verdict="FAIL"))
    assert [(r.target, r.server, r.node, r.round, r.measured, r.of_median, r.limit,
             r.verdict) for r in rows] == [
        (f"{B}1", "vm", "n1", 0, "242.42 MiB/s", "1.11 x", "≥ 0.80 x", "PASS"),
        (f"{B}2", "vm", "n2", 1, "5.9230 MiB/s", "0.03 x", "≥ 0.80 x", "FAIL"),
        (f"{B}3", "vm", "n3", 2, "193.94 MiB/s", "0.89 x", "≥ 0.80 x", "PASS"),
        (f"{B}4", "vm", "n4", 3, "246.15 MiB/s", "1.13 x", "≥ 0.80 x", "PASS")]
    invalid = survey_rows(SimpleNamespace(name="T", case=case, verdict="INVALID"))
    assert {r.verdict for r in invalid} == {"INVALID"}
    unrecorded = _case("slow-b2", tmp_path / "u", lambda r: r.update(target_figures=None))
    rows = survey_rows(SimpleNamespace(name="T", case=unrecorded, verdict="FAIL"))
    assert {(r.measured, r.verdict) for r in rows} == {("—", "INVALID")}
