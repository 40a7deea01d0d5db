"""The data this harness owns on a target, and its removal: the run id, the owner marker
a job writes into each data directory it creates, the owned-data ledger (a file per run,
outside every data directory: the proof that this harness created them), the removal by
descriptor (:func:`remove_owned`: the marker last), each run's lock (:func:`run_lock`)
and the sweep that resumes earlier runs' removals (:func:`sweep_owned`)."""

from __future__ import annotations

import errno
import fcntl
import json
import os
import re
import stat
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from fsaccept.core import inputs
from fsaccept.core.units import MIB

#: A run id, the harness's own form: the ReFrame session's start (local time, to the
#: second) and its pid, ``20261123T101500-4242`` (:func:`new_run_id`).  A record that
#: names another (a path, ``..``, a slash, a NUL) names nothing of this harness.
RUN_ID_FORM = re.compile(r"[0-9]{8}T[0-9]{6}-[0-9]{1,10}")


def new_run_id() -> str:
    """This ReFrame session's run id (``fsaccept.rfm.jobscript.RUN_ID``)."""
    return time.strftime("%Y%m%dT%H%M%S") + f"-{os.getpid()}"


def is_run_id(text: object) -> bool:
    """Whether ``text`` has the form of :data:`RUN_ID_FORM`, whole."""
    return isinstance(text, str) and RUN_ID_FORM.fullmatch(text) is not None


def owner_marker(run_id: str) -> str:
    """Name of the file a job writes into the data directory it created; cleanup
    removes a directory only when it holds this run's marker."""
    return f".fsaccept-owner-{run_id}"


#: Files counted in a directory left behind, at most (the count then says "at least").
COUNT_LIMIT = 10_000_000


def count_files(directory: str, limit: int = COUNT_LIMIT) -> tuple[int, bool]:
    """(files and other non-directory entries below ``directory``, whether the count
    stopped at ``limit``); symbolic links are counted, never followed."""
    n = 0
    for _, dirs, files in os.walk(directory, onerror=lambda err: None):
        n += len(files) + sum(1 for d in dirs if os.path.islink(os.path.join(_, d)))
        if n >= limit:
            return n, True
    return n, False


@dataclass(frozen=True)
class Removal:
    """What became of a data directory this run asked to remove."""

    directory: str
    #: "removed", "absent" (nothing there), "incomplete" (ours, partly removed: the
    #: marker stays, so that the next step can resume), "not ours" (no marker of this
    #: run: left alone).
    status: str
    files_left: int = 0
    why: str = ""

    @property
    def gone(self) -> bool:
        return self.status in ("removed", "absent")

    def __bool__(self) -> bool:  # "removed", as remove_owned used to answer
        return self.status == "removed"

    @property
    def left(self) -> str:
        """One line for the console and the reports ("" when nothing is left)."""
        if self.gone:
            return ""
        files = f"{self.files_left:,} file{'s' if self.files_left != 1 else ''}"
        if self.status == "not ours":
            return (f"{self.directory}: {files} left alone: it holds no owner marker of this "
                    f"run ({self.why})")
        return f"{self.directory}: {files} could not be removed ({self.why})"


#: How a directory is opened for its removal: never through a symbolic link.
_DIR_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC


class Swapped(OSError):
    """The directory opened is not the one its parent listed (another st_dev/st_ino)."""


def open_dir_at(name: str, dir_fd: int, listed: os.stat_result) -> int:
    """A descriptor of the directory ``name`` in the directory ``dir_fd``, opened with
    O_NOFOLLOW|O_DIRECTORY (a symbolic link swapped in is never followed: ELOOP or
    ENOTDIR), and only when it is the one listed: its fstat must have the st_dev and
    st_ino of ``listed``, its lstat before the open (:class:`Swapped` otherwise)."""
    fd = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    st = os.fstat(fd)
    if (st.st_dev, st.st_ino) != (listed.st_dev, listed.st_ino):
        os.close(fd)
        raise Swapped(errno.ESTALE, "replaced by another directory while it was removed")
    return fd


def _marker_name(run_id: str) -> str | None:
    """The owner marker's name, when it is one file name (no ``/``, no NUL)."""
    name = owner_marker(run_id)
    return name if run_id and "/" not in name and "\0" not in name else None


def _holds_marker(fd: int, marker: str) -> bool:
    try:
        return stat.S_ISREG(os.lstat(marker, dir_fd=fd).st_mode)
    except OSError:
        return False


def _gone(call: Callable[[], object], path: str, errors: list[str]) -> None:
    """Run an unlink or rmdir: what is already gone counts as gone (ENOENT)."""
    try:
        call()
    except FileNotFoundError:
        pass
    except OSError as err:
        errors.append(f"{path}: {err.strerror or err}")


