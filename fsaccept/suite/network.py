"""The network check's program: iperf3 from each client node to the file system's
servers, each node alone and then all at once (``fsaccept network``).

1. **Endpoints.** Each server's ports ``port`` to ``port + ports - 1``, each an iperf3
   server the site runs (the lab's: ``lab/endpoints.py``).  The servers are the entry's,
   or the file system's own as its client lists them (a GlusterFS volume's brick hosts,
   ``<mount>/.meta``, as the survey reads them).
2. **Rounds.** :func:`fsaccept.core.components.network_plan`: alone rounds, where each
   server takes one node, then one round of every node at once sending, and one of
   every node at once receiving.
3. **Measurement.** ``iperf3 -c SERVER -p PORT -t S -J``, one job step per node
   (``srun -N1 -n1 --exact -w NODE``): TCP from the client to the server, what the server
   received over the test's seconds; then every node at once with ``-R``, the server
   sending (what a read crosses).  Its JSON is kept (``a<round>-<node>.json``,
   ``t-<node>.json``, ``r-<node>.json``) and parsed by
   :func:`fsaccept.benchmarks.network.parse.link_figure`.
4. **Judgement.** :mod:`fsaccept.benchmarks.network.validity`.

Nothing is written on the file system.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from fsaccept.benchmarks.network import command as network_command
from fsaccept.benchmarks.network import validity
from fsaccept.benchmarks.network.parse import (ALONE, FORMAT, KINDS, PREFIX, TOGETHER,
                                               TOGETHER_READ, parse_network)
from fsaccept.core import components
from fsaccept.core.formatting import format_number
from fsaccept.core.guards import GuardError, mount_of
from fsaccept.suite.steps import LAUNCHER, ProgramError, job_nodes
from fsaccept.suite.survey import listed_bricks

HOST_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_:")


#: The program's lines as printed: judged at its end by the check's own functions.
SAID: list[str] = []


def _say(*words: object) -> None:
    """One of the program's own lines (:mod:`fsaccept.benchmarks.network.parse`)."""
    line = " ".join([PREFIX, *map(str, words)])
    SAID.append(line)
    print(line, flush=True)


def servers_of(given: str | None, directory: str) -> list[str]:
    """The entry's servers, or the file system's as its client lists them."""
    if given:
        servers = [s for s in given.split(",") if s]
    else:
        mount = mount_of(Path(directory))
        if mount.fstype != "fuse.glusterfs":
            raise ProgramError(f"{directory}: on {mount.fstype} at {mount.target}; its "
                              "servers are listed only for GlusterFS: name them (servers:)")
        servers = sorted({host for host, _ in listed_bricks(mount.target)})
    bad = [s for s in servers if not s or set(s) - HOST_CHARS or s[0] in "-:." or len(s) > 253]
    if bad or not servers or len(set(servers)) != len(servers):
        raise ProgramError(f"--servers: {bad[0][:80]!r} is not a host name" if bad
                          else "--servers: no server, or one named twice")
    return servers


def iperf3_argv(iperf3: str, server: str, port: int, runtime_s: int,
                reverse: bool = False) -> list[str]:
    return [iperf3, "-c", server, "-p", str(port), "-t", str(runtime_s), "-J",
            *(["-R"] if reverse else [])]


#: Each kind's file of a node's step (``a<round>-`` alone, ``t-`` together, ``r-`` read).
FILE_PREFIX = {TOGETHER: "t", TOGETHER_READ: "r"}


