"""The checks once per target of a reference file's ``targets:`` (fsaccept/rfm/targets.py):
``reframe -l`` of this checkout's checks (listing sets nothing up: no cluster needed)."""

import copy
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from fsaccept.rfm.targets import targets_of_check
from fsaccept.suite.reference import REFERENCE_DIR, load_reference

REPO = Path(__file__).resolve().parents[2]


def _two(tmp_path):
    """reference/local.yaml as two targets: scratch with every test, home with two."""
    data = yaml.safe_load((REFERENCE_DIR / "local.yaml").read_text())
    target, tests = data.pop("target"), data.pop("tests")
    for key in ("degraded", "sweeps"):
        data.pop(key, None)
    data["targets"] = {
        "scratch": {**target, "tests": tests},
        "home": {**copy.deepcopy(target), "path": "/var/tmp/home",
                 "tests": {k: copy.deepcopy(tests[k]) for k in ("mdtest_easy",
                                                                "ior_read_bandwidth")}}}
    path = tmp_path / "two.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _listed(reference=None):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("FSACCEPT_REFERENCE", None)
    if reference:
        env["FSACCEPT_REFERENCE"] = str(reference)
    proc = subprocess.run([str(Path(sys.executable).parent / "reframe"), "-C",
                           str(REPO / "config/settings.py"), "-c", str(REPO / "checks"), "-l",
                           "--system", "local-spack"], capture_output=True, text=True,
                          cwd=tempfile.gettempdir(), env=env, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return {line.rsplit(" /", 1)[0][2:] for line in proc.stdout.splitlines()
            if line.startswith("- ")}


def test_a_check_runs_on_each_target_that_has_its_test(tmp_path):
    ref = load_reference(_two(tmp_path))
    assert targets_of_check("MdtestEasy", ref) == ("scratch", "home")
    assert targets_of_check("MdtestHard", ref) == ("scratch",)
    assert targets_of_check("IORReadDatasetGeneration", ref) == ("scratch", "home")
    assert targets_of_check("DataReductionProbe", ref) == ("scratch", "home")  # no key
    assert targets_of_check("MdtestEasy", load_reference(REFERENCE_DIR / "local.yaml")) == ()
    assert targets_of_check("MdtestEasy", None) == ()


def test_reframe_makes_one_test_per_target_and_a_single_target_keeps_its_names(tmp_path):
    single = _listed()
    assert "IORWriteBandwidth" in single and "IORStonewalledRead" in single
    assert not [n for n in single if "fs_target" in n]
    several = _listed(_two(tmp_path))
    assert {"MdtestEasy %fs_target=scratch", "MdtestEasy %fs_target=home",
            "MdtestHard %fs_target=scratch", "IORWriteBandwidth %fs_target=scratch",
            # A read test is its dataset's: one per target that writes one.
            "IORStonewalledRead %dataset.fs_target=scratch",
            "IORStonewalledRead %dataset.fs_target=home",
            "DataReductionProbe %fs_target=home", "MPILaunchSanity"} <= several
    assert "MdtestHard %fs_target=home" not in several
    assert not [n for n in several if n.startswith(("IOR", "Mdtest", "Fio", "Md", "Data"))
                and "fs_target" not in n]
    assert len(several) == len(single) + 3  # home's mdtest_easy, read and probe


def test_a_read_test_is_on_its_datasets_target():
    from fsaccept.rfm.targets import target_of_test

    class Dataset:
        param_space = {"fs_target": None}
        fs_target = "home"

    class Read:
        param_space: dict = {}
        dataset = Dataset()

    class Single:
        param_space: dict = {}

    assert target_of_test(Dataset()) == "home" and target_of_test(Read()) == "home"
    assert target_of_test(Single()) == ""


def test_no_sweep_is_made_with_several_targets(tmp_path):
    """A file with targets: has no sweeps: (refused): checks/scaling makes no test."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "FSACCEPT_REFERENCE": str(_two(tmp_path))}
    proc = subprocess.run([str(Path(sys.executable).parent / "reframe"), "-C",
                           str(REPO / "config/settings.py"), "-c",
                           str(REPO / "checks" / "scaling"), "-l", "--system", "local-spack"],
                          capture_output=True, text=True, cwd=tempfile.gettempdir(), env=env,
                          timeout=120)
    assert proc.returncode == 0 and "Found 0 check(s)" in proc.stdout, proc.stdout[-2000:]
    assert "WARNING" not in proc.stdout + proc.stderr
