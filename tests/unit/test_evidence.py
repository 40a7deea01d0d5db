"""Evidence is judged, not only shown (issue 28): a re-read test case whose own recorded
evidence says its figure is worthless is INVALID, by the same functions the live check
calls.  Every case is a real run report of this project (``local-spack-accepted.json``,
scripts/acceptance on the emulated cluster, ACCEPTED), edited."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from fsaccept.core import reduction
from fsaccept.reporting import report as signoff
from tests.conftest import capture_with_reference

DATA = Path(__file__).resolve().parent.parent / "data" / "reframe"


@pytest.fixture(autouse=True)
def _no_plots(monkeypatch):
    """The verdict is under test, not the plots (drawing them is most of the time)."""
    for name in ("figure_plot", "check_plot", "per_node_plot"):
        monkeypatch.setattr(signoff, name, lambda *a, **k: b"")


@pytest.fixture
def run(tmp_path):
    """The real run report, its reference file beside it."""
    return capture_with_reference("local-spack-accepted", tmp_path)


def _cases(data):
    return [c for r in data["runs"] for c in r["testcases"]]


def _case(data, name):
    return next(c for c in _cases(data) if c["name"] == name)


def _signoff(data, tmp_path):
    src = tmp_path / "run-report.json"
    src.write_text(json.dumps(data))
    code = signoff.main([str(src), "--out", str(tmp_path / "out")])
    return code, (tmp_path / "out" / "report.md").read_text().replace("\\", "")


def test_the_real_run_is_accepted(run, tmp_path):
    code, md = _signoff(run, tmp_path)
    assert code == 0 and "**Overall verdict: ACCEPTED**" in md, md[:2000]


def _probe_reducing(data):
    """The probe's record made to say, consistently, that the file system compresses."""
    probe = _case(data, "DataReductionProbe")
    d = json.loads(probe["reduction_result"])
    for name in ("zeros", "ior-default"):
        d["measurements"][name]["spaces"] = [4096, 4096, 4096]
    result = reduction.ProbeResult.from_dict(d)
    probe.update(reduction_result=json.dumps(result.to_dict()),
                 reduction_verdict=result.verdict, reduction_summary=result.summary())
    for key, values in probe["perfvalues"].items():
        name = key.rsplit(":", 1)[-1].removesuffix("_reduction").replace("_", "-")
        if name in result.measurements:
            values[0] = result.measurements[name].ratio
    assert result.reduces
    return data


def _with_volume(result, volume=10**400):
    result["measurements"]["zeros"]["volume"] = volume
    return result


def _with_no_space(result):
    result["measurements"]["zeros"].update(spaces=[0, 0, 0], error=-1)
    return result


HOSTILE = {
    "a server down after the benchmark": (
        lambda d: _case(d, "IORWriteBandwidth").update(
            servers_after="n1,n2,n3,n4: down GlusterFS client not connected to brick x:/b2"),
        "IORWriteBandwidth: INVALID (the file system was degraded when the benchmark ended"),
    "a node off the expected file system": (
        lambda d: _case(d, "IORWriteBandwidth").update(
            node_mounts="n1,n2,n3: ext4 / /dev/vda O_DIRECT honoured; "
                        "n4: tmpfs / tmpfs O_DIRECT honoured"),
        "node n4 saw the target on tmpfs (/), not on ext4 (/)"),
    "a node missing from the mount check": (
        lambda d: _case(d, "MdtestEasy").update(node_mounts="n1,n2,n3: ext4 / /dev/vda"),
        "node n4 of the job did not answer the mount check"),
    "a direct-I/O test without its O_DIRECT probe": (
        lambda d: _case(d, "IORWriteBandwidth").update(
            node_mounts="n1,n2,n3,n4: ext4 / /dev/vda"),
        "the direct-I/O test has no passed O_DIRECT probe"),
    "the job on another file system": (
        lambda d: _case(d, "FioFsync").update(job_fstype="xfs"),
        "is on xfs where the job ran, ext4 was expected"),
    "a time limit after a benchmark that failed": (
        lambda d: _case(d, "IORRandomWriteIOPS").update(
            time_limit_after_benchmark="Slurm cancelled job 9 due to time limit, after the "
                                       "benchmark had ended (exit 1), while the job removed "
                                       "its data"),
        "a time limit after the benchmark is a note only when the benchmark ended with "
        "exit 0"),
    "a probe whose sentence is not its measurements": (
        lambda d: _case(d, "DataReductionProbe").update(reduction_verdict="reduces"),
        "it says 'reduces', but its own measurements say 'does not reduce'"),
    "a probe's volume beyond a float's range (OverflowError in its ratios)": (
        lambda d: _case(d, "DataReductionProbe").update(reduction_result=json.dumps(
            _with_volume(json.loads(_case(d, "DataReductionProbe")["reduction_result"])))),
        "DataReductionProbe: INVALID (its recorded measurements (reduction_result) cannot be "
        "read"),
    "a probe's space of 0 within an error below 0 (ZeroDivisionError in its ratios)": (
        lambda d: _case(d, "DataReductionProbe").update(reduction_result=json.dumps(
            _with_no_space(json.loads(_case(d, "DataReductionProbe")["reduction_result"])))),
        "DataReductionProbe: INVALID (its recorded measurements (reduction_result) cannot be "
        "read"),
    "reducible data relabelled irreducible on a reducing file system": (
        lambda d: _probe_reducing(d) and _case(d, "IORWriteBandwidth").update(
            data_pattern="ior timestamp (irreducible)"),
        "written with ior timestamp (irreducible), reducible data, on a file system that "
        "reduces it"),
}


