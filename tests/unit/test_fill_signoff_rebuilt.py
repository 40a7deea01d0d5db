"""The fill's records held to the raw files they came from at the sign-off (issue 49,
class 4), with only the run report and the fill record edited, as a hostile user would:

* an ageing round missing from FillTarget's own output (``rfm_job.out``), the record
  saying every round was done;
* the filled test's own ``fill_df`` line (its ``rfm_job.out``) saying 20 %, the run
  report's ``fill_df`` and the record saying 80 %;
* the reference file not verified: the record cannot be planned again, and the sign-off
  says so (never a rebuild skipped silently).

FillTarget's output saying 50 % and a node with rc=1 are ``test_fill``'s.  The fill
session of ``test_fill`` (the real ``local-gluster-accepted`` run report, its reference
given a ``fill:`` section); the filled test's own output is the real
``local-spack-accepted`` run directory of ``test_manifest`` (each test's real capture
beside it), its MdtestEasy run again filled."""

from __future__ import annotations

import copy
import hashlib
import json
import re
import shutil
from pathlib import Path

from fsaccept.core import fill
from fsaccept.core.units import GIB
from fsaccept.suite.reference import load_reference
from tests.unit.test_fill import (FILL_SECTION, _cases, _signoff, filled_catalogue,  # noqa: F401
                                  filled_run, with_fill_target)
from tests.unit.test_manifest import _case, run  # noqa: F401
from tests.unit.test_manifest import _signoff as _spack_signoff

CHURN_SECTION = FILL_SECTION.replace("  tests:", "  churn: {rounds: 2}\n  tests:")


def _fill_target_out(tmp_path: Path) -> Path:
    return next(tmp_path.glob("output/**/FillTarget/rfm_job.out"))


# --------------------------------------------------------------------------- FillTarget


def test_the_fill_session_with_ageing_is_accepted(filled_catalogue, tmp_path):  # noqa: F811
    code, md, _ = _signoff(filled_run(tmp_path, section=CHURN_SECTION), tmp_path)
    assert code == 0 and "**Overall verdict: ACCEPTED**" in md, md[:3000]
    assert "2 of 2 round(s) of ageing" in md


def test_an_ageing_round_missing_from_fill_targets_output_is_invalid(filled_catalogue,  # noqa: F811
                                                                     tmp_path):
    data = filled_run(tmp_path, section=CHURN_SECTION)
    out = _fill_target_out(tmp_path)
    text = out.read_text()
    assert f"{fill.MARK} churn n3 round=2 " in text
    out.write_text(re.sub(rf"^{fill.MARK} churn n3 round=2 .*\n", "", text, flags=re.M))
    code, md, _ = _signoff(data, tmp_path)
    assert code == 1 and "**Overall verdict: NOT ACCEPTED**" in md
    assert (f"FillTarget: INVALID (its output ({out}): filler: n3: 1 of 2 ageing round(s) "
            "done; its fill record (") in md, md[md.find("FillTarget: "):][:1500]
    assert "is 377487360, its files give 188743680" in md


def test_without_a_verified_reference_the_rebuild_is_said_missing(filled_catalogue,  # noqa: F811
                                                                  tmp_path):
    data = filled_run(tmp_path)
    out = _fill_target_out(tmp_path)
    # The output says 50 %: with no verified reference it cannot be planned again.
    out.write_text(re.sub(r"(df filled size=\d+ used=)\d+ avail=\d+",
                          f"\\g<1>{5 * GIB} avail={5 * GIB}", out.read_text()))
    ref = tmp_path / "reference.yaml"
    ref.write_text(ref.read_text() + "# edited since the run\n")
    code, md, _ = _signoff(data, tmp_path)
    assert code == 1 and "**Overall verdict: ACCEPTED**" not in md
    assert ("FillTarget: evidence missing: its fill record is not rebuilt from its output "
            "(rfm_job.out): the fill is planned by the verified reference file's fill: "
            "section") in md, md[:3000]


# --------------------------------------------------------------------------- a filled test


