"""Reading a file a person names on the command line, bounded whatever it is.

``open(path).read()`` on ``/dev/zero`` grows by about 1 GB/s until memory runs out,
and on a FIFO waits forever.  :func:`read_bytes` opens without blocking, refuses
anything that is not a regular file, and reads at most ``cap`` bytes: a file larger
than its cap is refused, never cut short (a truncated log would be judged as if it
were the whole run).  Every refusal is an :class:`InputError` reading
``FILE: message``; the command lines print it and exit 2.
"""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path

from fsaccept.core.units import format_size

#: Captured benchmark output (``fsaccept parse``): a 44,080-rank IOR ``-vv`` log is
#: tens of MB, a 150 MB error log is real; 1 GiB leaves room for 20 times that.
MAX_LOG_BYTES = 1 << 30
#: A ReFrame run report (``fsaccept report``, ``fsaccept nightly compare``): about
#: 7 KB per test case, so 10,000 test cases are about 70 MB.
MAX_RUN_REPORT_BYTES = 1 << 30
#: A fio job file or command line (``fsaccept parse fio --job-file``): a few KiB.
MAX_JOB_FILE_BYTES = 1 << 20

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))


class InputError(ValueError):
    """A file that cannot be read as an input; the message starts with the file."""


def read_bytes(path: Path | str, cap: int, what: str = "input") -> bytes:
    """The whole content of the regular file ``path``, at most ``cap`` bytes.

    ``what`` names the input in messages (``"ior output"``, ``"the run report"``).  InputError (``FILE: message``) when the file is missing, unreadable,
    not a regular file (directory, FIFO, device such as ``/dev/zero``, socket) or
    larger than ``cap``."""
    try:
        # O_NONBLOCK: opening a FIFO without a writer must not wait; it is refused below.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as err:
        raise InputError(f"{path}: cannot read {what}: {err.strerror or err}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
            raise InputError(f"{path}: {kind}, not a regular file: refused as {what}")
        with os.fdopen(os.dup(fd), "rb") as fh:
            data = fh.read(cap + 1)
    except OSError as err:
        raise InputError(f"{path}: cannot read {what}: {err.strerror or err}") from None
    finally:
        os.close(fd)
    if len(data) > cap:
        unit = f" ({format_size(cap)})" if format_size(cap) != str(cap) else ""
        raise InputError(f"{path}: more than {cap:,} bytes{unit}, the most read as {what}: "
                         "refused, not cut short")
    return data


#: A job script a run report names (``rfm_job.sh``): a few KiB, never more than this.
MAX_JOB_SCRIPT_BYTES = 1 << 20


def read_below(root: Path | str, path: Path | str, cap: int, what: str = "input") -> bytes:
    """:func:`read_bytes` of a file a run report names, only when it lies below ``root``
    (the run's own directory) and is reached without a symbolic link on the way: an
    edited run report must not make the report read, or show, any other file (a job
    script "at" /etc/shadow).  Its ``stat`` size is checked before it is read."""
    root, path = Path(os.path.abspath(root)), Path(os.path.abspath(path))
    if root != path and root not in path.parents:
        raise InputError(f"{path}: not below the run's directory {root}: not read as {what}")
    here = root
    for part in path.relative_to(root).parts:  # no link anywhere below the root
        here = here / part
        try:
            if stat.S_ISLNK(os.lstat(here).st_mode):
                raise InputError(f"{path}: {here} is a symbolic link: not read as {what}")
        except OSError as err:
            raise InputError(f"{path}: cannot read {what}: {err.strerror or err}") from None
    size = os.lstat(path).st_size
    if size > cap:
        raise InputError(f"{path}: {size:,} bytes, more than the {cap:,} read as {what}: "
                         "refused")
    return read_bytes(path, cap, what)


def read_text(path: Path | str, cap: int, what: str = "input") -> str:
    """:func:`read_bytes` as text, the way ``open(path, errors="replace").read()`` reads
    it: UTF-8 with undecodable bytes replaced, CRLF and CR line ends as ``\\n``."""
    raw = read_bytes(path, cap, what)
    return io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8", errors="replace").read()