def measure(nodes: Sequence[str], servers: Sequence[str], port: int, ports: int,
            runtime_s: int, out_dir: Path, iperf3: str = "iperf3",
            launcher: Sequence[str] = LAUNCHER) -> float:
    """Every step's plan line first, then each round's steps at once, each iperf3's JSON
    to ``out_dir``; a round starts when the one before it has ended.  The seconds it
    took."""
    endpoints = [(s, port + k) for k in range(ports) for s in servers]
    alone, together = components.network_plan(nodes, endpoints)
    rounds = [(ALONE, r, steps) for r, steps in enumerate(alone)]
    rounds.append((TOGETHER, len(alone), together))
    rounds.append((TOGETHER_READ, len(alone) + 1, together))
    for kind, r, steps in rounds:
        for node, server, p in steps:
            _say("step", kind, r, node, server, p)
    start = time.monotonic()
    for kind, r, steps in rounds:
        running = []
        for node, server, p in steps:
            name = f"{FILE_PREFIX.get(kind, f'a{r}')}-{node}.json"
            argv = [*launcher, "-w", node, *iperf3_argv(iperf3, server, p, runtime_s,
                                                         KINDS[kind])]
            with open(out_dir / name, "w") as fh:
                running.append((node, name, subprocess.Popen(
                    argv, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)))
        for node, name, proc in running:
            _say("result", r, node, proc.wait(), name)
    return time.monotonic() - start


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        prog="fsaccept network",
        description="iperf3 from each client node to the file system's servers, each node "
                    "alone, then all at once; name the slow link "
                    "(docs/user/components.md); exit 0, 1 when a link is slow or could not "
                    "be measured, 2 on bad input")
    ap.add_argument("--in-dir", required=True, metavar="DIR",
                    help="a directory on the file system (its client lists the servers)")
    ap.add_argument("--out", required=True, metavar="DIR",
                    help="where iperf3's JSON of each step is kept")
    ap.add_argument("--nodes", metavar="N1,N2",
                    help="the client nodes (default: the Slurm allocation's)")
    ap.add_argument("--servers", metavar="H1,H2",
                    help="the servers (default: those the file system's client lists)")
    ap.add_argument("--port", type=int, default=network_command.DEFAULT_PORT,
                    help="each server's first iperf3 port (%(default)s)")
    ap.add_argument("--ports", type=int, default=1,
                    help="iperf3 servers per server, on consecutive ports (%(default)s)")
    ap.add_argument("--runtime", type=int, default=5, metavar="S",
                    help="seconds each client sends (%(default)s)")
    ap.add_argument("--max-spread", type=float, default=components.DEFAULT_MAX_SPREAD,
                    help="a node below (1 - this) x the median is slow (%(default)s)")
    ap.add_argument("--iperf3", default="iperf3", help="the iperf3 program (%(default)s)")
    args = ap.parse_args(argv)
    try:
        if not 3 <= args.runtime <= 3600:
            raise ProgramError(f"--runtime {args.runtime}: not between 3 and 3600 s (all at "
                              "once, a node's rate leaves its first and last second out)")
        if not 1 <= args.ports <= 1000 or not 1 <= args.port <= 65536 - args.ports:
            raise ProgramError(f"--port {args.port} --ports {args.ports}: not ports of "
                              "one host")
        if not 0 <= args.max_spread < 1:
            raise ProgramError(f"--max-spread {args.max_spread}: not in [0, 1)")
        directory = os.path.realpath(args.in_dir)
        if not os.path.isdir(directory):
            raise ProgramError(f"--in-dir {args.in_dir}: not a directory")
        servers = servers_of(args.servers, directory)
        nodes = job_nodes(args.nodes)
        if len(servers) * args.ports < len(nodes):
            raise ProgramError(f"{len(servers)} server(s) x {args.ports} port(s) for "
                              f"{len(nodes)} nodes: every node needs an endpoint of its own "
                              "to send all at once (ports:)")
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        endpoints = [f"{s}:{args.port + k}" for k in range(args.ports) for s in servers]
        _say("version", FORMAT, "runtime_s", args.runtime, "servers", ",".join(endpoints),
             "nodes", ",".join(nodes))
        seconds = measure(nodes, servers, args.port, args.ports, args.runtime, out,
                          args.iperf3)
        _say("end")
    except (ProgramError, GuardError, ValueError, OSError) as err:
        print(f"fsaccept network: {err}", file=sys.stderr)
        return 2
    return report(out, seconds, args)


def report(out: Path, seconds: float, args: argparse.Namespace) -> int:
    """Each node's link in words and the failing ones, judged from the lines just
    printed and the files just written by the check's own functions."""
    run = parse_network("\n".join(SAID))

    def read(name: str) -> str | None:
        try:
            return (out / name).read_text(errors="replace")
        except OSError:
            return None
    p = network_command.parameters("network", {
        "runtime_s": args.runtime, "max_spread": args.max_spread})
    alone = validity.measured(run, read)[0]
    together = validity.measured(run, read, TOGETHER)[0]
    received = validity.measured(run, read, TOGETHER_READ)[0]
    servers = validity.servers_of(run)
    print(f"network: {len(alone)} of {len(run.nodes)} nodes measured alone, "
          f"{len(together)} together, {len(received)} receiving together ({seconds:.1f} s), "
          "slowest first:")
    for node, link in sorted(alone.items(), key=lambda kv: (kv[1].mib_s, kv[0])):
        rtt = f", round-trip {link.rtt_ms:.3g} ms" if link.rtt_ms is not None else ""
        print(f"  {node} to {servers[node]}  {format_number(link.mib_s)} MiB/s  "
              f"({link.retransmits} retransmits{rtt})")
    if together:
        print(f"  together: {format_number(validity.aggregate(together))} MiB/s")
    if received:
        print(f"  receiving together: {format_number(validity.aggregate(received))} MiB/s")
    reasons = validity.invalid_reasons(run, read) + validity.failures(alone, servers, p)
    for reason in reasons:
        print("FAIL: " + reason)
    return 1 if reasons else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
