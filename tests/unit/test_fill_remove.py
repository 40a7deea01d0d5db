"""``fsaccept fill remove`` against a hostile run directory (issue 49, classes 1 and 9):
a directory swapped for a symbolic link while the removal runs, a record whose run id
is a path (the planted-marker attack), records and ledgers that are no records, a FIFO,
two removals of one run at once, a directory already gone.  Each run directory is the
one ``test_fill_check`` builds as the fill check writes it: the filler's directory with a
directory per node, each with the run's marker, its two records and its ledger line."""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path

import pytest

from fsaccept import cli
from fsaccept.suite import fillrun, owned
from tests.unit.test_fill_check import RUN, _run_dir


def _others(where: Path) -> dict[Path, bytes]:
    """A directory of other people's files: ``0/`` as a node's batch is, and more."""
    files = {where / "0" / "thesis.tex": b"years of work", where / "0" / "1": b"data",
             where / "notes.txt": b"keep me"}
    for path, data in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return files


def _survive(files: dict[Path, bytes]) -> None:
    for path, data in files.items():
        assert path.read_bytes() == data, path


def _listed_dir(arg) -> str:
    """The directory an ``os.scandir`` call lists (a path, or a descriptor's)."""
    if isinstance(arg, int):
        return os.readlink(f"/proc/self/fd/{arg}")
    return os.path.abspath(os.fspath(arg))


class _Listing:
    """What a hooked ``os.scandir`` returns: its entries, already read (an iterator and a
    context manager, as ``os.scandir``'s)."""

    def __init__(self, entries):
        self._entries = iter(entries)

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._entries)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def close(self):
        pass


def _after_listing(monkeypatch, directory: Path, then) -> None:
    """Run ``then()`` once, right after ``directory`` is first listed (the entries are
    read before it, as a removal racing another process sees them)."""
    real, done = os.scandir, []

    def scandir(arg="."):
        if done or _listed_dir(arg) != str(directory):
            return real(arg)
        done.append(1)
        with real(arg) as it:
            entries = list(it)
        for e in entries:  # each entry's type read while it is still the directory
            e.is_dir(follow_symlinks=False), e.is_symlink()
        then()
        return _Listing(entries)
    monkeypatch.setattr(os, "scandir", scandir)


def _remove(run_dir, book, said, **kw) -> int:
    return fillrun.remove_fills(run_dir, ledger=book, host="login1", say=said.append,
                                ended=lambda jobid: True, **kw)


# --------------------------------------------------------------------------- class 1


def test_a_directory_swapped_for_a_link_during_the_removal_is_never_followed(
        tmp_path, monkeypatch):
    run_dir, top, book = _run_dir(tmp_path)
    theirs = _others(tmp_path / "shared")
    node = top / "n1"

    def swap():  # n1/16384B, listed as a directory, becomes a link to their files
        (node / "16384B").rename(tmp_path / "moved-aside")
        (node / "16384B").symlink_to(tmp_path / "shared")
    _after_listing(monkeypatch, node, swap)
    said: list[str] = []
    assert _remove(run_dir, book, said) == 0, said
    _survive(theirs)
    # The link itself went with the node's directory, never what it points at.
    assert not top.exists() and said == [f"fill remove: {top}: removed (4 node directories)"]


def test_the_fills_directory_swapped_for_a_link_is_left_alone(tmp_path):
    # Its node directories are recorded, marked and listed through the link: the
    # directory, after realpath, is no test's directory.
    run_dir, top, book = _run_dir(tmp_path)
    shared = tmp_path / "shared"
    theirs = _others(shared / "n1")
    (shared / "n1" / owned.owner_marker(RUN)).touch()
    (shared / owned.owner_marker(RUN)).touch()
    top.rename(tmp_path / "moved-aside")
    top.symlink_to(shared)
    said: list[str] = []
    assert _remove(run_dir, book, said) == 1
    _survive(theirs)
    assert top.is_symlink() and said == [
        f"fill remove: {top}: left alone: it resolves to {shared}, not to a test's "
        "directory below a fsaccept directory"]