@pytest.mark.parametrize("what", sorted(HOSTILE))
def test_edited_evidence_is_never_accepted(run, tmp_path, what):
    edit, said = HOSTILE[what]
    edit(run)
    code, md = _signoff(run, tmp_path)
    assert code == 1 and "**Overall verdict: ACCEPTED**" not in md, what
    assert said in md, md[:3000]


def test_a_reducing_file_system_with_irreducible_data_stays_accepted(run, tmp_path):
    code, md = _signoff(_probe_reducing(run), tmp_path)
    assert code == 0 and "**Overall verdict: ACCEPTED**" in md, md[:2000]


def test_an_override_of_the_target_type_is_never_accepted(run, tmp_path):
    for case in _cases(run):
        if "target_fstype_expected" in case:
            case["target_fstype_expected"] = "xfs"
    code, md = _signoff(run, tmp_path)
    assert code == 1 and "**Overall verdict: INCOMPLETE**" in md
    assert "the run expected the target on xfs" in md


def test_the_live_and_the_re_read_judge_node_mounts_with_one_function():
    from fsaccept.core import guards, servers
    answers = servers.ungrouped("n1,n2: ext4 / /dev/vda; n3: tmpfs /x t")
    assert guards.node_mount_reasons(answers, "ext4", "/", ["n1", "n2", "n3", "n4"], False) == [
        "node n3 saw the target on tmpfs (/x), not on ext4 (/)",
        "node n4 of the job did not answer the mount check"]
    assert servers.ungrouped("garbage") is None


def _gluster(tmp_path):
    ref = tmp_path / "reference.yaml"
    shutil.copyfile(DATA / "local-gluster-accepted.reference.yaml", ref)
    data = json.loads((DATA / "local-gluster-accepted.json").read_text())
    for case in _cases(data):
        if case.get("reference_path"):
            case["reference_path"] = str(ref)
    return data


def test_on_glusterfs_a_missing_server_probe_or_a_lost_brick_is_invalid(tmp_path):
    data = _gluster(tmp_path)
    code, md = _signoff(data, tmp_path)
    assert code == 0 and "**Overall verdict: ACCEPTED**" in md, md[:2000]
    _case(data, "IORStonewalledRead")["servers_after"] = ""
    _case(data, "MdtestEasy")["node_mounts"] = (
        "n1,n2,n3,n4: fuse.glusterfs /mnt/fsaccept-gluster 127.0.0.2:fsaccept "
        "(down GlusterFS client not connected to brick 127.0.0.2:/b3)")
    code, md = _signoff(data, tmp_path)
    assert code == 1
    assert ("IORStonewalledRead: INVALID (evidence missing: no servers_after, which every "
            "job on fuse.glusterfs records after its benchmark)") in md
    assert "MdtestEasy: INVALID (node_mounts shows a server down" in md


@pytest.mark.parametrize("edit, said", [
    ("n1,n2,n3: ok 4 of 4 bricks connected",
     "IORWriteBandwidth: INVALID (evidence missing: node n4 of the job gave no answer of "
     "the server probe after the benchmark)"),
    ("n1,n2,n3,n4: unknown the server probe did not answer",
     "IORWriteBandwidth: INVALID (evidence missing: the server probe could not tell "
     "whether every storage server was reached after the benchmark: node n1,n2,n3,n4: "
     "unknown the server probe did not answer)"),
    ("n1,n2: ok 4 of 4 bricks connected; n3,n4: unknown cannot read the client",
     "reached after the benchmark: node n3,n4: unknown cannot read the client)"),
], ids=["a node with no answer", "every node unknown", "two nodes unknown"])
def test_on_glusterfs_a_node_unheard_or_unknown_after_the_benchmark_is_missing_evidence(
        tmp_path, edit, said):
    """Issue 49: the real GlusterFS run, IORWriteBandwidth's servers_after edited."""
    data = _gluster(tmp_path)
    _case(data, "IORWriteBandwidth")["servers_after"] = edit
    code, md = _signoff(data, tmp_path)
    assert code == 1 and said in md, md[:3000]
