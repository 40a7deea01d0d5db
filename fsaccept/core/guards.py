"""Guards that run before any job is submitted: the harness must never harm
the file system it tests (wrong directory, wrong file system, filling it)."""

from __future__ import annotations

import os
import posixpath
import shlex
import subprocess
import unicodedata
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from fsaccept.core import mountopts
from fsaccept.core.units import GIB, MIB


class GuardError(Exception):
    """A refusal; the message names what was found and what was expected."""


@dataclass(frozen=True)
class Mount:
    """The mount holding a path, as ``findmnt -T`` reports it."""

    target: str   # its mount point
    source: str   # what is mounted (device, server:/export, file-system name)
    fstype: str


def mount_of(path: Path) -> Mount:
    """The mount that really holds ``path`` (symbolic links resolved first)."""
    proc = subprocess.run(["findmnt", "-n", "-P", "-o", "TARGET,SOURCE,FSTYPE", "-T",
                           os.path.realpath(path)], capture_output=True, text=True, timeout=30)
    # findmnt -P prints KEY="value" pairs; the first line is the mount itself.
    fields = dict(p.split("=", 1) for p in shlex.split((proc.stdout.splitlines() or [""])[0]))
    if proc.returncode != 0 or not fields.get("FSTYPE"):
        raise GuardError(f"target {path}: cannot tell its file system "
                         f"(findmnt: {proc.stderr.strip() or 'no answer'})")
    return Mount(fields["TARGET"], fields.get("SOURCE", ""), fields["FSTYPE"])


def filesystem_type(path: Path) -> str:
    """The type of the file system holding ``path``, as the kernel mounts it
    (``findmnt``: ext4, xfs, lustre, gpfs, nfs4, tmpfs, ...)."""
    return mount_of(path).fstype


def unsafe_characters(text: str, blanks: bool = False) -> list[str]:
    """The characters of ``text`` that no target field may hold, as reprs: control
    characters (C0, DEL, C1) and the Unicode line and paragraph separators, i.e. every
    character ``str.splitlines`` splits on (in job scripts and benchmark arguments no
    quoting keeps their meaning, and a record read back a line at a time would be cut);
    with ``blanks``, white space too (the nodes' mount answers are split on blanks).
    The one rule of both the reference check and the guard before any job."""
    return sorted({repr(c) for c in text if unicodedata.category(c) in ("Cc", "Zl", "Zp")
                   or (blanks and c.isspace())})


def check_field_text(text: str, where: str, blanks: bool = False) -> None:
    """Refuse a target field (a path; with ``blanks``, a file-system type, mount point
    or source) that holds a character of :func:`unsafe_characters`."""
    bad = unsafe_characters(text, blanks)
    if bad:
        what = "blanks or control characters" if blanks else "control characters"
        raise GuardError(f"{where}: {text!r} holds {what} ({', '.join(bad)})")


def path_within(path: str, directory: str) -> bool:
    """Whether ``path`` is ``directory`` or below it, component by component once
    ``..`` and ``.`` are resolved in the text (``/mnt/fs2`` is not below ``/mnt/fs``)."""
    parts = PurePosixPath(posixpath.normpath(path)).parts
    top = PurePosixPath(posixpath.normpath(directory)).parts
    return parts[:len(top)] == top


def check_path_text(path: str, where: str, forbidden: dict[str, str]) -> None:
    """Refuse a target path that is relative, holds control characters, or holds a
    character a benchmark splits paths on (``forbidden``: character -> why); a blank
    is allowed (every job line quotes the path)."""
    if not os.path.isabs(path):
        raise GuardError(f"{where}: {path!r} is not an absolute path")
    check_field_text(path, where)
    for char, why in forbidden.items():
        if char in path:
            raise GuardError(f"{where}: {path!r} holds {char!r}: {why}; choose a target "
                             "path without it")


def check_mount_text(fields: dict[str, str | None], where: str) -> None:
    """Refuse a file-system type, mount point or source (``fields``: key -> value, None
    when not pinned) holding blanks or control characters."""
    for key, value in fields.items():
        if value is not None:
            check_field_text(value, f"{where}{key}", blanks=True)