def test_the_planted_marker_attack_deletes_nothing(tmp_path):
    # A record whose run id is a path: "the ledger" is then a file the attacker wrote,
    # naming a shared directory, and the "marker" a file planted in it.
    run_dir, top, book = _run_dir(tmp_path)
    shared = tmp_path / "shared" / "fsaccept" / "groupdata"
    theirs = _others(shared)
    evil = tmp_path / "evil" / "ledger"
    evil.parent.mkdir()
    evil.with_suffix(".jsonl").write_text(json.dumps(
        {"directory": str(shared), "jobid": "", "host": "login1"}) + "\n")
    planted = shared / owned.owner_marker(str(evil))
    planted.parent.mkdir(parents=True)
    planted.touch()
    record = run_dir / "stage" / "lab" / "compute" / "openmpi" / "FillTarget2" / fillrun.RECORD
    record.parent.mkdir(parents=True)
    record.write_text(json.dumps({"version": fillrun.RECORD_VERSION, "directory": str(shared),
                                  "run_id": str(evil), "host": "login1", "jobid": ""}))
    said: list[str] = []
    rc = _remove(run_dir, book, said)
    _survive(theirs)
    assert rc == 2 and planted.is_file()
    assert said == [
        f"fill remove: a record refused: {record}: key run_id: {str(evil)!r} is not a run "
        "id of this harness (such as 20261127T120000-4242): refused, nothing removed",
        # The run's own record is not held back by the other.
        f"fill remove: {top}: removed (4 node directories)"]


@pytest.mark.parametrize("key, value", [
    ("run_id", "../../../shared"), ("run_id", "a/b"), ("run_id", "20261127T120000-42\0"),
    ("run_id", "20261127T120000-4242\n"), ("run_id", ""), ("run_id", 4242),
    ("directory", "target/fsaccept/FillTarget." + RUN),
    ("directory", "/t/fsaccept/../../shared/fsaccept/FillTarget." + RUN),
    ("directory", "/t/fsaccept/FillTarget.\0" + RUN), ("directory", "/t/fsaccept/shared"),
    ("jobid", "--me"), ("host", "login1\nlogin2"),
])
def test_a_record_not_of_this_harness_is_refused_naming_its_file_and_key(
        tmp_path, capsys, key, value):
    run_dir, top, book = _run_dir(tmp_path)
    for record in run_dir.glob(fillrun.RECORD_GLOB):
        data = json.loads(record.read_text())
        record.write_text(json.dumps({**data, key: value}))
    before = sorted(top.rglob("*"))
    assert cli.main(["fill", "remove", str(run_dir)]) == 2
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 and all(line.startswith("fill remove: a record refused: ")
                                 and f"fill-target.json: key {key}: {value!r} is not " in line
                                 and line.endswith(": refused, nothing removed")
                                 for line in out), out
    assert sorted(top.rglob("*")) == before  # nothing removed


# --------------------------------------------------------------------------- class 9


def test_a_corrupt_record_beside_the_real_one_is_said_and_the_filler_still_removed(tmp_path):
    run_dir, top, book = _run_dir(tmp_path)
    bad = run_dir / "output" / "lab" / "compute" / "openmpi" / "Other" / fillrun.RECORD
    bad.parent.mkdir(parents=True)
    bad.write_text("[" * 30_000 + "]" * 30_000)
    said: list[str] = []
    assert _remove(run_dir, book, said) == 2
    assert not top.exists() and said == [
        f"fill remove: a record refused: {bad}: nested too deeply: not a fill record",
        f"fill remove: {top}: removed (4 node directories)"]


def _not_hanging(fifo: Path, call) -> object:
    """``call()``'s result; the test fails (and the FIFO's reader is let go: a writer
    that writes nothing) when it still waits after 10 s."""
    result: list[object] = []
    worker = threading.Thread(target=lambda: result.append(call()), daemon=True)
    worker.start()
    worker.join(10)
    hung = worker.is_alive()
    if hung:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(10)
    assert not hung, "fill remove waited on a FIFO"
    return result[0]


def test_a_fifo_named_as_the_record_is_refused_at_once(tmp_path):
    run_dir, top, book = _run_dir(tmp_path)
    fifo = run_dir / "stage" / "lab" / "compute" / "openmpi" / "Other" / fillrun.RECORD
    fifo.parent.mkdir(parents=True)
    os.mkfifo(fifo)
    said: list[str] = []
    assert _not_hanging(fifo, lambda: _remove(run_dir, book, said)) == 2
    assert not top.exists()
    assert said[0] == (f"fill remove: a record refused: {fifo}: a FIFO (named pipe), not a "
                       "regular file: refused as a fill record")


