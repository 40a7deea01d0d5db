import json
import os
from pathlib import Path

import pytest

from fsaccept.core.guards import (GuardError, KeptData, KeptDataset, bytes_used, check_capacity,
                             check_path_text, check_target, filesystem_type, mount_of,
                             planned_volume)
from fsaccept.suite.owned import owner_marker, record_owned, remove_owned, run_pid, sweep_owned

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


def test_data_a_running_job_may_write_counts_whole_and_its_files_are_not_walked(tmp_path):
    # ReFrame submits the next job while one runs: the running job's data may still grow.
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "testfile").write_bytes(b"x" * 2**20)
    held = KeptData()
    held.running(KeptDataset("IORWriteBandwidth", str(tmp_path / "a"), "/t", 6 * GIB))
    [running] = held.on("/t")
    assert running.running
    walked = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("fsaccept.core.guards.bytes_used", lambda d: walked.append(d) or 0)
        check_capacity(Path("/t"), planned=4 * GIB, free=20 * GIB, max_fill_fraction=0.5,
                       kept=[running])
        with pytest.raises(GuardError) as err:
            check_capacity(Path("/t"), planned=5 * GIB, free=20 * GIB, max_fill_fraction=0.5,
                           kept=[running])
    assert walked == []
    assert ("keeps up to 6.00 GiB of datasets for later reads or still being written "
            "(IORWriteBandwidth 6.00 GiB (its job may still be writing))") in str(err.value)


def test_a_kept_dataset_whose_job_ended_stays_kept_and_other_data_is_let_go():
    held = KeptData()
    dataset = KeptDataset("IORReadDatasetGeneration", "/t/fsaccept/D.run", "/t", GIB)
    write = KeptDataset("IORWriteBandwidth", "/t/fsaccept/W.run", "/t", GIB)
    held.keep(dataset)
    held.running(dataset)
    held.running(write)
    assert sorted((d.name, d.running) for d in held.on("/t")) == [
        ("IORReadDatasetGeneration", True), ("IORWriteBandwidth", True)]
    held.ended(dataset.directory)
    held.ended(write.directory)
    assert held.on("/t") == [dataset]
    held.running(dataset)
    held.release(dataset.directory)
    assert held.on("/t") == []


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
    (theirs / "data").write_text("x")
    kept = remove_owned(str(theirs), "run1")
    assert kept.status == "not ours" and not kept and theirs.is_dir()
    assert kept.left == (f"{theirs}: 2 files left alone: it holds no owner marker of this "
                         f"run (no {owner_marker('run1')})")
    assert remove_owned(str(mine), "run1") and not mine.exists()
    assert remove_owned(str(tmp_path / "absent"), "run1").status == "absent"


def _tree(directory, run_id, dirs=3, files=5):
    directory.mkdir()
    (directory / owner_marker(run_id)).write_text("")
    for d in range(dirs):
        (directory / f"n{d}").mkdir()
        for f in range(files):
            (directory / f"n{d}" / f"file.{f}").write_text("x")
    return directory


def _at(name, dir_fd):
    """The path of ``name`` in the directory ``dir_fd`` (the removal works by descriptor)."""
    return os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), name)


def test_removal_deletes_the_owner_marker_last(tmp_path, monkeypatch):
    data = _tree(tmp_path / "d", "run1")
    order = []
    real_unlink, real_rmdir = os.unlink, os.rmdir
    monkeypatch.setattr(os, "unlink", lambda p, dir_fd: (order.append(_at(p, dir_fd)),
                                                         real_unlink(p, dir_fd=dir_fd)))
    monkeypatch.setattr(os, "rmdir", lambda p, dir_fd: (order.append(_at(p, dir_fd)),
                                                        real_rmdir(p, dir_fd=dir_fd)))
    assert remove_owned(str(data), "run1").status == "removed"
    assert order[-2:] == [str(data / owner_marker("run1")), str(data)]
    assert len(order) == 3 * 5 + 3 + 2 and not data.exists()


def test_a_removal_cut_short_keeps_the_marker_and_can_be_resumed(tmp_path, monkeypatch):
    # Cut after 7 unlinks (a time limit): the marker survives, the rest is counted,
    # and a second call (the sanity stage, the next session) finishes the job.
    data = _tree(tmp_path / "d", "run1")
    real_unlink, calls = os.unlink, []

    def unlink(p, dir_fd):
        calls.append(p)
        if len(calls) > 7:
            raise OSError(5, "Input/output error", str(p))
        real_unlink(p, dir_fd=dir_fd)
    monkeypatch.setattr(os, "unlink", unlink)
    cut = remove_owned(str(data), "run1")
    assert cut.status == "incomplete" and (data / owner_marker("run1")).is_file()
    assert cut.files_left == 15 - 7
    assert cut.left.startswith(f"{data}: 8 files could not be removed (")
    assert "Input/output error" in cut.left
    monkeypatch.setattr(os, "unlink", real_unlink)
    assert remove_owned(str(data), "run1").status == "removed" and not data.exists()


