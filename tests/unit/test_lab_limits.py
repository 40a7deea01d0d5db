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


# --------------------------------------------------------------------------- the network
class FakeTc:
    """tc on a loopback device of the test's own: the root qdisc, classes and filters it
    was given, shown as tc shows them (the lines lab/limits.py reads)."""

    def __init__(self, root="qdisc noqueue 0: root refcnt 2"):
        self.root, self.classes, self.filters, self.calls = root, [], {}, []

    def __call__(self, args):
        self.calls.append(args)
        out, code = "", 0
        verb = args[:2]
        if verb == ["qdisc", "show"]:
            out = self.root + "\n"
        elif verb == ["qdisc", "add"]:
            self.root = f"qdisc htb {args[args.index('handle') + 1]} root refcnt 2 r2q 10"
        elif verb == ["qdisc", "del"]:
            self.root = "qdisc noqueue 0: root refcnt 2"
        elif verb == ["class", "show"]:
            out = "".join(f"class htb {c} root prio 0 rate 400Mbit\n" for c in self.classes)
        elif verb == ["class", "add"]:
            self.classes.append(args[args.index("classid") + 1])
        elif verb == ["class", "del"]:
            self.classes.remove(args[args.index("classid") + 1])
        elif verb == ["filter", "show"]:
            out = "".join(f"filter parent fa00: protocol ip pref {p} u32 chain 0\n"
                          for p in self.filters)
        elif verb == ["filter", "add"]:
            self.filters.setdefault(int(args[args.index("prio") + 1]), []).append(args)
        elif verb == ["filter", "del"]:
            del self.filters[int(args[args.index("prio") + 1])]
        return subprocess.CompletedProcess(["tc", *args], code, out, "")


def test_the_network_is_limited_both_ways_by_the_labs_own_handles_and_cleared(tmp_path):
    tc = FakeTc()
    one = lim.Limits(tmp_path / "a", 17000, tc=tc)
    other = lim.Limits(tmp_path / "b", 18100, tc=tc)
    said = one.limit_network("127.0.0.2", 50 << 20)
    assert "limited to 50 MiB/s each way" in said and tc.root.startswith("qdisc htb fa00:")
    other.limit_network("127.0.70.180", 10 << 20)
    assert set(one.classes).isdisjoint(other.classes) and one.priority != other.priority
    rules = [a[a.index("match"):a.index("flowid") + 2] for a in tc.filters[one.priority]]
    assert rules == [["match", "ip", "dst", "127.0.0.2/32", "flowid", one.classes[0]],
                     ["match", "ip", "src", "127.0.0.2/32", "flowid", one.classes[1]]]
    rate = [a for a in tc.calls if a[:2] == ["class", "add"]][0]
    assert rate[rate.index("rate") + 1] == f"{(50 << 20) * 8}bit"
    assert one.describe() == "limits: network to and from 127.0.0.2 at 50 MiB/s each way"
    # One lab's clear leaves the other's limit, and the root qdisc it still needs.
    assert "network to and from 127.0.0.2" in one.clear()
    assert tc.classes == list(other.classes) and tc.root.startswith("qdisc htb fa00:")
    assert one.network() is None and one.describe() == ""
    other.clear()
    assert tc.classes == [] and tc.filters == {} and tc.root.startswith("qdisc noqueue")


def test_a_network_limit_set_again_replaces_the_first(tmp_path):
    tc = FakeTc()
    limits = lim.Limits(tmp_path, 17000, tc=tc)
    limits.limit_network("127.0.0.2", 50 << 20)
    limits.limit_network("127.0.0.2", 20 << 20)
    assert len(tc.classes) == 2 and len(tc.filters[limits.priority]) == 2
    assert limits.network()["rate"] == 20 << 20


def test_the_endpoints_alone_are_limited_by_their_ports_and_cleared_with_them(tmp_path):
    tc = FakeTc()
    limits = lim.Limits(tmp_path, 17000, tc=tc)
    said = limits.limit_network("127.0.0.2", 5 << 20, (17136, 17137))
    assert "127.0.0.2 ports 17136-17137: limited to 5 MiB/s" in said
    rules = [a[a.index("match"):a.index("flowid")] for a in tc.filters[limits.priority]]
    assert rules == [
        ["match", "ip", "dst", "127.0.0.2/32", "match", "ip", "dport", "17136", "0xffff"],
        ["match", "ip", "dst", "127.0.0.2/32", "match", "ip", "dport", "17137", "0xffff"],
        ["match", "ip", "src", "127.0.0.2/32", "match", "ip", "sport", "17136", "0xffff"],
        ["match", "ip", "src", "127.0.0.2/32", "match", "ip", "sport", "17137", "0xffff"]]
    assert limits.network()["ports"] == [17136, 17137]
    assert limits.describe() == ("limits: network to and from 127.0.0.2 ports 17136-17137 "
                                 "at 5 MiB/s each way")
    assert "ports 17136-17137" in limits.clear()
    assert tc.filters == {} and tc.classes == [] and limits.network() is None
    with pytest.raises(lim.LimitError, match="not up to 64 ports"):
        limits.limit_network("127.0.0.2", 5 << 20, (0,))
    assert tc.classes == []


@pytest.mark.parametrize("address, rate, words", [
    ("10.0.0.1", 50 << 20, "not a loopback address"),
    ("127.0.0.2; rm -rf /", 50 << 20, "not a loopback address"),
    ("127.0.0.2", 10, "not between 1 MiB/s and 100 GiB/s"),
    ("127.0.0.2", 1 << 50, "not between 1 MiB/s and 100 GiB/s"),
])
def test_a_bad_network_limit_is_refused_and_nothing_made(tmp_path, address, rate, words):
    tc = FakeTc()
    with pytest.raises(lim.LimitError, match=words):
        lim.Limits(tmp_path, 17000, tc=tc).limit_network(address, rate)
    assert tc.calls == [] and not (tmp_path / "network-limit.json").exists()


def test_a_root_qdisc_or_a_priority_of_another_is_not_touched(tmp_path):
    tc = FakeTc(root="qdisc fq_codel 8001: root refcnt 2")
    limits = lim.Limits(tmp_path, 17000, tc=tc)
    with pytest.raises(lim.LimitError, match="root qdisc fsaccept did not make"):
        limits.limit_network("127.0.0.2", 50 << 20)
    tc = FakeTc(root="qdisc htb fa00: root refcnt 2 r2q 10")
    tc.filters[lim.Limits(tmp_path, 17000).priority] = [["someone"]]
    with pytest.raises(lim.LimitError, match="not this lab's"):
        lim.Limits(tmp_path, 17000, tc=tc).limit_network("127.0.0.2", 50 << 20)
    assert [a[1] for a in tc.calls] == ["show", "show"]
    assert not (tmp_path / "network-limit.json").exists()
