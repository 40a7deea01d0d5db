#!/usr/bin/env python3
"""The lab's CephFS (``lab/ceph.py``), standalone, measured (not a test).

Brings the cluster up under ``--state-dir`` on ``--port-base`` (its own, not the
emulated Slurm cluster's), mounts one ``ceph-fuse`` client on a temporary directory
and then:

1. writes ``--size`` MiB with fsync and reads it back (checksum compared);
2. ``--runs`` times, MDS failover: SIGKILL the active MDS, then create, write 1 MiB
   and fsync a new file; ``failover_s`` runs from the kill to that fsync's return
   (the standby takes over once the killed MDS's beacons are overdue,
   mds_beacon_grace, 15 s; the first run waits until the monitors' quorum is 60 s
   old, mds_beacon_mon_down_grace, before which the monitor defers the takeover).
   The killed MDS is started again and the cluster waited for, whole (its time is
   printed too);
3. ``--runs`` times, OSD rebuild: stop one OSD (SIGTERM, another each run), write
   ``--size`` MiB with fsync while its placement groups are degraded, start it again;
   ``recovery_s`` runs from the restart until every placement group is
   ``active+clean`` (``ceph status`` polled every 0.5 s; the manager's PG statistics
   lag by up to mgr_stats_period, 5 s: the restart waits until they show the
   degradation, so that none from before it can read active+clean);
4. reads back the first file (written before every fault) and compares its checksum;

and prints the resident memory of every daemon, then unmounts and stops everything
(``--keep``: leaves it up).  One line per measurement, a summary at the end.
``--capture DIR``: saves what ``ceph status``, ``ceph fs status`` and ``ceph health
detail`` say (JSON) at each step of the first run of each fault, as
``tests/data/ceph/`` holds them.

    python3 bench/bench_ceph_lab.py --state-dir .state-ceph --port-base 18000 [--runs 3]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lab.ceph import Ceph, CephError, CephLayout  # noqa: E402


def write(path: Path, mib: int) -> str:
    """Write ``mib`` MiB of fresh random data with fsync; its sha256."""
    digest = hashlib.sha256()
    with open(path, "wb") as f:
        for _ in range(mib):
            block = os.urandom(1 << 20)
            digest.update(block)
            f.write(block)
        f.flush()
        os.fsync(f.fileno())
    return digest.hexdigest()


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def timed_write(path: Path, mib: int, timeout: float, meanwhile=None) -> float:
    """Seconds until a new file of ``mib`` MiB is created, written and fsynced, in a
    child process (a hung client cannot hang this script); ``meanwhile(elapsed)`` is
    called every 0.5 s while it runs."""
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-c",
                             "import os,sys; f=open(sys.argv[1],'wb'); "
                             "[f.write(os.urandom(1<<20)) for _ in range(int(sys.argv[2]))]; "
                             "f.flush(); os.fsync(f.fileno())", str(path), str(mib)])
    while proc.poll() is None:
        if time.monotonic() - start > timeout:
            proc.kill()
            raise CephError(f"writing {path} did not end within {timeout:.0f} s")
        if meanwhile:
            meanwhile(time.monotonic() - start)
        time.sleep(0.05 if not meanwhile else 0.5)
    took = time.monotonic() - start
    if proc.returncode != 0:
        raise CephError(f"writing {path} failed (exit {proc.returncode})")
    return took


def capturer(ceph: Ceph, folder: Path | None):
    """``capture(name)``: the three outputs, saved as ``<name>.<command>.json``."""
    def capture(name: str) -> None:
        if folder is None:
            return
        folder.mkdir(parents=True, exist_ok=True)
        for command, argv in (("status", ["status"]),
                              ("fs-status", ["fs", "status", "cephfs"]),
                              ("health-detail", ["health", "detail"])):
            proc = ceph.cli(*argv, "--format", "json", check=False)
            (folder / f"{name}.{command}.json").write_text(proc.stdout)
    return capture


def until(ready, timeout: float, what: str) -> float:
    start = time.monotonic()
    while not ready():
        if time.monotonic() - start > timeout:
            raise CephError(f"{what} not within {timeout:.0f} s")
        time.sleep(0.5)
    return time.monotonic() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--state-dir", type=Path, required=True)
    parser.add_argument("--port-base", type=int, required=True)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--size", type=int, default=64, help="MiB written (default 64)")
    parser.add_argument("--keep", action="store_true", help="leave the cluster up")
    parser.add_argument("--no-settle", action="store_true",
                        help="kill the first MDS at once after up, not once the monitors' "
                             "quorum is 60 s old (mds_beacon_mon_down_grace)")
    parser.add_argument("--capture", type=Path, metavar="DIR",
                        help="save Ceph's JSON at each step of the first runs here")
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # each measurement as it is made
    ceph = Ceph(CephLayout.for_port_base(args.state_dir.resolve(), args.port_base))
    capture = capturer(ceph, args.capture)
    results: dict[str, list[float]] = {"failover_s": [], "mds_restored_s": [],
                                       "degraded_write_s": [], "recovery_s": []}
    try:
        measure(ceph, args, capture, results)
    finally:  # also after an error: nothing of this run is left running
        if not args.keep:
            t = time.monotonic()
            print(f"down: stopped {', '.join(ceph.down()) or 'nothing'} in "
                  f"{time.monotonic() - t:.1f} s")
    return 0


def measure(ceph: Ceph, args, capture, results: dict[str, list[float]]) -> None:
    start = time.monotonic()
    print(ceph.up())
    print(f"up: {time.monotonic() - start:.1f} s")
    with tempfile.TemporaryDirectory(prefix="fsaccept-ceph-") as tmp:
        mp = Path(tmp) / "mnt"
        try:
            ceph.mount(mp, node="bench")
            first = mp / "before-faults.bin"
            t = time.monotonic()
            want = write(first, args.size)
            print(f"write+fsync {args.size} MiB: {time.monotonic() - t:.2f} s")
            t = time.monotonic()
            ok = sha256(first) == want
            print(f"read back {args.size} MiB: {time.monotonic() - t:.2f} s, "
                  f"checksum {'equal' if ok else 'DIFFERS'}")
            capture("healthy")
            rss = ceph.rss_kib()
            print("RSS (MiB): " + ", ".join(f"{n} {k / 1024:.0f}" for n, k in sorted(rss.items()))
                  + f"; total {sum(rss.values()) / 1024:.0f}")
            # The monitor defers an MDS's replacement until its quorum is
            # mds_beacon_mon_down_grace (60 s) old: measured apart, with --no-settle.
            if not args.no_settle:
                waited = until(lambda: ceph.health().quorum_age >= 60, 120, "quorum 60 s old")
                print(f"waited {waited:.1f} s for the quorum to be 60 s old")
            for run in range(1, args.runs + 1):
                killed = ceph.kill_active_mds()
                t0 = time.monotonic()
                moments = {1: "mds-killed", 17: "mds-takeover"} if run == 1 else {}

                def meanwhile(elapsed: float) -> None:
                    for at in [m for m in moments if elapsed >= m]:
                        capture(moments.pop(at))
                took = timed_write(mp / f"after-mds-kill-{run}.bin", 1, 300, meanwhile)
                results["failover_s"].append(took)
                if run == 1:
                    capture("mds-failed-over")
                now = ceph.health().active_mds
                t = time.monotonic()
                ceph.start_mds(killed)
                ceph.wait_whole(300)
                results["mds_restored_s"].append(time.monotonic() - t)
                print(f"MDS run {run}: killed mds.{killed} (active), first write after "
                      f"{took:.1f} s, now active {now}; mds.{killed} back as standby and "
                      f"whole after {results['mds_restored_s'][-1]:.1f} s "
                      f"({time.monotonic() - t0:.1f} s since the kill)")
            for run in range(1, args.runs + 1):
                osd = (run - 1) % ceph.layout.osds
                ceph.stop_osd(osd)
                down = until(lambda: ceph.health().osds_up == ceph.layout.osds - 1, 120,
                             f"osd.{osd} seen down")
                took = timed_write(mp / f"degraded-{run}.bin", args.size, 300)
                results["degraded_write_s"].append(took)
                # Until the manager's PG statistics show the degradation (they lag by
                # up to mgr_stats_period, 5 s): afterwards, no report from before the
                # restart can say active+clean.
                until(lambda: ceph.health().degraded_ratio > 0, 60, "the degradation seen")
                during = ceph.health()
                if run == 1:
                    capture("osd-down")
                t1 = time.monotonic()
                ceph.start_osd(osd)
                up = until(lambda: ceph.health().osds_up == ceph.layout.osds, 120,
                           f"osd.{osd} seen up")
                if run == 1:
                    capture("osd-recovering")
                clean = until(ceph.all_pgs_active_clean, 600, "every PG active+clean")
                results["recovery_s"].append(time.monotonic() - t1)
                print(f"OSD run {run}: stopped osd.{osd} (seen down after {down:.1f} s); "
                      f"write+fsync {args.size} MiB degraded {took:.1f} s; degraded "
                      f"{during.degraded_ratio:.0%} of object copies, PGs "
                      f"{during.pgs}; restarted: up after {up:.1f} s, every PG active+clean "
                      f"{results['recovery_s'][-1]:.1f} s after the restart")
            ceph.wait_whole(300)
            ok = sha256(first) == want
            print(f"data written before the faults: checksum {'equal' if ok else 'DIFFERS'}")
        finally:
            if not args.keep:
                ceph.unmount("bench")
    for key, values in results.items():
        if values:
            print(f"{key}: " + ", ".join(f"{v:.1f}" for v in values)
                  + f" (median {statistics.median(values):.1f})")


if __name__ == "__main__":
    try:
        sys.exit(main())
    except CephError as err:
        print(f"bench_ceph_lab: error: {err}", file=sys.stderr)
        sys.exit(2)
