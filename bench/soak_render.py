#!/usr/bin/env python3
"""Benchmark the sign-off's Soak section of a synthetic 24-hour soak (not a test).

A soak of ``--hours`` (24) at 1 s intervals on ``--clients`` (1,000) clients, one per
node, made with a fixed seed: each client's write bandwidth (about 100 MiB/s, noisy, a
slight downward drift) and completion latency, a stall of 45 s on 8 nodes 13 hours in,
and one node at 60 % of the others.  The clients' series are reduced as the live check
reduces fio's logs (:class:`fsaccept.benchmarks.fio.soak.SeriesBuilder`, :func:`stalls_of`,
fed arrays rather than log text), and the record is written as JSON.

Then a child process renders the sign-off's piece from that file alone, as the sign-off
would: read the record, re-judge it, draw a plot per figure, write the Markdown section.
It prints the child's time, its peak memory (``resource.getrusage``: its own
``ru_maxrss``) and the bytes on disk (record, Markdown, plots), and the reduction's
time beside them.

Budget of the sign-off's piece: 30 s, 2 GiB, 20 MB on disk.  Exits 1 when over it.

    python bench/soak_render.py [--hours 24] [--clients 1000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUDGET_S, BUDGET_RSS, BUDGET_BYTES = 30.0, 2 * 2**30, 20 * 10**6


def synthetic(hours: float, clients: int, out: Path, seed: int = 1) -> float:
    """Reduce a synthetic soak into ``out`` (the record's JSON); its seconds."""
    import numpy as np

    from fsaccept.benchmarks.fio import soak

    t0 = time.perf_counter()
    duration = int(hours * 3600)
    st = soak.Settings(duration_s=duration, interval_s=1, max_stall_s=30, max_drift=0.1,
                       max_node_shortfall=0.3)
    bw = soak.SeriesBuilder("write bandwidth", soak.BANDWIDTH, "MiB/s", 1, duration)
    lat = soak.SeriesBuilder("write completion latency", soak.LATENCY, "us", 1, duration)
    rng = np.random.default_rng(seed)
    times = np.arange(1, duration + 1, dtype=np.int64) * 1000
    trend = 1 - 0.03 * np.arange(duration) / duration
    stall_at, stall_len = 13 * 3600, 45
    stalls, not_kept = [], 0
    for i in range(clients):
        node, client = f"nid{i + 1:05d}", f"nid{i + 1:05d}/1"
        level = 60.0 if i == clients // 2 else 100.0
        # Jitter of the window's close, as fio's (a few ms late).
        t = times + rng.integers(0, 5, duration)
        v = level * trend * rng.normal(1, 0.05, duration)
        c = rng.normal(4000, 300, duration)
        keep = np.ones(duration, dtype=bool)
        if i % 125 == 0:  # 8 nodes stall together
            keep[stall_at:stall_at + stall_len] = False
        t, v, c = t[keep], v[keep], c[keep]
        found = soak.stalls_of(t, 1, duration, client, node)
        stalls += found.stalls
        not_kept += found.count - len(found.stalls)
        bw.add(client, node, bw.per_interval(t, v))
        lat.add(client, node, lat.per_interval(t, c / 1000))
    evidence = soak.Evidence(st, [bw.series(), lat.series()], stalls, not_kept)
    named = [n for j in soak.judge(evidence) for n in j.named]
    for s, b in zip(evidence.series, (bw, lat)):
        s.kept = b.rows_of(named)
    out.write_text(json.dumps(evidence.to_dict()))
    return time.perf_counter() - t0


def render(record: Path, out: Path) -> None:
    """The sign-off's piece from the record alone (run in the child)."""
    from fsaccept.reporting import soak as section

    sec = section.loads(json.loads(record.read_text()))
    names = {}
    for name, png in section.plots(sec).items():
        names[name] = f"soak-{name.replace(' ', '-')}.png"
        (out / names[name]).write_bytes(png)
    (out / "soak.md").write_text(sec.markdown(names))
    print(sec.verdict, file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hours", type=float, default=24.0, help="the soak's length")
    ap.add_argument("--clients", type=int, default=1000, help="clients, one per node")
    ap.add_argument("--keep", type=Path, help="write into DIR and keep it (to look at it)")
    ap.add_argument("--render", nargs=2, metavar=("RECORD", "DIR"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.render:
        render(Path(args.render[0]), Path(args.render[1]))
        return 0
    if args.hours <= 0 or args.clients < 1:
        ap.error("--hours and --clients must be positive")
    sys.path.insert(0, str(ROOT))
    with tempfile.TemporaryDirectory(prefix="fsaccept-bench-soak-") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        record = work / "soak.json"
        reduced = synthetic(args.hours, args.clients, record)
        reduce_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        wrapper = ("import resource, subprocess, sys; rc = subprocess.call(sys.argv[1:]); "
                   "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, "
                   "file=sys.stderr); sys.exit(rc)")
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", wrapper, sys.executable, __file__,
                               "--render", str(record), str(work)], cwd=ROOT,
                              capture_output=True, text=True,
                              env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
        seconds = time.perf_counter() - t0
        if proc.returncode != 0:
            sys.exit(f"soak_render: the render exited {proc.returncode}:\n{proc.stderr}")
        verdict, rss = proc.stderr.split()[-2], int(proc.stderr.split()[-1]) * 1024
        written = sum(p.stat().st_size for p in work.iterdir()
                      if p.is_file() and (p.suffix in (".png", ".md") or p == record))
        ok = seconds <= BUDGET_S and rss <= BUDGET_RSS and written <= BUDGET_BYTES
        print(f"soak of {args.hours:g} h at 1 s, {args.clients:,} clients "
              f"(verdict {verdict}):")
        print(f"  reduced (the live check's work): {reduced:.1f} s, peak "
              f"{reduce_rss / 2**20:.0f} MiB; record {record.stat().st_size / 1e6:.2f} MB")
        print(f"  sign-off piece: {seconds:.1f} s, peak {rss / 2**20:.0f} MiB, "
              f"{written / 1e6:.2f} MB on disk  budget {BUDGET_S:.0f} s, "
              f"{BUDGET_RSS / 2**20:.0f} MiB, {BUDGET_BYTES / 1e6:.0f} MB: "
              f"{'ok' if ok else 'OVER BUDGET'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