def _listing(fd: int, path: str, errors: list[str]) -> list[str]:
    try:
        with os.scandir(fd) as entries:
            return [e.name for e in entries]
    except OSError as err:
        errors.append(f"{path}: cannot list it: {err.strerror or err}")
        return []


def _clear_at(top_fd: int, top: str, keep: str, errors: list[str]) -> None:
    """Remove everything in the directory ``top_fd`` (at ``top``, for messages) but its
    entry ``keep``, depth first and by descriptor, as ``shutil.rmtree``'s fd-based walk:
    each entry's lstat relative to its directory; a directory opened with
    :func:`open_dir_at` (the one listed, never a link) and emptied, then removed
    relative to its parent; anything else unlinked relative to its directory (a link
    itself, never what it points at).  A directory swapped for a link or a file meanwhile
    is unlinked as what it now is; one replaced by another directory, or on another
    file system (a mount), is left and said.  Never recursive (no depth limit but the
    descriptors)."""
    top_dev = os.fstat(top_fd).st_dev
    # (directory's descriptor, its path, its names still to remove, its name in its parent)
    stack = [(top_fd, top, iter(_listing(top_fd, top, errors)), "")]
    while stack:
        fd, path, names, name = stack[-1]
        entry = next(names, None)
        if entry is None:
            stack.pop()
            if stack:  # emptied: closed, then removed from its parent
                os.close(fd)
                parent = stack[-1][0]
                _gone(lambda: os.rmdir(name, dir_fd=parent), path, errors)
            continue
        if fd == top_fd and entry == keep:
            continue
        child = os.path.join(path, entry)
        try:
            st = os.lstat(entry, dir_fd=fd)
        except FileNotFoundError:
            continue
        except OSError as err:
            errors.append(f"{child}: {err.strerror or err}")
            continue
        if not stat.S_ISDIR(st.st_mode):
            _gone(lambda: os.unlink(entry, dir_fd=fd), child, errors)
            continue
        if st.st_dev != top_dev:
            errors.append(f"{child}: another file system is mounted there: left, never "
                          "entered")
            continue
        try:
            sub = open_dir_at(entry, fd, st)
        except FileNotFoundError:
            continue
        except Swapped as err:
            errors.append(f"{child}: {err.strerror}: left, never entered")
            continue
        except OSError as err:
            if err.errno in (errno.ELOOP, errno.ENOTDIR):
                # Swapped for a symbolic link or a file since its lstat: that entry
                # itself goes, never what a link points at.
                _gone(lambda: os.unlink(entry, dir_fd=fd), child, errors)
            else:
                errors.append(f"{child}: {err.strerror or err}")
            continue
        stack.append((sub, child, iter(_listing(sub, child, errors)), entry))


def _not_ours(directory: str, what: str) -> Removal:
    n, capped = ((1, False) if what in ("a symbolic link", "not a directory")
                 else count_files(directory))
    return Removal(directory, "not ours", n, what + ("; counted up to the limit" if capped
                                                      else ""))


