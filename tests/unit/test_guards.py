from pathlib import Path

import pytest

from fsaccept.guards import (GuardError, check_capacity, check_target, filesystem_type,
                             planned_volume)

GIB = 2**30


def test_target_on_the_expected_file_system_passes(tmp_path):
    fstype = filesystem_type(tmp_path)
    assert check_target(tmp_path, fstype, Path("ref.yaml")) == fstype


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
