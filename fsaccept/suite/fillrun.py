"""The fill's end on the login node: ``fsaccept fill remove RUN_DIR`` removes the filler a
session of ``scripts/acceptance --fill`` wrote (``docs/user/fill.md``).  The script runs
it whatever ended the session: ReFrame's end, a failed test, a Ctrl-C, a SIGTERM (a time
limit on the session), a failure of the script itself.

Where the filler is: the record ``FillTarget`` leaves in its stage directory, and ReFrame
copies to its output directory (``fill-target.json``: the directory, the run that owns
it, the host, the job; ``fsaccept.rfm.fill``), anywhere in RUN_DIR's ``stage/`` or
``output/`` tree.  A directory is removed only when it is below a ``fsaccept``
directory, is in the owned-data ledger for that run (the proof outside it that this
harness made it: ``fsaccept.suite.owned``) and holds the run's owner marker.

Its job must have ended first: one that Slurm still runs once its session is over is
cancelled (``--cancel``: the script's; else left running and said), then waited for, at
most ``--wait-s`` seconds.  Each node's directory (its own marker, made before its first
file) is removed by a thread of its own, then the directory itself
(:func:`fsaccept.suite.owned.remove_owned`: the marker last, so that a removal cut short
keeps its proof).  What could not be removed is said, with its path, its file count and
why, and the exit status is 1; the next session's sweep of the ledger resumes it.
Exit 0: nothing of the fill is left (or there was none); 2: RUN_DIR is no directory.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from fsaccept.core import guards, inputs
from fsaccept.core.paths import OWNED_DATA_DIR
from fsaccept.suite import owned

#: The record's file name and format (``fsaccept.rfm.fill``'s ``RECORD_FILE``).
RECORD = "fill-target.json"
RECORD_VERSION = 1
#: Where ReFrame puts a test's stage and output directories below its prefix:
#: ``stage|output/<system>/<partition>/<environment>/<test>/``.
RECORD_GLOB = f"*/*/*/*/*/{RECORD}"
#: How long the fill's job is waited for, by default.
DEFAULT_WAIT_S = 600
#: Threads removing node directories at once, at most.
MAX_THREADS = 32


#: A record is a few hundred bytes; one larger is not the check's.
MAX_RECORD_BYTES = 64 * 1024
#: A job id, as Slurm gives one (it is passed to scancel).
JOBID_FORM = re.compile(r"[0-9]{1,20}")


class RecordError(ValueError):
    """A fill record refused: the message names its file and key."""


@dataclass(frozen=True)
class Filler:
    """One fill's filler, as its record names it."""

    directory: str
    run_id: str
    jobid: str
    host: str


def _loads(raw: bytes, path: Path | str, what: str) -> object:
    """JSON, or RecordError naming ``path`` (never a RecursionError: deeply nested)."""
    try:
        return json.loads(raw)
    except RecursionError:
        raise RecordError(f"{path}: nested too deeply: not {what}") from None
    except ValueError as err:  # JSONDecodeError, UnicodeDecodeError
        raise RecordError(f"{path}: not JSON ({err}): not {what}") from None


def filler_of(data: object, path: Path | str) -> Filler:
    """The filler a record names; RecordError naming the file and the key when it is
    not one this harness wrote: its ``run_id`` of the harness's own form
    (``owned.RUN_ID_FORM``), its ``directory`` an absolute, normalized path without
    control characters whose name ends with ``.<run_id>``, its ``jobid`` Slurm's
    digits or empty, its ``host`` a name."""
    if not isinstance(data, dict) or data.get("version") != RECORD_VERSION:
        raise RecordError(f"{path}: not a fill record of version {RECORD_VERSION}")
    run_id, directory = data.get("run_id"), data.get("directory")
    jobid, host = data.get("jobid") or "", data.get("host") or ""
    if not owned.is_run_id(run_id):
        raise RecordError(f"{path}: key run_id: {run_id!r} is not a run id of this harness "
                          "(such as 20261127T120000-4242): refused, nothing removed")
    if not (isinstance(directory, str) and os.path.isabs(directory)
            and os.path.normpath(directory) == directory
            and not guards.unsafe_characters(directory)
            and os.path.basename(directory).endswith(f".{run_id}")):
        raise RecordError(f"{path}: key directory: {directory!r} is not the absolute, "
                          f"normalized path of a test's directory of run {run_id} "
                          f"(<target>/fsaccept/<test>.{run_id}): refused, nothing removed")
    if isinstance(jobid, int) and not isinstance(jobid, bool):
        jobid = str(jobid)
    if not (isinstance(jobid, str) and (jobid == "" or JOBID_FORM.fullmatch(jobid))):
        raise RecordError(f"{path}: key jobid: {jobid!r} is not a Slurm job id: refused, "
                          "nothing removed")
    if not isinstance(host, str) or guards.unsafe_characters(host, blanks=True):
        raise RecordError(f"{path}: key host: {host!r} is not a host name: refused, nothing "
                          "removed")
    return Filler(directory, run_id, jobid, host)


