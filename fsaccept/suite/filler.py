"""The filler a node runs for the fill to a declared level (issue 39 §1,
``docs/user/fill.md``): the I/O half of :mod:`fsaccept.core.fill`, whose plan, stop line
and marker lines (:data:`fsaccept.core.fill.MARK`) it follows.  Run in the fill's job as
``python -I -c ... fsaccept.suite.filler COMMAND ...`` (:func:`command`), with this
Python and this checkout, isolated from the job's environment:

* ``df PATH LABEL...``: one line, ``LABEL size=N used=N avail=N itotal=N iused=N
  iavail=N``: what ``df -B1 --output=size,used,avail,itotal,iused,iavail PATH`` says
  (:func:`df`: the level is df's, read by :func:`fsaccept.core.fill.read_df`).
* ``plan SETTINGS PATH OUT ABORT NODE...``, on the batch node before anything is
  written: prints ``FSACCEPT_FILL df before ...``, makes the plan for the job's nodes
  (:func:`fsaccept.core.fill.plan`, with the ``fill:`` section, the filled tests' reserve
  and the sizing rate SETTINGS holds) and writes what each node needs to OUT (JSON); a
  plan refused prints ``ABORT the fill was refused before anything was written: WHY``
  and exits 3.
* ``fill PLAN DIR RUN_ID``, one task on each node: in ``DIR/<node>`` (made with the
  run's owner marker first, so that it is removed like all the run's data), its files
  of each size, interleaved so that the mix holds wherever it stops, in batches of at
  most ``check_bytes``; before each batch it runs df and stops when ``used`` is above
  ``stop_used`` (a df that fails stops it: ``stop=error``).  Each file is
  ``os.urandom``'s bytes (irreducible: the data-reduction probe's ``random``), written,
  fsynced (df sees what a batch wrote once it has ended) and closed by a pool of
  threads; at most one batch is in flight.  With an inode level, empty files make up
  the planned inodes.  One line: ``FSACCEPT_FILL node NODE bytes=N files=N empty=N rc=N
  stop=budget|level|error``.
* ``churn PLAN DIR RUN_ID``, once every node has filled: each round deletes, of each
  size, the files whose index ``i % stride`` is the round's offset, then writes them
  again with new data (:func:`fsaccept.core.fill.churn_plan`'s rule, on the files the
  node wrote); a line a round, ``FSACCEPT_FILL churn NODE round=R files=N bytes=N rc=N``.

SIGTERM or SIGINT (scancel, a time limit) ends a node's filler at once, after its line
with ``rc=143 stop=error``; what it wrote stays below ``DIR/<node>``, with the marker,
for the removal (``fsaccept fill remove``, the ledger's sweep).
"""

from __future__ import annotations

import heapq
import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

from fsaccept.core import fill
from fsaccept.core.units import MIB
from fsaccept.suite import owned

#: Bytes a write hands the file system at once (and asks os.urandom for).
CHUNK = MIB
#: Files per directory below a node's size directory (``<node>/<size>/<i // SHARD>/<i>``).
SHARD = 1024
#: Threads writing a node's files at once (a batch's files share them).
DEFAULT_WORKERS = 4
#: Empty files created at once (an inode level's).
EMPTY_BATCH = 256
#: Files handed to a node's threads at once (a batch of a large file system holds
#: hundreds of thousands).
IN_FLIGHT = 1024
#: A node's record of the files it wrote (per size: the first N indices), for its ageing.
STATE = ".fsaccept-fill-state.json"
#: The plan file's format.
PLAN_VERSION = 1
#: The exit status of a filler stopped by SIGTERM or SIGINT.
STOPPED_RC = 143
#: df's command line (the level is what it shows), and how long it may take.
DF_ARGS = ("df", "-B1", "--output=size,used,avail,itotal,iused,iavail")
DF_TIMEOUT_S = 120


class Stopped(Exception):
    """SIGTERM or SIGINT: the filler stops now."""


def command(root: str | None = None) -> list[str]:
    """The argv prefix that runs this module's :func:`main` with this Python, isolated
    (``-I``), importing this checkout's fsaccept (``root``: the checkout)."""
    root = root or str(Path(__file__).resolve().parents[2])
    runner = ("import sys; sys.path.insert(0, sys.argv.pop(1)); "
              "from fsaccept.suite.filler import main; main(sys.argv[1:])")
    return [sys.executable, "-I", "-c", runner, root]


