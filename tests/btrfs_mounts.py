"""btrfs loop mounts for the data-reduction tests (issue 23): a compressing one
(``compress-force=zstd``) and a plain one, unmounted and deleted afterwards, also when a
test or the set-up fails.  Needs root, ``mkfs.btrfs`` (btrfs-progs, in scripts/setup) and
loop devices; skips saying so without them."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

MOUNTS = {"compressing": "compress-force=zstd", "plain": "defaults"}


@contextlib.contextmanager
def btrfs_loop_mounts(base: Path, size: str = "1G", names=tuple(MOUNTS)):
    """{name: mount point} below ``base`` (made here and removed afterwards)."""
    if os.geteuid() != 0 or not shutil.which("mkfs.btrfs"):
        pytest.skip("needs root and mkfs.btrfs (btrfs-progs: scripts/setup installs it)")
    mounts: dict[str, Path] = {}
    base.mkdir(parents=True, exist_ok=True)
    try:
        for name in names:
            img, mnt = base / f"{name}.img", base / name
            try:
                subprocess.run(["truncate", "-s", size, str(img)], check=True)
                subprocess.run(["mkfs.btrfs", "-q", str(img)], check=True, capture_output=True)
                mnt.mkdir()
                subprocess.run(["mount", "-o", f"loop,{MOUNTS[name]}", str(img), str(mnt)],
                               check=True, capture_output=True, text=True)
            except subprocess.CalledProcessError as err:
                pytest.skip(f"cannot mount a btrfs loop file here: {err.stderr or err}")
            mounts[name] = mnt
        yield mounts
    finally:
        for mnt in mounts.values():
            subprocess.run(["umount", str(mnt)], check=False)  # -o loop: the device goes too
        shutil.rmtree(base, ignore_errors=True)
