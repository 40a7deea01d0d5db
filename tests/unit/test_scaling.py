"""Scaling sweeps: the reference's ``sweeps:`` section (defaults, hostile input refused
with the key named, exit 2) and a curve judged by its shape (fsaccept.core.scaling)."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import tempfile

import pytest
import yaml

from fsaccept.core import scaling
from fsaccept.core.scaling import FAIL, INCOMPLETE, PASS, Point, judge_curve
from fsaccept.suite.reference import REFERENCE_DIR, ReferenceError, load_reference


def _with_sweeps(tmp_path, sweeps, name="local-spack.yaml"):
    """A copy of a shipped reference file with ``sweeps`` as its section (None: none)."""
    data = yaml.safe_load((REFERENCE_DIR / name).read_text())
    data.pop("sweeps", None)
    if sweeps is not None:
        data["sweeps"] = sweeps
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return path


# --------------------------------------------------------------------------- reference


def test_without_a_section_the_defaults_apply(tmp_path):
    ref = load_reference(_with_sweeps(tmp_path, None))
    sweeps = ref.sweeps
    assert sweeps.points["nodes"] == (1, 2, 4, 8, 16, 32, 64, 128)
    assert sweeps.points["ranks_per_node"] == (1, 2, 4, 8, 16, 32, 64)
    assert sweeps.points["transfer_size"] == (2**16, 2**18, 2**20, 2**22, 2**24)
    assert sweeps.min_efficiency == 0.7
    assert sweeps.efficiency_floor("transfer_size") is None
    from fsaccept.benchmarks import registry
    assert ref.swept_tests(registry.scaling_keys()) == [
        "ior_write_bandwidth", "ior_read_bandwidth", "mdtest_easy"]


def test_a_point_entry_moves_the_same_data():
    entry = {"ranks_per_node": 2, "transfer_size": "1MiB", "block_size": "1MiB",
             "segments": 1280, "threshold": {"value": 50, "unit": "MiB/s"}}
    ranks = scaling.point_entry(entry, scaling.RANKS, 4)
    assert (ranks["ranks_per_node"], ranks["segments"]) == (4, 640)
    xfer = scaling.point_entry(entry, scaling.TRANSFER, 4 * 2**20)
    assert (xfer["transfer_size"], xfer["block_size"], xfer["segments"]) == (
        4 * 2**20, 4 * 2**20, 320)
    small = scaling.point_entry(entry, scaling.TRANSFER, 2**18)
    assert (small["block_size"], small["segments"]) == (2**20, 1280)
    assert scaling.point_entry(entry, scaling.NODES, 4) == entry
    assert entry["ranks_per_node"] == 2  # the entry itself untouched


def test_a_nodes_cpus_from_scontrol():
    assert scaling.node_cpus("NodeName=n1 Arch=x86_64 CoresPerSocket=1 CPUAlloc=0 "
                             "CPUTot=2 CPULoad=0.10") == 2
    assert scaling.node_cpus("NodeName=n1") is None


def test_a_full_section_is_typed(tmp_path):
    ref = load_reference(_with_sweeps(tmp_path, {
        "tests": ["ior_write_bandwidth"], "nodes": [1, 2, 4], "ranks_per_node": [1, 4],
        "transfer_sizes": ["256KiB", "1MiB"], "min_efficiency": 0.8,
        "thresholds": [{"test": "ior_write_bandwidth", "nodes": 4,
                        "threshold": {"value": 100, "unit": "MiB/s", "tolerance": 0.1}},
                       {"test": "ior_write_bandwidth", "transfer_size": "1MiB",
                        "threshold": {"value": 40, "unit": "MiB/s"}}]}))
    sweeps = ref.sweeps
    assert sweeps.tests == ("ior_write_bandwidth",)
    assert sweeps.points["transfer_size"] == (2**18, 2**20)
    assert sweeps.min_efficiency == 0.8
    th = sweeps.threshold("ior_write_bandwidth", "nodes", 4)
    assert (th.value, th.unit, th.floor) == (100, "MiB/s", pytest.approx(90))
    assert sweeps.threshold("ior_write_bandwidth", "transfer_size", 2**20).value == 40
    assert sweeps.threshold("ior_write_bandwidth", "nodes", 2) is None


@pytest.mark.parametrize("sweeps, message", [
    ({"nodes": [1, 2, float("nan")]}, "sweeps.nodes[2]: nan is not a finite number"),
    ({"min_efficiency": float("nan")}, "sweeps.min_efficiency: nan is not a finite number"),
    ({"nodes": [1, -2, 4]}, "sweeps.nodes[1]: -2 is less than the minimum of 1"),
    ({"nodes": [1, 2, 2]}, "sweeps.nodes[2]: 2 is point 1 already"),
    ({"transfer_sizes": ["1MiB", 1048576]}, "sweeps.transfer_sizes[1]: 1MiB is point 0"),
    ({"nodes": [4, 1, 2]}, "sweeps.nodes[1]: 1 comes after 4: write the points in "
                           "ascending order"),
    ({"nodes": [4]}, "sweeps.nodes: [4] is too short"),
    ({"nodes": [1.5, 3]}, "sweeps.nodes[0]: 1.5 is not of type 'integer'"),
    ({"nodes": "1,2,4"}, "sweeps.nodes: '1,2,4' is not of type 'array'"),
    ({"transfer_sizes": ["64KB", "1MiB"]}, "sweeps.transfer_sizes[0]: '64KB' is not a "
                                           "binary size"),
    ({"min_efficiency": 1.5}, "sweeps.min_efficiency: 1.5 is greater than the maximum of 1"),
    ({"min_efficiency": 0}, "sweeps.min_efficiency: 0 is less than or equal to the minimum"),
    ({"node": [1, 2]}, "sweeps: unknown key(s) 'node'; allowed: min_efficiency, nodes,"),
    ({"tests": ["ior_random_write_iops"]}, "sweeps.tests[0]: 'ior_random_write_iops': no "
                                           "scaling check sweeps it"),
    ({"tests": ["ior_write_bandwith"]}, "sweeps.tests[0]: 'ior_write_bandwith': no scaling "
                                        "check sweeps it (those that do: "
                                        "ior_read_bandwidth, ior_shared_read, "
                                        "ior_shared_write, ior_write_bandwidth"),
    ({"stripes": {"counts": [1, 4]}}, "sweeps.stripes: a lustre setting and the target is "
                                      "ext4: remove it"),
    ({"tests": ["ior_shared_write"]}, "sweeps.tests[0]: 'ior_shared_write' is swept over "
                                      "stripe only, which a ext4 target has not"),
    ({"transfer_sizes": ["384KiB", "1MiB"]}, "sweeps.transfer_sizes[0]: 384KiB does not "
                                             "divide tests.ior_write_bandwidth.block_size"),
    ({"thresholds": [{"test": "mdtest_easy", "transfer_size": "1MiB",
                      "threshold": {"value": 1, "unit": "ops/s"}}]},
     "sweeps.thresholds[0].transfer_size: mdtest_easy is not swept over transfer_size"),
    ({"thresholds": [{"test": "ior_write_bandwidth", "nodes": 3,
                      "threshold": {"value": 1, "unit": "MiB/s"}}]},
     "sweeps.thresholds[0].nodes: 3 is not one of sweeps.nodes"),
    ({"thresholds": [{"test": "ior_write_bandwidth", "nodes": 2,
                      "threshold": {"value": 1, "unit": "ops/s"}}]},
     "sweeps.thresholds[0].threshold.unit: 'ops/s', but tests.ior_write_bandwidth is "
     "judged in MiB/s"),
    ({"tests": ["mdtest_easy"], "thresholds": [{"test": "ior_write_bandwidth", "nodes": 2,
                                                "threshold": {"value": 1, "unit": "MiB/s"}}]},
     "sweeps.thresholds[0].test: 'ior_write_bandwidth' is not swept (swept: mdtest_easy)"),
    ({"thresholds": [{"test": "mdtest_easy", "nodes": 2, "ranks_per_node": 2,
                      "threshold": {"value": 1, "unit": "ops/s"}}]},
     "sweeps.thresholds[0]: {"),
    ({"thresholds": [{"test": "mdtest_easy", "nodes": 2,
                      "threshold": {"value": 1, "unit": "ops/s"}}] * 2},
     "sweeps.thresholds[1]: the same point as sweeps.thresholds[0]"),
])
def test_hostile_sections_are_refused_naming_the_key(tmp_path, sweeps, message):
    with pytest.raises(ReferenceError) as err:
        load_reference(_with_sweeps(tmp_path, sweeps))
    assert message in str(err.value)


def test_a_test_swept_that_the_file_lacks_is_named(tmp_path):
    data = yaml.safe_load((REFERENCE_DIR / "local-spack.yaml").read_text())
    del data["tests"]["mdtest_easy"]
    data["sweeps"] = {"tests": ["mdtest_easy"]}
    path = tmp_path / "local-spack.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ReferenceError, match=r"sweeps.tests\[0\]: 'mdtest_easy': no such "
                                             "test under tests:"):
        load_reference(path)


def test_the_cli_refuses_a_bad_section_with_exit_2_and_no_traceback(tmp_path):
    path = _with_sweeps(tmp_path, {"nodes": [1, 2, 2]})
    proc = subprocess.run([sys.executable, "-m", "fsaccept", "reference", str(path)],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert "sweeps.nodes[2]: 2 is point 1 already" in proc.stderr
    assert "Traceback" not in proc.stderr


# --------------------------------------------------------------------------- the judge


def _curve(*figures, valid=True):
    return [Point(x, f, valid) for x, f in zip((1, 2, 4, 8), figures)]


def test_linear_scaling_passes_with_efficiency_one():
    v = judge_curve(_curve(100, 200, 400, 800), 0.7)
    assert (v.verdict, v.efficiency, v.reasons) == (PASS, 1.0, ())


def test_a_curve_that_flattens_fails_naming_the_efficiency():
    v = judge_curve(_curve(100, 180, 250, 300), 0.7)
    assert v.verdict == FAIL
    assert v.efficiency == pytest.approx(300 / 100 / 8)
    assert v.reasons == ("parallel efficiency 0.38 at 8 against linear scaling from 1: "
                         "below 0.7",)


def test_an_invalid_point_makes_the_curve_incomplete_not_pass():
    points = _curve(100, 200, 400, 800)
    points[2] = Point(4, 400, False, "INVALID: the read ended before its deadline")
    v = judge_curve(points, 0.7)
    assert v.verdict == INCOMPLETE
    assert v.reasons == ("at 4: INVALID: the read ended before its deadline",)
    assert v.efficiency == 1.0  # the ends still say it


def test_a_missing_end_point_leaves_no_efficiency():
    points = _curve(100, 200, 400) + [Point(8, None, False, "not in the run report")]
    v = judge_curve(points, 0.7)
    assert (v.verdict, v.efficiency) == (INCOMPLETE, None)
    assert v.reasons == ("at 8: not in the run report",)


def test_a_failed_point_threshold_fails_even_beside_an_invalid_point():
    points = [Point(1, 100, True, threshold=90), Point(2, 150, True, threshold=180),
              Point(4, None, False, "INVALID: job failed")]
    v = judge_curve(points, None, unit="MiB/s")
    assert v.verdict == FAIL
    assert v.reasons[0] == "at 2: 150 MiB/s is below its threshold 180 MiB/s"
    assert "at 4: INVALID: job failed" in v.reasons


@pytest.mark.parametrize("figure", [math.nan, math.inf, -5.0, 0.0, None, "300"])
def test_a_figure_no_file_system_can_have_is_no_point(figure):
    points = _curve(100, 200, 400) + [Point(8, figure, True)]
    assert judge_curve(points, 0.7).verdict == INCOMPLETE


def test_hostile_curves():
    assert judge_curve([], 0.7).verdict == INCOMPLETE
    assert judge_curve([Point(1, 100, True)], 0.7).reasons == (
        "1 point(s): a curve needs at least 2",)
    twice = judge_curve([Point(1, 100, True), Point(2, 200, True), Point(2, 150, True)], 0.7)
    assert twice.verdict == INCOMPLETE and twice.efficiency is None
    assert twice.reasons[0].startswith("two runs at 2")
    assert judge_curve([Point(math.nan, 1, True), Point(2, 2, True)], 0.7).verdict \
        == INCOMPLETE
    assert judge_curve([Point(-1, 1, True), Point(2, 2, True)], 0.7).verdict == INCOMPLETE


def test_points_are_judged_in_order_whatever_order_they_come_in():
    v = judge_curve(list(reversed(_curve(100, 200, 400, 800))), 0.7)
    assert (v.verdict, v.efficiency) == (PASS, 1.0)


def test_transfer_sizes_are_not_held_to_linear_scaling():
    points = [Point(2**16, 100, True), Point(2**24, 120, True)]
    assert judge_curve(points, None, scaling.TRANSFER).verdict == PASS
    v = judge_curve([Point(2**16, 100, False, "INVALID: x"), Point(2**24, 120, True)],
                    None, scaling.TRANSFER)
    assert v.reasons == ("at 64KiB: INVALID: x",)


# --------------------------------------------------------------------------- the session


def test_the_scaling_session_runs_the_preflights_the_swept_tests_and_their_sweeps(tmp_path):
    from fsaccept.suite import listing
    ref = load_reference(_with_sweeps(tmp_path, {"tests": ["mdtest_easy"]}))
    assert listing.scaling_session_pattern(ref) == (
        r"^(MPILaunchSanity|DataReductionProbe|MdtestEasy|ScalingMdtestEasyNodes|"
        r"ScalingMdtestEasyRanks)\b")
    proc = subprocess.run([sys.executable, "-m", "fsaccept", "reference",
                           str(_with_sweeps(tmp_path, None)), "--scaling-checks"],
                          capture_output=True, text=True)
    assert proc.returncode == 0 and "ScalingIORStonewalledReadTransfer" in proc.stdout


def _reframe_list(*args, reference=None):
    """``reframe -l`` of this checkout's checks on the emulated system (no cluster needed:
    listing sets nothing up)."""
    from pathlib import Path
    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(repo)}
    env.pop("FSACCEPT_REFERENCE", None)
    if reference:
        env["FSACCEPT_REFERENCE"] = str(reference)
    args = [str(repo / a) if a.startswith("checks") else a for a in args]
    proc = subprocess.run([str(Path(sys.executable).parent / "reframe"), "-C",
                           str(repo / "config/settings.py"), *args, "-l", "--system",
                           "local-spack"], capture_output=True, text=True,
                          cwd=tempfile.gettempdir(), env=env, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return [line.split()[1:3] for line in proc.stdout.splitlines() if line.startswith("- ")]


def test_reframe_lists_three_node_counts_of_each_swept_check_and_a_plain_run_none(tmp_path):
    listed = _reframe_list("-c", "checks", "-c", "checks/scaling", "-t", "scaling")
    by_check: dict[str, list[str]] = {}
    for name, param in listed:
        by_check.setdefault(name, []).append(param)
    for check in ("ScalingIORWriteBandwidthNodes", "ScalingIORStonewalledReadNodes",
                  "ScalingMdtestEasyNodes"):
        assert {"%nodes=1", "%nodes=2", "%nodes=4"} <= {p.replace("dataset.", "")
                                                      for p in by_check[check]}, by_check
    # reference/local.yaml's sweeps: transfer_sizes.
    assert by_check["ScalingIORWriteBandwidthTransfer"] == ["%transfer=256KiB", "%transfer=1MiB",
                                                            "%transfer=4MiB"]
    plain = _reframe_list("-c", "checks")
    assert plain and not [n for n, _ in plain if n.startswith("Scaling")]


def test_the_points_come_from_the_reference_file(tmp_path):
    path = _with_sweeps(tmp_path, {"tests": ["ior_write_bandwidth"], "nodes": [1, 3]})
    listed = _reframe_list("-c", "checks/scaling", "-t", "scaling", reference=path)
    names = {f"{n} {p}" for n, p in listed}
    assert "ScalingIORWriteBandwidthNodes %nodes=3" in names
    assert not [n for n in names if "Mdtest" in n or "Read" in n]



# --------------------------------------------------------------------------- Lustre


def test_on_lustre_the_shared_file_tests_get_the_default_stripe_matrix(tmp_path):
    from fsaccept.benchmarks import registry
    ref = load_reference(_with_sweeps(tmp_path, None, "example-lustre.yaml"))
    assert ref.swept_tests(registry.scaling_keys()) == [
        "ior_write_bandwidth", "ior_read_bandwidth", "ior_shared_write", "ior_shared_read",
        "mdtest_easy"]
    assert ref.sweeps.points["stripe"][:2] == ((1, 2**20), (1, 4 * 2**20))
    assert len(ref.sweeps.points["stripe"]) == 9
    # ... and not elsewhere: an ext4 target has no stripe.
    assert "ior_shared_write" not in load_reference(_with_sweeps(tmp_path, None)).swept_tests(
        registry.scaling_keys())


@pytest.mark.parametrize("stripes, message", [
    ({"counts": [0, 4]}, "sweeps.stripes.counts[0]: 0 is no stripe count"),
    ({"counts": [-2]}, "sweeps.stripes.counts[0]: -2 is less than the minimum of -1"),
    ({"counts": [4, 4]}, "sweeps.stripes.counts[1]: 4 is count 0 already"),
    ({"sizes": ["1MiB", "100KiB"]}, "sweeps.stripes.sizes[1]: 100KiB is not a multiple of "
                                    "64KiB"),
    ({"sizes": ["1MiB", 1048576]}, "sweeps.stripes.sizes[1]: 1MiB is size 0 already"),
    ({"count": [1]}, "sweeps.stripes: unknown key(s) 'count'; allowed: counts, sizes"),
])
def test_a_bad_stripe_matrix_is_refused_naming_the_key(tmp_path, stripes, message):
    with pytest.raises(ReferenceError) as err:
        load_reference(_with_sweeps(tmp_path, {"stripes": stripes}, "example-lustre.yaml"))
    assert message in str(err.value)


def test_a_stripe_point_stripes_the_test_directory():
    from fsaccept.benchmarks.ior import command as iorcmd
    ref = load_reference(REFERENCE_DIR / "example-lustre.yaml")
    entry = scaling.point_entry(ref.entry("ior_shared_write"), scaling.STRIPE, (4, 2**20))
    assert entry["stripe"] == {"count": 4, "size": 2**20}
    swept = ref.with_entries({**ref.entries, "ior_shared_write": entry})
    assert iorcmd.stripe_commands(iorcmd.parameters(swept, "ior_shared_write"), "$d") == [
        'lfs setstripe -c 4 -S 1048576 "$d"']
    assert scaling.label(scaling.STRIPE, (-1, 8 * 2**20)) == "-1x8MiB"
    assert scaling.stripe_of("-1x8MiB") == (-1, 8 * 2**20)
    with pytest.raises(ValueError):
        scaling.stripe_of("8MiB")


def test_a_stripe_matrix_is_judged_by_its_points_validity():
    ok = [Point((1, 2**20), 100, True), Point((4, 2**20), 300, True)]
    assert scaling.judge_matrix(ok).verdict == PASS
    bad = ok + [Point((-1, 2**20), None, False, "INVALID: job failed")]
    assert scaling.judge_matrix(bad).reasons == ("at -1x1MiB: INVALID: job failed",)


def test_reframe_lists_the_stripe_matrix_from_the_lustre_reference():
    # example-lustre's system needs Lmod to start ReFrame: listed here on the emulated
    # system with the Lustre file (the system check is made when a test is set up).
    listed = _reframe_list("-c", "checks/scaling", "-t", "scaling",
                           reference=REFERENCE_DIR / "example-lustre.yaml")
    names = [f"{n} {p}" for n, p in listed]
    stripes = [n for n in names if n.startswith("ScalingIORSharedFileWriteStripes")]
    assert len(stripes) == 9 and "ScalingIORSharedFileWriteStripes %stripe=-1x16MiB" in names
    assert "ScalingIORSharedFileReadStripes %dataset.stripe=4x1MiB" in names
    # On the emulated cluster's ext4: none.
    assert not [n for n, _ in _reframe_list("-c", "checks/scaling", "-t", "scaling")
                if "Stripes" in n]