def df(path: str) -> fill.Df:
    """What df says of the file system holding ``path``; OSError when df fails or hangs,
    fill.OutputError (a ValueError) when its output is not df's."""
    try:
        proc = subprocess.run([*DF_ARGS, "--", path], capture_output=True, text=True,
                              timeout=DF_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise OSError(f"df {path}: no answer within {DF_TIMEOUT_S} s") from None
    if proc.returncode != 0:
        raise OSError(f"df {path}: {proc.stderr.strip()[:200] or f'exit {proc.returncode}'}")
    return fill.read_df(proc.stdout, f"df {path}")


def node_name() -> str:
    """This node's name as Slurm gives it (else the short host name)."""
    return os.environ.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]


# --------------------------------------------------------------------------- the plan


def plan_file(p: fill.Plan) -> dict[str, Any]:
    """What the nodes need of a plan: the stop line, the batch size, each node's files,
    whether empty files make up an inode level, and the ageing rounds."""
    return {"version": PLAN_VERSION, "stop_used": p.stop_used, "check_bytes": p.check_bytes,
            "inodes": p.target_inodes is not None,
            "nodes": {n.node: {"files": [[size, count] for size, count in n.files],
                               "empty": n.empty_files} for n in p.nodes},
            "churn": {"rounds": len(p.churn),
                      "stride": p.churn[0].stride if p.churn else 0}}


def settings_of(data: dict[str, Any]) -> tuple[fill.Settings, int, float | None]:
    """(the ``fill:`` section, the filled tests' reserve in bytes, the sizing rate) of a
    settings file (what the fill's check writes: :func:`settings_file`)."""
    return (fill.Settings.of(data["fill"]), int(data["reserve_bytes"]),
            data.get("bandwidth_mib_s"))


def settings_file(section: dict[str, Any], reserve_bytes: int,
                  bandwidth_mib_s: float | None) -> dict[str, Any]:
    """The settings file's content: the reference's ``fill:`` section as written, the
    reserve and the rate (the check plans with the same three)."""
    return {"fill": section, "reserve_bytes": int(reserve_bytes),
            "bandwidth_mib_s": bandwidth_mib_s}


def make_plan(settings: dict[str, Any], path: str, nodes: list[str], out: str, abort: str,
              read_df: Callable[[str], fill.Df] = df,
              say: Callable[[str], None] = print) -> int:
    """``plan``: df before, the plan, the nodes' file; 3 (and why) when it is refused."""
    try:
        before = read_df(path)
    except (OSError, ValueError) as err:
        say(f"{abort} the fill was refused before anything was written: {err}")
        return 3
    say(f"{fill.MARK} df {fill.BEFORE} {before.text()}")
    mode, reserve, rate = settings_of(settings)
    try:
        p = fill.plan(before, mode, nodes, reserve, rate)
    except fill.PlanError as err:
        say(f"{abort} the fill was refused before anything was written: {err}")
        return 3
    Path(out).write_text(json.dumps(plan_file(p)))
    return 0


# --------------------------------------------------------------------------- the files


