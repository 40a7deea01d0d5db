from pathlib import Path

import pytest

from fsaccept.core.guards import (GuardError, KeptData, KeptDataset, bytes_used, check_capacity,
                             check_path_text, check_target, filesystem_type, mount_of,
                             owner_marker, planned_volume, remove_owned)

GIB = 2**30


def test_target_on_the_expected_file_system_passes(tmp_path):
    fstype = filesystem_type(tmp_path)
    assert check_target(tmp_path, fstype, Path("ref.yaml")).fstype == fstype


def test_missing_target_is_refused_naming_it_and_the_reference(tmp_path):
    with pytest.raises(GuardError, match=f"target {tmp_path}/nope \\(from ref.yaml\\) does not exist"):
        check_target(tmp_path / "nope", "ext4", Path("ref.yaml"))


def test_a_file_is_not_a_target(tmp_path):
    (tmp_path / "f").write_text("")
    with pytest.raises(GuardError, match="is not a directory"):
        check_target(tmp_path / "f", "ext4", Path("ref.yaml"))


def test_wrong_file_system_type_names_both(tmp_path):
    found = filesystem_type(tmp_path)
    with pytest.raises(GuardError, match=f"is on a {found} file system, but the reference file "
                                         "expects lustre: wrong directory or wrong mount"):
        check_target(tmp_path, "lustre", Path("ref.yaml"))


def test_planned_volume_is_bounded_by_deadline_times_declared_bandwidth():
    assert planned_volume(16 * GIB) == 16 * GIB
    assert planned_volume(16 * GIB, deadline_s=2, max_bandwidth_mib_s=4096) == 8 * GIB
    assert planned_volume(GIB, deadline_s=60, max_bandwidth_mib_s=4096) == GIB


def test_capacity_guard_prints_both_numbers():
    check_capacity(Path("/t"), planned=10 * GIB, free=20 * GIB, max_fill_fraction=0.5)
    with pytest.raises(GuardError) as err:
        check_capacity(Path("/t"), planned=11 * GIB, free=20 * GIB, max_fill_fraction=0.5)
    assert str(err.value).startswith(
        "target /t: the test plans to write up to 11.00 GiB, more than 0.5 of the 20.00 GiB "
        "free (10.00 GiB)")


def test_capacity_guard_counts_every_dataset_kept_for_a_later_read(tmp_path):
    # Each dataset alone fits in half the free space; both, with the test, do not.
    read = KeptDataset("IORReadDatasetGeneration", str(tmp_path / "a"), "/t", 6 * GIB)
    random = KeptDataset("IORRandomReadDatasetGeneration", str(tmp_path / "b"), "/t", 3 * GIB)
    check_capacity(Path("/t"), planned=4 * GIB, free=20 * GIB, max_fill_fraction=0.5,
                   kept=[read])
    with pytest.raises(GuardError) as err:
        check_capacity(Path("/t"), planned=4 * GIB, free=20 * GIB, max_fill_fraction=0.5,
                       kept=[read, random])
    assert str(err.value).startswith(
        "target /t: the test plans to write up to 4.00 GiB while this run keeps up to 9.00 GiB "
        "of datasets for later reads (IORReadDatasetGeneration 6.00 GiB, "
        "IORRandomReadDatasetGeneration 3.00 GiB): together more than 0.5 of the 20.00 GiB "
        "free before those datasets (10.00 GiB)")


def test_space_a_kept_dataset_already_holds_counts_as_free_for_it(tmp_path):
    # Written already: the free space has shrunk by what it holds, which is its own.
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "testfile").write_bytes(b"x" * 2**20)
    held = bytes_used(str(tmp_path / "a"))
    assert held >= 2**20
    kept = KeptDataset("D", str(tmp_path / "a"), "/t", 2**20)
    # 1 MiB kept + 1 MiB planned fit in half of (free + what it holds), not of free alone.
    check_capacity(Path("/t"), planned=2**20, free=4 * 2**20 - held, max_fill_fraction=0.5,
                   kept=[kept])
    assert bytes_used(str(tmp_path / "absent")) == 0