def test_a_fifo_as_the_ledger_is_refused_at_once(tmp_path):
    run_dir, top, book = _run_dir(tmp_path, ledger=False)
    book.mkdir()
    os.mkfifo(book / f"{RUN}.jsonl")
    said: list[str] = []
    assert _not_hanging(book / f"{RUN}.jsonl", lambda: _remove(run_dir, book, said)) == 1
    assert top.exists() and said == [
        f"fill remove: {top}: left alone: the owned-data ledger cannot be read: "
        f"{book / (RUN + '.jsonl')}: a FIFO (named pipe), not a regular file: refused as the "
        "owned-data ledger"]


def test_two_removals_of_one_run_at_once_one_removes_the_other_waits(tmp_path):
    run_dir, top, book = _run_dir(tmp_path)
    both = threading.Condition()
    seen = {"ended": 0, "waiting": False}

    def ended(jobid):  # the job's end, once both removals have got this far
        with both:
            seen["ended"] += 1
            both.notify_all()
            both.wait_for(lambda: seen["ended"] >= 2 or seen["waiting"], timeout=5)
        return True

    def say(said):
        def add(line):
            said.append(line)
            if line.endswith("waiting for it"):
                with both:
                    seen["waiting"] = True
                    both.notify_all()
        return add
    said1, said2, rcs = [], [], {}
    threads = [threading.Thread(target=lambda n=n, s=s: rcs.__setitem__(n, fillrun.remove_fills(
        run_dir, ledger=book, host="login1", say=say(s), ended=ended)))
        for n, s in ((1, said1), (2, said2))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert rcs == {1: 0, 2: 0}, (said1, said2)
    assert not top.exists()
    lines = sorted(said1 + said2)
    assert lines == sorted([
        f"fill remove: {top}: removed (4 node directories)",
        f"fill remove: {top}: another removal of run {RUN} is under way: waiting for it",
        f"fill remove: {top}: nothing there (removed already)"]), lines


def test_a_directory_gone_meanwhile_counts_as_gone(tmp_path, monkeypatch):
    # Another remover took n1/16384B between n1's listing and its own.
    run_dir, top, book = _run_dir(tmp_path)
    _after_listing(monkeypatch, top / "n1",
                   lambda: shutil.rmtree(top / "n1" / "16384B"))
    said: list[str] = []
    assert _remove(run_dir, book, said) == 0, said
    assert not top.exists() and said == [f"fill remove: {top}: removed (4 node directories)"]


# --------------------------------------------------------------------------- what it says
# scripts/acceptance says "the filler was not all removed" on exit 1 alone: exit 2 is a
# record refused, with nothing of the run left.


def _refused_record(run_dir: Path) -> Path:
    bad = run_dir / "output" / "lab" / "compute" / "openmpi" / "Other" / fillrun.RECORD
    bad.parent.mkdir(parents=True)
    bad.write_text(json.dumps({"version": fillrun.RECORD_VERSION, "run_id": "../x"}))
    return bad


def test_a_refused_record_with_nothing_of_the_run_left_is_exit_2(tmp_path):
    run_dir, top, book = _run_dir(tmp_path)
    shutil.rmtree(top)  # the filler never ran (its job refused before writing)
    _refused_record(run_dir)
    said: list[str] = []
    assert _remove(run_dir, book, said) == 2
    assert said[0].startswith("fill remove: a record refused: ")


def test_a_filler_of_the_run_left_beside_a_refused_record_is_exit_1(tmp_path):
    """What scripts/acceptance reads as a filler of this run left (its message)."""
    run_dir, top, book = _run_dir(tmp_path)
    _refused_record(run_dir)
    said: list[str] = []
    rc = fillrun.remove_fills(run_dir, wait_s=0, ledger=book, host="login1",
                              say=said.append, ended=lambda jobid: False)
    assert rc == 1 and top.is_dir()
    assert said[-1] == (f"fill remove: {top}: not removed yet: its job 77 has not ended "
                        "within 0 s (give --cancel to cancel it); the next session's sweep "
                        "removes it once the job has ended")


def test_scripts_acceptance_says_a_filler_is_left_on_exit_1_alone():
    text = (Path(__file__).resolve().parents[2] / "scripts" / "acceptance").read_text()
    assert 'fill remove "$run_dir" --cancel || fill_left=$?' in text
    at = text.index("the filler was not all removed")
    assert text.rindex('if [ "$fill_left" -eq 1 ]; then', 0, at) > text.rindex("\nfi", 0, at)