def remove_owned(directory: str, run_id: str, parent_fd: int | None = None,
                 listed: os.stat_result | None = None) -> Removal:
    """Remove ``directory`` if, and only if, this run created it (it holds this run's
    owner marker).  The marker goes last: everything else first, then the marker,
    then the directory.  A removal cut short (a time limit, an I/O error) thus always
    leaves the proof of ownership behind, and the next step (the test's sanity stage,
    the next session's sweep) can resume it; ``rm -rf`` may delete the marker first
    and leave the rest unprovably ours.

    By descriptor, never by path: ``directory`` is opened relative to its parent
    (``parent_fd`` when given, else its parent opened by path) with O_NOFOLLOW, and
    must be the directory its parent lists (and ``listed``, its lstat as the caller
    saw it, when given); below it, :func:`_clear_at`.  A symbolic link is never followed,
    whenever it is swapped in.  What is gone already counts as gone."""
    marker = _marker_name(run_id)
    parent, name = os.path.split(os.path.normpath(directory))
    own_parent = parent_fd is None
    try:
        if own_parent:
            parent_fd = os.open(parent or ".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        return Removal(directory, "absent")
    except OSError as err:
        return Removal(directory, "incomplete", 0, f"{parent}: {err.strerror or err}")
    try:
        return _remove_at(directory, name, parent_fd, marker, listed)
    finally:
        if own_parent:
            os.close(parent_fd)


def _remove_at(directory: str, name: str, parent_fd: int, marker: str | None,
               listed: os.stat_result | None) -> Removal:
    try:
        st = os.lstat(name, dir_fd=parent_fd)
    except FileNotFoundError:
        return Removal(directory, "absent")
    except OSError as err:
        return Removal(directory, "incomplete", 0, f"{directory}: {err.strerror or err}")
    if stat.S_ISLNK(st.st_mode):
        return _not_ours(directory, "a symbolic link")
    if not stat.S_ISDIR(st.st_mode):
        return _not_ours(directory, "not a directory")
    if listed is not None and (st.st_dev, st.st_ino) != (listed.st_dev, listed.st_ino):
        return _not_ours(directory, "replaced by another directory since it was listed")
    try:
        fd = open_dir_at(name, parent_fd, st)
    except FileNotFoundError:
        return Removal(directory, "absent")
    except OSError as err:
        return _not_ours(directory, f"cannot be opened as the directory listed: "
                                    f"{err.strerror or err}")
    try:
        if marker is None:
            return _not_ours(directory, "the run id makes no owner marker's file name "
                                        "(a slash or a NUL in it)")
        if not _holds_marker(fd, marker):
            return _not_ours(directory, f"no {marker}")
        errors: list[str] = []
        _clear_at(fd, directory, marker, errors)
        try:
            rest = [e for e in os.listdir(fd) if e != marker]
        except OSError as err:
            rest = ["?"]
            errors.append(f"{directory}: {err.strerror or err}")
        if rest and not errors:  # appeared meanwhile: the marker stays with them
            errors.append(f"{os.path.join(directory, rest[0])}: appeared during the removal")
        if not errors:
            try:
                os.unlink(marker, dir_fd=fd)
                os.rmdir(name, dir_fd=parent_fd)
                return Removal(directory, "removed")
            except FileNotFoundError:
                return Removal(directory, "removed")
            except OSError as err:
                errors.append(f"{directory}: {err.strerror or err}")
                # The directory stays (a storage server down: it still has entries
                # there): so does the proof that it is ours, for the step that resumes
                # the removal.
                try:
                    os.close(os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW
                                     | os.O_CLOEXEC, 0o644, dir_fd=fd))
                except OSError:
                    pass
        n, capped = count_files(directory)
        n -= int(_holds_marker(fd, marker))  # the marker is not data
        more = f"; and {len(errors) - 1:,} more errors" if len(errors) > 1 else ""
        why = errors[0] + more + ("; counted up to the limit" if capped else "")
        return Removal(directory, "incomplete", max(n, 0), why)
    finally:
        os.close(fd)


#: The ledger: one file per run (``<run id>.jsonl``) in the harness's state directory,
#: a line per data directory whose job was submitted: {"directory", "jobid", "host"}.
#: It is the proof, outside every data directory, that this harness created it: a
#: later session resumes a removal only for a directory recorded here whose marker
#: (of the same run) is still in it.  A marker alone proves nothing across sessions
#: (anyone can create such a file).
LEDGER_SUFFIX = ".jsonl"


def record_owned(ledger: Path, run_id: str, directory: str, jobid: str, host: str) -> None:
    """Record that ``run_id``'s job ``jobid`` creates ``directory`` (before it can)."""
    ledger.mkdir(parents=True, exist_ok=True)
    with open(ledger / f"{run_id}{LEDGER_SUFFIX}", "a") as f:
        f.write(json.dumps({"directory": directory, "jobid": str(jobid), "host": host}) + "\n")


#: A run's ledger file: a line of about 200 bytes per data directory of the run; one
#: larger is not one this harness wrote.
MAX_LEDGER_BYTES = 64 * MIB
#: The lock of a run's removals, beside its ledger file: ``<run id>.lock``.
LOCK_SUFFIX = ".lock"


def read_ledger(ledger: Path, path: Path) -> list[dict] | None:
    """The entries of a run's ledger file ``path``, read through the bounded reader
    (below ``ledger`` with no symbolic link on the way, a FIFO or device refused
    without waiting, at most :data:`MAX_LEDGER_BYTES`); None when it is not one this
    harness wrote (binary, not JSON lines, nested, an entry without its directory)."""
    try:
        raw = inputs.read_below(ledger, path, MAX_LEDGER_BYTES, "the owned-data ledger")
        entries = [json.loads(line) for line in raw.decode("utf-8").splitlines() if line]
    except (inputs.InputError, OSError, ValueError, RecursionError):
        return None
    if not all(isinstance(e, dict) and isinstance(e.get("directory"), str)
               for e in entries):
        return None
    return entries


def _same_file(fd: int, path: Path) -> bool:
    try:
        st = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (held.st_dev, held.st_ino)


