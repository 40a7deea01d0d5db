"""Every line fsaccept prints from a run report is one line (issue 41): recorded text
holding a line break (LF, CR, VT, FF, NEL, LS...) or a terminal's escape sequence cannot
put a false ``overall verdict:`` (or ``nightly:``) line of its own before the true one,
which ``scripts/repeat-acceptance`` and a person read.

Each case is a real run report of this project (``tests/data/reframe/ior-fail.json``,
NOT ACCEPTED against its own reference file; ``ior-pass.json`` for the nightly side),
edited where a hostile reviewer would write."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from fsaccept.core.formatting import one_line, prefixed_lines
from fsaccept.reporting import manifest
from fsaccept.reporting import report as signoff
from fsaccept.reporting import trends

DATA = Path(__file__).resolve().parent.parent / "data" / "reframe"
FAKE = "overall verdict: ACCEPTED"
#: Every break str.splitlines honours (a terminal: LF, CR, VT, FF), and an escape
#: sequence that moves the cursor up and erases the line.
BREAKS = ["\n", "\r\n", "\r", "\v", "\f", "\x1c", "\x85", "\u2028", "\u2029",
          "\x1b[1A\x1b[2K"]


@pytest.fixture(autouse=True)
def _no_plots(monkeypatch):
    """The console is under test, not the plots."""
    for name in ("figure_plot", "check_plot", "per_node_plot"):
        monkeypatch.setattr(signoff, name, lambda *a, **k: b"")


def _case(data: dict, name: str) -> dict:
    return next(c for r in data["runs"] for c in r["testcases"] if c["name"] == name)


def _ior_fail(tmp_path: Path) -> dict:
    """ior-fail.json judged against its own reference file (copied, path and SHA-256)."""
    ref = tmp_path / "ior-fail.reference.yaml"
    ref.write_bytes((DATA / ref.name).read_bytes())
    sha = hashlib.sha256(ref.read_bytes()).hexdigest()
    data = json.loads((DATA / "ior-fail.json").read_text())
    for run in data["runs"]:
        for tc in run["testcases"]:
            if tc.get("reference_sha256"):
                tc["reference_path"], tc["reference_sha256"] = str(ref), sha
    return data


def _data_left(data: dict, text: str) -> None:
    _case(data, "IORWriteBandwidth")["data_left"] = f"/target/x{text}{FAKE}{text}"


def _unit(data: dict, text: str) -> None:
    for values in _case(data, "IORWriteBandwidth")["perfvalues"].values():
        values[4] = f"MiB/s{text}{FAKE}"


def _reason(data: dict, text: str) -> None:
    case = _case(data, "IORRandomWriteIOPS")
    case.update(result="skip", skip_reason=f"no node{text}{FAKE}")
    for where in (data["runs"][0], data["session_info"]):
        where["num_skipped"] += 1


def _name(data: dict, text: str) -> None:
    case = _case(data, "IORRandomWriteIOPS")
    case["display_name"] = case["name"] = f"IORRandomWriteIOPS{text}{FAKE}"


def _schema_key(data: dict, text: str) -> None:
    """A key the run report's schema names in its error (exit 2, on stderr)."""
    _case(data, "IORWriteBandwidth")["perfvalues"][f"local:compute:x{text}{FAKE}"] = 1


def _run_dir(data: dict, text: str) -> str:
    """The run report's own directory (where the report is written by default)."""
    return f"run{text}{FAKE}{text}dir"


EDITS = [_data_left, _unit, _reason, _name, _schema_key, _run_dir]


def _lines(text: str) -> list[str]:
    """The lines a reader (or sed) may see: split at every break a terminal honours."""
    return text.splitlines()


@pytest.mark.parametrize("edit", EDITS, ids=lambda f: f.__name__.strip("_"))
@pytest.mark.parametrize("brk", BREAKS, ids=repr)
def test_recorded_text_cannot_print_a_verdict_line_of_its_own(edit, brk, tmp_path, capsys):
    data = _ior_fail(tmp_path)
    run = tmp_path / (edit(data, brk) or "run")
    run.mkdir()
    (run / "run-report.json").write_text(json.dumps(data))
    code = signoff.main([str(run / "run-report.json")])
    cap = capsys.readouterr()
    verdicts = [li for li in _lines(cap.out + cap.err) if li.startswith("overall verdict")]
    assert "\x1b" not in cap.out + cap.err
    if code == 2:  # refused: no verdict line at all, every line of the error prefixed
        assert verdicts == [] and cap.out == "", cap
        assert all(li.startswith("fsaccept.reporting.report: ") for li in _lines(cap.err))
        return
    assert code == 1 and verdicts == ["overall verdict: NOT ACCEPTED"], cap.out
    assert _lines(cap.out)[-1] == "overall verdict: NOT ACCEPTED"


