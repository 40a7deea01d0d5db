"""The sign-off of a session over several file systems (a reference file's ``targets:``):
one section per target, each test judged against its own target's entries, and one
overall verdict over all of them.  Built from a captured run report
(tests/data/reframe/local-gluster-accepted.json), its cases run once per target as the
parameterised checks name them (``%fs_target=NAME``).  With a single ``target:`` the
reports are the golden ones (test_golden_reports.py)."""

import copy
import json
from pathlib import Path

import pytest
import yaml

from fsaccept.reporting import report as signoff
from fsaccept.reporting.sections import target_text
from fsaccept.suite.reference import load_reference

DATA = Path(__file__).resolve().parent.parent / "data" / "reframe"
CAPTURED = "local-gluster-accepted"
#: Of no one file system: ReFrame runs them once whatever the targets.
SHARED = ("BenchmarkBinaries", "MPILaunchSanity")
TARGETS = ("distributed", "replicated")
#: The captured volume's mount, and the second target's: a file system of its own.
MOUNT, REPLICATED = "/mnt/fsaccept-gluster", "/mnt/fsaccept-gluster-replicated"


def _on_replicated(tc):
    """A case as the replicated target's run records it: its directories and mount."""
    for key in ("target_dir", "target_mount", "node_mounts"):
        if isinstance(tc.get(key), str):
            tc[key] = tc[key].replace(MOUNT + " ", REPLICATED + " ").replace(
                MOUNT + "/", REPLICATED + "/").replace("127.0.0.2:fsaccept", "127.0.0.2:replicated")
            if tc[key] == MOUNT:
                tc[key] = REPLICATED


def per_target(edit=lambda name, tc: None):
    """The captured session as if its checks were parameterised over TARGETS; ``edit``
    changes a target's copy of a case."""
    run = json.loads((DATA / f"{CAPTURED}.json").read_text())
    cases = []
    for tc in run["runs"][0]["testcases"]:
        cls, _, rest = tc["name"].partition(" ")
        if cls in SHARED:
            cases.append(tc)
            continue
        for name in TARGETS:
            c = copy.deepcopy(tc)
            c["name"] = c["display_name"] = " ".join(
                [cls, f"%fs_target={name}"] + ([rest] if rest else []))
            c["unique_name"], c["fs_target"] = f"{cls}_{name}", name
            c["uuid"] = f"{tc['uuid']}-{name}"
            if name == "replicated":
                _on_replicated(c)
            c["dependencies_actual"] = [
                [d[0] if d[0].startswith(SHARED) else f"{d[0].split('_')[0]}_{name}", *d[1:]]
                for d in tc["dependencies_actual"]]
            edit(name, c)
            cases.append(c)
    run["runs"][0]["testcases"] = cases
    run["session_info"]["num_cases"] = run["runs"][0]["num_cases"] = len(cases)
    run["session_info"]["num_failures"] = run["runs"][0]["num_failures"] = sum(
        c["result"] == "fail" for c in cases)
    return run


def two_targets(tmp_path, edit=lambda name, target: None):
    """The captured reference file with its target and tests as TARGETS."""
    data = yaml.safe_load((DATA / f"{CAPTURED}.reference.yaml").read_text())
    target, tests = data.pop("target"), data.pop("tests")
    for key in ("degraded", "sweeps"):
        data.pop(key, None)
    data["targets"] = {name: {**copy.deepcopy(target), "tests": copy.deepcopy(tests)}
                       for name in TARGETS}
    # Each its own file system (the captured volume's, and a second volume).
    data["targets"]["replicated"].update(path=REPLICATED, mount_point=REPLICATED,
                                         source="127.0.0.2:replicated")
    for name in TARGETS:
        edit(name, data["targets"][name])
    path = tmp_path / "two.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return load_reference(path)


def context(run, reference):
    return signoff.build_context(run, reference=reference, plots=False)


