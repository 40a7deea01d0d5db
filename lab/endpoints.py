"""The lab's network endpoints: one iperf3 server per node on the file system's server
address, as a site runs ``iperf3 -s`` on its storage servers for the network check.

An iperf3 server serves one test at a time, so the lab starts one per node, on ports
``port_base + IPERF3_PORTS[0]`` onwards: every node can then measure at once.  Each runs
as a daemon (``iperf3 -s -D``) with a pid file of its own under the state directory, and
is stopped by that pid, once its command line is checked to be that server's.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

#: The servers listen on port_base + 136 ... (one per node, at most 64), below the
#: bricks' ports (+ 200..299) and above the accounting's (+ 100, 101).
IPERF3_PORTS = (136, 199)


class EndpointError(RuntimeError):
    """An endpoint that cannot be started; the message says why."""


@dataclass(frozen=True)
class Endpoints:
    """The iperf3 servers of one lab: its state directory, port base, server address and
    node count."""

    state_dir: Path
    port_base: int
    address: str
    nodes: int

    @property
    def ports(self) -> list[int]:
        first = self.port_base + IPERF3_PORTS[0]
        return list(range(first, first + self.nodes))

    @property
    def port_range(self) -> tuple[int, int]:
        return self.port_base + IPERF3_PORTS[0], self.port_base + IPERF3_PORTS[1]

    def pid_file(self, port: int) -> Path:
        return self.state_dir / "iperf3" / f"{port}.pid"

    def _pid(self, port: int) -> int | None:
        """The server's pid, if it runs and is that server (never a recycled pid)."""
        try:
            pid = int(self.pid_file(port).read_text().split()[0])
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError, IndexError):
            return None
        words = [a.decode(errors="replace") for a in argv]
        if os.path.basename(words[0]) != "iperf3" or str(port) not in words:
            return None
        return pid

    def running(self) -> dict[int, int]:
        """Port -> pid of each server that runs."""
        return {p: pid for p in self.ports if (pid := self._pid(p))}

    def up(self, timeout: float = 10) -> str:
        """Start each server not running; wait until each has written its pid."""
        binary = shutil.which("iperf3")
        if not binary:
            raise EndpointError("iperf3 is not installed (scripts/setup installs it)")
        started = []
        for port in self.ports:
            if self._pid(port):
                continue
            self.pid_file(port).parent.mkdir(parents=True, exist_ok=True)
            self.pid_file(port).unlink(missing_ok=True)
            subprocess.run([binary, "-s", "-D", "-B", self.address, "-p", str(port),
                            "--pidfile", str(self.pid_file(port))],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           timeout=timeout)
            started.append(port)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and len(self.running()) < len(self.ports):
            time.sleep(0.1)
        missing = sorted(set(self.ports) - set(self.running()))
        if missing:
            raise EndpointError(f"iperf3 on {self.address} did not start on port(s) "
                                f"{', '.join(map(str, missing))} (is another program "
                                "listening there?)")
        if not started:
            return ""
        return (f"iperf3 servers on {self.address}, ports {started[0]}-{started[-1]}")

    def down(self, timeout: float = 5) -> list[str]:
        """Stop each server by its pid; what was stopped."""
        stopped = []
        for port, pid in self.running().items():
            os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline and self._pid(port):
                time.sleep(0.1)
            if self._pid(port):
                os.kill(pid, signal.SIGKILL)
            self.pid_file(port).unlink(missing_ok=True)
            stopped.append(f"iperf3 {port}")
        return stopped
