"""The sweep of the owned-data ledger against hostile ledgers (issue 49, class 9): its
reads bounded as ``fsaccept fill remove``'s are (a huge, a nested, a binary entry, a
FIFO), the per-run lock ``fill remove`` holds held (two sweeps at once, synchronised by
a barrier, never by timing), and no ``.lock`` left behind.  The ledger and the data
directories are those a fill writes (``test_fill_check``'s run: its run id, the
filler's directory with a directory per node, each with the run's marker)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from fsaccept.suite import fillrun, owned
from tests.unit.test_fill_check import RUN, _run_dir
from tests.unit.test_fill_remove import _not_hanging


def _sweep(book: Path) -> list[owned.Removal]:
    return owned.sweep_owned(book, "20261128T090000-77", "login1", lambda r: True,
                              lambda j: True)


def test_a_sweep_removes_the_run_and_leaves_no_lock(tmp_path):
    _, top, book = _run_dir(tmp_path)
    [done] = _sweep(book)
    assert done.status == "removed" and not top.exists()
    assert list(book.iterdir()) == []


def test_a_lock_left_behind_by_an_earlier_removal_is_removed(tmp_path):
    run_dir, top, book = _run_dir(tmp_path)
    # fill remove removed the fill (its lock file stayed), then the sweep its ledger.
    said: list[str] = []
    assert fillrun.remove_fills(run_dir, ledger=book, host="login1", say=said.append,
                                ended=lambda jobid: True) == 0, said
    (book / f"{RUN}{owned.LOCK_SUFFIX}").touch()  # as the former fill remove left it
    assert _sweep(book) == [] and list(book.iterdir()) == []
    # One of a run still going (its ledger there) and the current run's stay.
    (book / f"{RUN}{owned.LOCK_SUFFIX}").touch()
    (book / f"20261128T090000-77{owned.LOCK_SUFFIX}").touch()
    assert _sweep(book) == [] and sorted(p.name for p in book.iterdir()) == [
        f"20261128T090000-77{owned.LOCK_SUFFIX}"]


def test_fill_remove_leaves_no_lock_file(tmp_path):
    run_dir, top, book = _run_dir(tmp_path)
    said: list[str] = []
    assert fillrun.remove_fills(run_dir, ledger=book, host="login1", say=said.append,
                                ended=lambda jobid: True) == 0, said
    assert not top.exists() and [p.name for p in book.iterdir()] == [f"{RUN}.jsonl"]


def _ledger(book: Path) -> Path:
    return book / f"{RUN}{owned.LEDGER_SUFFIX}"


def test_a_nested_ledger_entry_is_left_alone_never_a_recursion_error(tmp_path):
    _, top, book = _run_dir(tmp_path)
    ledger = _ledger(book)
    ledger.write_text(ledger.read_text() + "[" * 100_000 + "]" * 100_000 + "\n")
    assert _sweep(book) == []
    assert top.is_dir() and ledger.is_file()


def test_a_binary_ledger_is_left_alone(tmp_path):
    _, top, book = _run_dir(tmp_path)
    ledger = _ledger(book)
    ledger.write_bytes(ledger.read_bytes() + b"\xff\xfe\x00" * 100 + b"\n")
    assert _sweep(book) == [] and top.is_dir() and ledger.is_file()


def test_a_huge_ledger_is_not_read(tmp_path):
    """Its entries are the harness's, but no run writes a ledger of 64 MiB: its size is
    refused before it is read."""
    _, top, book = _run_dir(tmp_path)
    ledger = _ledger(book)
    text = ledger.read_bytes()  # blank lines after its entry
    ledger.write_bytes(text + b"\n" * (64 * 2**20 + 1 - len(text)))
    assert _sweep(book) == [] and top.is_dir() and ledger.is_file()


def test_a_fifo_as_a_ledger_does_not_hang_the_sweep(tmp_path):
    _, top, book = _run_dir(tmp_path)
    ledger = _ledger(book)
    ledger.unlink()
    os.mkfifo(ledger)
    assert _not_hanging(ledger, lambda: _sweep(book)) == []
    assert top.is_dir()


def test_two_sweeps_at_once_remove_the_run_once(tmp_path, monkeypatch):
    """The first sweep's removal waits, its run's lock held, until the second sweep has
    ended: the second leaves the run to it (no second removal, no false failure)."""
    _, top, book = _run_dir(tmp_path)
    barrier = threading.Barrier(2, timeout=60)
    real = owned.remove_owned
    removing: list[int] = []

    def remove_owned(directory, run_id, *args, **kw):
        removing.append(threading.get_ident())
        barrier.wait()  # until the other sweep has ended (or removes too: old code)
        return real(directory, run_id, *args, **kw)
    monkeypatch.setattr(owned, "remove_owned", remove_owned)
    results: dict[int, list[owned.Removal]] = {}
    errors: list[BaseException] = []

    def sweep():
        try:
            results[threading.get_ident()] = _sweep(book)
        except BaseException as err:  # noqa: BLE001 - the test reports it
            errors.append(err)
        if threading.get_ident() not in removing:
            barrier.wait()  # the sweep that left the run to the other has ended
    threads = [threading.Thread(target=sweep) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors and len(removing) == 1, (errors, removing)
    [(who, done)] = [(k, v) for k, v in results.items() if v]
    assert who == removing[0] and [r.status for r in done] == ["removed"]
    assert [v for k, v in results.items() if k != who] == [[]]
    assert not top.exists() and list(book.iterdir()) == []


# A session a signal stopped: scripts/acceptance sweeps its own runs once ReFrame ended.

def test_a_stopped_sessions_data_is_removed_once_its_jobs_ended(tmp_path, monkeypatch):
    _, top, book = _run_dir(tmp_path)
    monkeypatch.setattr(owned, "run_ended", lambda run_id: True)
    removed, left = owned.sweep_stopped(book, 4242, "login1", wait_s=0,
                                        job_ended=lambda j: True)
    assert [r.directory for r in removed] == [str(top)] and left == []
    assert not top.exists() and list(book.iterdir()) == []


def test_a_stopped_sessions_job_still_running_is_waited_for_then_named(tmp_path,
                                                                        monkeypatch):
    _, top, book = _run_dir(tmp_path)
    monkeypatch.setattr(owned, "run_ended", lambda run_id: True)
    naps: list[float] = []
    removed, left = owned.sweep_stopped(book, 4242, "login1", wait_s=0.5,
                                        job_ended=lambda j: False, sleep=naps.append)
    assert removed == [] and top.exists()
    assert left == [f"{top}: 17 files left (its job 77 has not ended): the next "
                    "session's sweep removes it"]
    assert naps  # it waited before it said so


def test_a_stopped_session_never_sweeps_another_runs_data(tmp_path, monkeypatch):
    _, top, book = _run_dir(tmp_path)
    monkeypatch.setattr(owned, "run_ended", lambda run_id: True)
    assert owned.sweep_stopped(book, 4243, "login1", wait_s=0,
                               job_ended=lambda j: True) == ([], [])
    assert top.exists()


def test_sweep_stopped_refuses_a_session_still_running(capsys):
    assert owned.main(["sweep-stopped", "--pid", str(os.getpid())]) == 2
    assert "still runs: its session is not over" in capsys.readouterr().err
    assert owned.main(["sweep-stopped", "--pid", "0"]) == 2