@contextmanager
def run_lock(ledger: Path, run_id: str,
             waiting: Callable[[], None] | None = None) -> Iterator[bool]:
    """Hold the lock of ``run_id``'s removals (``fcntl.flock`` on ``<ledger>/<run
    id>.lock``) while the block runs: two removals of one run never run at once.  When
    another holds it: ``waiting`` is called, then the lock waited for; without
    ``waiting``, the block runs at once with False (not held: the caller leaves the
    run alone).  The lock file is removed before the lock is let go (a lock taken on a
    file since removed is taken again): none is left behind.  OSError when the lock
    file cannot be made or is no regular file."""
    path = ledger / f"{run_id}{LOCK_SUFFIX}"
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
                     | os.O_CLOEXEC, 0o600)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError(errno.EINVAL, "not a regular file", str(path))
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if waiting is None:
                    yield False
                    return
                waiting()
                waiting = _nothing  # said once
                fcntl.flock(fd, fcntl.LOCK_EX)
            if not _same_file(fd, path):
                continue  # its holder removed it: the lock of a file no one else takes
            try:
                yield True
            finally:
                _gone(lambda: os.unlink(path), str(path), [])
            return
        finally:
            os.close(fd)  # and the lock with it


def _nothing() -> None:
    pass


def run_pid(run_id: str) -> int | None:
    """The ReFrame process a run id names ('20261123T101500-4242' -> 4242)."""
    _, _, pid = run_id.rpartition("-")
    return int(pid) if pid.isdigit() else None


def run_ended(run_id: str) -> bool:
    """Whether the ReFrame session of ``run_id`` (its pid, on this host) has ended; a
    live process with that pid (even a reused one) counts as running."""
    pid = run_pid(run_id)
    if pid is None:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


def sweep_owned(ledger: Path, current_run: str, host: str,
                run_ended: Callable[[str], bool],
                job_ended: Callable[[str], bool]) -> list[Removal]:
    """Resume the removals earlier runs did not finish: for each run in the ledger
    that is not this one, was recorded on this host and has ended (``run_ended``), each
    directory whose job has ended (``job_ended``) is removed if it is below a
    ``fsaccept`` directory and still holds that run's marker (:func:`remove_owned`);
    anything else is left alone.  Each run is swept holding its lock (:func:`run_lock`,
    the lock ``fsaccept fill remove`` holds): one another sweep or removal holds is
    its.  Its ledger is read bounded (:func:`read_ledger`); one that is not the
    harness's is left as it is.  Entries are dropped once settled (removed, absent, or
    left alone and reported); a removal still incomplete stays for the next session.
    A lock file an earlier run left without its ledger is removed.  Returns what was
    done (every Removal but "absent")."""
    done: list[Removal] = []
    if not ledger.is_dir():
        return done
    for path in sorted(ledger.glob("*" + LEDGER_SUFFIX)):
        run_id = path.name[:-len(LEDGER_SUFFIX)]
        if run_id == current_run:
            continue
        try:
            with run_lock(ledger, run_id) as held:
                if held:
                    done += _sweep_run(path, run_id, host, run_ended, job_ended)
        except OSError:
            continue  # its lock cannot be taken: left for the next session
    for lock in sorted(ledger.glob("*" + LOCK_SUFFIX)):
        run_id = lock.name[:-len(LOCK_SUFFIX)]
        if run_id == current_run or os.path.lexists(ledger / f"{run_id}{LEDGER_SUFFIX}"):
            continue
        try:
            with run_lock(ledger, run_id):
                pass  # removed when let go, unless another holds it
        except OSError:
            continue
    return done


def _sweep_run(path: Path, run_id: str, host: str, run_ended: Callable[[str], bool],
               job_ended: Callable[[str], bool]) -> list[Removal]:
    """One run's ledger swept, its lock held (:func:`sweep_owned`)."""
    if not os.path.lexists(path):
        return []  # swept by another while the lock was waited for
    entries = read_ledger(path.parent, path)
    if entries is None:
        return []  # not a ledger this harness wrote: nothing is taken from it
    if any(e.get("host") != host for e in entries) or not run_ended(run_id):
        return []  # another host's run, or one still running: not ours to judge
    done, keep = [], []
    for e in entries:
        d = e["directory"]
        if not job_ended(str(e.get("jobid", ""))):
            keep.append(e)
            continue
        if not (os.path.isabs(d) and os.path.basename(os.path.dirname(d)) == "fsaccept"):
            continue  # not where a test writes: never touched
        r = remove_owned(d, run_id)
        if r.status != "absent":
            done.append(r)
        if r.status == "incomplete":
            keep.append(e)
    if keep:
        path.write_text("".join(json.dumps(e) + "\n" for e in keep))
    else:
        path.unlink()
    return done


