"""A sign-off verdict that cannot be steered (issue 28): a re-read test case is judged by
its class's record in fsaccept's catalogue and the verified reference file, never by the
tags or reference key its run report carries; every case of the session is judged,
fixtures included; an unverifiable reference is never ACCEPTED.

Each case is a real run report of this project (``tests/data/reframe/ior-fail.json``,
judged against its own reference file), edited the way a hostile reviewer would."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

import pytest
import yaml

from fsaccept.reporting import report as signoff

DATA = Path(__file__).resolve().parent.parent / "data" / "reframe"


@pytest.fixture(autouse=True)
def _no_plots(monkeypatch):
    """The verdict is under test, not the plots (drawing them is most of the time)."""
    for name in ("figure_plot", "check_plot", "per_node_plot"):
        monkeypatch.setattr(signoff, name, lambda *a, **k: b"")


def _baseline(tmp_path: Path) -> tuple[dict, Path]:
    """ior-fail.json made ACCEPTED honestly: its write re-judged as passing a threshold
    its reference file states, the reference holding exactly the tests that ran."""
    ref = tmp_path / "ref.yaml"
    spec = yaml.safe_load((DATA / "ior-fail.reference.yaml").read_text())
    for key in ("ior_read_bandwidth", "ior_random_read_iops"):
        del spec["tests"][key]
    ref.write_text(yaml.safe_dump(spec))
    sha = hashlib.sha256(ref.read_bytes()).hexdigest()
    data = json.loads((DATA / "ior-fail.json").read_text())
    for case in data["runs"][0]["testcases"]:
        case["reference_path"], case["reference_sha256"] = str(ref), sha
    w = _case(data, "IORWriteBandwidth")
    w.update(result="pass", fail_phase=None, fail_reason=None)
    pv = _perf(w, "write_bandwidth")
    pv[0], pv[1], pv[2], pv[5] = 950000.0, 1000000, -0.1, "pass"
    r = _case(data, "IORRandomWriteIOPS")
    _perf(r, "write_iops")[1:3] = [600, -0.05]
    for where in (data["runs"][0], data["session_info"]):
        where["num_failures"] -= 1
    return data, ref


def _case(data: dict, name: str) -> dict:
    return next(c for c in data["runs"][0]["testcases"] if c["name"] == name)


def _perf(case: dict, figure: str) -> list:
    return next(v for k, v in case["perfvalues"].items() if k.endswith(":" + figure))


def _signoff(data: dict, tmp_path: Path, *extra: str) -> tuple[int, str, str]:
    """(exit status, console, report.md) of ``fsaccept report`` on ``data``."""
    src = tmp_path / "run-report.json"
    src.write_text(json.dumps(data))
    out = tmp_path / "out"
    code = signoff.main([str(src), "--out", str(out), *extra])
    return code, "", (out / "report.md").read_text()


@pytest.fixture
def baseline(tmp_path):
    return _baseline(tmp_path)


def test_the_baseline_is_accepted(baseline, tmp_path, capsys):
    data, _ = baseline
    code, _, md = _signoff(data, tmp_path)
    assert code == 0, capsys.readouterr().out
    assert "**Overall verdict: ACCEPTED**" in md


def _edit_write(data: dict, **fields) -> None:
    _case(data, "IORWriteBandwidth").update(fields)


# Each edit below made the baseline's write test look like something else; each must end
# anything but ACCEPTED, naming what it found.
HOSTILE = {
    "re-tagged preflight": (lambda d: _edit_write(d, tags=["preflight"]), "recorded tags"),
    "untagged": (lambda d: _edit_write(d, tags=[]), "recorded tags"),
    "reference_key blanked": (lambda d: _edit_write(d, reference_key=""),
                              "recorded reference_key ''"),
    "reference_key of a looser entry": (
        lambda d: _edit_write(d, reference_key="ior_random_write_iops"),
        "recorded reference_key 'ior_random_write_iops'"),
    "renamed to a probe": (
        lambda d: _edit_write(d, name="DataReductionProbe", display_name="DataReductionProbe",
                              unique_name="DataReductionProbe"),
        "figure 'write_bandwidth' is not one DataReductionProbe reports"),
    "renamed to a test fsaccept does not know": (
        lambda d: _edit_write(d, name="MySiteCheck", unique_name="MySiteCheck"),
        "'MySiteCheck' is not a test of fsaccept's catalogue"),
    "a figure of another test": (
        lambda d: _case(d, "IORWriteBandwidth")["perfvalues"].update(
            {"local:compute:read_bandwidth": [1.0, 0, None, None, "MiB/s", "pass"]}),
        "figure 'read_bandwidth' is not one IORWriteBandwidth reports"),
    "marked a fixture": (lambda d: _edit_write(d, fixture=True), "recorded as a fixture"),
    "a case of another session": (
        lambda d: _edit_write(d, session_uuid="00000000-0000-0000-0000-000000000000"),
        "its case is not of this session"),
    "a job after the session ended": (
        lambda d: _edit_write(d, job_completion_time_unix=d["session_info"]["time_end_unix"]
                              + 3600), "its job ended outside the session's time"),
    "counts that do not add up": (
        lambda d: d["session_info"].update(num_failures=1), "session_info.num_failures is 1"),
    "a case removed": (
        lambda d: d["runs"][0]["testcases"].remove(_case(d, "IORRandomWriteIOPS")),
        "session_info.num_cases is 2, but the run report holds 1"),
    "a case of another system": (
        lambda d: _edit_write(d, system="other"), "systems"),
    "run through the slurm backend, its accounting removed": (
        lambda d: _edit_write(d, scheduler="slurm", job_accounting=""),
        "ran through ReFrame's slurm backend, which reads Slurm's accounting, and no "
        "job_accounting was recorded"),
}


@pytest.mark.parametrize("what", sorted(HOSTILE))
def test_an_edited_run_report_is_never_accepted(baseline, tmp_path, what):
    data, _ = baseline
    edit, said = HOSTILE[what]
    edit(data)
    code, _, md = _signoff(data, tmp_path)
    assert code == 1 and "**Overall verdict: ACCEPTED**" not in md, what
    assert said in md.replace("\\", ""), md[:3000]


def test_figures_are_compared_by_name_not_by_order(baseline, tmp_path):
    data, _ = baseline
    w = _case(data, "IORWriteBandwidth")
    w["perfvalues"] = dict(reversed(list(w["perfvalues"].items())))
    code, _, md = _signoff(data, tmp_path)
    assert code == 0 and "**Overall verdict: ACCEPTED**" in md


def test_a_re_tagged_test_is_still_judged_against_its_own_entry(baseline, tmp_path):
    data, _ = baseline
    # A looser threshold and no acceptance tag: still the entry of IORWriteBandwidth.
    _edit_write(data, tags=[], reference_key="")
    _perf(_case(data, "IORWriteBandwidth"), "write_bandwidth")[1] = 1000
    code, _, md = _signoff(data, tmp_path)
    assert code == 1
    assert "looser than the reference" in md


def test_a_test_whose_entry_is_not_in_the_reference_is_invalid(baseline, tmp_path):
    data, ref = baseline
    spec = yaml.safe_load(ref.read_text())
    del spec["tests"]["ior_random_write_iops"]
    ref.write_text(yaml.safe_dump(spec))
    sha = hashlib.sha256(ref.read_bytes()).hexdigest()
    for case in data["runs"][0]["testcases"]:
        case["reference_sha256"] = sha
    code, _, md = _signoff(data, tmp_path)
    assert code == 1 and "tests.ior_random_write_iops" in md


def test_a_failed_fixture_blocks_the_signoff_when_no_test_names_it(tmp_path):
    data = json.loads((DATA / "ior-invalid-error.json").read_text())
    cases = data["runs"][0]["testcases"]
    # Keep only what passed, and the fixture that failed (no test names it any more).
    data["runs"][0]["testcases"] = [c for c in cases if c["result"] == "pass"
                                    or c["name"].startswith("IORRandomReadDatasetGeneration")]
    kept = data["runs"][0]["testcases"]
    for where in (data["runs"][0], data["session_info"]):
        where.update(num_cases=len(kept), num_failures=1, num_skipped=0)
    code, _, md = _signoff(data, tmp_path)
    assert code == 1 and "**Overall verdict: NOT ACCEPTED**" in md
    assert "fixture IORRandomReadDatasetGeneration" in md


def test_a_reference_that_does_not_verify_is_incomplete(baseline, tmp_path):
    data, ref = baseline
    # The digest edited to match nothing, then the file gone, then another file given.
    for case in data["runs"][0]["testcases"]:
        case["reference_sha256"] = "0" * 64
    code, _, md = _signoff(data, tmp_path)
    assert code == 1 and "**Overall verdict: INCOMPLETE**" in md
    assert "could not be verified" in md
    data, ref = _baseline(tmp_path)
    ref.unlink()
    code, _, md = _signoff(data, tmp_path)
    assert code == 1 and "**Overall verdict: INCOMPLETE**" in md
    data, ref = _baseline(tmp_path)
    other = tmp_path / "other.yaml"
    other.write_text(ref.read_text().replace("system:", "# another file\nsystem:", 1))
    code, _, md = _signoff(data, tmp_path, "--reference", str(other))
    assert code == 1 and "**Overall verdict: INCOMPLETE**" in md
    assert "is not the file the run used" in md.replace("\\", "")
    # The same file given with --reference verifies.
    code, _, md = _signoff(data, tmp_path, "--reference", str(ref))
    assert code == 0 and "**Overall verdict: ACCEPTED**" in md


def test_acceptance_tests_the_reference_defines_must_have_run(baseline, tmp_path):
    data, ref = baseline
    ref.write_text((DATA / "ior-fail.reference.yaml").read_text())
    sha = hashlib.sha256(ref.read_bytes()).hexdigest()
    for case in data["runs"][0]["testcases"]:
        case["reference_sha256"] = sha
    code, _, md = _signoff(data, tmp_path)
    assert code == 1 and "**Overall verdict: INCOMPLETE**" in md
    assert "did not run: IORStonewalledRead, IORRandomReadIOPS" in md


def test_every_shipped_run_report_keeps_its_verdicts_per_test(tmp_path):
    """The catalogue's rules change no verdict of a real, unedited run report."""
    from fsaccept.reporting import runreport
    expected = {
        "full-suite.json": {"IORStonewalledRead": "INVALID", "MPILaunchSanity": "SKIPPED"},
        "ior-pass.json": {},
    }
    for name, not_pass in expected.items():
        report = runreport.load_run_report(DATA / name)
        tests = runreport.tests_of(copy.deepcopy(report))
        got = {t.name: t.verdict for t in tests if t.verdict != "PASS"}
        assert got == not_pass, (name, got)


