"""The lab's explicit limits: one storage target made slow, on purpose, so that a test can
make a slow brick or OSD and the survey must name it.

The host's loopback and disk are faster than anything the lab serves, so the lab sets its
limits itself.  A target is slowed by the CPU bandwidth controller of cgroup v1: its
daemon (a brick's ``glusterfsd``, an OSD's ``ceph-osd``) moves into a cgroup of the
lab's own, ``/sys/fs/cgroup/cpu/fsaccept-lab-<port base>/<target>``, allowed
``percent`` of one CPU.  Each limit is recorded (``<state>/limits/<target>.json``: the
pids and the cgroup each came from), and :meth:`Limits.clear` undoes exactly that: it
moves those pids back where they were, if they still run, and removes the cgroups it
made.  Nothing else on the host is touched.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

CPU_ROOT = Path("/sys/fs/cgroup/cpu")
#: The CPU bandwidth period (cpu.cfs_period_us) a limit's quota is a share of.
PERIOD_US = 100_000
#: What ``limit --target`` gives a target by default: 2 % of one CPU.
DEFAULT_PERCENT = 2.0


class LimitError(RuntimeError):
    """A limit that cannot be set or undone; the message says why."""


def _cgroup_of(pid: int) -> str:
    """The cpu controller's cgroup of ``pid`` (``/`` for the root)."""
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if "cpu" in controllers.split(","):
            return path
    raise LimitError(f"pid {pid} has no cpu cgroup (is cgroup v1's cpu controller mounted "
                     f"at {CPU_ROOT}?)")


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


@dataclass(frozen=True)
class Limits:
    """The limits of one lab (its state directory and port base)."""

    state_dir: Path
    port_base: int
    cpu_root: Path = CPU_ROOT

    @property
    def record_dir(self) -> Path:
        return self.state_dir / "limits"

    @property
    def group_root(self) -> Path:
        return self.cpu_root / f"fsaccept-lab-{self.port_base}"

    def record(self, target: str) -> Path:
        return self.record_dir / f"{target}.json"

    def slow_target(self, target: str, pids: list[int],
                    percent: float = DEFAULT_PERCENT) -> str:
        """Move ``pids`` (the target's daemon) into a cgroup allowed ``percent`` of one
        CPU.  A target already limited is limited again at the new rate."""
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,40}", target):
            raise LimitError(f"target {target!r} is not a target name like b2 or osd.1")
        if not pids:
            raise LimitError(f"target {target}: no daemon runs")
        if not 0.1 <= percent <= 100:
            raise LimitError(f"a CPU share of {percent} % is not between 0.1 and 100")
        if not (self.cpu_root / "cgroup.procs").exists():
            raise LimitError(f"cgroup v1's cpu controller is not mounted at {self.cpu_root}")
        old = self._read(target)
        origins = dict(old["origins"]) if old else {}
        group = self.group_root / target
        group.mkdir(parents=True, exist_ok=True)
        (group / "cpu.cfs_period_us").write_text(str(PERIOD_US))
        (group / "cpu.cfs_quota_us").write_text(str(int(PERIOD_US * percent / 100)))
        for pid in pids:
            origins.setdefault(str(pid), _cgroup_of(pid))
        self.record_dir.mkdir(parents=True, exist_ok=True)
        part = self.record(target).with_suffix(".part")
        part.write_text(json.dumps({"target": target, "group": str(group),
                                    "percent": percent, "origins": origins}))
        part.replace(self.record(target))  # recorded before any pid moves
        for pid in pids:
            (group / "cgroup.procs").write_text(str(pid))
        return (f"target {target}: its daemon (pid {', '.join(map(str, pids))}) limited to "
                f"{percent:g} % of one CPU (cgroup {group})")

    def _read(self, target: str) -> dict | None:
        try:
            return json.loads(self.record(target).read_text())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as err:
            raise LimitError(f"cannot read the limit record {self.record(target)}: {err}")

    def current(self) -> dict[str, dict]:
        """Target -> its record, for every limit set."""
        if not self.record_dir.is_dir():
            return {}
        return {f.stem: r for f in sorted(self.record_dir.glob("*.json"))
                if (r := self._read(f.stem)) is not None}

    def describe(self) -> str:
        """``limits: target b2 at 2 % of one CPU, ...``; "" when none is set."""
        limits = self.current()
        if not limits:
            return ""
        return "limits: " + ", ".join(f"target {t} at {r['percent']:g} % of one CPU"
                                      for t, r in limits.items())

    def clear(self) -> str:
        """Undo every recorded limit: each pid back to its own cgroup if it still runs,
        the lab's cgroups removed, the records removed."""
        said = []
        for target, rec in self.current().items():
            moved = 0
            for pid, origin in rec["origins"].items():
                if _alive(int(pid)):
                    back = self.cpu_root / origin.lstrip("/")
                    try:
                        (back / "cgroup.procs").write_text(pid)
                        moved += 1
                    except OSError as err:
                        raise LimitError(f"target {target}: cannot move pid {pid} back to "
                                         f"{back}: {err}")
            group = Path(rec["group"])
            if group.is_dir() and group.parent == self.group_root:
                group.rmdir()
            self.record(target).unlink()
            said.append(f"target {target} ({moved} pid(s) moved back)")
        if self.group_root.is_dir() and not any(p.is_dir() for p in self.group_root.iterdir()):
            self.group_root.rmdir()
        return "limits cleared: " + (", ".join(said) if said else "none was set")