def file_path(home: str, size: int, index: int) -> str:
    """Where a node's file of ``size`` bytes number ``index`` is (``size`` 0: an empty
    file)."""
    kind = f"{size}B" if size else "empty"
    return os.path.join(home, kind, str(index // SHARD), str(index))


def interleaved(classes: Iterable[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    """(size, index) of every file of ``classes`` ((size, count) each), the sizes mixed
    in proportion to their counts (file ``i`` of ``n`` at ``(i + 0.5) / n``): wherever
    the filler stops, each size has written its share of the files."""
    def one(size: int, count: int) -> Iterator[tuple[float, int, int]]:
        return (((i + 0.5) / count, size, i) for i in range(count))
    for _, size, i in heapq.merge(*(one(s, n) for s, n in classes if n > 0)):
        yield size, i


def batches(files: Iterable[tuple[int, int]], check_bytes: int
            ) -> Iterator[list[tuple[int, int]]]:
    """``files`` in batches of at most ``check_bytes`` (a file larger alone)."""
    batch: list[tuple[int, int]] = []
    total = 0
    for size, i in files:
        if batch and total + size > check_bytes:
            yield batch
            batch, total = [], 0
        batch.append((size, i))
        total += size
    if batch:
        yield batch


def write_file(path: str, size: int) -> int:
    """A new file of ``size`` random bytes, fsynced and closed; its size."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    try:
        left = size
        while left:
            view = memoryview(os.urandom(min(left, CHUNK)))
            left -= len(view)
            while view:
                view = view[os.write(fd, view):]
        if size:
            os.fsync(fd)
    finally:
        os.close(fd)
    return size


class Writer:
    """Writes files below a node's directory with a pool of threads, one batch at a
    time; counts what landed."""

    def __init__(self, home: str, workers: int) -> None:
        self.home = home
        self.pool = ThreadPoolExecutor(max(1, workers))
        self.made: set[str] = set()
        self.bytes = 0
        self.files = 0

    def _dir(self, path: str) -> None:
        parent = os.path.dirname(path)
        if parent not in self.made:
            os.makedirs(parent, exist_ok=True)
            self.made.add(parent)

    def write(self, batch: list[tuple[int, int]]) -> None:
        """Write ``batch`` ((size, index) each, 0: an empty file), :data:`IN_FLIGHT`
        files handed to the threads at a time; the first error is raised once every
        file handed over has ended (the rest of the batch is not written)."""
        for start in range(0, len(batch), IN_FLIGHT):
            part = batch[start:start + IN_FLIGHT]
            paths = [file_path(self.home, size, i) for size, i in part]
            for path in paths:
                self._dir(path)
            self._ended([self.pool.submit(write_file, path, size)
                         for path, (size, _) in zip(paths, part)], count=True)

    def remove(self, batch: list[tuple[int, int]]) -> None:
        """Delete ``batch``'s files, as :meth:`write` writes them."""
        for start in range(0, len(batch), IN_FLIGHT):
            self._ended([self.pool.submit(os.unlink, file_path(self.home, size, i))
                         for size, i in batch[start:start + IN_FLIGHT]], count=False)

    def _ended(self, futures: list, count: bool) -> None:
        wait(futures)
        error = None
        for f in futures:
            if f.exception() is None:
                if count:
                    self.bytes += f.result()
                    self.files += 1
            elif error is None:
                error = f.exception()
        if error is not None:
            raise error

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)


def _stop_on_signals() -> None:
    def stop(signum, frame):
        raise Stopped(signal.Signals(signum).name)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, stop)


def fill_node(plan: dict[str, Any], directory: str, run_id: str, node: str,
              workers: int = DEFAULT_WORKERS,
              read_df: Callable[[str], fill.Df] = df,
              say: Callable[[str], None] = print) -> int:
    """``fill`` on ``node``: its files, batch by batch below the stop line, then its
    empty files; its line; its exit status (0: it wrote its share or reached the line)."""
    counts = {"bytes": 0, "files": 0, "empty": 0}

    def line(rc: int, stop: str) -> int:
        say(f"{fill.MARK} node {node} bytes={counts['bytes']} files={counts['files']} "
            f"empty={counts['empty']} rc={rc} stop={stop}")
        return rc

    mine = plan.get("nodes", {}).get(node)
    if mine is None:
        print(f"filler: {node} is not a node of the plan ({', '.join(plan.get('nodes', {}))})",
              file=sys.stderr)
        return line(2, "error")
    home = os.path.join(directory, node)
    classes = [(int(size), int(n)) for size, n in mine["files"]]
    writer = None
    try:
        os.mkdir(home)
        # The proof that it is the run's, before anything else is written there.
        open(os.path.join(home, owned.owner_marker(run_id)), "x").close()
        writer = Writer(home, workers)
        stop = "budget"
        written = {size: 0 for size, _ in classes}
        for batch in batches(interleaved(classes), int(plan["check_bytes"])):
            if read_df(home).used > int(plan["stop_used"]):
                stop = "level"
                break
            try:
                writer.write(batch)
            finally:
                counts["bytes"], counts["files"] = writer.bytes, writer.files
            for size, _ in batch:
                written[size] += 1
        Path(home, STATE).write_text(json.dumps(
            {"files": {str(size): n for size, n in written.items()}}))
        empty = int(mine.get("empty", 0))
        if plan.get("inodes"):  # the inodes of the data files not written, made up
            empty += sum(n for _, n in classes) - sum(written.values())
        for start in range(0, empty, EMPTY_BATCH):
            try:
                writer.write([(0, i) for i in range(start, min(start + EMPTY_BATCH, empty))])
            finally:
                counts["empty"] = writer.files - counts["files"]
        return line(0, stop)
    except Stopped:
        line(STOPPED_RC, "error")
        sys.stdout.flush()
        os._exit(STOPPED_RC)
    except (OSError, ValueError) as err:
        print(f"filler: {node}: {err}", file=sys.stderr)
        return line(1, "error")
    finally:
        if writer is not None:
            writer.close()


def churn_node(plan: dict[str, Any], directory: str, node: str,
               workers: int = DEFAULT_WORKERS,
               say: Callable[[str], None] = print) -> int:
    """``churn`` on ``node``: each round deletes the round's share of its files of each
    size, then writes them again; a line a round; 0, or the status of the round that
    failed (the later rounds are not run)."""
    rounds, stride = int(plan["churn"]["rounds"]), int(plan["churn"]["stride"])
    if rounds <= 0:
        return 0
    home = os.path.join(directory, node)
    writer = None
    try:
        state = json.loads(Path(home, STATE).read_text())
        counts = {int(size): int(n) for size, n in state["files"].items()}
        writer = Writer(home, workers)
        for r in range(1, rounds + 1):
            offset = (r - 1) % stride
            chosen = [(size, i) for size, n in counts.items() for i in range(offset, n, stride)]
            writer.bytes = writer.files = 0
            try:
                writer.remove(chosen)
                for batch in batches(chosen, 64 * CHUNK):
                    writer.write(batch)
            except OSError as err:
                print(f"filler: {node}: round {r}: {err}", file=sys.stderr)
                say(f"{fill.MARK} churn {node} round={r} files={writer.files} "
                    f"bytes={writer.bytes} rc=1")
                return 1
            say(f"{fill.MARK} churn {node} round={r} files={writer.files} "
                f"bytes={writer.bytes} rc=0")
        return 0
    except Stopped:
        sys.stdout.flush()
        os._exit(STOPPED_RC)
    except (OSError, ValueError, KeyError) as err:
        print(f"filler: {node}: cannot age its files: {err}", file=sys.stderr)
        say(f"{fill.MARK} churn {node} round=1 files=0 bytes=0 rc=1")
        return 1
    finally:
        if writer is not None:
            writer.close()


# --------------------------------------------------------------------------- main


def _read_plan(path: str) -> dict[str, Any]:
    data = json.loads(Path(path).read_text())
    if not isinstance(data, dict) or data.get("version") != PLAN_VERSION:
        raise ValueError(f"{path}: not a fill plan of version {PLAN_VERSION}")
    return data


def run(argv: list[str], say: Callable[[str], None] = print) -> int:
    """The command line (module docstring); the exit status."""
    if not argv:
        print("filler: df|plan|fill|churn ...", file=sys.stderr)
        return 2
    what, args = argv[0], argv[1:]
    try:
        if what == "df" and len(args) >= 2:
            say(f"{' '.join(args[1:])} {df(args[0]).text()}")
            return 0
        if what == "plan" and len(args) >= 5:
            settings, path, out, abort, *nodes = args
            return make_plan(json.loads(Path(settings).read_text()), path, nodes, out, abort,
                             say=say)
        workers = int(os.environ.get("FSACCEPT_FILL_WORKERS", DEFAULT_WORKERS))
        if what in ("fill", "churn") and len(args) == 3:
            plan_path, directory, run_id = args
            plan = _read_plan(plan_path)
            _stop_on_signals()
            if what == "fill":
                return fill_node(plan, directory, run_id, node_name(), workers, say=say)
            return churn_node(plan, directory, node_name(), workers, say=say)
    except (OSError, ValueError, KeyError) as err:
        print(f"filler: {what}: {err}", file=sys.stderr)
        return 2
    print(f"filler: {what} {' '.join(args)[:200]}: not a filler command", file=sys.stderr)
    return 2


def main(argv: list[str]) -> None:
    """Entry point (:func:`command`): exits with :func:`run`'s status."""
    code = run(argv, say=lambda text: print(text, flush=True))
    raise SystemExit(code)


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1:])