def records(run_dir: Path) -> tuple[list[Filler], list[str]]:
    """The fills a run directory's records name (each directory once), and what could
    not be read or was refused (each record's path and why).  Each record is read
    through the bounded reader (``inputs.read_below``: below ``run_dir`` with no
    symbolic link on the way, a FIFO or device refused without waiting, at most
    :data:`MAX_RECORD_BYTES`); one bad record never stops the others."""
    found: dict[str, Filler] = {}
    problems = []
    for path in sorted(run_dir.glob(RECORD_GLOB)):
        try:
            raw = inputs.read_below(run_dir, path, MAX_RECORD_BYTES, "a fill record")
            filler = filler_of(_loads(raw, path, "a fill record"), path)
        except (inputs.InputError, RecordError) as err:
            problems.append(str(err))
            continue
        # The stage's copy may have the job id the output's lacks, or the reverse.
        known = found.get(filler.directory)
        if known is None or (not known.jobid and filler.jobid):
            found[filler.directory] = filler
    return list(found.values()), problems


def ledger_problem(ledger: Path, filler: Filler) -> str:
    """'' when the owned-data ledger records ``filler``'s directory for its run, on its
    host; else why not.  The ledger file is the ledger's own (``<ledger>/<run id>.jsonl``,
    the run id of the harness's form, read below the ledger with no symbolic link, a
    FIFO refused, bounded), and the directory, after ``realpath``, is still its own name
    in a ``fsaccept`` directory (no link swapped in for it)."""
    path = ledger / f"{filler.run_id}{owned.LEDGER_SUFFIX}"
    not_recorded = f"the owned-data ledger ({ledger}) does not record it for run {filler.run_id}"
    if not os.path.lexists(path):
        return not_recorded
    try:
        raw = inputs.read_below(ledger, path, owned.MAX_LEDGER_BYTES, "the owned-data ledger")
    except inputs.InputError as err:
        return f"the owned-data ledger cannot be read: {err}"
    real = os.path.realpath(filler.directory)
    if (os.path.basename(real) != os.path.basename(filler.directory)
            or os.path.basename(os.path.dirname(real)) != "fsaccept"):
        return (f"it resolves to {real}, not to a test's directory below a fsaccept "
                "directory")
    for line in raw.splitlines():
        try:
            entry = _loads(line, path, "a ledger line")
        except RecordError:
            continue
        if (isinstance(entry, dict) and entry.get("directory") == filler.directory
                and (not filler.host or entry.get("host") == filler.host)):
            return ""
    return not_recorded


def cancel_job(jobid: str) -> None:
    subprocess.run(["scancel", jobid], capture_output=True, timeout=60)


def wait_for_job(filler: Filler, wait_s: float, cancel: bool,
                 ended: Callable[[str], bool] = owned.slurm_job_ended,
                 cancel_job: Callable[[str], None] = cancel_job,
                 sleep: Callable[[float], None] = time.sleep) -> str:
    """'' once the fill's job has ended (or it has none), else why not."""
    if not filler.jobid:
        return ""
    if ended(filler.jobid):
        return ""
    if cancel:
        cancel_job(filler.jobid)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        sleep(1)
        if ended(filler.jobid):
            return ""
    return (f"its job {filler.jobid} has not ended within {wait_s:.0f} s"
            + ("" if cancel else " (give --cancel to cancel it)"))


def _node_directories(top_fd: int, marker: str) -> list[tuple[str, os.stat_result]]:
    """The node directories in the fill's directory ``top_fd`` that hold the run's
    marker, each with its lstat (each is removed only if it is still that one)."""
    nodes = []
    with os.scandir(top_fd) as entries:
        names = [e.name for e in entries]
    for name in names:
        try:
            st = os.lstat(name, dir_fd=top_fd)
            if not stat.S_ISDIR(st.st_mode):
                continue
            fd = owned.open_dir_at(name, top_fd, st)
        except OSError:
            continue  # gone, a link, or swapped: not a node directory of the fill
        try:
            if stat.S_ISREG(os.lstat(marker, dir_fd=fd).st_mode):
                nodes.append((name, st))
        except OSError:
            pass
        finally:
            os.close(fd)
    return nodes