def check_target(path: Path, expected_fstype: str, reference: Path,
                 mount_point: str | None = None, source: str | None = None,
                 forbidden: dict[str, str] | None = None,
                 mount_options: tuple[list[str], list[str]] = ([], [])) -> Mount:
    """Refuse a target that does not exist, is not a writable directory, or
    lives on another file system than the reference file says (type, and the
    mount point and source when it pins them), or whose mount here (the login
    node's) lacks an option of ``mount_options`` (required, forbidden) or has a
    forbidden one (:mod:`fsaccept.core.mountopts`, as each node's check).  Where the tests write,
    ``<target>/fsaccept``, must really be on that file system too (a symbolic
    link must not send the writes elsewhere).  ``forbidden``: characters the
    benchmark cannot take in a path (see :func:`check_path_text`).  Returns the
    target's mount."""
    where = f"target {path} (from {reference})"
    check_path_text(str(path), where, forbidden or {})
    # The same rule as the reference check; the type may be an override of the file's.
    check_mount_text({"expected file-system type": expected_fstype,
                      "target.mount_point": mount_point, "target.source": source}, f"{where}: ")
    if not path.exists():
        raise GuardError(f"{where} does not exist")
    if not path.is_dir():
        raise GuardError(f"{where} is not a directory")
    if not os.access(path, os.W_OK | os.X_OK):
        raise GuardError(f"{where} is not writable by this user")
    found = mount_of(path)
    if found.fstype != expected_fstype:
        raise GuardError(f"{where} is on a {found.fstype} file system, but the reference file "
                         f"expects {expected_fstype}: wrong directory or wrong mount?")
    if mount_point and found.target != mount_point:
        raise GuardError(f"{where} is on the mount {found.target}, but the reference file "
                         f"pins target.mount_point {mount_point}")
    if source and found.source != source:
        raise GuardError(f"{where} is on {found.source}, but the reference file pins "
                         f"target.source {source}")
    required, forbidden_options = mount_options
    if required or forbidden_options:
        try:
            seen = mountopts.read(os.path.realpath(path), found.target, found.fstype)
        except RuntimeError as err:
            raise GuardError(f"{where}: {err}") from None
        problems = mountopts.problems(*seen, list(required), list(forbidden_options))
        if problems:
            raise GuardError(f"{where}: here (the login node), the "
                             f"{mountopts.sentence(found.target, problems)} "
                             f"({mountopts.record(*seen)}), against the reference file's "
                             "mount_options")
    data_root = path / "fsaccept"
    if data_root.exists() or data_root.is_symlink():
        real = mount_of(data_root)
        if real != found:
            raise GuardError(f"{where}: {data_root} resolves to {os.path.realpath(data_root)} "
                             f"on {real.target} ({real.fstype}), not on the target's mount "
                             f"{found.target}: the tests would write to another file system")
    return found


def check_own_file_system(where: str, path: Path, mount: Mount, reference: Path,
                          others: list[tuple[str, Path, str]]) -> None:
    """Refuse a target on the mount of another target of the same reference file
    (``others``: each one's key prefix, path and expected type): two paths on one mount
    (the same mount point and source) are one file system, and a test of one would sign
    off the other.  Another target not on its own type here (not mounted) is left to its
    own tests' guard."""
    for other_where, other_path, other_fstype in others:
        try:
            if not other_path.is_dir():
                continue
            seen = mount_of(other_path)
        except (GuardError, OSError, subprocess.SubprocessError):
            continue
        if seen.fstype == other_fstype and (seen.target, seen.source) == (mount.target,
                                                                           mount.source):
            raise GuardError(f"{reference}: {where}.path {str(path)!r} and {other_where}.path "
                             f"{str(other_path)!r} are on one mount here ({mount.target}, "
                             f"source {mount.source}): two paths on one mount are one file "
                             "system, and a test of one would sign off the other")


def fstype_reasons(seen: str, expected: str, where: str) -> list[str]:
    """The file system the job ran on must be the one expected (the live check reads
    findmnt's answer in the job; the sign-off, the type the run report recorded)."""
    if not seen:
        return [f"could not tell the file system of {where} where the job ran (findmnt)"]
    if seen != expected:
        return [f"{where} is on {seen} where the job ran, {expected} was expected: is the "
                "file system mounted there?"]
    return []


#: What the per-node check says of a node whose O_DIRECT probe passed.
#: File-system types whose data lives on this host's own disks or memory: on the
#: emulated cluster its "nodes" share one page cache (one client), so a read "from
#: another node" can still come from cache.
LOCAL_FSTYPES = frozenset({"ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "zfs", "f2fs",
                           "overlay", "vfat", "ramfs"})

ODIRECT_HONOURED = "O_DIRECT honoured"


def node_mount_reasons(answers: dict[str, list[str]], fstype: str, mount_point: str,
                       nodes: list[str], direct_io: bool) -> list[str]:
    """What the per-node check's answers (``{"FSTYPE MOUNT SOURCE ...": nodes}``, the
    nodes' own view of the target before the benchmark) say against the test: a node of
    the job that did not answer, or that saw another file-system type or mount point, or
    (a direct-I/O test) whose O_DIRECT probe did not pass."""
    out, seen = [], set()
    for answer, who in answers.items():
        fs, mp = (answer.split() + ["", ""])[:2]
        seen.update(who)
        group = ",".join(sorted(who))
        if fs != fstype or mp != mount_point:
            out.append(f"node {group} saw the target on {fs or '?'} ({mp or '?'}), not on "
                       f"{fstype} ({mount_point})")
        elif direct_io and ODIRECT_HONOURED not in answer:
            out.append(f"node {group}: the direct-I/O test has no passed O_DIRECT probe")
    missing = sorted(set(nodes) - seen)
    if missing:
        out.append(f"node {','.join(missing)} of the job did not answer the mount check")
    return out