def test_removal_never_follows_a_symbolic_link(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious").write_text("keep")
    data = _tree(tmp_path / "d", "run1", dirs=1, files=1)
    (data / "link").symlink_to(outside)
    (data / "n0" / "flink").symlink_to(outside / "precious")
    assert remove_owned(str(data), "run1").status == "removed"
    assert (outside / "precious").read_text() == "keep"
    # A data directory that is itself a link is never ours.
    link = tmp_path / "dlink"
    link.symlink_to(_tree(tmp_path / "real", "run1"))
    assert remove_owned(str(link), "run1").status == "not ours"
    assert (tmp_path / "real" / owner_marker("run1")).is_file()


def test_a_file_that_appears_during_the_removal_keeps_the_marker(tmp_path, monkeypatch):
    data = _tree(tmp_path / "d", "run1", dirs=1, files=1)
    real_listdir = os.listdir

    def listdir(p):
        (data / "late").write_text("x")  # a straggler written after the walk
        return real_listdir(p)
    monkeypatch.setattr(os, "listdir", listdir)
    r = remove_owned(str(data), "run1")
    assert r.status == "incomplete" and r.files_left == 1
    assert (data / owner_marker("run1")).is_file() and "appeared during the removal" in r.why


def _ledger_case(tmp_path):
    root = tmp_path / "target" / "fsaccept"
    root.mkdir(parents=True)
    ledger = tmp_path / "ledger"
    return root, ledger


def test_the_sweep_resumes_only_recorded_directories_of_ended_runs(tmp_path):
    root, ledger = _ledger_case(tmp_path)
    old = _tree(root / "FioMetadata.old-1", "old-1")
    running = _tree(root / "FioMetadata.live-2", "live-2")
    unrecorded = _tree(root / "IOR.old-1", "old-1")     # its marker, but not in the ledger
    markerless = root / "Mdtest.old-1"
    markerless.mkdir()
    (markerless / "f").write_text("x")                  # recorded, but no marker: not ours
    elsewhere = _tree(tmp_path / "notfsaccept.old-1", "old-1")  # not below fsaccept/
    job_running = _tree(root / "IORRead.old-3", "old-3")
    for d in (old, markerless, elsewhere):
        record_owned(ledger, "old-1", str(d), "11", "h1")
    record_owned(ledger, "live-2", str(running), "12", "h1")
    record_owned(ledger, "old-3", str(job_running), "13", "h1")
    record_owned(ledger, "other-4", str(_tree(root / "X.other-4", "other-4")), "14", "h2")
    done = sweep_owned(ledger, "now-9", "h1", run_ended=lambda r: r != "live-2",
                       job_ended=lambda j: j != "13")
    assert not old.exists()
    assert running.is_dir() and unrecorded.is_dir() and elsewhere.is_dir()
    assert job_running.is_dir() and (root / "X.other-4").is_dir()
    assert (markerless / "f").is_file()
    assert sorted((r.directory, r.status) for r in done) == [
        (str(old), "removed"), (str(markerless), "not ours")]
    # Settled entries are dropped; those of runs or jobs still going stay.
    assert sorted(p.name for p in ledger.iterdir()) == [
        "live-2.jsonl", "old-3.jsonl", "other-4.jsonl"]
    [resumed] = sweep_owned(ledger, "now-9", "h1", run_ended=lambda r: r != "live-2",
                            job_ended=lambda j: True)
    assert resumed.directory == str(job_running) and not job_running.exists()
    assert running.is_dir()


def test_the_sweep_ignores_a_ledger_it_cannot_read(tmp_path):
    root, ledger = _ledger_case(tmp_path)
    d = _tree(root / "T.old-1", "old-1")
    ledger.mkdir()
    (ledger / "old-1.jsonl").write_text(json.dumps({"directory": str(d)}) + "\n{broken")
    assert sweep_owned(ledger, "now", "h1", lambda r: True, lambda j: True) == []
    assert d.is_dir() and (ledger / "old-1.jsonl").exists()


def test_run_pid_reads_the_run_id():
    assert run_pid("20261123T101500-4242") == 4242 and run_pid("x") is None



def test_two_targets_on_one_mount_are_refused_before_any_job(tmp_path):
    """Issue 49: two targets of one reference file, two paths on this host's one mount
    (findmnt's real answer): one file system, so the first target's guard refuses."""
    from fsaccept.core.guards import check_own_file_system
    scratch, home = tmp_path / "scratch", tmp_path / "home"
    scratch.mkdir()
    home.mkdir()
    mount = mount_of(scratch)
    ref = tmp_path / "two.yaml"
    with pytest.raises(GuardError) as err:
        check_own_file_system("targets.scratch", scratch, mount, ref,
                              [("targets.home", home, mount.fstype)])
    assert str(err.value) == (
        f"{ref}: targets.scratch.path {str(scratch)!r} and targets.home.path {str(home)!r} "
        f"are on one mount here ({mount.target}, source {mount.source}): two paths on one "
        "mount are one file system, and a test of one would sign off the other")
    # Another target not mounted here as its type, or not there at all: its own guard's.
    check_own_file_system("targets.scratch", scratch, mount, ref,
                          [("targets.home", home, "lustre"),
                           ("targets.work", tmp_path / "absent", mount.fstype)])