def _filled_spack_run(run: Path, df_line: str | None = None) -> Path:  # noqa: F811
    """``test_manifest``'s real run directory made a fill session: its reference given a
    ``fill:`` section for MdtestEasy, FillTarget's case, record and output, and
    FilledMdtestEasy: MdtestEasy's case and output directory again, its output with the
    ``fill_df`` line the filled job prints (``df_line``: another one printed there)."""
    ref = run.parent.parent / "reference" / "local-spack.yaml"
    text = ref.read_text().replace("  max_bandwidth_mib_s: 4096\n",
                                   "  max_bandwidth_mib_s: 4096\n  dedicated: true\n", 1)
    ref.write_text(text + FILL_SECTION.replace("IORWriteBandwidth, ", ""))
    sha = hashlib.sha256(ref.read_bytes()).hexdigest()
    src = run / "run-report.json"
    data = json.loads(src.read_text())
    for case in _cases(data):
        if case.get("reference_sha256"):
            case["reference_sha256"] = sha
    mode = load_reference(ref).fill_settings()
    cap = 10 * GIB
    before = fill.Df(cap, GIB, cap - GIB, 10**5, 100, 10**5 - 100)
    p = fill.plan(before, mode, ["n1", "n2", "n3", "n4"])
    filled_df = fill.Df(cap, 8 * GIB, cap - 8 * GIB, 10**5, 7000, 10**5 - 7000)
    lines = [f"{fill.MARK} df before {before.text()}",
             *(f"{fill.MARK} node {nd.node} bytes={nd.bytes} files={nd.file_count} empty=0 "
               f"rc=0 stop=level" for nd in p.nodes),
             f"{fill.MARK} df filled {filled_df.text()}"]
    record = json.dumps(fill.Evidence.of(p, fill.parse_output("\n".join(lines))).to_dict())
    target = with_fill_target(data, run, record, output="\n".join(
        [f"fsaccept-info fill_nodes {','.join(nd.node for nd in p.nodes)}", *lines, ""]))
    empty = _case(data, "MdtestEasy")
    case = copy.deepcopy(empty)
    name = "FilledMdtestEasy"
    for key in ("outputdir", "stagedir"):
        case[key] = case[key].replace("/MdtestEasy", f"/{name}")
    shutil.copytree(empty["outputdir"], case["outputdir"])
    out = Path(case["outputdir"]) / "rfm_job.out"
    job = out.read_text()
    at = job.index("fsaccept-info benchmark_ended")
    out.write_text(job[:at] + f"fsaccept-info {fill.DF_INFO} {df_line or filled_df.text()}\n"
                   + job[at:])
    run_ = data["runs"][0]
    case.update(name=name, unique_name=name, display_name=name,
                uuid=f"{data['session_info']['uuid']}:0:{len(run_['testcases'])}",
                tags=[*empty["tags"], "filled"], fill_record=record,
                fill_df=filled_df.text(),
                dependencies_actual=[*empty.get("dependencies_actual", []),
                                     [target["unique_name"],
                                      f"{target['system']}:{target['partition']}",
                                      target["environ"]]])
    for key, (value, ref_value, lower, upper, unit, result) in empty["perfvalues"].items():
        if ref_value:  # judged live against its empty figure: at least 70 % of it
            case["perfvalues"][key] = [value, value * 0.7, 0.0, None, unit, "pass"]
    run_["testcases"].append(case)
    n = len(run_["testcases"])
    run_["num_cases"] = data["session_info"]["num_cases"] = n
    src.write_text(json.dumps(data))
    return out


def test_the_filled_test_with_its_own_output_is_accepted(filled_catalogue, run, capsys):  # noqa: F811
    _filled_spack_run(run)
    code, md, _ = _spack_signoff(run, capsys)
    assert code == 0 and "**Overall verdict: ACCEPTED**" in md, md[:3000]
    assert "| FilledMdtestEasy | file_creation |" in md


def test_the_filled_tests_own_fill_df_line_saying_20_percent_is_invalid(filled_catalogue,  # noqa: F811
                                                                       run, capsys):
    cap = 10 * GIB
    low = fill.Df(cap, 2 * GIB, cap - 2 * GIB, 10**5, 7000, 10**5 - 7000)
    out = _filled_spack_run(run, low.text())
    code, md, _ = _spack_signoff(run, capsys)
    assert code == 1 and "**Overall verdict: NOT ACCEPTED**" in md
    assert (f"FilledMdtestEasy: INVALID (its fill_df is not what its output ({out}) says: "
            f"{low.text()}; its fill record: level: df at the test's start: 20.00% of the "
            "capacity used (2 GiB of 10 GiB), below the declared 80.00% less its tolerance "
            "(78.00%)") in md, md[md.find("FilledMdtestEasy: "):][:1500]


def test_a_filled_tests_output_without_its_fill_df_line_is_invalid(filled_catalogue,  # noqa: F811
                                                                   run, capsys):
    out = _filled_spack_run(run)
    out.write_text(re.sub(rf"^fsaccept-info {fill.DF_INFO} .*\n", "", out.read_text(),
                          flags=re.M))
    code, md, _ = _spack_signoff(run, capsys)
    assert code == 1 and (f"FilledMdtestEasy: INVALID (its fill_df is not what its output "
                          f"({out}) says: no {fill.DF_INFO} line; no df at its start: "
                          f"{fill.DF_INFO}: missing size") in md, md[:3000]
