"""Guards that run before any job is submitted: the harness must never harm
the file system it tests (wrong directory, wrong file system, filling it)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

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


def _control_characters(text: str) -> list[str]:
    """Characters no target path may hold: in job scripts and benchmark arguments
    no quoting keeps their meaning (newlines, escapes)."""
    return sorted({repr(c) for c in text if ord(c) < 32 or ord(c) == 127})


def check_path_text(path: str, where: str, forbidden: dict[str, str]) -> None:
    """Refuse a target path that is relative, holds control characters, or holds a
    character a benchmark splits paths on (``forbidden``: character -> why)."""
    if not os.path.isabs(path):
        raise GuardError(f"{where}: {path!r} is not an absolute path")
    controls = _control_characters(path)
    if controls:
        raise GuardError(f"{where}: {path!r} holds control characters ({', '.join(controls)})")
    for char, why in forbidden.items():
        if char in path:
            raise GuardError(f"{where}: {path!r} holds {char!r}: {why}; choose a target "
                             "path without it")


def check_target(path: Path, expected_fstype: str, reference: Path,
                 mount_point: str | None = None, source: str | None = None,
                 forbidden: dict[str, str] | None = None) -> Mount:
    """Refuse a target that does not exist, is not a writable directory, or
    lives on another file system than the reference file says (type, and the
    mount point and source when it pins them).  Where the tests write,
    ``<target>/fsaccept``, must really be on that file system too (a symbolic
    link must not send the writes elsewhere).  ``forbidden``: characters the
    benchmark cannot take in a path (see :func:`check_path_text`).  Returns the
    target's mount."""
    where = f"target {path} (from {reference})"
    check_path_text(str(path), where, forbidden or {})
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
    data_root = path / "fsaccept"
    if data_root.exists() or data_root.is_symlink():
        real = mount_of(data_root)
        if real != found:
            raise GuardError(f"{where}: {data_root} resolves to {os.path.realpath(data_root)} "
                             f"on {real.target} ({real.fstype}), not on the target's mount "
                             f"{found.target}: the tests would write to another file system")
    return found


def owner_marker(run_id: str) -> str:
    """Name of the file a job writes into the data directory it created; cleanup
    removes a directory only when it holds this run's marker."""
    return f".fsaccept-owner-{run_id}"


def remove_owned(directory: str, run_id: str) -> bool:
    """Remove ``directory`` if, and only if, this run created it; True if removed."""
    if os.path.isfile(os.path.join(directory, owner_marker(run_id))) and \
            not os.path.islink(directory):
        shutil.rmtree(directory, ignore_errors=True)
        return True
    return False


def removal_problem(directory: str, run_id: str) -> str:
    """Remove ``directory`` if, and only if, this run created it; "" when it is gone
    (or is not ours), else one line saying what was left and why: on a distributed
    file system with a server down, the owner marker or part of the data may be out of
    reach (then nothing is removed that ownership cannot be proven for)."""
    marker = os.path.join(directory, owner_marker(run_id))
    try:
        os.stat(marker)
    except FileNotFoundError:
        return ""  # never created, already removed, or not this run's: left alone
    except OSError as err:
        return (f"{directory} was left in place: its owner marker could not be read "
                f"({err.strerror})")
    if os.path.islink(directory):
        return ""
    errors: list[str] = []

    def failed(_f, path, exc) -> None:
        errors.append(f"{path}: {getattr(exc[1], 'strerror', None) or exc[1]}")

    # The marker goes last, and comes back if the directory could not go: a cleanup
    # that was cut short can be resumed, and is never mistaken for someone else's data.
    try:
        entries = [e for e in os.listdir(directory) if e != owner_marker(run_id)]
    except OSError as err:
        entries = []
        errors.append(f"{directory}: {err.strerror}")
    for entry in entries:
        path = os.path.join(directory, entry)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, onerror=failed)
        else:
            try:
                os.unlink(path)
            except OSError as err:
                failed(None, path, (None, err))
    if not errors:
        try:
            os.unlink(marker)
            os.rmdir(directory)
        except OSError as err:
            failed(None, directory, (None, err))
            try:
                open(marker, "a").close()
            except OSError:
                pass
    if not os.path.lexists(directory):
        return ""
    left = sum(len(files) + len(dirs) for _, dirs, files in os.walk(directory))
    return (f"could not remove {directory} ({left} entries left"
            + (f"; {errors[0]}" if errors else "") + ")")


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
    """A dataset a fixture writes and keeps until a later test reads it."""

    name: str        # the test that writes it
    directory: str   # its data directory
    mount: str       # mount point of the target it is on
    planned: int     # bytes it may hold (its planned volume)


class KeptData:
    """The datasets one run (ReFrame session) keeps for later reads: they are on
    the target at the same time as every later test's data, so the capacity
    guard counts them all, not each test alone."""

    def __init__(self) -> None:
        self._kept: dict[str, KeptDataset] = {}

    def keep(self, dataset: KeptDataset) -> None:
        self._kept[dataset.directory] = dataset

    def release(self, directory: str) -> None:
        """The dataset in ``directory`` was read (or removed): no longer held by this run."""
        self._kept.pop(directory, None)

    def on(self, mount: str, excluding: str = "") -> list[KeptDataset]:
        """Datasets kept on ``mount``, but the one in ``excluding``."""
        return [d for d in self._kept.values() if d.mount == mount and d.directory != excluding]


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
    """Refuse when the planned data, with every dataset this run keeps on the same
    file system for a later read, exceeds ``max_fill_fraction`` of the free space
    (the space the kept datasets already occupy counted as free: it is theirs)."""
    kept_bytes = sum(d.planned for d in kept)
    base = free + sum(bytes_used(d.directory) for d in kept)
    if planned + kept_bytes <= max_fill_fraction * base:
        return
    fix = "lower segments/block_size, declare target.max_bandwidth_mib_s, or free space"
    if not kept:
        raise GuardError(
            f"target {path}: the test plans to write up to {planned / GIB:.2f} GiB, more "
            f"than {max_fill_fraction:g} of the {free / GIB:.2f} GiB free "
            f"({max_fill_fraction * free / GIB:.2f} GiB); {fix}")
    names = ", ".join(f"{d.name} {d.planned / GIB:.2f} GiB" for d in kept)
    raise GuardError(
        f"target {path}: the test plans to write up to {planned / GIB:.2f} GiB while this "
        f"run keeps up to {kept_bytes / GIB:.2f} GiB of datasets for later reads ({names}): "
        f"together more than {max_fill_fraction:g} of the {base / GIB:.2f} GiB free before "
        f"those datasets ({max_fill_fraction * base / GIB:.2f} GiB); {fix}")
