#!/usr/bin/env python3
"""Benchmark the semantics check's namespace listing against a bare find (not a test).

Creates a directory of ``--files`` (100,000) empty files under ``--dir`` (/var/tmp),
then lists it ``--runs`` (5) times each, in turns, after one warm-up each (warm caches
both):

- the semantics program's listing (``checks/semantics/src/fsaccept_semantics.c -L DIR``:
  the very function its namespace cases' reader runs, readdir and an fstatat of every
  entry), built here with ``mpicc -O2`` as the check builds it, or ``--program``;
- ``find DIR -printf '%s'`` (readdir and a stat of every entry), its output to /dev/null.

Each run is a whole process, timed from outside: entries/s is the files over its wall
time.  It prints both medians, the program's own timer beside them (the check's figure:
the listing without the process's start), and the ratio.  Goal: the program's rate at
least 0.9 of find's, process against process.  Exits 1 below it, 2 on bad input.  The
directory it made is removed, whatever happens.

    python bench/namespace_listing.py [--files 100000] [--dir /var/tmp] [--runs 5]
                                      [--program PATH]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "checks" / "semantics" / "src" / "fsaccept_semantics.c"
GOAL = 0.9
#: The program's -L line (checks/semantics/src/fsaccept_semantics.c: list_only).
LISTING = re.compile(r"^fsaccept-semantics listing entries=(\d+) errors=(\d+) "
                     r"seconds=(\S+) rate=(\S+) dir=")


def build(out: Path) -> Path:
    """The program, built with the environment's MPI compiler and the check's flags."""
    mpicc = shutil.which("mpicc")
    if not mpicc:
        sys.exit("namespace_listing: no mpicc on PATH: give --program PATH")
    exe = out / "fsaccept_semantics"
    proc = subprocess.run([mpicc, "-O2", "-o", str(exe), str(SOURCE)], capture_output=True,
                          text=True)
    if proc.returncode != 0:
        sys.exit(f"namespace_listing: {SOURCE} did not build:\n{proc.stderr}")
    return exe


def populate(directory: Path, files: int) -> None:
    """``files`` empty files f0..f<files-1>, as the namespace-list case's writer names them."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for i in range(files):
            os.close(os.open(f"f{i}", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644,
                             dir_fd=fd))
    finally:
        os.close(fd)


def listing(program: Path, directory: Path) -> tuple[float, float, int]:
    """(wall seconds, the program's own seconds, entries) of one -L run."""
    t0 = time.perf_counter()
    proc = subprocess.run([str(program), "-L", str(directory)], capture_output=True,
                          text=True)
    wall = time.perf_counter() - t0
    m = LISTING.match(proc.stdout)
    if proc.returncode != 0 or not m or m.group(2) != "0":
        sys.exit(f"namespace_listing: {program} -L exited {proc.returncode}: "
                 f"{proc.stdout}{proc.stderr}")
    return wall, float(m.group(3)), int(m.group(1))


def find(directory: Path, out: int = subprocess.DEVNULL) -> float:
    """Wall seconds of one ``find DIR -printf '%s'``."""
    t0 = time.perf_counter()
    proc = subprocess.run(["find", str(directory), "-printf", "%s"], stdout=out,
                          stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"namespace_listing: find exited {proc.returncode}: {proc.stderr!r}")
    return wall


def find_count(directory: Path) -> int:
    """Entries find lists below the directory (one line each)."""
    proc = subprocess.run(["find", str(directory), "-mindepth", "1", "-printf", "%s\\n"],
                          capture_output=True, text=True, check=True)
    return len(proc.stdout.splitlines())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=100_000, help="files in the directory")
    ap.add_argument("--dir", type=Path, default=Path("/var/tmp"),
                    help="where to make the directory (a temporary one under it)")
    ap.add_argument("--runs", type=int, default=5, help="timed runs of each, in turns")
    ap.add_argument("--program", type=Path,
                    help="a built semantics program (default: build it with mpicc)")
    args = ap.parse_args(argv)
    if args.files < 1 or args.runs < 1:
        ap.error("--files and --runs must be at least 1")
    if not args.dir.is_dir():
        ap.error(f"--dir {args.dir}: not a directory")
    if args.program is not None and not os.access(args.program, os.X_OK):
        ap.error(f"--program {args.program}: not an executable file")
    if not shutil.which("find"):
        ap.error("no find on PATH")
    work = Path(tempfile.mkdtemp(prefix="fsaccept-bench-namespace-", dir=args.dir))
    try:
        program = args.program or build(work)
        listed = work / "listed"
        listed.mkdir()
        t0 = time.perf_counter()
        populate(listed, args.files)
        created = time.perf_counter() - t0
        # Warm both, and check that both see every file.
        _, _, entries = listing(program, listed)
        seen_by_find = find_count(listed)
        if entries != args.files or seen_by_find != args.files:
            sys.exit(f"namespace_listing: {args.files} files made, the program listed "
                     f"{entries}, find {seen_by_find}")
        walls, owns, finds = [], [], []
        for _ in range(args.runs):
            wall, own, _ = listing(program, listed)
            walls.append(wall)
            owns.append(own)
            finds.append(find(listed))
        rate = args.files / statistics.median(walls)
        own_rate = args.files / statistics.median(owns)
        find_rate = args.files / statistics.median(finds)
        ratio = rate / find_rate
        print(f"{args.files:,} empty files in {listed} (made in {created:.1f} s), "
              f"{args.runs} runs each after a warm-up, medians:")
        print(f"  find -printf '%s':          {find_rate:12,.0f} entries/s "
              f"({statistics.median(finds) * 1000:.1f} ms a process)")
        print(f"  the program's listing (-L): {rate:12,.0f} entries/s "
              f"({statistics.median(walls) * 1000:.1f} ms a process)")
        print(f"  its own timer (the check's figure): {own_rate:,.0f} entries/s "
              f"({statistics.median(owns) * 1000:.1f} ms)")
        print(f"  ratio, process to process: {ratio:.2f} (goal >= {GOAL}); its own "
              f"timer to find: {own_rate / find_rate:.2f}: "
              f"{'ok' if ratio >= GOAL else 'BELOW THE GOAL'}")
        return 0 if ratio >= GOAL else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
