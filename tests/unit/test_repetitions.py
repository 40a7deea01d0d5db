"""A test's repetitions judged as a whole (fsaccept/reporting/repetitions.py): as many
as its entry asks, no judged figure noisier than ``max_cov``; on the real ``--repeat 3``
capture (tests/data/reframe/ior-repeat.json: IORRandomWriteIOPS 3 times, 39,500 ± 9,120
IOPS, CoV 23 %)."""

from __future__ import annotations

import json

import pytest
import yaml

from fsaccept.reporting import runreport
from fsaccept.suite.reference import load_reference
from tests.conftest import REPO

CAPTURE = REPO / "tests" / "data" / "reframe" / "ior-repeat.json"


def judged(tmp_path, **entry):
    """IORRandomWriteIOPS of the capture, judged against reference/local.yaml with its
    entry's keys ``entry``."""
    data = yaml.safe_load((REPO / "reference" / "local.yaml").read_text())
    data["tests"]["ior_random_write_iops"].update(entry)
    path = tmp_path / "local.yaml"
    path.write_text(yaml.safe_dump(data))
    tests = runreport.tests_of(json.loads(CAPTURE.read_text()), reference=load_reference(path))
    return next(t for t in tests if t.name == "IORRandomWriteIOPS")


def test_fewer_repetitions_than_the_entry_asks_is_lighter_than_the_contract(tmp_path):
    t = judged(tmp_path, repetitions=5)
    assert [v.reason for v in t.repeated] == [
        "lighter than the contract: 3 repetitions, tests.ior_random_write_iops.repetitions "
        "asks 5 (scripts/acceptance repeats the tests as the reference file asks; by hand: "
        "--repeat 5)"]
    assert t.verdict == "INVALID" and t.repeated[0].reason in t.reason


def test_a_figure_noisier_than_max_cov_is_too_noisy_to_judge(tmp_path):
    t = judged(tmp_path, repetitions=3, max_cov=0.1)
    assert [v.reason for v in t.repeated] == [
        "write_iops: too noisy to judge (CoV 23 % over 3 repetitions, at most 10 %): random "
        "error dominates; find what else runs (tests.ior_random_write_iops.max_cov)"]
    assert t.verdict == "INVALID"


@pytest.mark.parametrize("entry", [{}, {"repetitions": 3}, {"repetitions": 2, "max_cov": 0.5}])
def test_as_many_repetitions_and_a_spread_within_the_bound_add_nothing(tmp_path, entry):
    assert judged(tmp_path, **entry).repeated == []


def test_without_a_verified_reference_nothing_is_judged_here():
    tests = runreport.tests_of(json.loads(CAPTURE.read_text()))
    assert all(t.repeated == [] for t in tests)


def test_the_most_repetitions_asked_is_what_a_session_repeats(tmp_path):
    data = yaml.safe_load((REPO / "reference" / "local.yaml").read_text())
    assert load_reference(REPO / "reference" / "local.yaml").most_repetitions == 1
    data["tests"]["ior_random_write_iops"]["repetitions"] = 4
    data["tests"]["ior_write_bandwidth"]["repetitions"] = 2
    path = tmp_path / "local.yaml"
    path.write_text(yaml.safe_dump(data))
    assert load_reference(path).most_repetitions == 4


def test_every_entry_takes_the_keys_and_its_benchmark_types_it_without_them(tmp_path):
    """IOR and md-workbench type an entry from every key it holds: the repetitions' are
    not theirs (a main job with repetitions: 3 failed every IOR test in setup)."""
    from fsaccept.benchmarks.fio import command as fio
    from fsaccept.benchmarks.ior import command as ior
    from fsaccept.benchmarks.md_workbench import command as mdw
    from fsaccept.benchmarks.mdtest import command as mdt
    data = yaml.safe_load((REPO / "reference" / "local-spack.yaml").read_text())
    for entry in data["tests"].values():
        entry.update(repetitions=3, max_cov=0.2)
    path = tmp_path / "local-spack.yaml"
    path.write_text(yaml.safe_dump(data))
    ref = load_reference(path)
    for key, entry in ref.entries.items():
        if key.startswith(("ior_", "checkpoint_")):
            ior.entry_parameters(key, entry)
        elif key.startswith("md_workbench"):
            mdw.parameters(key, entry)
        elif key.startswith("mdtest_"):
            mdt.parameters(key, entry)
        elif key.startswith("fio_"):
            fio.parameters(key, key[len("fio_"):], entry)
