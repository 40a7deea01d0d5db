"""The fill's end on the login node: ``fsaccept fill remove RUN_DIR`` removes the filler a
session of ``scripts/acceptance --fill`` wrote (``docs/user/fill.md``).  The script runs
it whatever ended the session: ReFrame's end, a failed test, a Ctrl-C, a SIGTERM (a time
limit on the session), a failure of the script itself.

Where the filler is: the record ``FillTarget`` leaves in its stage directory, and ReFrame
copies to its output directory (``fill-target.json``: the directory, the run that owns
it, the host, the job; ``fsaccept.rfm.fill``), anywhere in RUN_DIR's ``stage/`` or
``output/`` tree.  A directory is removed only when it is below a ``fsaccept``
directory, is in the owned-data ledger for that run (the proof outside it that this
harness made it: ``fsaccept.core.guards``) and holds the run's owner marker.

Its job must have ended first: one that Slurm still runs once its session is over is
cancelled (``--cancel``: the script's; else left running and said), then waited for, at
most ``--wait-s`` seconds.  Each node's directory (its own marker, made before its first
file) is removed by a thread of its own, then the directory itself
(:func:`fsaccept.core.guards.remove_owned`: the marker last, so that a removal cut short
keeps its proof).  What could not be removed is said, with its path, its file count and
why, and the exit status is 1; the next session's sweep of the ledger resumes it.
Exit 0: nothing of the fill is left (or there was none); 2: RUN_DIR is no directory.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from fsaccept.core import guards
from fsaccept.core.paths import OWNED_DATA_DIR

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


@dataclass(frozen=True)
class Filler:
    """One fill's filler, as its record names it."""

    directory: str
    run_id: str
    jobid: str
    host: str


def records(run_dir: Path) -> tuple[list[Filler], list[str]]:
    """The fills a run directory's records name (each directory once), and what could
    not be read (each record's path and why)."""
    found: dict[str, Filler] = {}
    problems = []
    for path in sorted(run_dir.glob(RECORD_GLOB)):
        try:
            data = json.loads(path.read_text())
            if not isinstance(data, dict) or data.get("version") != RECORD_VERSION:
                raise ValueError(f"not a fill record of version {RECORD_VERSION}")
            filler = Filler(str(data["directory"]), str(data["run_id"]),
                            str(data.get("jobid") or ""), str(data.get("host") or ""))
        except (OSError, ValueError, KeyError) as err:
            problems.append(f"{path}: {err}")
            continue
        # The stage's copy may have the job id the output's lacks, or the reverse.
        known = found.get(filler.directory)
        if known is None or (not known.jobid and filler.jobid):
            found[filler.directory] = filler
    return list(found.values()), problems


def in_ledger(ledger: Path, filler: Filler) -> bool:
    """Whether the owned-data ledger records ``filler``'s directory for its run."""
    try:
        lines = (ledger / f"{filler.run_id}{guards.LEDGER_SUFFIX}").read_text().splitlines()
    except OSError:
        return False
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and entry.get("directory") == filler.directory:
            return True
    return False


def cancel_job(jobid: str) -> None:
    subprocess.run(["scancel", jobid], capture_output=True, timeout=60)


def wait_for_job(filler: Filler, wait_s: float, cancel: bool,
                 ended: Callable[[str], bool] = guards.slurm_job_ended,
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


def remove(filler: Filler, threads: int = MAX_THREADS) -> list[guards.Removal]:
    """Each node's directory (those holding the run's marker) in parallel, then the
    directory itself once they are all gone; every removal that is not ``absent``."""
    top = filler.directory
    marker = guards.owner_marker(filler.run_id)
    try:
        nodes = [e.path for e in os.scandir(top)
                 if e.is_dir(follow_symlinks=False)
                 and os.path.isfile(os.path.join(e.path, marker))]
    except FileNotFoundError:
        nodes = []
    except OSError as err:
        return [guards.Removal(top, "incomplete", 0, f"cannot list it: {err}")]
    done = []
    if nodes:
        with ThreadPoolExecutor(max(1, min(threads, len(nodes)))) as pool:
            done = list(pool.map(lambda d: guards.remove_owned(d, filler.run_id), nodes))
    # The directory itself once its nodes' are gone; else it stays, with its marker,
    # beside what is left of them (each with its own).
    if all(r.gone for r in done):
        done.append(guards.remove_owned(top, filler.run_id))
    return [r for r in done if r.status != "absent"]


def remove_fills(run_dir: Path, wait_s: float = DEFAULT_WAIT_S, cancel: bool = False,
                 ledger: Path = OWNED_DATA_DIR, host: str | None = None,
                 say: Callable[[str], None] = print, **waiting) -> int:
    """``fsaccept fill remove``: every fill of ``run_dir`` removed; 0 when nothing is
    left, 1 otherwise."""
    fillers, problems = records(run_dir)
    for p in problems:
        say(f"fill remove: a record that cannot be read: {p}")
    host = host or socket.gethostname()
    left = bool(problems)
    for filler in fillers:
        where = f"fill remove: {filler.directory}"
        if not os.path.lexists(filler.directory):
            say(f"{where}: nothing there (removed already)")
            continue
        if filler.host and filler.host != host:
            say(f"{where}: left alone: written by a run on {filler.host}, this is {host}")
            left = True
            continue
        if not (os.path.isabs(filler.directory)
                and os.path.basename(os.path.dirname(filler.directory)) == "fsaccept"):
            say(f"{where}: left alone: not where a test writes (<target>/fsaccept/...)")
            left = True
            continue
        if not in_ledger(ledger, filler):
            say(f"{where}: left alone: the owned-data ledger ({ledger}) does not record it "
                f"for run {filler.run_id}")
            left = True
            continue
        why = wait_for_job(filler, wait_s, cancel, **waiting)
        if why:
            say(f"{where}: not removed yet: {why}; the next session's sweep removes it "
                "once the job has ended")
            left = True
            continue
        removals = remove(filler)
        rest = [r.left for r in removals if r.left]
        for line in rest:
            say(f"fill remove: left: {line}")
        if rest:
            left = True
        else:
            nodes = sum(1 for r in removals if r.directory != filler.directory)
            say(f"{where}: removed ({nodes} node director{'y' if nodes == 1 else 'ies'})")
    return 1 if left else 0


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
