"""The sign-off of a scaling session: each sweep's curve judged by the catalogue (which
cases are a sweep's, of which test and dimension) and the verified reference's
``sweeps:`` section; a curve that FAILs makes the verdict NOT ACCEPTED, one INCOMPLETE
makes it INCOMPLETE; the report's Scaling section has a table and a plot per curve.

SYNTHETIC: no real sweep has been captured yet.  Each run report here is the real
``local-spack-accepted`` capture, copied, with cases added: copies of its
``IORWriteBandwidth`` case renamed and re-placed as a sweep's points (as ReFrame names
them: ``ScalingIORWriteBandwidthNodes %nodes=2``), and its reference copied with a
``sweeps:`` section (the cases' SHA-256 updated to it).  Replace by a real sweep's run
report once one exists."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

import pytest
import yaml

from fsaccept.reporting import report as signoff
from fsaccept.reporting import scaling as section
from tests.conftest import capture_with_reference

NAME = "local-spack-accepted"
SUFFIX = {"nodes": ("Nodes", "nodes"), "ranks_per_node": ("Ranks", "ranks"),
          "transfer_size": ("Transfer", "transfer")}
#: The sweep of the synthetic session: IOR write bandwidth only, small.
SWEEPS = {"tests": ["ior_write_bandwidth"], "nodes": [1, 2, 4], "ranks_per_node": [1, 2],
          "transfer_sizes": ["256KiB", "1MiB"], "min_efficiency": 0.5}


@pytest.fixture(autouse=True)
def _no_plots(monkeypatch):
    for name in ("figure_plot", "check_plot", "per_node_plot"):
        monkeypatch.setattr(signoff, name, lambda *a, **k: b"")
    monkeypatch.setattr("fsaccept.reporting.degraded.timeline_plot", lambda *a, **k: b"")


def _cases(data):
    return [c for r in data["runs"] for c in r["testcases"]]


def _point(base, dimension, label, x, figure, index):
    """A copy of the healthy write case as the sweep's point ``x`` (``label`` as ReFrame
    writes it in the name) measuring ``figure`` MiB/s."""
    case = copy.deepcopy(base)
    suffix, param = SUFFIX[dimension]
    check = f"ScalingIORWriteBandwidth{suffix}"
    case["name"] = case["display_name"] = f"{check} %{param}={label}"
    case["unique_name"] = f"{check}_{index:08x}"
    case["short_name"] = case["unique_name"]
    case["tags"] = ["bandwidth", "scaling"]
    case["uuid"] = case["uuid"].rsplit(":", 1)[0] + f":{100 + index}"
    case["sweep_dimension"], case["sweep_point"] = dimension, label
    scale = figure / case["perfvalues"]["local-spack:compute:write_bandwidth"][0]
    case["perfvalues"] = {"local-spack:compute:write_bandwidth":
                          [figure, None, None, None, "MiB/s", "pass"],
                          "local-spack:compute:write_bandwidth_stonewall":
                          [figure * 1.2, None, None, None, "MiB/s", "pass"]}
    case["bytes_moved"] = round(case["bytes_moved"] * scale)
    if dimension == "nodes":
        nodes = case["job_nodelist"][:x]
        case["job_nodelist"], case["num_nodes"], case["num_tasks"] = nodes, x, x
        case["rank_map"] = ",".join(f"{n}:{i}" for i, n in enumerate(nodes))
        case["per_node_figures"] = "write_bandwidth=" + ",".join(
            f"{n}:{figure / x}" for n in nodes)
        case["node_mounts"] = f"{','.join(nodes)}: ext4 / /dev/vda O_DIRECT honoured"
    elif dimension == "ranks_per_node":
        case["ranks_per_node"] = case["num_tasks_per_node"] = x
        case["num_tasks"] = x * case["num_nodes"]
        case["rank_map"] = ",".join(f"{n}:{i * x}-{i * x + x - 1}" if x > 1 else f"{n}:{i}"
                                    for i, n in enumerate(case["job_nodelist"]))
        case["per_node_figures"] = ""
    else:
        case["per_node_figures"] = ""
    return case


def _session(tmp_path, figures=None, sweeps=SWEEPS, drop=()):
    """The capture with the sweep's points added (``figures``: dimension -> the figure at
    each point; default linear scaling from 100 MiB/s), its reference with ``sweeps``."""
    data = capture_with_reference(NAME, tmp_path)
    ref = tmp_path / "reference.yaml"
    doc = yaml.safe_load(ref.read_text())
    doc["sweeps"] = sweeps
    ref.write_text(yaml.safe_dump(doc))
    sha = hashlib.sha256(ref.read_bytes()).hexdigest()
    cases = data["runs"][0]["testcases"]
    for case in cases:
        if case.get("reference_sha256"):
            case["reference_sha256"] = sha
    base = next(c for c in cases if c["name"] == "IORWriteBandwidth")
    figures = figures or {"nodes": [100, 200, 400], "ranks_per_node": [100, 190],
                          "transfer_size": [80, 100]}
    index = 0
    points = {"nodes": [(str(x), x) for x in sweeps.get("nodes", [])],
              "ranks_per_node": [(str(x), x) for x in sweeps.get("ranks_per_node", [])],
              "transfer_size": [(s, None) for s in sweeps.get("transfer_sizes", [])]}
    for dimension, values in points.items():
        for (label, x), figure in zip(values, figures[dimension]):
            index += 1
            if (dimension, label) in drop:
                continue
            cases.append(_point(base, dimension, label, x, figure, index))
    for holder in (data["session_info"], data["runs"][0]):
        holder["num_cases"] = len(cases)
    return data


def _signoff(data, tmp_path):
    src = tmp_path / "run-report.json"
    src.write_text(json.dumps(data))
    code = signoff.main([str(src), "--out", str(tmp_path / "out")])
    return code, (tmp_path / "out" / "report.md").read_text().replace("\\", "")


def _scaling(md):
    return md[md.index("## Scaling"):md.index("## Tests")] if "## Tests" in md[
        md.index("## Scaling"):] else md[md.index("## Scaling"):]


def test_a_sweep_that_scales_is_accepted_with_its_section(tmp_path):
    code, md = _signoff(_session(tmp_path), tmp_path)
    assert code == 0 and "**Overall verdict: ACCEPTED**" in md, md[:3000]
    part = _scaling(md)
    assert "### ior_write_bandwidth: write_bandwidth over nodes — PASS" in part
    assert "efficiency 1.00 (at least 0.5)" in part
    assert "| 4 | ScalingIORWriteBandwidthNodes %nodes=4 | 400 MiB/s | 400 MiB/s |" in part
    assert "### ior_write_bandwidth: write_bandwidth over ranks per node — PASS" in part
    assert "### ior_write_bandwidth: write_bandwidth over transfer size — PASS" in part
    assert "| 256KiB |" in part


def test_a_curve_below_the_efficiency_fails_the_sign_off(tmp_path):
    data = _session(tmp_path, figures={"nodes": [100, 150, 160], "ranks_per_node": [100, 190],
                                       "transfer_size": [80, 100]})
    code, md = _signoff(data, tmp_path)
    assert code == 1 and "**Overall verdict: NOT ACCEPTED**" in md
    assert ("scaling: ior_write_bandwidth: write_bandwidth over nodes: FAIL (parallel "
            "efficiency 0.40 at 4 against linear scaling from 1: below 0.5)") in md


def test_an_invalid_point_leaves_the_curve_and_the_sign_off_incomplete_or_worse(tmp_path):
    data = _session(tmp_path)
    point = next(c for c in _cases(data) if c["name"] == "ScalingIORWriteBandwidthNodes "
                                                         "%nodes=2")
    point["result"] = "fail"
    point["fail_phase"] = "sanity"
    point["fail_reason"] = "sanity error: INVALID: the job refused to run the benchmark"
    point["invalid_reasons"] = "the job refused to run the benchmark"
    for holder in (data["session_info"], data["runs"][0]):
        holder["num_failures"] = 1
    code, md = _signoff(data, tmp_path)
    assert code == 1 and "PASS**" not in md
    part = _scaling(md)
    assert "### ior_write_bandwidth: write_bandwidth over nodes — INCOMPLETE" in part
    assert "at 2: INVALID" in part


def test_a_point_missing_from_the_run_report_makes_the_curve_incomplete(tmp_path):
    data = _session(tmp_path, drop={("nodes", "2")})
    code, md = _signoff(data, tmp_path)
    assert code == 1 and "**Overall verdict: INCOMPLETE**" in md, md[:3000]
    assert ("scaling: ior_write_bandwidth: write_bandwidth over nodes: INCOMPLETE (at 2: not "
            "in the run report)") in md


def test_a_point_threshold_is_judged_from_the_reference(tmp_path):
    sweeps = dict(SWEEPS, thresholds=[{"test": "ior_write_bandwidth", "nodes": 4,
                                       "threshold": {"value": 500, "unit": "MiB/s"}}])
    code, md = _signoff(_session(tmp_path, sweeps=sweeps), tmp_path)
    assert code == 1 and "**Overall verdict: NOT ACCEPTED**" in md
    assert "at 4: 400 MiB/s is below its threshold 500 MiB/s" in md


def test_a_point_beyond_the_partition_ends_the_curve(tmp_path):
    sweeps = dict(SWEEPS, nodes=[1, 2, 4, 8])
    data = _session(tmp_path, sweeps=sweeps,
                    figures={"nodes": [100, 200, 400, 0], "ranks_per_node": [100, 190],
                             "transfer_size": [80, 100]})
    point = next(c for c in _cases(data) if c["name"].endswith("%nodes=8"))
    point.update(result="skip", perfvalues={}, fail_phase=None, fail_reason=None,
                 skip_reason="beyond what the partition allows: 8 nodes, more than the "
                             "test's node fraction 0.9 of 4 total nodes (4)")
    for holder in (data["session_info"], data["runs"][0]):
        holder["num_skipped"] = 1
    code, md = _signoff(data, tmp_path)
    assert code == 0 and "**Overall verdict: ACCEPTED**" in md, md[:3000]
    assert "- not run, 8: beyond what the partition allows: 8 nodes" in _scaling(md)


def test_a_skip_within_the_partition_is_a_missing_point(tmp_path):
    sweeps = dict(SWEEPS, nodes=[1, 2, 4])
    data = _session(tmp_path, sweeps=sweeps)
    point = next(c for c in _cases(data) if c["name"].endswith("%nodes=4"))
    # An edited report: 4 nodes of 4 is within the node fraction 0.9 it recorded.
    point.update(result="skip", perfvalues={}, skip_reason="beyond what the partition "
                                                           "allows: edited")
    for holder in (data["session_info"], data["runs"][0]):
        holder["num_skipped"] = 1
    code, md = _signoff(data, tmp_path)
    assert code == 1 and "ACCEPTED**" not in md.replace("NOT ACCEPTED**", "")
    assert "over nodes — INCOMPLETE" in _scaling(md)


def test_a_point_retagged_acceptance_is_still_judged_as_a_sweeps(tmp_path):
    data = _session(tmp_path)
    point = next(c for c in _cases(data) if c["name"].endswith("%nodes=2"))
    point["tags"] = ["bandwidth", "acceptance"]
    code, md = _signoff(data, tmp_path)
    assert code == 1
    assert "recorded tags" in md


def test_the_point_is_held_to_the_placement_the_case_recorded(tmp_path):
    data = _session(tmp_path)
    point = next(c for c in _cases(data) if c["name"].endswith("%nodes=2"))
    point["name"] = point["display_name"] = "ScalingIORWriteBandwidthNodes %nodes=8"
    tests = signoff.tests_of(data)
    curve = next(c for c in section.scaling_section(tests).curves if c.dimension == "nodes")
    line = next(p for p in curve.points if p.x == 8)
    assert "recorded num_nodes 2, not its point 8" in line.reason


def test_a_session_without_sweeps_has_no_section(tmp_path):
    data = capture_with_reference(NAME, tmp_path)
    code, md = _signoff(data, tmp_path)
    assert code == 0 and "## Scaling" not in md


def test_a_stripe_matrix_is_a_table_and_a_plot_judged_by_its_points(tmp_path):
    # No Lustre capture: the shared-file write case of the ext4 capture as a stripe point
    # (judged without a reference: the matrix's points as the cases give them).
    data = capture_with_reference(NAME, tmp_path)
    cases = data["runs"][0]["testcases"]
    base = next(c for c in cases if c["name"] == "IORSharedFileWrite")
    for i, (label, figure) in enumerate((("1x1MiB", 100), ("4x1MiB", 300), ("-1x1MiB", 350),
                                         ("1x4MiB", 120))):
        case = copy.deepcopy(base)
        case["name"] = case["display_name"] = f"ScalingIORSharedFileWriteStripes %stripe={label}"
        case["unique_name"] = f"ScalingIORSharedFileWriteStripes_{i}"
        case["tags"] = ["bandwidth", "shared-file", "scaling"]
        case["perfvalues"] = {"local-spack:compute:write_bandwidth":
                              [figure, None, None, None, "MiB/s", "pass"]}
        if label == "1x4MiB":
            case.update(result="fail", fail_phase="sanity",
                        fail_reason="sanity error: INVALID: x")
        cases.append(case)
    tests = signoff.tests_of(data)
    curve = next(c for c in section.scaling_section(tests).curves if c.dimension == "stripe")
    assert curve.title == "ior_shared_write: write_bandwidth over stripe count x stripe size"
    assert [c["point"] for c in curve.cells()] == ["1x1MiB", "1x4MiB", "4x1MiB", "-1x1MiB"]
    assert curve.judged.verdict == "INCOMPLETE"
    assert curve.judged.reasons[0].startswith("at 1x4MiB: INVALID")
    png = section.curve_plot(curve)
    assert png.startswith(b"\x89PNG")


def test_a_skip_below_what_the_test_needs_is_judged_by_the_catalogue(tmp_path):
    # IOR's write needs 1 node (mdtest's tests need 2: their catalogue's min_nodes): a
    # report that says its 1-node point was below what the test needs is edited.
    data = _session(tmp_path)
    point = next(c for c in _cases(data) if c["name"].endswith("%nodes=1"))
    point.update(result="skip", perfvalues={}, skip_reason="below what the test needs: "
                                                           "1 node, fewer than the 2 it needs")
    for holder in (data["session_info"], data["runs"][0]):
        holder["num_skipped"] = 1
    code, md = _signoff(data, tmp_path)
    assert code == 1 and "over nodes — INCOMPLETE" in _scaling(md)
