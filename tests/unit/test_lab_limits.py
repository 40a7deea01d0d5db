"""The lab's limits (lab/limits.py) on a cgroup tree of the test's own: a target's daemon
is moved into the lab's cgroup with its CPU quota, recorded first, and `clear` moves it
back where it was and removes only what the lab made."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from lab import limits as lim


@pytest.fixture
def tree(tmp_path):
    """A stand-in for /sys/fs/cgroup/cpu, with this process's own cgroup in it."""
    root = tmp_path / "cpu"
    origin = root / lim._cgroup_of(os.getpid()).lstrip("/")
    origin.mkdir(parents=True, exist_ok=True)
    (root / "cgroup.procs").write_text("")
    (origin / "cgroup.procs").write_text("")
    other = root / "someone-else"
    other.mkdir()
    return root, origin, other


def test_a_slow_target_is_recorded_then_moved_and_cleared_by_its_record(tmp_path, tree):
    root, origin, other = tree
    limits = lim.Limits(tmp_path / "state", 17000, cpu_root=root)
    pid = os.getpid()
    said = limits.slow_target("b2", [pid], 2)
    group = root / "fsaccept-lab-17000" / "b2"
    assert (group / "cpu.cfs_quota_us").read_text() == "2000"
    assert (group / "cpu.cfs_period_us").read_text() == "100000"
    assert (group / "cgroup.procs").read_text() == str(pid)
    assert "b2" in said and "2 % of one CPU" in said
    rec = json.loads(limits.record("b2").read_text())
    assert rec["origins"] == {str(pid): lim._cgroup_of(pid)}
    assert limits.describe() == "limits: target b2 at 2 % of one CPU"
    # Limited again at another rate: the origin is still the first one.
    limits.slow_target("b2", [pid], 5)
    assert json.loads(limits.record("b2").read_text())["origins"] == rec["origins"]
    # rmdir on a real cgroup removes its control files; here they are plain files.
    for f in group.iterdir():
        f.unlink()
    assert limits.clear() == "limits cleared: target b2 (1 pid(s) moved back)"
    assert (origin / "cgroup.procs").read_text() == str(pid)
    assert not (root / "fsaccept-lab-17000").exists()
    assert other.is_dir() and limits.current() == {} and limits.describe() == ""
    assert limits.clear() == "limits cleared: none was set"


def test_a_pid_that_ended_is_not_moved_back(tmp_path, tree):
    root, origin, _ = tree
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    limits = lim.Limits(tmp_path / "state", 17000, cpu_root=root)
    limits.record_dir.mkdir(parents=True)
    limits.record("b1").write_text(json.dumps({
        "target": "b1", "group": str(root / "fsaccept-lab-17000" / "b1"), "percent": 2,
        "origins": {str(child.pid): "/"}}))
    assert limits.clear() == "limits cleared: target b1 (0 pid(s) moved back)"
    assert (root / "cgroup.procs").read_text() == ""


@pytest.mark.parametrize("target, pids, percent, said", [
    ("../b2", [1], 2, "not a target name"),
    ("b 2", [1], 2, "not a target name"),
    ("b2", [], 2, "no daemon runs"),
    ("b2", [1], 0, "not between 0.1 and 100"),
    ("b2", [1], float("nan"), "not between 0.1 and 100"),
])
def test_a_bad_limit_is_refused_and_nothing_made(tmp_path, tree, target, pids, percent,
                                                 said):
    root, _, _ = tree
    limits = lim.Limits(tmp_path / "state", 17000, cpu_root=root)
    with pytest.raises(lim.LimitError, match=said):
        limits.slow_target(target, pids, percent)
    assert not (root / "fsaccept-lab-17000").exists() and limits.current() == {}


def test_without_the_cpu_controller_it_says_so(tmp_path):
    limits = lim.Limits(tmp_path / "state", 17000, cpu_root=tmp_path / "none")
    with pytest.raises(lim.LimitError, match="not mounted"):
        limits.slow_target("b2", [os.getpid()], 2)


def test_a_damaged_record_is_named(tmp_path, tree):
    root, _, _ = tree
    limits = lim.Limits(tmp_path / "state", 17000, cpu_root=root)
    limits.record_dir.mkdir(parents=True)
    limits.record("b3").write_text("{not json")
    with pytest.raises(lim.LimitError, match="b3.json"):
        limits.clear()