def test_the_integrity_check_is_always_judged_against_no_wrong_transfer():
    """Its threshold is its class's (the catalogue), not the reference file's: a run
    report that loosened it to 5 wrong transfers is INVALID."""
    from fsaccept.reporting import runreport
    from fsaccept.reporting.case import case_of
    from fsaccept.suite.reference import load_reference
    data = json.loads((DATA / "fixture-skip.json").read_text())
    case = next(c for r in data["runs"] for c in r["testcases"]
                if c["name"] == "IORDataIntegrity")
    ref = load_reference(Path(__file__).resolve().parents[2] / "reference" / "local.yaml")
    case["perfvalues"] = {"local:compute:incorrect_transfers": [0, 0, None, 0, "transfers",
                                                                "pass"]}
    assert runreport.looser_thresholds(case_of(case), ref) == []
    case["perfvalues"]["local:compute:incorrect_transfers"][1] = 5
    [why] = runreport.looser_thresholds(case_of(case), ref)
    assert why.startswith("incorrect_transfers: IORDataIntegrity is always judged against "
                          "≤ 0 transfers")


# --------------------------------------------------------------------------- reading safely


def _run_dir_with_script(tmp_path: Path, script: Path | None) -> tuple[Path, dict]:
    """A run directory holding ior-pass.json, its first test's output directory inside,
    with ``rfm_job.sh`` a symbolic link to ``script`` (or absent)."""
    run = tmp_path / "run dir; $(touch x)"
    out = run / "output" / "IORWriteBandwidth"
    out.mkdir(parents=True)
    data = json.loads((DATA / "ior-pass.json").read_text())
    case = data["runs"][0]["testcases"][0]
    case["outputdir"], case["stagedir"] = str(out), None
    if script is not None:
        (out / "rfm_job.sh").symlink_to(script)
    return run, data