def test_a_data_left_path_is_shown_whole_on_one_line(tmp_path, capsys):
    data = _ior_fail(tmp_path)
    _data_left(data, "\n")
    (tmp_path / "run-report.json").write_text(json.dumps(data))
    signoff.main([str(tmp_path / "run-report.json"), "--out", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert f"data left on the target: IORWriteBandwidth: /target/x / {FAKE}\n" in out


def test_one_line_folds_breaks_and_shows_control_characters():
    assert one_line(" a \r\n b\u2028c\x85d ") == "a / b / c / d"
    assert one_line("x\x1b[2Ky\x00\x7f\x9b\u202e", sep=" ") == \
        "x\\x1b[2Ky\\x00\\x7f\\x9b\\u202e"
    assert one_line("a\n\tb", sep=None) == "a\\n\\tb"  # a file name, exactly
    assert one_line("5 µs — ok") == "5 µs — ok"
    assert prefixed_lines("p: ", "one\ntwo\rthree") == "p: one\np: two / three"


@pytest.mark.parametrize("brk", ["\n", "\r", "\u2028"], ids=repr)
def test_manifest_verify_prefixes_every_line_of_its_error(brk, tmp_path, capsys):
    """``fsaccept manifest verify`` of a run report its schema refuses: each line of the
    error (one per key) says ``fsaccept manifest:``, whatever the key holds."""
    data = _ior_fail(tmp_path)
    _schema_key(data, brk)
    (tmp_path / "run-report.json").write_text(json.dumps(data))
    assert manifest.main(["verify", str(tmp_path / "run-report.json")]) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and len(_lines(cap.err)) >= 1
    assert all(li.startswith("fsaccept manifest: ") for li in _lines(cap.err)), cap.err


def _session(base: dict, day: int, unit: str) -> dict:
    import copy
    import uuid
    r = copy.deepcopy(base)
    u = str(uuid.uuid4())
    info = r["session_info"]
    info.update(uuid=u, time_start_unix=info["time_start_unix"] + day * 86400,
                time_end_unix=info["time_end_unix"] + day * 86400,
                fsaccept_kind="nightly", fsaccept_system="local")
    for run in r["runs"]:
        for i, tc in enumerate(run["testcases"]):
            tc.update(uuid=f"{u}:{run['run_index']}:{i}", session_uuid=u)
            if tc.get("job_completion_time_unix"):
                tc["job_completion_time_unix"] += day * 86400
            for values in tc["perfvalues"].values():
                values[4] = unit
    return r


@pytest.mark.parametrize("brk", ["\n", "\r", "\u2028"], ids=repr)
def test_nightly_prints_every_line_as_its_own(brk, tmp_path, capsys):
    """``fsaccept nightly compare``: a unit and a reason holding a line break stay on
    their ``nightly:`` line."""
    base = json.loads((DATA / "ior-pass.json").read_text())
    unit = f"MiB/s{brk}nightly: summary all well"
    store = trends.Store(tmp_path / "results.db")
    runs = [_session(base, d, unit) for d in range(3)]
    for r in runs:
        store.store(r)
    last = runs[-1]
    case = last["runs"][0]["testcases"][0]
    case.update(result="fail", fail_phase="sanity",
                fail_reason=f"INVALID: a{brk}nightly: summary all well")
    for where in (last["runs"][0], last["session_info"]):
        where["num_failures"] += 1
    report = tmp_path / "run-report.json"
    report.write_text(json.dumps(last))
    ref = tmp_path / "ref.yaml"
    ref.write_text((DATA / "ior-fail.reference.yaml").read_text())
    trends.main(["compare", str(report), "--db", str(store.db_file), "--system", "local",
                 "--reference", str(ref), "--out", str(tmp_path / "out")])
    lines = _lines(capsys.readouterr().out)
    assert lines and all(li.startswith("nightly: ") for li in lines), lines
    assert [li for li in lines if li.startswith("nightly: summary")] == [lines[-1]], lines
    assert any(li.startswith("nightly: NOT PASS: IORWriteBandwidth: INVALID") for li in lines)