def remove(filler: Filler, threads: int = MAX_THREADS) -> list[owned.Removal]:
    """Each node's directory (those holding the run's marker) in parallel, then the
    directory itself once they are all gone; every removal that is not ``absent``.
    By descriptor (:func:`fsaccept.suite.owned.remove_owned`): the fill's directory
    opened in its parent with O_NOFOLLOW, each node's relative to it and only the one
    listed; a link swapped in anywhere is never followed."""
    top = filler.directory
    parent, name = os.path.split(top)
    try:
        parent_fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        return []
    except OSError as err:
        return [owned.Removal(top, "incomplete", 0, f"{parent}: {err.strerror or err}")]
    try:
        try:
            listed = os.lstat(name, dir_fd=parent_fd)
            top_fd = owned.open_dir_at(name, parent_fd, listed)
        except FileNotFoundError:
            return []
        except OSError:  # a link, no directory, swapped: remove_owned says which
            return [r for r in [owned.remove_owned(top, filler.run_id, parent_fd)]
                    if r.status != "absent"]
        try:
            nodes = _node_directories(top_fd, owned.owner_marker(filler.run_id))
            done = []
            if nodes:
                with ThreadPoolExecutor(max(1, min(threads, len(nodes)))) as pool:
                    done = list(pool.map(
                        lambda n: owned.remove_owned(os.path.join(top, n[0]), filler.run_id,
                                                      top_fd, n[1]), nodes))
        except OSError as err:
            return [owned.Removal(top, "incomplete", 0, f"cannot list it: {err}")]
        finally:
            os.close(top_fd)
        # The directory itself once its nodes' are gone (still the one listed); else it
        # stays, with its marker, beside what is left of them (each with its own).
        if all(r.gone for r in done):
            done.append(owned.remove_owned(top, filler.run_id, parent_fd, listed))
    finally:
        os.close(parent_fd)
    return [r for r in done if r.status != "absent"]


def remove_fills(run_dir: Path, wait_s: float = DEFAULT_WAIT_S, cancel: bool = False,
                 ledger: Path = OWNED_DATA_DIR, host: str | None = None,
                 say: Callable[[str], None] = print, **waiting) -> int:
    """``fsaccept fill remove``: every fill of ``run_dir`` removed; 0 when nothing is
    left; 1 when a filler a record of the run names is left (said: what, and why);
    else 2 when a record was refused (bad input: said, naming its file and key, and
    what it names left alone; the other records' fills are removed)."""
    fillers, problems = records(run_dir)
    for p in problems:
        say(f"fill remove: a record refused: {p}")
    host = host or socket.gethostname()
    left = False
    for filler in fillers:
        where = f"fill remove: {filler.directory}"
        if not os.path.lexists(filler.directory):
            say(f"{where}: nothing there (removed already)")
            continue
        if filler.host and filler.host != host:
            say(f"{where}: left alone: written by a run on {filler.host}, this is {host}")
            left = True
            continue
        if os.path.basename(os.path.dirname(filler.directory)) != "fsaccept":
            say(f"{where}: left alone: not where a test writes (<target>/fsaccept/...)")
            left = True
            continue
        why = ledger_problem(ledger, filler)
        if why:
            say(f"{where}: left alone: {why}")
            left = True
            continue
        try:
            with owned.run_lock(ledger, filler.run_id, lambda: say(
                    f"{where}: another removal of run {filler.run_id} is under way: "
                    "waiting for it")):
                left |= _remove_one(filler, where, wait_s, cancel, say, waiting)
        except OSError as err:
            say(f"{where}: not removed: the lock of run {filler.run_id} in {ledger} "
                f"cannot be taken ({err.strerror or err})")
            left = True
    return 1 if left else 2 if problems else 0


def _remove_one(filler: Filler, where: str, wait_s: float, cancel: bool,
                say: Callable[[str], None], waiting: dict) -> bool:
    """One fill removed, its run's lock held; whether something is left."""
    if not os.path.lexists(filler.directory):  # the removal waited for has done it
        say(f"{where}: nothing there (removed already)")
        return False
    why = wait_for_job(filler, wait_s, cancel, **waiting)
    if why:
        say(f"{where}: not removed yet: {why}; the next session's sweep removes it "
            "once the job has ended")
        return True
    removals = remove(filler)
    rest = [r.left for r in removals if r.left]
    for line in rest:
        say(f"fill remove: left: {line}")
    if not rest:
        nodes = sum(1 for r in removals if r.directory != filler.directory)
        say(f"{where}: removed ({nodes} node director{'y' if nodes == 1 else 'ies'})")
    return bool(rest)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="fsaccept fill",
                                 description="the filler of a fill session "
                                             "(scripts/acceptance --fill, docs/user/fill.md)")
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("remove", help="remove the filler a run wrote (whatever ended it)")
    r.add_argument("run_dir", metavar="RUN_DIR", help="the run's directory (results/...)")
    r.add_argument("--wait-s", type=float, default=DEFAULT_WAIT_S,
                   help="how long the fill's job is waited for (default %(default)s)")
    r.add_argument("--cancel", action="store_true",
                   help="cancel the fill's job if Slurm still runs it (its session is over)")
    args = ap.parse_args(argv)
    run_dir = Path(args.run_dir)
    if not run_dir.is_dir():
        print(f"fsaccept fill remove: {run_dir} is not a directory", file=sys.stderr)
        return 2
    return remove_fills(run_dir, args.wait_s, args.cancel)