def free_bytes(path: Path) -> int:
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


def planned_volume(size_bound: int, deadline_s: int | None = None,
                   max_bandwidth_mib_s: float | None = None) -> int:
    """Bytes a phase can write: its size bound (ranks x block x segments), or,
    for a deadline-bound phase on a file system with a declared bandwidth cap,
    deadline x cap when that is less."""
    if deadline_s and max_bandwidth_mib_s:
        return min(size_bound, int(deadline_s * max_bandwidth_mib_s * MIB))
    return size_bound


@dataclass(frozen=True)
class KeptDataset:
    """Data of this run on the target that every later test's capacity guard counts: a
    dataset a fixture keeps until a later test reads it, or what a job still running
    may write."""

    name: str        # the test that writes it
    directory: str   # its data directory
    mount: str       # mount point of the target it is on
    planned: int     # bytes it may hold (its planned volume)
    #: Its job may be writing it now: its files are not walked (that would load the
    #: metadata servers under a running benchmark), so what it has already written is
    #: counted twice, in the free space and in ``planned``: on the safe side.
    running: bool = False


class KeptData:
    """The data one run (ReFrame session) has on a target beside every later test's:
    the datasets kept for later reads, and what jobs submitted and not yet ended may
    write (ReFrame submits the next job while one runs; Slurm starts it only after)."""

    def __init__(self) -> None:
        self._kept: dict[str, KeptDataset] = {}
        self._running: dict[str, KeptDataset] = {}

    def keep(self, dataset: KeptDataset) -> None:
        self._kept[dataset.directory] = dataset

    def running(self, dataset: KeptDataset) -> None:
        """``dataset``'s job has been submitted: counted whole until it ends."""
        self._running[dataset.directory] = replace(dataset, running=True)

    def ended(self, directory: str) -> None:
        """The job writing ``directory`` has ended: the free space now shows what it
        left; a dataset kept for a later read stays kept."""
        self._running.pop(directory, None)

    def release(self, directory: str) -> None:
        """The data in ``directory`` was read (or removed): no longer held by this run."""
        self._kept.pop(directory, None)
        self._running.pop(directory, None)

    def on(self, mount: str, excluding: str = "") -> list[KeptDataset]:
        """Data held on ``mount``, but the one in ``excluding``."""
        held = {**self._kept, **self._running}
        return [d for d in held.values() if d.mount == mount and d.directory != excluding]


def bytes_used(directory: str) -> int:
    """Bytes the files below ``directory`` occupy (0 when it does not exist yet)."""
    total = 0
    for root, _, files in os.walk(directory):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
            except FileNotFoundError:
                continue
    return total


def check_capacity(path: Path, planned: int, free: int, max_fill_fraction: float,
                   kept: list[KeptDataset] = ()) -> None:
    """Refuse when the planned data, with the data this run holds on the same file
    system (``KeptData``), exceeds ``max_fill_fraction`` of the free space (the space
    the kept datasets already occupy counted as free: it is theirs; not a running
    job's, whose files are not walked)."""
    kept_bytes = sum(d.planned for d in kept)
    base = free + sum(bytes_used(d.directory) for d in kept if not d.running)
    if planned + kept_bytes <= max_fill_fraction * base:
        return
    fix = "lower segments/block_size, declare target.max_bandwidth_mib_s, or free space"
    if not kept:
        raise GuardError(
            f"target {path}: the test plans to write up to {planned / GIB:.2f} GiB, more "
            f"than {max_fill_fraction:g} of the {free / GIB:.2f} GiB free "
            f"({max_fill_fraction * free / GIB:.2f} GiB); {fix}")
    names = ", ".join(f"{d.name} {d.planned / GIB:.2f} GiB"
                      + (" (its job may still be writing)" if d.running else "") for d in kept)
    held = ("datasets for later reads or still being written" if any(d.running for d in kept)
            else "datasets for later reads")
    raise GuardError(
        f"target {path}: the test plans to write up to {planned / GIB:.2f} GiB while this "
        f"run keeps up to {kept_bytes / GIB:.2f} GiB of {held} ({names}): "
        f"together more than {max_fill_fraction:g} of the {base / GIB:.2f} GiB free before "
        f"those datasets ({max_fill_fraction * base / GIB:.2f} GiB); {fix}")
