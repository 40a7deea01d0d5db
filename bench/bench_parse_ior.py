#!/usr/bin/env python3
"""Benchmark parse_ior on a -vv output of 44,080 ranks, then the per-node figures of the
same run (not a test).

Builds, in a temporary directory, the output a 44,080-rank run would print by expanding
the per-rank ``N: stonewalling pairs accessed: K`` lines of a real capture (one line per
rank per phase, ranks in shuffled order as MPI delivers them), then times ``parse_ior``
over it (best of 5, file read included), then, side by side, ``fsaccept parse ior FILE``
as a whole process (interpreter start, imports, parse, rules and the JSON printed: its
CPU time, user + system, from the OS, best of 5), and the per-node figures, slowest
nodes and outliers (``--ranks-per-node`` ranks in blocks: 1,382 nodes x 4 ranks is
``--ranks 5528``).  Prints the times; exits 1 if any is above its budget.

    python bench/bench_parse_ior.py [--ranks 44080] [--ranks-per-node 4] [--capture NAME]
        [--budget 1.0] [--process-budget 0.5] [--per-node-budget 0.5]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "ior"
MARK = ": stonewalling pairs accessed: "


def expand(text: str, ranks: int, seed: int = 0) -> str:
    """Replace each block of per-rank lines with ``ranks`` lines (same value range)."""
    rng = random.Random(seed)
    out: list[str] = []
    block: list[int] = []

    def flush() -> None:
        if not block:
            return
        lo, hi = min(block), max(block)
        order = list(range(ranks))
        rng.shuffle(order)
        out.extend(f"{r}{MARK}{rng.randint(lo, hi) if r else lo}" for r in order)
        block.clear()

    for line in text.splitlines():
        head, sep, tail = line.partition(MARK)
        if sep and head.isdigit():
            block.append(int(tail))
            continue
        flush()
        toks = line.split()
        if len(toks) == 27 and toks[0] in ("write", "read"):  # a summary row: its #Tasks
            toks[13] = str(ranks)
            line = " ".join(toks)
        out.append(line.replace("tasks               : 4", f"tasks               : {ranks}"))
    flush()
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=44080)
    ap.add_argument("--capture", default="write-stonewall-wearout")
    ap.add_argument("--budget", type=float, default=1.0, help="seconds (default 1.0)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--ranks-per-node", type=int, default=4)
    ap.add_argument("--per-node-budget", type=float, default=0.5, help="seconds (default 0.5)")
    ap.add_argument("--process-budget", type=float, default=0.5,
                    help="CPU seconds of the whole `fsaccept parse ior` process (default 0.5)")
    args = ap.parse_args()  # --help: nothing else is imported or run
    sys.path.insert(0, str(ROOT))  # run from a checkout without installing
    from fsaccept.benchmarks.ior.figures import per_node
    from fsaccept.benchmarks.ior.parse import parse_ior
    from fsaccept.core.pernode import by_figure, find_outliers, slowest

    src = (DATA / f"{args.capture}.txt").read_text()
    with tempfile.TemporaryDirectory(prefix="fsaccept-bench-") as tmp:
        path = Path(tmp) / f"{args.capture}-{args.ranks}.txt"
        path.write_text(expand(src, args.ranks))
        size = path.stat().st_size
        best = float("inf")
        run = None
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            run = parse_ior(path.read_text())
            best = min(best, time.perf_counter() - t0)
        proc_cpu, proc_wall, out_bytes = whole_process(path, args.repeat)

    assert run is not None
    reported = sum(p.ranks_reported for p in run.stonewall)
    print(f"parse_ior: {args.ranks} ranks, {size / 1e6:.1f} MB, "
          f"{reported} per-rank lines folded into {len(run.stonewall)} phase(s), "
          f"valid={run.valid}: best of {args.repeat} = {best * 1000:.1f} ms "
          f"(budget {args.budget * 1000:.0f} ms)")
    print(f"fsaccept parse ior (whole process): {out_bytes / 1e6:.2f} MB of JSON printed: "
          f"best of {args.repeat} = {proc_cpu * 1000:.1f} ms CPU ({proc_wall * 1000:.0f} ms "
          f"wall) (budget {args.process_budget * 1000:.0f} ms CPU)")
    if reported < args.ranks or not run.summary:
        print("bench: expanded output did not parse as expected", file=sys.stderr)
        return 1

    rank_map = {r: f"nid{r // args.ranks_per_node:05d}" for r in range(args.ranks)}
    best_nodes = float("inf")
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        nodes = per_node(run, rank_map, "write")
        # Logged as the check logs it: per_node_figures, {figure: {node: value}} as JSON.
        text = json.dumps(by_figure({n: {"write_bandwidth": v} for n, v in nodes.items()},
                                    ["write_bandwidth"]))
        worst = slowest(nodes, "MiB/s")
        outliers = find_outliers(nodes, 0.8)
        best_nodes = min(best_nodes, time.perf_counter() - t0)
    print(f"per-node figures: {len(nodes)} nodes x {args.ranks_per_node} ranks, "
          f"{len(text) / 1e6:.2f} MB logged, slowest {worst.split(',')[0]}, "
          f"{len(outliers)} outliers: best of {args.repeat} = {best_nodes * 1000:.1f} ms "
          f"(budget {args.per_node_budget * 1000:.0f} ms)")
    return 0 if (best <= args.budget and best_nodes <= args.per_node_budget
                 and proc_cpu <= args.process_budget) else 1


def whole_process(path: Path, repeat: int) -> tuple[float, float, int]:
    """(CPU seconds, wall seconds, bytes printed) of ``fsaccept parse ior FILE`` run as
    its own process: best of ``repeat``; CPU is what the OS counted (user + system)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "fsaccept.cli", "parse", "ior", str(path)]
    best_cpu = best_wall = float("inf")
    size = 0
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        done = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, check=True)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        best_cpu, best_wall, size = min(best_cpu, cpu), min(best_wall, wall), len(done.stdout)
    return best_cpu, best_wall, size


if __name__ == "__main__":
    sys.exit(main())
