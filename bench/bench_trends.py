#!/usr/bin/env python3
"""Benchmark the nightly trend report over a year of sessions (not a test).

Builds, in a temporary directory, a ReFrame results database (ReFrame's own
storage: ``StorageBackend.store`` of run reports, as ``reframe`` does with
``RFM_ENABLE_RESULTS_STORAGE=1``) of 365 nightly sessions.  Each session is a
copy of real run reports from ``tests/data/reframe/`` (the IOR checks and two
fio checks: 11 figures), one day apart, with figures varied by a few percent,
and the last session 30 % lower.  Then times what ``scripts/nightly`` does
after its run: list the sessions, ReFrame's comparison with the median of the
last 7, fetch the last 30 sessions, one trend plot per figure, the summary.
Prints the times; exits 1 if the trend report took longer than the budget.

    python bench/bench_trends.py [--sessions 365] [--budget 10]
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "reframe"
sys.path.insert(0, str(ROOT))

from fsaccept import trends  # noqa: E402

DAY = 86400.0


def template() -> dict:
    """One session: the IOR report plus the fio random-read test cases."""
    ior = json.loads((DATA / "ior-pass.json").read_text())
    fio = json.loads((DATA / "fio-client.json").read_text())
    extra = [tc for tc in fio["runs"][0]["testcases"] if tc["name"].startswith("FioRandomRead")]
    ior["runs"][0]["testcases"] += extra
    return ior


def session(base: dict, day: int, rng: random.Random, scale: float = 1.0) -> dict:
    r = copy.deepcopy(base)
    u = str(uuid.uuid4())
    start = time.time() - (365 - day) * DAY
    r["session_info"].update(uuid=u, time_start_unix=start, time_end_unix=start + 600,
                             fsaccept_kind="nightly", fsaccept_system="local")
    for run in r["runs"]:
        for i, tc in enumerate(run["testcases"]):
            tc.update(uuid=f"{u}:{run['run_index']}:{i}", session_uuid=u,
                      job_completion_time_unix=start + 60 * i)
            for vals in tc["perfvalues"].values():
                if vals[0] is not None:
                    vals[0] = round(vals[0] * scale * rng.uniform(0.97, 1.03), 2)
    return r


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=365)
    ap.add_argument("--budget", type=float, default=10.0, help="seconds (default 10)")
    args = ap.parse_args()
    rng = random.Random(0)
    base = template()
    figures = sum(len(tc["perfvalues"]) for tc in base["runs"][0]["testcases"])
    with tempfile.TemporaryDirectory(prefix="fsaccept-bench-trends-") as tmp:
        tmp = Path(tmp)
        store = trends.Store(tmp / "results.db")
        t0 = time.perf_counter()
        last = None
        for day in range(args.sessions):
            last = session(base, day, rng, 0.7 if day == args.sessions - 1 else 1.0)
            store.store(last, "")
        build = time.perf_counter() - t0
        size = (tmp / "results.db").stat().st_size
        print(f"built {args.sessions} sessions x {figures} figures "
              f"({size / 2**20:.1f} MiB database) in {build:.1f} s")
        settings = trends.NightlySettings(sessions=7, tolerance=0.1, trend_sessions=30)
        t0 = time.perf_counter()
        summary, comps = trends.write_trends(store, tmp / "out", "local",
                                             last["session_info"]["uuid"], last, settings)
        took = time.perf_counter() - t0
        plots = len(list((tmp / "out" / "trends").iterdir()))
        regs = trends.regressions(comps, settings.tolerance)
        print(f"trend report: {len(comps)} figures compared, {len(regs)} regressions, "
              f"{plots} plots, in {took:.2f} s (budget {args.budget:g} s)")
        if len(regs) == 0:
            print("error: the injected 30 % drop was not detected", file=sys.stderr)
            return 1
    if took > args.budget:
        print(f"error: over budget ({took:.2f} s > {args.budget:g} s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