def test_each_target_has_its_section_and_all_pass(tmp_path):
    ctx = context(per_target(), two_targets(tmp_path))
    assert ctx["signoff"]["verdict"] == "ACCEPTED"
    sections = {s.name: s for s in ctx["targets"]}
    assert list(sections) == ["", *TARGETS]  # the pre-flight checks first
    for name in TARGETS:
        assert sections[name].verdict == "PASS" and sections[name].counts == [("PASS", 17)]
        assert all(f" %fs_target={name}" in r.test for r in sections[name].rows if r.test)
    assert target_text(sections["distributed"]) == (
        "Target distributed: /mnt/fsaccept-gluster (fuse.glusterfs; mount point "
        "/mnt/fsaccept-gluster; source 127.0.0.2:fsaccept): PASS")
    md = signoff.render(ctx, "report.md.j2")
    assert "### Target replicated: PASS" in md and "### Pre-flight checks: PASS" in md
    assert "### Target distributed: PASS" in signoff.render(ctx, "report.html.j2").replace(
        '<h3>', '### ').replace(': <span class="verdict PASS">PASS</span></h3>', ": PASS")


def _fail_write(name, tc):
    if name == "replicated" and tc["name"].startswith("IORWriteBandwidth"):
        key = next(k for k in tc["perfvalues"] if k.endswith(":write_bandwidth"))
        tc["perfvalues"][key][0] = 1.0  # below its 10 MiB/s - 10 %
        tc["perfvalues"][key][-1] = "fail"
        tc["result"], tc["fail_phase"] = "fail", "performance"
        tc["fail_reason"] = "performance: write_bandwidth below its reference"


def test_a_fail_on_one_target_fails_the_sign_off(tmp_path):
    ctx = context(per_target(_fail_write), two_targets(tmp_path))
    sections = {s.name: s for s in ctx["targets"]}
    assert sections["replicated"].verdict == "FAIL"
    assert sections["replicated"].counts == [("FAIL", 1), ("PASS", 16)]
    assert sections["distributed"].verdict == "PASS"
    assert ctx["signoff"]["verdict"] == "NOT ACCEPTED"
    assert ctx["signoff"]["blocking"][0].startswith(
        "IORWriteBandwidth %fs_target=replicated: FAIL")


def test_each_test_is_judged_by_its_own_targets_thresholds(tmp_path):
    def stricter(name, target):
        if name == "distributed":
            target["tests"]["ior_write_bandwidth"]["threshold"]["value"] = 20
    ctx = context(per_target(), two_targets(tmp_path, stricter))
    sections = {s.name: s for s in ctx["targets"]}
    assert sections["distributed"].verdict == "INVALID"
    assert sections["replicated"].verdict == "PASS"
    assert any(b.startswith("IORWriteBandwidth %fs_target=distributed: INVALID")
               and "the reference file says ≥ 18 MiB/s" in b
               for b in ctx["signoff"]["blocking"])


def test_a_target_the_file_does_not_name_is_invalid(tmp_path):
    def elsewhere(name, tc):
        if name == "replicated" and tc["name"].startswith("MdtestEasy"):
            tc["fs_target"] = "home"
    ctx = context(per_target(elsewhere), two_targets(tmp_path))
    assert ctx["signoff"]["verdict"] == "NOT ACCEPTED"
    assert any("recorded fs_target 'home', but the reference file's targets are "
               "distributed, replicated" in b for b in ctx["signoff"]["blocking"])
    assert "home" in [s.name for s in ctx["targets"]]


def test_a_test_missing_on_one_target_leaves_it_incomplete(tmp_path):
    run = per_target()
    cases = run["runs"][0]["testcases"]
    cases[:] = [c for c in cases if c.get("unique_name") != "MdtestHard_replicated"]
    run["session_info"]["num_cases"] = run["runs"][0]["num_cases"] = len(cases)
    ctx = context(run, two_targets(tmp_path))
    assert ctx["signoff"]["verdict"] == "INCOMPLETE"
    assert ("1 acceptance test(s) the reference file defines did not run: MdtestHard "
            "on target replicated") in ctx["signoff"]["blocking"]


def test_an_acceptance_test_without_its_target_is_invalid(tmp_path):
    def unnamed(name, tc):
        if name == "distributed" and tc["name"].startswith("FioFsync"):
            del tc["fs_target"]
    ctx = context(per_target(unnamed), two_targets(tmp_path))
    assert any("recorded no fs_target, but the reference file has several targets "
               "(distributed, replicated)" in b for b in ctx["signoff"]["blocking"])


