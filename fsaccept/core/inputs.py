"""Reading a file a person names on the command line, bounded whatever it is.

``open(path).read()`` on ``/dev/zero`` grows by about 1 GB/s until memory runs out,
and on a FIFO waits forever.  :func:`read_bytes` opens without blocking, refuses
anything that is not a regular file, and reads at most ``cap`` bytes: a file larger
than its cap is refused, never cut short (a truncated log would be judged as if it
were the whole run).  :func:`read_text` reads in pieces and, for a benchmark's output,
refuses binary data (NUL bytes) at the piece that holds it, before the rest is read.
Every refusal is an :class:`InputError` reading ``FILE: message``; the command lines
print it and exit 2.

A sign-off reads each file once (:class:`Reader`): the bytes it parses or shows and
the digest a manifest verifies are the same bytes, whatever is written in between.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from fsaccept.core.units import format_size

#: Captured benchmark output (``fsaccept parse``): a 44,080-rank IOR ``-vv`` log is
#: tens of MB, a 150 MB error log is real; 1 GiB leaves room for 20 times that.
MAX_LOG_BYTES = 1 << 30
#: A job's output the sign-off parses whole (``rfm_job.out``, ``rfm_job.err``: IOR's,
#: mdtest's...): ten times the largest real log known.  Its text, held once, and what a
#: parser makes of it stay well within :data:`MAX_LOG_BYTES`; a larger one is refused
#: before a byte of it is read.
MAX_JOB_OUTPUT_BYTES = 1 << 28
#: A ReFrame run report (``fsaccept report``, ``fsaccept nightly compare``): about
#: 7 KB per test case, so 10,000 test cases are about 70 MB.
MAX_RUN_REPORT_BYTES = 1 << 30
#: A fio job file or command line (``fsaccept parse fio --job-file``): a few KiB.
MAX_JOB_FILE_BYTES = 1 << 20
#: A job script a run report names (``rfm_job.sh``): a few KiB, never more than this.
MAX_JOB_SCRIPT_BYTES = 1 << 20
#: Read (and looked at) this much at a time.
PIECE = 1 << 20

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))


class InputError(ValueError):
    """A file that cannot be read as an input; the message starts with the file."""


# --------------------------------------------------------------------------- opening


def _open(path: Path | str, what: str) -> int:
    """A read-only descriptor of ``path``, opened without blocking (a FIFO without a
    writer must not wait: it is refused by its fstat)."""
    try:
        return os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as err:
        raise InputError(f"{path}: cannot read {what}: {err.strerror or err}") from None


def _regular(fd: int, path: Path | str, what: str) -> os.stat_result:
    """The fstat of ``fd``; InputError for anything but a regular file."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        kind = next((name for test, name in _KINDS if test(st.st_mode)), "not a regular file")
        raise InputError(f"{path}: {kind}, not a regular file: refused as {what}")
    return st


def _check_size(fd: int, path: Path | str, cap: int, what: str) -> os.stat_result:
    """Refuse what is not a regular file, or is larger than ``cap``, by its fstat."""
    st = _regular(fd, path, what)
    if st.st_size > cap:
        raise InputError(f"{path}: {st.st_size:,} bytes, more than the {cap:,} read as "
                         f"{what}: refused")
    return st


def _over_cap(path: Path | str, cap: int, what: str) -> InputError:
    """A file found larger than ``cap`` while it was read."""
    unit = f" ({format_size(cap)})" if format_size(cap) != str(cap) else ""
    return InputError(f"{path}: more than {cap:,} bytes{unit}, the most read as {what}: "
                      "refused, not cut short")


def _read_fd(fd: int, path: Path | str, cap: int, what: str) -> bytes:
    """All of ``fd``, at most ``cap`` bytes (InputError past it: a file that grew)."""
    try:
        with os.fdopen(os.dup(fd), "rb") as fh:
            # As large as its stat says (a read of cap + 1 would allocate the cap), then
            # whatever it grew by since, up to the cap.
            data = fh.read(min(os.fstat(fd).st_size, cap) + 1)
            while data and len(data) <= cap:
                more = fh.read(min(PIECE, cap + 1 - len(data)))
                if not more:
                    break
                data += more
    except OSError as err:
        raise InputError(f"{path}: cannot read {what}: {err.strerror or err}") from None
    if len(data) > cap:
        raise _over_cap(path, cap, what)
    return data


