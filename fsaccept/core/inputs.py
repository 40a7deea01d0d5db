"""Reading a file a person names on the command line, bounded whatever it is.

``open(path).read()`` on ``/dev/zero`` grows by about 1 GB/s until memory runs out,
and on a FIFO waits forever.  :func:`read_bytes` opens without blocking, refuses
anything that is not a regular file, and reads at most ``cap`` bytes: a file larger
than its cap is refused, never cut short (a truncated log would be judged as if it
were the whole run).  Every refusal is an :class:`InputError` reading
``FILE: message``; the command lines print it and exit 2.
"""

from __future__ import annotations

import hashlib
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
    fd = open_below(root, path, what)
    try:
        _check_size(fd, path, cap, what)
        return _read_fd(fd, path, cap, what)
    finally:
        os.close(fd)


def sha256_below(root: Path | str, path: Path | str, cap: int, what: str = "input") -> str:
    """The SHA-256 (hex) of a file below ``root``, opened as :func:`read_below` opens it
    and read in pieces (a 1 GiB benchmark log is hashed, never held in memory)."""
    fd = open_below(root, path, what)
    try:
        return _sha256_fd(fd, path, cap, what)
    finally:
        os.close(fd)


def sha256_file(path: Path | str, cap: int, what: str = "input") -> str:
    """The SHA-256 (hex) of the regular file ``path`` (a reference file, wherever it is),
    at most ``cap`` bytes by its ``stat`` size, read in pieces."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as err:
        raise InputError(f"{path}: cannot read {what}: {err.strerror or err}") from None
    try:
        return _sha256_fd(fd, path, cap, what)
    finally:
        os.close(fd)


def is_below(root: Path | str, path: Path | str) -> bool:
    """Whether ``path`` lies below ``root`` (or is it), by components once both are made
    absolute and ``..`` is resolved lexically: no file is looked at."""
    root, path = Path(os.path.abspath(root)), Path(os.path.abspath(path))
    return root == path or root in path.parents


def open_below(root: Path | str, path: Path | str, what: str = "input") -> int:
    """A read-only descriptor of ``path``, opened component by component from ``root``
    with O_NOFOLLOW (no symbolic link anywhere below the root, none swapped in between a
    check and the open) and without blocking (a FIFO is refused by the caller's fstat);
    InputError when ``path`` is not below ``root`` or cannot be opened so."""
    root, path = Path(os.path.abspath(root)), Path(os.path.abspath(path))
    if not is_below(root, path):
        raise InputError(f"{path}: not below the run's directory {root}: not read as {what}")
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as err:
        raise InputError(f"{path}: cannot read {what}: {root}: {err.strerror or err}") from None
    here = root
    parts = path.relative_to(root).parts
    for i, part in enumerate(parts):
        here = here / part
        last = i == len(parts) - 1
        flags = (os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
                 | (os.O_NONBLOCK if last else os.O_DIRECTORY))
        try:
            nfd = os.open(part, flags, dir_fd=fd)
        except OSError as err:
            raise InputError(_open_error(path, here, part, fd, err, what)) from None
        finally:
            os.close(fd)
        fd = nfd
    return fd


def _open_error(path: Path, here: Path, part: str, dir_fd: int, err: OSError,
                what: str) -> str:
    try:
        link = stat.S_ISLNK(os.lstat(part, dir_fd=dir_fd).st_mode)
    except OSError:
        link = False
    if link:
        return f"{path}: {here} is a symbolic link: not read as {what}"
    return f"{path}: cannot read {what}: {err.strerror or err}"


def _check_size(fd: int, path: Path | str, cap: int, what: str) -> None:
    """Refuse what is not a regular file, or is larger than ``cap``, by its fstat."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        kind = next((name for test, name in _KINDS if test(st.st_mode)), "not a regular file")
        raise InputError(f"{path}: {kind}, not a regular file: refused as {what}")
    if st.st_size > cap:
        raise InputError(f"{path}: {st.st_size:,} bytes, more than the {cap:,} read as "
                         f"{what}: refused")


def _read_fd(fd: int, path: Path | str, cap: int, what: str) -> bytes:
    try:
        with os.fdopen(os.dup(fd), "rb") as fh:
            data = fh.read(cap + 1)
    except OSError as err:
        raise InputError(f"{path}: cannot read {what}: {err.strerror or err}") from None
    if len(data) > cap:  # it grew since its stat
        raise InputError(f"{path}: more than {cap:,} bytes, the most read as {what}: refused")
    return data


def _sha256_fd(fd: int, path: Path | str, cap: int, what: str) -> str:
    _check_size(fd, path, cap, what)
    digest, total = hashlib.sha256(), 0
    try:
        with os.fdopen(os.dup(fd), "rb") as fh:
            while chunk := fh.read(1 << 20):
                total += len(chunk)
                if total > cap:  # it grew since its stat
                    raise InputError(f"{path}: more than {cap:,} bytes, the most read as "
                                     f"{what}: refused")
                digest.update(chunk)
    except OSError as err:
        raise InputError(f"{path}: cannot read {what}: {err.strerror or err}") from None
    return digest.hexdigest()


def read_text(path: Path | str, cap: int, what: str = "input") -> str:
    """:func:`read_bytes` as text, the way ``open(path, errors="replace").read()`` reads
    it: UTF-8 with undecodable bytes replaced, CRLF and CR line ends as ``\\n``."""
    raw = read_bytes(path, cap, what)
    return io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8", errors="replace").read()