def test_a_job_script_is_read_only_below_the_run_and_without_links(tmp_path):
    from fsaccept.reporting import runreport
    secret = tmp_path / "secret"
    secret.write_text("root:hash\n")
    run, data = _run_dir_with_script(tmp_path, secret)
    case = data["runs"][0]["testcases"][0]
    shown = runreport.job_script(case, run)
    assert "root:hash" not in shown and "symbolic link" in shown
    # A path outside the run's directory is not read either.
    case["outputdir"] = str(tmp_path)
    (tmp_path / "rfm_job.sh").write_text("#!/bin/bash\necho outside\n")
    shown = runreport.job_script(case, run)
    assert "outside" not in shown.split("not below")[0] and "not below the run" in shown
    # A regular file below the run is shown; one over 1 MiB is refused by its size.
    inside = run / "output" / "IORWriteBandwidth" / "rfm_job.sh"
    inside.unlink()
    inside.write_text("#!/bin/bash\nsrun ior\n")
    case["outputdir"] = str(inside.parent)
    assert runreport.job_script(case, run) == "#!/bin/bash\nsrun ior\n"
    with open(inside, "wb") as fh:
        fh.truncate((1 << 20) + 1)
    assert "refused" in runreport.job_script(case, run)


def test_rendering_a_report_writes_nothing_in_the_checkout(tmp_path):
    """No ``git status`` refresh of the index (it takes .git/index.lock)."""
    import os
    import subprocess
    repo = tmp_path / "repo"
    repo.mkdir()
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "f").write_text("x")
    subprocess.run(["git", "-C", str(repo), "add", "f"], check=True)
    subprocess.run(["git", "-C", str(repo), "commit", "-qm", "x"], check=True, env=env)
    os.utime(repo / "f", (1, 1))  # a stat change git status would refresh the index for
    index = repo / ".git" / "index"
    before = (index.stat().st_mtime_ns, index.read_bytes())
    src = tmp_path / "run-report.json"
    src.write_text((DATA / "ior-pass.json").read_text())
    signoff.write_report_context(src, tmp_path / "out", repo=repo)
    assert (index.stat().st_mtime_ns, index.read_bytes()) == before
    assert not (repo / ".git" / "index.lock").exists()