def _sha256_fd(fd: int, path: Path | str, cap: int, what: str) -> str:
    """The SHA-256 of ``fd`` read in pieces (a 1 GiB log is hashed, never held)."""
    _check_size(fd, path, cap, what)
    digest, total = hashlib.sha256(), 0
    try:
        with os.fdopen(os.dup(fd), "rb") as fh:
            while chunk := fh.read(PIECE):
                total += len(chunk)
                if total > cap:  # it grew since its stat
                    raise _over_cap(path, cap, what)
                digest.update(chunk)
    except OSError as err:
        raise InputError(f"{path}: cannot read {what}: {err.strerror or err}") from None
    return digest.hexdigest()


# --------------------------------------------------------------------------- reading


def read_bytes(path: Path | str, cap: int, what: str = "input") -> bytes:
    """The whole content of the regular file ``path``, at most ``cap`` bytes.

    ``what`` names the input in messages (``"ior output"``, ``"the run report"``).
    InputError (``FILE: message``) when the file is missing, unreadable, not a regular
    file (directory, FIFO, device such as ``/dev/zero``, socket) or larger than
    ``cap``."""
    fd = _open(path, what)
    try:
        _regular(fd, path, what)
        return _read_fd(fd, path, cap, what)
    finally:
        os.close(fd)


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
    fd = _open(path, what)
    try:
        return _sha256_fd(fd, path, cap, what)
    finally:
        os.close(fd)


def read_text(path: Path | str, cap: int, what: str = "input", *,
              binary: bool = True) -> str:
    """The regular file ``path`` as text, the way ``open(path, errors="replace").read()``
    reads it: UTF-8 with undecodable bytes replaced, CRLF and CR line ends as ``\\n``.
    Read in pieces; with ``binary=False`` (a benchmark's output, a job file) the first
    piece holding a NUL byte refuses the file as binary, before the rest is read (a
    900 MB sparse file is refused after its first MiB, not held whole)."""
    fd = _open(path, what)
    try:
        _regular(fd, path, what)
        buf = bytearray()
        with os.fdopen(os.dup(fd), "rb") as fh:
            while chunk := fh.read(PIECE):
                if not binary and b"\0" in chunk:
                    at = len(buf) + chunk.index(b"\0")
                    raise InputError(f"{path}: binary data (a NUL byte at byte {at:,}): "
                                     f"not {what}")
                buf += chunk
                if len(buf) > cap:
                    raise _over_cap(path, cap, what)
    except OSError as err:
        raise InputError(f"{path}: cannot read {what}: {err.strerror or err}") from None
    finally:
        os.close(fd)
    # Universal newlines, as TextIOWrapper reads: str.replace returns the text itself
    # when there is nothing to replace (no copy of a large log).
    text = buf.decode("utf-8", "replace")
    del buf
    return text.replace("\r\n", "\n").replace("\r", "\n")


# --------------------------------------------------------------------------- below a root


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


# --------------------------------------------------------------------------- one read


@dataclass
class _Read:
    """What a :class:`Reader` took of one file."""

    sha256: str
    size: int
    #: (st_dev, st_ino) of the file it read.
    ident: tuple[int, int]
    #: Opened below the root without a link on the way (usable as a file of the run).
    below: bool
    #: The bytes, when they were read for their content (None: digested in pieces only).
    data: bytes | None


