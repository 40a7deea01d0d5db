"""Several file systems in one reference file: ``targets:`` (docs/user/reference-file.md)."""

import copy
import json

import pytest
import yaml

from fsaccept.cli import main
from fsaccept.suite.reference import REFERENCE_DIR, ReferenceError, load_reference


def write(tmp_path, data, name="sys.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.fixture
def two():
    """reference/local.yaml's target and tests as two named targets, scratch and home
    (home with one test of its own)."""
    data = yaml.safe_load((REFERENCE_DIR / "local.yaml").read_text())
    target, tests = data.pop("target"), data.pop("tests")
    for key in ("degraded", "sweeps", "nightly"):
        data.pop(key, None)
    data["targets"] = {
        "scratch": {**target, "tests": tests},
        "home": {**target, "path": "/var/tmp/home", "max_fill_fraction": 0.2,
                 "tests": {"ior_write_bandwidth": copy.deepcopy(tests["ior_write_bandwidth"])}}}
    return data


def refused(tmp_path, data):
    with pytest.raises(ReferenceError) as err:
        load_reference(write(tmp_path, data))
    return str(err.value)


def test_each_target_has_its_own_keys_and_tests(tmp_path, two):
    ref = load_reference(write(tmp_path, two))
    assert ref.target_names == ("scratch", "home") and ref.named_targets
    home = ref.for_target("home")
    assert str(home.target_path) == "/var/tmp/home" and home.max_fill_fraction == 0.2
    assert list(home.entries) == ["ior_write_bandwidth"]
    assert len(ref.for_target("scratch").entries) > 1


def test_a_single_target_is_selected_and_unnamed():
    ref = load_reference(REFERENCE_DIR / "local.yaml")
    assert ref.target_names == ("",) and not ref.named_targets
    assert ref.target.where == "target" and ref.target.tests_where == "tests"


def test_a_use_that_needs_one_target_says_so(tmp_path, two):
    ref = load_reference(write(tmp_path, two))
    with pytest.raises(ReferenceError, match=r"targets: the file names several file systems "
                                             r"\(scratch, home\): this use needs one"):
        ref.target_path
    with pytest.raises(ReferenceError, match=r"targets.work: no such target \(the file has: "
                                             r"scratch, home\)"):
        ref.for_target("work")
    with pytest.raises(ReferenceError, match=r"targets.home.tests.mdtest_easy: missing"):
        ref.for_target("home").entry("mdtest_easy")


@pytest.mark.parametrize("edit, message", [
    (lambda d: d["targets"].update(Home=d["targets"].pop("home")),
     "targets: target name 'Home' is not an identifier"),
    (lambda d: d["targets"]["home"].update(colour="red"),
     "targets.home: unknown key(s) 'colour'; allowed: dedicated, fstype, "
     "max_bandwidth_mib_s, max_fill_fraction, mount_options, mount_point, path, source, "
     "tests"),
    (lambda d: d["targets"]["home"].pop("tests"), "targets.home: 'tests' is a required property"),
    (lambda d: d["targets"]["home"].pop("fstype"),
     "targets.home: 'fstype' is a required property"),
    (lambda d: d["targets"]["home"].update(path="var/tmp"),
     "targets.home.path: 'var/tmp' is not an absolute path"),
    (lambda d: d["targets"]["home"].update(mount_point="/srv"),
     "targets.home.path: '/var/tmp/home' is not below targets.home.mount_point '/srv'"),
    (lambda d: d["targets"]["home"]["tests"]["ior_write_bandwidth"].update(block_size="1536KiB"),
     "targets.home.tests.ior_write_bandwidth.block_size: 1536KiB is not a multiple of "
     "transfer_size 1MiB"),
    (lambda d: d["targets"]["home"]["tests"]["ior_write_bandwidth"].update(block_size="2TiB"),
     "targets.home.tests.ior_write_bandwidth.block_size: '2TiB' is more than 1TiB"),
    (lambda d: d["targets"]["home"]["tests"].update(mdtest_eazy={}),
     "targets.home.tests: unknown key(s) 'mdtest_eazy'"),
    (lambda d: d["targets"]["home"].update(path="/var/tmp/"),
     "targets.home.path: '/var/tmp' is targets.scratch.path too: each target is a file "
     "system of its own"),
    (lambda d: d.update(target={"path": "/var/tmp", "fstype": "ext4"}),
     "target: not allowed beside targets:"),
    (lambda d: d.update(tests={}), "tests: not allowed beside targets:"),
    (lambda d: d.update(targets={}), "targets: {} should be non-empty"),
    (lambda d: d.update(degraded={"fraction": 0.5, "tests": {"ior_write_bandwidth": None},
                                  "max_recovery_s": 60}),
     "degraded: not yet possible with targets:"),
    (lambda d: d.update(sweeps={}), "sweeps: not yet possible with targets:"),
    (lambda d: d.update(nightly={"tests": {"io500": {}}}),
     "nightly.tests.io500: no such test under any target's tests:"),
    (lambda d: d.update(nightly={"tests": {"ior_write_bandwidth": {"block_size": "1536KiB"}}}),
     "nightly.tests: the test entries with the nightly values are not valid: "
     "targets.home.tests.ior_write_bandwidth.block_size: 1536KiB is not a multiple"),
])
def test_each_target_is_validated_as_the_single_form_is(tmp_path, two, edit, message):
    edit(two)
    assert message in refused(tmp_path, two)


def test_a_target_with_neither_form_is_refused_as_today(tmp_path, two):
    del two["targets"]
    assert "(top level): 'target' is a required property" in refused(tmp_path, two)


def test_nightly_sizes_apply_to_every_target_with_the_test(tmp_path, two):
    from fsaccept.suite.reference import nightly_merged
    two["nightly"] = {"tests": {"ior_write_bandwidth": {"segments": 2}}}
    merged = nightly_merged(load_reference(write(tmp_path, two)).data)
    assert {n: t["tests"]["ior_write_bandwidth"]["segments"]
            for n, t in merged["targets"].items()} == {"scratch": 2, "home": 2}


def test_the_command_validates_and_selects_a_target(tmp_path, two, capsys):
    path = write(tmp_path, two)
    assert main(["reference", str(path)]) == 0
    assert capsys.readouterr().out == f"{path}: valid\n"
    assert main(["reference", str(path), "--get", "targets.home.path"]) == 0
    assert capsys.readouterr().out == "/var/tmp/home\n"
    assert main(["reference", str(path), "--target", "work", "--scaling-checks"]) == 2
    assert "targets.work: no such target" in capsys.readouterr().err
    assert main(["reference", str(path), "--io500-dry-run"]) == 2
    assert "this use needs one of them" in capsys.readouterr().err
    two["targets"]["home"]["tests"]["ior_write_bandwidth"]["node_fraction"] = 2
    assert main(["reference", str(write(tmp_path, two))]) == 2
    assert "targets.home.tests.ior_write_bandwidth.node_fraction" in capsys.readouterr().err


def test_the_schema_composes_a_named_target_from_the_single_one():
    from fsaccept.suite.reference import _schemas
    main_schema = _schemas()["reference.schema.json"]
    named = main_schema["$defs"]["named_target"]
    assert set(named["properties"]) == set(main_schema["$defs"]["target"]["properties"]) | {
        "tests"}
    json.dumps(main_schema)  # still a JSON document


def test_the_command_says_whether_any_target_has_a_test(tmp_path, two):
    path = write(tmp_path, two)
    assert main(["reference", str(path), "--has-test", "mdtest_easy"]) == 0
    assert main(["reference", str(path), "--has-test", "io500"]) == 1
    two["targets"]["home"]["tests"]["io500"] = yaml.safe_load(
        (REFERENCE_DIR / "example-lustre.yaml").read_text())["tests"]["io500"]
    assert main(["reference", str(write(tmp_path, two)), "--has-test", "io500"]) == 0
    assert main(["reference", str(REFERENCE_DIR / "local.yaml"), "--has-test",
                 "ior_write_bandwidth"]) == 0


def test_the_command_prints_each_targets_path(tmp_path, two, capsys):
    assert main(["reference", str(write(tmp_path, two)), "--paths"]) == 0
    assert capsys.readouterr().out == "/var/tmp\n/var/tmp/home\n"
    assert main(["reference", str(REFERENCE_DIR / "local.yaml"), "--paths"]) == 0
    assert capsys.readouterr().out == "/var/tmp\n"


def test_a_captured_run_is_judged_by_one_targets_entry(tmp_path, two, capsys):
    """``fsaccept parse ior LOG --reference FILE --target NAME --test KEY``."""
    log = REFERENCE_DIR.parent / "tests" / "data" / "ior" / "write-stonewall-wearout.txt"
    two["targets"]["home"]["tests"]["ior_write_bandwidth"].update(
        ranks_per_node=4, transfer_size="1MiB", block_size="1MiB", deadline_s=3,
        data_pattern="timestamp", threshold={"value": 1, "unit": "MiB/s"})
    path = write(tmp_path, two)
    argv = ["parse", "ior", str(log), "--reference", str(path), "--test",
            "ior_write_bandwidth"]
    assert main(argv + ["--target", "home"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "PASS"
    assert main(argv) == 2
    assert "this use names none" in capsys.readouterr().err


def test_the_labs_session_over_its_file_systems_has_a_probe_per_real_file_system():
    """reference/local-gluster-cephfs.yaml (system local-gluster-cephfs): the GlusterFS
    volume, the CephFS and the local disk, each target asked by its own file system's
    server probe (the local disk by none)."""
    from fsaccept.core import servers
    ref = load_reference(REFERENCE_DIR / "local-gluster-cephfs.yaml")
    assert ref.system == "local-gluster-cephfs"
    probes = {t.name: servers.describe(servers.probe_for(t.fstype)) for t in ref.targets}
    assert probes == {"gluster": "GlusterFS", "cephfs": "CephFS", "local_disk": ""}
    three = {"ior_write_bandwidth", "ior_read_bandwidth", "mdtest_easy"}
    tests = {t.name: set(t.entries) for t in ref.targets}
    assert tests["cephfs"] == tests["local_disk"] == three < tests["gluster"]


def test_the_command_checks_each_target_where_the_file_says_before_a_session(
        tmp_path, two, capsys):
    """``--check-targets``: the tests' own guard, here, before any job (scripts/acceptance):
    a target that is not there, or on another file system type than the file says (the
    lab's volume mounted elsewhere for another port base), is named, exit 2."""
    from fsaccept.core.guards import mount_of
    scratch, home = tmp_path / "scratch", tmp_path / "home"
    scratch.mkdir()
    fstype = mount_of(scratch).fstype
    two["targets"]["scratch"].update(path=str(scratch), fstype=fstype)
    two["targets"]["home"].update(path=str(home), fstype=fstype)
    two["targets"]["scratch"].pop("mount_point", None)
    two["targets"]["home"].pop("mount_point", None)
    path = write(tmp_path, two)
    assert main(["reference", str(path), "--check-targets"]) == 2
    err = capsys.readouterr().err
    assert f"targets.home: target {home} (from {path}) does not exist" in err
    assert "targets.scratch" not in err
    home.mkdir()
    assert main(["reference", str(path), "--check-targets"]) == 0
    two["targets"]["home"]["fstype"] = "fuse.glusterfs"
    path = write(tmp_path, two)
    assert main(["reference", str(path), "--check-targets"]) == 2
    assert (f"targets.home: target {home} (from {path}) is on a {fstype} file system, but "
            "the reference file expects fuse.glusterfs") in capsys.readouterr().err
