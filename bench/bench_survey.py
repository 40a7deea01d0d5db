#!/usr/bin/env python3
"""Benchmark the target survey's model at scale (not a test).

Times, side by side in one run, what a survey of a large system costs the harness itself
(not the file system): the plan of rounds (``fsaccept.core.components.survey_plan``), the
slow-target judgement and the bound, for 1,000 targets on 100 servers read by 1,000
nodes, and for 10,000 targets on 1,000 servers read by 1,000 nodes.  Each size is timed
in process (best of ``--repeat``) and as a whole fresh Python process that imports the
model and does the same (the budget: 10 s).  It prints the rounds each plan needs beside
the fewest any plan can have.  Exits 1 when a size's whole process is over budget.

    python bench/bench_survey.py [--repeat 3] [--sizes 1000x100x1000,10000x1000x1000]
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from fsaccept.core import components  # noqa: E402
from fsaccept.core.components import Target  # noqa: E402

BUDGET_S = 10.0


def model(targets: int, servers: int, nodes: int) -> tuple[int, int, int]:
    """Plan, judge and bound one survey; (rounds, fewest rounds, slow targets)."""
    rng = random.Random(1)
    ts = [Target(f"OST{i:05x}", f"oss{i % servers}") for i in range(targets)]
    names = [f"nid{i:05d}" for i in range(nodes)]
    plan = components.survey_plan(ts, names)
    values = {t: rng.uniform(900, 1100) for t in ts}
    values[ts[7]] = 300.0
    slow = components.slow_targets(values, components.DEFAULT_MAX_SPREAD)
    components.bound({"clients": nodes * 2000.0, "network": 400_000.0,
                      "targets": components.targets_ceiling(values.values(), 1)})
    return len(plan), components.fewest_rounds(ts, nodes), len(slow)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sizes", default="1000x100x1000,10000x1000x1000",
                    help="TARGETSxSERVERSxNODES, comma-separated")
    args = ap.parse_args()
    over = False
    print(f"{'targets':>8} {'servers':>8} {'nodes':>6} {'rounds':>7} {'fewest':>7} "
          f"{'slow':>5} {'in process':>11} {'process':>9}")
    for size in args.sizes.split(","):
        t, s, n = (int(x) for x in size.split("x"))
        best = float("inf")
        for _ in range(args.repeat):
            start = time.perf_counter()
            rounds, fewest, slow = model(t, s, n)
            best = min(best, time.perf_counter() - start)
        start = time.perf_counter()
        subprocess.run([sys.executable, __file__, "--one", size], check=True)
        whole = time.perf_counter() - start
        over |= whole > BUDGET_S
        print(f"{t:>8} {s:>8} {n:>6} {rounds:>7} {fewest:>7} {slow:>5} {best:>10.3f}s "
              f"{whole:>8.3f}s")
    print(f"budget: {BUDGET_S:g} s a whole process: {'OVER' if over else 'within'}")
    return 1 if over else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one"]:
        model(*(int(x) for x in sys.argv[2].split("x")))
        sys.exit(0)
    sys.exit(main())