#: squeue's states of a job that has ended (a job Slurm still lists may have ended).
_ENDED_STATES = ("COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED",
                 "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY")


def slurm_job_ended(jobid: str) -> bool:
    """Whether Slurm no longer runs or holds job ``jobid`` (in doubt: not ended)."""
    if not jobid.isdigit():
        return False
    try:
        proc = subprocess.run(["squeue", "-h", "-j", jobid, "-o", "%T"], capture_output=True,
                              text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    if proc.returncode == 0:
        return proc.stdout.split()[:1] in ([], *([s] for s in _ENDED_STATES))
    return "Invalid job id" in proc.stderr  # Slurm forgot it: long ended


# --------------------------------------------------------------------------- a stopped session

#: How long a stopped session's jobs are waited for (Slurm cancels them; a job
#: completing still runs its step).
DEFAULT_WAIT_S = 60.0


def sweep_stopped(ledger: Path, pid: int, host: str, wait_s: float = DEFAULT_WAIT_S,
                  job_ended: Callable[[str], bool] = slurm_job_ended,
                  sleep: Callable[[float], None] = time.sleep
                  ) -> tuple[list[Removal], list[str]]:
    """The data of a session a signal stopped, once its ReFrame (``pid``) has ended: its
    runs' ledgers swept as the next session would (:func:`sweep_owned`), again until
    its jobs have ended or ``wait_s`` has passed.  Returns what was removed, and one line
    per directory still left (the next session's sweep resumes it)."""
    def ours(run_id: str) -> bool:
        return run_pid(run_id) == pid and run_ended(run_id)
    runs = [p for p in sorted(ledger.glob("*" + LEDGER_SUFFIX))
            if run_pid(p.name[:-len(LEDGER_SUFFIX)]) == pid]
    deadline = time.monotonic() + wait_s
    done: list[Removal] = []
    while True:
        for path in runs:
            run_id = path.name[:-len(LEDGER_SUFFIX)]
            try:
                with run_lock(ledger, run_id) as held:
                    if held:
                        done += _sweep_run(path, run_id, host, ours, job_ended)
            except OSError:
                continue
        left = [(e, job_ended(str(e.get("jobid", "")))) for p in runs if p.exists()
                for e in (read_ledger(ledger, p) or [])]
        if all(ended for _, ended in left) or time.monotonic() >= deadline:
            break
        sleep(2)
    lines = [r.left for r in done if r.left]
    for e, ended in left:
        d = e["directory"]
        n, more = count_files(d) if os.path.isdir(d) else (0, False)
        if any(r.directory == d for r in done if r.left):
            continue  # said above
        lines.append(f"{d}: {'at least ' if more else ''}{n:,} files left ("
                     + (f"its job {e.get('jobid')} has not ended" if not ended else
                        "not removed") + "): the next session's sweep removes it")
    return [r for r in done if r.status == "removed"], lines


def main(argv: list[str]) -> int:
    import argparse
    import socket
    import sys
    from fsaccept.core.formatting import one_line
    from fsaccept.core.paths import OWNED_DATA_DIR
    ap = argparse.ArgumentParser(
        prog="fsaccept owned",
        description="the data the harness owns on the targets (docs/user/safety.md)")
    sub = ap.add_subparsers(dest="command", required=True)
    s = sub.add_parser("sweep-stopped", help="remove the data of a session a signal "
                       "stopped, once its ReFrame has ended; say what is left")
    s.add_argument("--pid", type=int, required=True,
                   help="the stopped session's ReFrame pid (its run id's end)")
    s.add_argument("--wait-s", type=float, default=DEFAULT_WAIT_S,
                   help="how long its jobs are waited for (default %(default)s)")
    args = ap.parse_args(argv)
    if args.pid <= 0 or not (0 <= args.wait_s < 86400):
        print("fsaccept owned sweep-stopped: --pid must be a pid and --wait-s between 0 "
              "and 86400", file=sys.stderr)
        return 2
    if not run_ended(f"x-{args.pid}"):
        print(f"fsaccept owned sweep-stopped: process {args.pid} still runs: its session "
              "is not over", file=sys.stderr)
        return 2
    removed, left = sweep_stopped(OWNED_DATA_DIR, args.pid, socket.gethostname(),
                                  args.wait_s)
    for r in removed:
        print(f"owned: removed {one_line(r.directory)}, written by the stopped session")
    for line in left:
        print(f"owned: left on the target: {one_line(line)}")
    return 1 if left else 0