@pytest.mark.parametrize("name", [f"{CAPTURED}.json"])
def test_a_single_target_has_no_target_sections(name):
    ctx = signoff.build_context(json.loads((DATA / name).read_text()), plots=False,
                                reference=load_reference(DATA / f"{CAPTURED}.reference.yaml"))
    assert ctx["targets"] == []


def test_each_jobs_file_system_is_checked_against_its_own_target(tmp_path):
    def other_type(name, target):
        if name == "replicated":
            target.update(fstype="xfs", path="/srv/replicated")
            target.pop("mount_point")
            target.pop("source")
    ctx = context(per_target(), two_targets(tmp_path, other_type))
    sections = {s.name: s for s in ctx["targets"]}
    assert sections["distributed"].verdict == "PASS"
    assert sections["replicated"].verdict == "INVALID"
    assert sections["replicated"].where == "/srv/replicated (xfs)"


def test_a_case_whose_target_dir_is_another_targets_is_invalid(tmp_path):
    """Issue 49: one measurement signed off both targets; the replicated target's
    IORWriteBandwidth recorded the distributed target's directory."""
    def elsewhere(name, tc):
        if name == "replicated" and tc["name"].startswith("IORWriteBandwidth"):
            tc["target_dir"] = tc["target_dir"].replace(REPLICATED, MOUNT)
    ctx = context(per_target(elsewhere), two_targets(tmp_path))
    assert ctx["signoff"]["verdict"] == "NOT ACCEPTED"
    sections = {s.name: s for s in ctx["targets"]}
    assert sections["distributed"].verdict == "PASS"
    assert any(b.startswith("IORWriteBandwidth %fs_target=replicated: INVALID (target_dir "
                            "'/mnt/fsaccept-gluster/fsaccept/IORWriteBandwidth.")
               and "is not below '/mnt/fsaccept-gluster-replicated/fsaccept', the data "
                   "directory of its target (fs_target replicated) (targets.replicated.path "
                   "'/mnt/fsaccept-gluster-replicated')" in b
               for b in ctx["signoff"]["blocking"]), ctx["signoff"]["blocking"]


def test_a_case_without_its_target_dir_is_missing_evidence(tmp_path):
    def unrecorded(name, tc):
        if name == "distributed" and tc["name"].startswith("MdtestEasy"):
            del tc["target_dir"]
    ctx = context(per_target(unrecorded), two_targets(tmp_path))
    assert any(b.startswith("MdtestEasy %fs_target=distributed: INVALID (evidence missing: "
                            "no target_dir") for b in ctx["signoff"]["blocking"])


@pytest.mark.parametrize("edit, message", [
    (lambda t: t.update(path=f"{MOUNT}/replicated", mount_point=MOUNT,
                        source="127.0.0.2:fsaccept"),
     "targets.replicated: the mount point '/mnt/fsaccept-gluster' and source "
     "'127.0.0.2:fsaccept' of targets.distributed too: two paths on one mount are one file "
     "system, and a test of one would sign off the other"),
    (lambda t: t.update(path=f"{MOUNT}/fsaccept/replicated", mount_point=MOUNT,
                        source="127.0.0.2:fsaccept"),
     "targets.replicated.path: '/mnt/fsaccept-gluster/fsaccept/replicated' is inside "
     "targets.distributed's data directory '/mnt/fsaccept-gluster/fsaccept', where its "
     "tests write"),
    (lambda t: [t.pop("mount_point"), t.pop("source"),
                t.update(path=f"{MOUNT}/fsaccept/replicated")],
     "targets.replicated.path: '/mnt/fsaccept-gluster/fsaccept/replicated' is inside "
     "targets.distributed's data directory"),
], ids=["one mount, two paths", "inside the other's fsaccept", "inside, mount unpinned"])
def test_two_targets_on_one_file_system_are_refused(tmp_path, edit, message):
    """Issue 49: both were "valid"; each is refused when the reference is checked."""
    from fsaccept.suite.reference import ReferenceError

    def on_one(name, target):
        if name == "replicated":
            edit(target)
    with pytest.raises(ReferenceError) as err:
        two_targets(tmp_path, on_one)
    assert message in str(err.value) and "two.yaml" in str(err.value), str(err.value)
