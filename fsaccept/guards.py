"""Guards that run before any job is submitted: the harness must never harm
the file system it tests (wrong directory, wrong file system, filling it)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

GIB = 2**30


class GuardError(Exception):
    """A refusal; the message names what was found and what was expected."""


def filesystem_type(path: Path) -> str:
    """The type of the file system holding ``path``, as the kernel mounts it
    (``findmnt``: ext4, xfs, lustre, gpfs, nfs4, tmpfs, ...)."""
    proc = subprocess.run(["findmnt", "-n", "-o", "FSTYPE", "-T", str(path)],
                          capture_output=True, text=True, timeout=30)
    if proc.returncode != 0 or not proc.stdout.strip():
        raise GuardError(f"target {path}: cannot tell its file-system type "
                         f"(findmnt: {proc.stderr.strip() or 'no answer'})")
    return proc.stdout.split()[0]


def check_target(path: Path, expected_fstype: str, reference: Path) -> str:
    """Refuse a target that does not exist, is not a writable directory, or
    lives on another file-system type than the reference file says.
    Returns the file-system type found."""
    where = f"target {path} (from {reference})"
    if not path.exists():
        raise GuardError(f"{where} does not exist")
    if not path.is_dir():
        raise GuardError(f"{where} is not a directory")
    if not os.access(path, os.W_OK | os.X_OK):
        raise GuardError(f"{where} is not writable by this user")
    found = filesystem_type(path)
    if found != expected_fstype:
        raise GuardError(f"{where} is on a {found} file system, but the reference file "
                         f"expects {expected_fstype}: wrong directory or wrong mount?")
    return found


def free_bytes(path: Path) -> int:
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


def planned_volume(size_bound: int, deadline_s: int | None = None,
                   max_bandwidth_mib_s: float | None = None) -> int:
    """Bytes a phase can write: its size bound (ranks x block x segments), or,
    for a deadline-bound phase on a file system with a declared bandwidth cap,
    deadline x cap when that is less."""
    if deadline_s and max_bandwidth_mib_s:
        return min(size_bound, int(deadline_s * max_bandwidth_mib_s * 2**20))
    return size_bound


def check_capacity(path: Path, planned: int, free: int, max_fill_fraction: float) -> None:
    """Refuse when the planned data exceeds ``max_fill_fraction`` of the free space."""
    if planned > max_fill_fraction * free:
        raise GuardError(
            f"target {path}: the test plans to write up to {planned / GIB:.2f} GiB, more "
            f"than {max_fill_fraction:g} of the {free / GIB:.2f} GiB free "
            f"({max_fill_fraction * free / GIB:.2f} GiB); lower segments/block_size, "
            "declare target.max_bandwidth_mib_s, or free space")
