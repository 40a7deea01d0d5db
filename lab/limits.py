"""The lab's explicit limits: one storage target made slow, or the network to the file
system's servers, on purpose, so that a test can make a slow brick, OSD or link and the
components checks must name it.

The host's loopback and disk are faster than anything the lab serves, so the lab sets its
limits itself.  A target is slowed by the CPU bandwidth controller of cgroup v1: its
daemon (a brick's ``glusterfsd``, an OSD's ``ceph-osd``) moves into a cgroup of the
lab's own, ``/sys/fs/cgroup/cpu/fsaccept-lab-<port base>/<target>``, allowed
``percent`` of one CPU.  Each limit is recorded (``<state>/limits/<target>.json``: the
pids and the cgroup each came from), and :meth:`Limits.clear` undoes exactly that: it
moves those pids back where they were, if they still run, and removes the cgroups it
made.  Nothing else on the host is touched.

The network is limited by tc on the loopback device (every lab daemon talks over it):
an HTB root qdisc of fsaccept's own handle (``fa00:``, made if ``lo`` has none; one of
another's is refused), and for this lab two classes of ``rate`` each, one for what goes
to the server address and one for what comes from it (a full-duplex link), each chosen
by a u32 filter at this lab's own priority.  Traffic no filter chooses passes unshaped
(HTB sends what has no class directly).  The record (``<state>/network-limit.json``)
names the classes and the priority; :meth:`Limits.clear` deletes exactly those, and the
root qdisc only when no class of any lab is left under it.

With ``ports`` the filters choose only what goes to those ports of the address and comes
from them (the lab's iperf3 servers): the network check then measures the limit while
the file system's own traffic passes unshaped.  That is a fixture, not a network: a
figure of the file system then exceeds the bound the network check set, as a cache's
would.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

CPU_ROOT = Path("/sys/fs/cgroup/cpu")
#: The CPU bandwidth period (cpu.cfs_period_us) a limit's quota is a share of.
PERIOD_US = 100_000
#: What ``limit --target`` gives a target by default: 2 % of one CPU.
DEFAULT_PERCENT = 2.0
#: The device, and fsaccept's HTB root qdisc on it.
NETWORK_DEVICE = "lo"
ROOT_HANDLE = "fa00:"
#: The rates ``limit --network`` accepts, bytes per second.
MIN_RATE = 1 << 20
MAX_RATE = 100 << 30


def _tc(args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(["tc", *args], capture_output=True, text=True, timeout=30)


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
    #: How tc is run (a test gives its own).
    tc: Callable[[list[str]], subprocess.CompletedProcess] = _tc

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

    # -- the network ----------------------------------------------------------------
    @property
    def network_record(self) -> Path:
        return self.state_dir / "network-limit.json"

    @property
    def classes(self) -> tuple[str, str]:
        """This lab's two HTB classes (to the servers, from them), by its port base."""
        minor = 0x4000 + (self.port_base % 0x1000) * 2
        return f"{ROOT_HANDLE}{minor:x}", f"{ROOT_HANDLE}{minor + 1:x}"

    @property
    def priority(self) -> int:
        """This lab's u32 filters' priority, by its port base."""
        return 1 + self.port_base % 0xfffe

    def network(self) -> dict | None:
        """The network limit's record (None: none is set)."""
        try:
            return json.loads(self.network_record.read_text())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as err:
            raise LimitError(f"cannot read the limit record {self.network_record}: {err}")

    def _tc_ok(self, args: list[str]) -> str:
        proc = self.tc(args)
        if proc.returncode != 0:
            raise LimitError(f"tc {' '.join(args)}: {(proc.stderr or proc.stdout).strip()}")
        return proc.stdout

    def limit_network(self, address: str, rate: int,
                      ports: tuple[int, ...] = ()) -> str:
        """Limit what goes to ``address`` and what comes from it to ``rate`` bytes/s each
        (see the module's docstring); with ``ports``, only what goes to those ports and
        comes from them.  A network already limited is limited again."""
        if not re.fullmatch(r"127(\.\d{1,3}){3}", address):
            raise LimitError(f"{address!r} is not a loopback address of the lab's servers")
        if not MIN_RATE <= rate <= MAX_RATE:
            raise LimitError(f"a rate of {rate:,} bytes/s is not between 1 MiB/s and "
                             "100 GiB/s")
        if len(ports) > 64 or not all(isinstance(p, int) and 0 < p < 65536 for p in ports):
            raise LimitError(f"ports {list(ports)[:5]}: not up to 64 ports of 1 to 65535")
        if self.network():
            self.clear_network()
        root = self._tc_ok(["qdisc", "show", "dev", NETWORK_DEVICE]).splitlines()
        ours = any(line.startswith(f"qdisc htb {ROOT_HANDLE} root") for line in root)
        if not ours and not any(line.startswith("qdisc noqueue 0: root") for line in root):
            raise LimitError(f"{NETWORK_DEVICE} has a root qdisc fsaccept did not make "
                             f"({root[0] if root else 'none shown'}): not touched")
        prio = self.priority
        filters = self._tc_ok(["filter", "show", "dev", NETWORK_DEVICE, "parent",
                               ROOT_HANDLE]) if ours else ""
        if f"pref {prio} " in filters:
            raise LimitError(f"tc filters at priority {prio} on {NETWORK_DEVICE} are not "
                             "this lab's (no record of them): not touched")
        to, back = self.classes
        burst = str(max(256 << 10, rate // 100))
        self.network_record.parent.mkdir(parents=True, exist_ok=True)
        part = self.network_record.with_suffix(".part")
        part.write_text(json.dumps({"address": address, "rate": rate, "device":
                                    NETWORK_DEVICE, "classes": [to, back],
                                    "priority": prio, "made_root": not ours,
                                    "ports": list(ports)}))
        part.replace(self.network_record)  # recorded before anything is made
        if not ours:
            self._tc_ok(["qdisc", "add", "dev", NETWORK_DEVICE, "root", "handle",
                         ROOT_HANDLE, "htb"])
        for classid in (to, back):
            self._tc_ok(["class", "add", "dev", NETWORK_DEVICE, "parent", ROOT_HANDLE,
                         "classid", classid, "htb", "rate", f"{rate * 8}bit", "ceil",
                         f"{rate * 8}bit", "burst", burst, "cburst", burst, "quantum",
                         "60000"])
        for way, classid in (("dst", to), ("src", back)):
            port_way = "dport" if way == "dst" else "sport"
            for match in ([["match", "ip", port_way, str(p), "0xffff"] for p in ports]
                          or [[]]):
                self._tc_ok(["filter", "add", "dev", NETWORK_DEVICE, "parent", ROOT_HANDLE,
                             "protocol", "ip", "prio", str(prio), "u32", "match", "ip",
                             way, f"{address}/32", *match, "flowid", classid])
        return (f"network to and from {address}{_ports(ports)}: limited to {_rate(rate)} "
                f"each way (tc htb classes {to} and {back} on {NETWORK_DEVICE})")

    def clear_network(self) -> str:
        """Undo the recorded network limit: its filters, its classes, and the root qdisc
        when no class is left under it; "" when none was set."""
        rec = self.network()
        if rec is None:
            return ""
        dev = rec["device"]
        shown = self.tc(["filter", "show", "dev", dev, "parent", ROOT_HANDLE]).stdout
        if f"pref {rec['priority']} " in shown:
            self._tc_ok(["filter", "del", "dev", dev, "parent", ROOT_HANDLE, "prio",
                         str(rec["priority"])])
        shown = self.tc(["class", "show", "dev", dev]).stdout
        for classid in rec["classes"]:
            if f"class htb {classid} " in shown:
                self._tc_ok(["class", "del", "dev", dev, "classid", classid])
        left = self.tc(["class", "show", "dev", dev]).stdout.strip()
        root = self.tc(["qdisc", "show", "dev", dev]).stdout
        if not left and f"qdisc htb {ROOT_HANDLE} root" in root:
            self._tc_ok(["qdisc", "del", "dev", dev, "root"])
        self.network_record.unlink()
        return (f"network to and from {rec['address']}{_ports(rec.get('ports') or ())} "
                f"({_rate(rec['rate'])})")

    def describe(self) -> str:
        """``limits: target b2 at 2 % of one CPU, ...``; "" when none is set."""
        limits = [f"target {t} at {r['percent']:g} % of one CPU"
                  for t, r in self.current().items()]
        if (net := self.network()):
            limits.append(f"network to and from {net['address']}"
                          f"{_ports(net.get('ports') or ())} at {_rate(net['rate'])} each way")
        return "limits: " + ", ".join(limits) if limits else ""

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
        if (net := self.clear_network()):
            said.append(net)
        return "limits cleared: " + (", ".join(said) if said else "none was set")


def _ports(ports) -> str:
    """`` ports 17136-17139`` (only those ports limited), or ""."""
    if not ports:
        return ""
    return (f" ports {min(ports)}-{max(ports)}" if len(ports) > 1 else f" port {ports[0]}")


def _rate(rate: int) -> str:
    return f"{rate / (1 << 20):g} MiB/s"