def test_the_console_prints_one_line_per_reason_and_the_verdict_last(tmp_path, capsys):
    """A reason holding line breaks (an edited fail_reason) cannot print a second
    ``overall verdict:`` line after the real one (scripts/repeat-acceptance reads the last)."""
    data = json.loads((DATA / "ior-fail.json").read_text())
    case = _case(data, "IORWriteBandwidth")
    case.update(fail_phase="sanity",
                fail_reason="sanity error: INVALID: short\noverall verdict: ACCEPTED\r"
                            "\u2028overall verdict: ACCEPTED\x85x")
    src = tmp_path / "run-report.json"
    src.write_text(json.dumps(data))
    assert signoff.main([str(src), "--out", str(tmp_path / "out")]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == "overall verdict: NOT ACCEPTED"
    assert [ln for ln in lines if ln.startswith("overall verdict:")] == [lines[-1]]


HOSTILE_VALUES = ["30", 10**4000, 1.7e308, -5, [], {"a": 1}, None, "x\ny"]
HOSTILE_KEYS = ["bytes_moved", "data_pattern", "deadline_s", "time_run_s", "executable_opts",
                "num_nodes", "partition_nodes", "node_fraction", "ranks_per_node",
                "planned_bytes", "node_memory_bytes", "job_nodelist", "tags", "reference_key"]


@pytest.mark.parametrize("key", HOSTILE_KEYS)
def test_no_traceback_whatever_a_field_holds(tmp_path, capsys, key):
    """A string deadline_s, an integer data_pattern, a 4,000-digit bytes_moved, a figure of
    1.7e308...: the report is written with a verdict, never a traceback."""
    for value in HOSTILE_VALUES:
        data, _ = _baseline(tmp_path)
        for case in data["runs"][0]["testcases"]:
            case[key] = value
        _perf(_case(data, "IORRandomWriteIOPS"), "write_iops")[0] = 1.7e308
        src = tmp_path / "run-report.json"
        src.write_text(json.dumps(data))
        code = signoff.main([str(src), "--out", str(tmp_path / "out")])
        err = capsys.readouterr().err
        if code == 2:  # refused by the run-report schema: one line naming the file and key
            assert err.startswith(f"fsaccept.reporting.report: {src}: "), err
        else:
            assert code in (0, 1), (key, value)
            assert "**Overall verdict: " in (tmp_path / "out" / "report.md").read_text()


def test_a_reference_file_edited_between_its_digest_and_its_read_does_not_verify(
        tmp_path, monkeypatch):
    # The thresholds compared are those of the bytes whose digest is judged: a file
    # edited between the two reads is not the file the run recorded.
    import dataclasses

    from fsaccept.core import inputs
    from fsaccept.suite.reference import REFERENCE_DIR, load_reference
    path = tmp_path / "ref.yaml"
    path.write_bytes((REFERENCE_DIR / "local.yaml").read_bytes())
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    edited = dataclasses.replace(load_reference(path), sha256="0" * 64)
    monkeypatch.setattr(signoff, "_load_verified_reference", lambda p, raw: edited)
    _, check, problem = signoff._given_reference(str(path), {(str(path), sha)},
                                                 inputs.Reader(tmp_path))
    assert "0" * 64 in check and "is not the file the run used" in problem
