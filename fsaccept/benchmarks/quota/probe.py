"""The quota check's node program: ``python -m fsaccept.benchmarks.quota.probe DIR``.

On one node, in ``DIR`` (the test's own directory below the target):

1. the site's ``set`` command puts a quota of ``--limit`` bytes on ``DIR``;
2. irreducible data is written into one file, a MiB at a time, each MiB flushed
   (``fsync``), until the file system refuses or ``--stop`` bytes are written;
3. the site's ``usage`` command is polled until the bytes it counts come within
   ``--tolerance`` of the data written, or ``--poll-s`` have passed;
4. whatever happened (a signal included: SIGTERM, SIGINT, SIGHUP), the file is removed
   and the site's ``clear`` command takes the quota away.

Each step is a line (:mod:`fsaccept.benchmarks.quota.parse`).  The commands come from
the environment (``FSACCEPT_QUOTA_SET``, ``..._CLEAR``, ``..._USAGE``: the partition's
``extras.quota``), and are given ``FSACCEPT_QUOTA_DIR`` and ``FSACCEPT_QUOTA_BYTES``.
"""

from __future__ import annotations

import argparse
import errno
import os
import re
import signal
import socket
import subprocess
import sys
import time

from fsaccept.benchmarks.quota import command
from fsaccept.benchmarks.quota.parse import EDQUOT, FORMAT, MAX_LINE, PREFIX, STOP

#: The environment variable of each of the site's commands.
COMMAND_VARIABLES = {name: f"FSACCEPT_QUOTA_{name.upper()}" for name in command.COMMANDS}
DATA_FILE = "quota.data"


class Interrupted(Exception):
    """A signal asked the program to stop: the quota is cleared first."""


def _on_signal(signum, _frame):
    raise Interrupted(signal.Signals(signum).name)


def node_name() -> str:
    """The node as Slurm names it (its step's ``SLURMD_NODENAME``), else the host's name."""
    return os.environ.get("SLURMD_NODENAME") or socket.gethostname()


def say(*words: object) -> None:
    line = " ".join(str(w) for w in words).replace("\n", " ").replace("\x00", " ")
    print(f"{PREFIX} {line}"[:MAX_LINE], flush=True)


def run_site_command(name: str, directory: str, limit: int) -> subprocess.CompletedProcess:
    env = dict(os.environ, **{command.DIR_VARIABLE: directory,
                              command.BYTES_VARIABLE: str(limit)})
    try:
        return subprocess.run(["bash", "-c", os.environ[COMMAND_VARIABLES[name]]], env=env,
                              capture_output=True, text=True, errors="replace",
                              timeout=command.COMMAND_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess([], 124, "", f"timed out after "
                                           f"{command.COMMAND_TIMEOUT_S} s")


def _message(proc: subprocess.CompletedProcess) -> str:
    text = (proc.stderr or "").strip() or (proc.stdout or "").strip()
    return text.splitlines()[-1][:300] if text else ""


def step(name: str, directory: str, limit: int) -> bool:
    proc = run_site_command(name, directory, limit)
    if proc.returncode == 0:
        say(name, "ok")
        return True
    say(name, "failed", proc.returncode, _message(proc))
    return False


def write_until_refused(path: str, stop: int) -> tuple[int, str, float]:
    """(bytes written and flushed, what stopped the writes, seconds)."""
    started = time.monotonic()
    written, stopped = 0, STOP
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as err:
        return 0, errno.errorcode.get(err.errno, "EIO"), time.monotonic() - started
    try:
        while written < stop:
            chunk = os.urandom(min(command.CHUNK, stop - written))
            view = memoryview(chunk)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
            written += len(chunk)
    except OSError as err:
        stopped = errno.errorcode.get(err.errno, "EIO")
    finally:
        try:
            os.close(fd)
        except OSError as err:
            if stopped == STOP:
                stopped = errno.errorcode.get(err.errno, "EIO")
    return written, stopped, time.monotonic() - started


#: A number of bytes the usage command may print: ASCII digits (``str.isdigit`` takes
#: ``²`` and other digits ``int`` refuses), fewer than 19 (a 64-bit count).
BYTES = re.compile(r"[0-9]{1,18}")


def usage_bytes(proc: subprocess.CompletedProcess) -> int | str:
    """The bytes the usage command printed (its first word), or why there are none."""
    if proc.returncode != 0:
        return _message(proc) or "no number printed"
    words = (proc.stdout or "").split()
    if not words:
        return "no number printed"
    if not BYTES.fullmatch(words[0]):
        return f"printed {words[0][:40]!r}, not a whole number of bytes"
    return int(words[0])


def poll_usage(directory: str, limit: int, written: int, tolerance: int,
               poll_s: float) -> None:
    started = time.monotonic()
    while True:
        proc = run_site_command("usage", directory, limit)
        t = time.monotonic() - started
        used = usage_bytes(proc)
        if isinstance(used, int):
            say("usage", f"{t:.3f}", used)
            if abs(used - written) <= tolerance:
                return
        else:
            say("usage-error", f"{t:.3f}", f"exit {proc.returncode}: {used}")
        if t >= poll_s:
            return
        time.sleep(command.POLL_S)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m fsaccept.benchmarks.quota.probe",
        description="Set a quota with the site's command, write past it, poll the usage "
                    "reported, and clear it (the environment gives the commands: "
                    + ", ".join(COMMAND_VARIABLES.values()) + ").")
    ap.add_argument("directory", help="the test's directory on the target (it exists)")
    ap.add_argument("--limit", type=int, required=True, help="the quota, in bytes")
    ap.add_argument("--stop", type=int, required=True,
                    help="bytes after which the writes stop if never refused")
    ap.add_argument("--tolerance", type=int, required=True,
                    help="bytes the usage reported may be from the data written")
    ap.add_argument("--poll-s", type=float, required=True,
                    help="seconds the usage is polled at most")
    args = ap.parse_args(argv)
    missing = [v for v in COMMAND_VARIABLES.values() if not os.environ.get(v)]
    if missing:
        print(f"{PREFIX}: {', '.join(missing)} not set: the site declares no quota "
              "commands", file=sys.stderr)
        return 2
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, _on_signal)
    directory = os.path.abspath(args.directory)
    say("version", FORMAT, "limit", args.limit, "stop", args.stop, "tolerance",
        args.tolerance, "poll_s", f"{args.poll_s:g}", "node", node_name(), "dir",
        directory)
    path = os.path.join(directory, DATA_FILE)
    try:
        if step("set", directory, args.limit):
            written, stopped, seconds = write_until_refused(path, args.stop)
            say("write", "written", written, "stopped", stopped, "seconds", f"{seconds:.3f}")
            if stopped in (EDQUOT, STOP):
                poll_usage(directory, args.limit, written, args.tolerance, args.poll_s)
    except Interrupted as why:
        print(f"{PREFIX}: stopped by {why}: clearing the quota", file=sys.stderr)
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)  # the clear runs to its end
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        except OSError as err:
            print(f"{PREFIX}: {path}: {err.strerror}", file=sys.stderr)
        step("clear", directory, args.limit)  # also after a failed set: it may be half made
        say("end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