class Reader:
    """Each file of one sign-off read once, by path: the bytes parsed or shown and the
    SHA-256 a manifest checks them against are of the same read, whatever is written
    between two uses.  ``below=True`` (the default) reads as :func:`read_below` (below
    ``root``, no symbolic link on the way, refused by its stat size), ``below=False`` as
    :func:`read_bytes` (a reference file, wherever it is; the run report, which may be a
    link); a file below ``root`` is opened below it whenever it can be, so that a later
    use as a file of the run needs no second open.

    :meth:`read` keeps the bytes (or, ``keep=False``, only their digest); :meth:`sha256`
    of a file not read for its content hashes it in pieces and keeps only its digest (a
    benchmark log is never held).  A file whose bytes were not kept and that is read
    again must still have that digest, else it is refused ("changed while the sign-off
    read it"); the sign-off reads what it shows before it verifies the manifest, and
    parses the run report once, so that does not happen there."""

    def __init__(self, root: Path | str):
        self.root = os.path.abspath(root)
        self._files: dict[str, _Read] = {}

    def read(self, path: Path | str, cap: int, what: str = "input", *,
             below: bool = True, keep: bool = True) -> bytes:
        """The bytes of ``path`` (the same bytes at every call).  ``keep=False``: only
        their digest is kept (a run report of 1 GiB, parsed once, is not held twice)."""
        key = os.path.abspath(path)
        seen = self._seen(key, path, cap, what, below)
        if seen is not None and seen.data is not None:
            return seen.data
        taken = self._take(path, cap, what, below, keep=True)
        data = taken.data or b""
        if seen is not None and (taken.sha256, taken.ident) != (seen.sha256, seen.ident):
            raise InputError(f"{path}: changed while the sign-off read it: not read as {what}")
        if not keep:
            taken.data = None
        self._files[key] = taken
        return data

    def read_text(self, path: Path | str, cap: int, what: str = "input", *,
                  binary: bool = True) -> str:
        """:func:`read_text` of a file of the run, from the bytes :meth:`read` takes of it
        (below the root, once): the text a sign-off parses is of the bytes it digests.
        ``binary=False`` refuses a NUL byte as :func:`read_text` does."""
        data = self.read(path, cap, what)
        at = -1 if binary else data.find(b"\0")
        if at >= 0:
            raise InputError(f"{path}: binary data (a NUL byte at byte {at:,}): not {what}")
        text = data.decode("utf-8", "replace")
        return text.replace("\r\n", "\n").replace("\r", "\n")

    def pieces(self, path: Path | str, cap: int, what: str = "input") -> Iterator[bytes]:
        """The bytes of ``path`` (below the root, without a link, at most ``cap``), a
        piece at a time, digested as they are read and never held whole: a reader line
        by line (a job's output of hundreds of MB) costs a piece of memory.  Read again,
        the file must have the same digest, else InputError ("changed while the sign-off
        read it"), raised at its end."""
        key = os.path.abspath(path)
        seen = self._seen(key, path, cap, what, True)
        if seen is not None and seen.data is not None:
            for at in range(0, len(seen.data), PIECE):
                yield seen.data[at:at + PIECE]
            return
        fd, opened_below = self._open(path, cap, what, True)
        digest, size = hashlib.sha256(), 0
        try:
            ident = (os.fstat(fd).st_dev, os.fstat(fd).st_ino)
            while piece := os.read(fd, PIECE):
                size += len(piece)
                if size > cap:
                    raise _over_cap(path, cap, what)
                digest.update(piece)
                yield piece
        finally:
            os.close(fd)
        taken = _Read(digest.hexdigest(), size, ident, opened_below, None)
        if seen is not None and (taken.sha256, taken.ident) != (seen.sha256, seen.ident):
            raise InputError(f"{path}: changed while the sign-off read it: not read as {what}")
        self._files[key] = taken

    def sha256(self, path: Path | str, cap: int, what: str = "input", *,
               below: bool = True) -> str:
        """The SHA-256 (hex) of ``path``: of the bytes read before, else hashed in pieces."""
        key = os.path.abspath(path)
        seen = self._seen(key, path, cap, what, below)
        if seen is None:
            seen = self._files[key] = self._take(path, cap, what, below, keep=False)
        return seen.sha256

    def _take(self, path: Path | str, cap: int, what: str, below: bool,
              keep: bool) -> _Read:
        """One read of ``path``: its bytes kept (``keep``), or only hashed in pieces."""
        fd, opened_below = self._open(path, cap, what, below)
        try:
            st = os.fstat(fd)
            data = _read_fd(fd, path, cap, what) if keep else None
            sha = (hashlib.sha256(data).hexdigest() if data is not None
                   else _sha256_fd(fd, path, cap, what))
        finally:
            os.close(fd)
        return _Read(sha, st.st_size if data is None else len(data), (st.st_dev, st.st_ino),
                     opened_below, data)

    def _open(self, path: Path | str, cap: int, what: str, below: bool) -> tuple[int, bool]:
        """(a descriptor of ``path``, whether it was opened below the root without a
        link), opened and checked as :func:`read_below` (``below``) or :func:`read_bytes`
        open theirs."""
        opened_below = True
        if below:
            fd = open_below(self.root, path, what)
        else:
            try:
                fd = open_below(self.root, path, what)
            except InputError:  # not below the root, or through a link: read as it is
                fd, opened_below = _open(path, what), False
        try:
            if below:
                _check_size(fd, path, cap, what)  # as read_below: refused by its stat size
            else:
                _regular(fd, path, what)
        except InputError:
            os.close(fd)
            raise
        return fd, opened_below

    def _seen(self, key: str, path: Path | str, cap: int, what: str,
              below: bool) -> _Read | None:
        """What was taken of ``key`` before, held to this use's rules: within ``cap``, and
        below the root without a link when asked ``below``."""
        seen = self._files.get(key)
        if seen is None:
            return None
        if seen.size > cap:
            raise (InputError(f"{path}: {seen.size:,} bytes, more than the {cap:,} read as "
                              f"{what}: refused") if below else _over_cap(path, cap, what))
        if below and not seen.below:
            # Opened through a link or from outside the root: open_below says why not.
            os.close(open_below(self.root, path, what))
            raise InputError(f"{path}: changed while the sign-off read it: not read as "
                             f"{what}")
        return seen