def test_kept_data_counts_datasets_on_the_same_mount_until_released():
    kept = KeptData()
    a = KeptDataset("A", "/t/fsaccept/A.run", "/t", GIB)
    b = KeptDataset("B", "/u/fsaccept/B.run", "/u", GIB)
    kept.keep(a)
    kept.keep(b)
    assert kept.on("/t") == [a] and kept.on("/u") == [b]
    assert kept.on("/t", excluding="/t/fsaccept/A.run") == []
    kept.release("/t/fsaccept/A.run")
    kept.release("/t/fsaccept/never-kept")
    assert kept.on("/t") == []


@pytest.mark.parametrize("path, message", [
    ("relative/dir", "'relative/dir' is not an absolute path"),
    ("/x/a\nb", "holds control characters \\('\\\\n'\\)"),
    ("/x/tab\there", "holds control characters"),
    ("/x/a:b", "holds ':': fio splits"),
])
def test_unsafe_target_paths_are_refused(path, message):
    with pytest.raises(GuardError, match=message):
        check_path_text(path, "target", {":": "fio splits directory= on ':'"})


def test_spaces_quotes_and_shell_characters_are_allowed_they_are_quoted():
    check_path_text("/x/tgt dir;$(touch pwned)'q\"", "target", {":": "fio"})


def test_a_pinned_mount_point_or_source_tells_same_type_file_systems_apart(tmp_path):
    mount = mount_of(tmp_path)
    assert check_target(tmp_path, mount.fstype, Path("r.yaml"), mount_point=mount.target,
                        source=mount.source) == mount
    with pytest.raises(GuardError, match=f"is on the mount {mount.target}, but the reference "
                                         "file pins target.mount_point /scratch"):
        check_target(tmp_path, mount.fstype, Path("r.yaml"), mount_point="/scratch")
    with pytest.raises(GuardError, match="but the reference file pins target.source "
                                         "scratchfs"):
        check_target(tmp_path, mount.fstype, Path("r.yaml"), source="scratchfs")


def test_a_symlink_under_the_target_to_another_file_system_is_refused(tmp_path):
    # /dev/shm is a tmpfs: another file system than the target's.
    (tmp_path / "fsaccept").symlink_to("/dev/shm")
    mount = mount_of(tmp_path)
    with pytest.raises(GuardError, match=r"fsaccept resolves to /dev/shm on /dev/shm \(tmpfs\)"
                                         r", not on the target's mount"):
        check_target(tmp_path, mount.fstype, Path("r.yaml"))


def test_cleanup_removes_only_a_directory_this_run_created(tmp_path):
    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    mine.mkdir()
    (mine / owner_marker("run1")).write_text("")
    theirs.mkdir()
    (theirs / owner_marker("run0")).write_text("")
    assert not remove_owned(str(theirs), "run1") and theirs.is_dir()
    assert remove_owned(str(mine), "run1") and not mine.exists()
    assert not remove_owned(str(tmp_path / "absent"), "run1")


def test_removal_problem_removes_this_runs_directory_marker_last(tmp_path):
    from fsaccept.core.guards import removal_problem
    mine = tmp_path / "mine"
    (mine / "sub").mkdir(parents=True)
    (mine / owner_marker("run1")).touch()
    (mine / "sub" / "f").write_text("x")
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    assert removal_problem(str(mine), "run1") == "" and not mine.exists()
    assert removal_problem(str(theirs), "run1") == "" and theirs.is_dir()
    assert removal_problem(str(tmp_path / "absent"), "run1") == ""


def test_removal_problem_says_what_it_left_and_keeps_the_marker(tmp_path, monkeypatch):
    import fsaccept.core.guards as guards
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / owner_marker("run1")).touch()
    (mine / "data").write_text("x")
    real_unlink = guards.os.unlink

    def unlink(path, *a, **kw):  # a storage server down: the data file is out of reach
        if str(path).endswith("data"):
            raise OSError(107, "Transport endpoint is not connected")
        return real_unlink(path, *a, **kw)

    monkeypatch.setattr(guards.os, "unlink", unlink)
    said = guards.removal_problem(str(mine), "run1")
    assert said == (f"could not remove {mine} (2 entries left; {mine / 'data'}: "
                    "Transport endpoint is not connected)")
    assert (mine / owner_marker("run1")).exists()  # a later cleanup can resume
