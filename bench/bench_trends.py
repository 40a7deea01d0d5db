#!/usr/bin/env python3
"""Benchmark the nightly trend report at scale (not a test).

Builds, in a temporary directory, a ReFrame results database (ReFrame's own
storage: ``StorageBackend.store`` of run reports, as ``reframe`` does with
``RFM_ENABLE_RESULTS_STORAGE=1``) of nightly sessions, one day apart.  Each
session is a copy of the real run report ``tests/data/reframe/full-suite.json``
cut to the first N figures, varied by a few percent, the last one 30 % lower.
Then times what ``scripts/nightly`` does after its run, two ways side by side:

- **whole process** (the budget): ``fsaccept nightly compare`` as ``scripts/nightly``
  runs it, a fresh Python process with every import it makes: read and check the run
  report and the reference file, list the sessions, ReFrame's comparison with the
  median of the last 7, fetch the last 30 sessions, one trend plot per figure, the
  summary (best of ``--repeat``; wall time, and the CPU time it used);
- **in process**: :func:`fsaccept.reporting.trends.write_trends` alone, imports done.

Two sizes by default, each with its budget: a year of sessions with 11
figures (2 s) and five years with 30 figures (10 s).  ``--old`` also times, on
the same database, the plotting as it was before (a new matplotlib figure per
plot, constrained layout, date locator), in process.  Exits 1 when a size's whole
process is over its budget.  The machine must be otherwise idle for the figures to
mean anything (the CPU time is printed for that reason).

    python bench/bench_trends.py [--old] [--repeat 3] [--sizes 365x11:2,1825x30:10]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "reframe"
sys.path.insert(0, str(ROOT))

from fsaccept.reporting import trends  # noqa: E402

DAY = 86400.0


def template(figures: int) -> dict:
    """One session: the full suite's run report with its first ``figures`` figures."""
    report = json.loads((DATA / "full-suite.json").read_text())
    left = figures
    for tc in report["runs"][0]["testcases"]:
        keep = list(tc.get("perfvalues") or {})[:left]
        tc["perfvalues"] = {k: tc["perfvalues"][k] for k in keep}
        left -= len(keep)
    if left:
        sys.exit(f"bench_trends: {DATA / 'full-suite.json'} has fewer than {figures} figures")
    return report


def legacy_trend_plot(test, figure, unit, points, median=None) -> bytes:
    """The trend plot as fsaccept drew it before TrendPlotter (for --old only)."""
    import io
    from datetime import datetime, timezone

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 2.6), constrained_layout=True)
    xs = [datetime.fromtimestamp(p.time, timezone.utc) for p in points]
    ax.plot(xs, [p.value for p in points], marker="o", markersize=3, color="#1a56b0",
            label=figure)
    limits = [p.threshold for p in points if p.threshold is not None]
    if limits:
        ax.axhline(limits[-1], color="#b00020", linestyle="--", label=f"threshold {limits[-1]:,g}")
    if median is not None:
        ax.axhline(median, color="gray", linestyle=":", label=f"median {median:,.6g}")
    ax.set_title(f"{test}: {figure}", fontsize=9, loc="left")
    ax.set_ylabel(unit, fontsize=8)
    ax.set_ylim(bottom=0)
    ax.tick_params(labelsize=7)
    ax.legend(fontsize=7, loc="lower left")
    fig.autofmt_xdate()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80)
    plt.close(fig)
    return buf.getvalue()


class LegacyPlotter:
    plot = staticmethod(legacy_trend_plot)


def session(base: dict, day: int, days: int, rng: random.Random, scale: float = 1.0) -> dict:
    r = copy.deepcopy(base)
    u = str(uuid.uuid4())
    start = time.time() - (days - day) * DAY
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


def whole_process(report: Path, db: Path, out: Path) -> tuple[float, float, int]:
    """(wall s, CPU s, exit status) of ``fsaccept nightly compare`` in a fresh process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "fsaccept.cli", "nightly", "compare", str(report), "--db",
            str(db), "--system", "local", "--reference", str(ROOT / "reference" / "local.yaml"),
            "--out", str(out), "--sessions", "7", "--tolerance", "0.1"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode not in (0, 1):
        sys.exit(f"bench_trends: fsaccept nightly compare exited {proc.returncode}:\n"
                 f"{proc.stderr[-2000:]}")
    return wall, cpu, proc.returncode


def measure(sessions: int, figures: int, budget: float, old: bool, repeat: int) -> bool:
    """Build the database, time the trend report (and the old plotting); True if in budget."""
    rng = random.Random(0)
    base = template(figures)
    with tempfile.TemporaryDirectory(prefix="fsaccept-bench-trends-") as tmp:
        tmp = Path(tmp)
        store = trends.Store(tmp / "results.db")
        t0 = time.perf_counter()
        last = None
        for day in range(sessions):
            last = session(base, day, sessions, rng, 0.7 if day == sessions - 1 else 1.0)
            store.store(last, "")
        build = time.perf_counter() - t0
        size = (tmp / "results.db").stat().st_size
        report = tmp / "run-report.json"
        report.write_text(json.dumps(last))
        print(f"{sessions} sessions x {figures} figures: database of {size / 2**20:.1f} MiB "
              f"built in {build:.1f} s")
        runs = [whole_process(report, tmp / "results.db", tmp / f"process-{i}")
                for i in range(repeat)]
        wall, cpu, status = min(runs)
        plots = len(list((tmp / "process-0" / "trends").iterdir()))
        print(f"  whole process (fsaccept nightly compare, imports included): {wall:.2f} s "
              f"(CPU {cpu:.2f} s; best of {repeat}), exit {status}, {plots} plots "
              f"(budget {budget:g} s)")
        settings = trends.NightlySettings(sessions=7, tolerance=0.1, trend_sessions=30)
        plotters = [("now", trends.TrendPlotter)] + ([("old", LegacyPlotter)] if old else [])
        took = {}
        for label, plotter in plotters:
            trends.TrendPlotter, saved = plotter, trends.TrendPlotter
            try:
                t0 = time.perf_counter()
                _, comps = trends.write_trends(store, tmp / label, "local",
                                               last["session_info"]["uuid"], last, settings)
                took[label] = time.perf_counter() - t0
            finally:
                trends.TrendPlotter = saved
            plots = len(list((tmp / label / "trends").iterdir()))
            regs = trends.regressions(comps, settings.tolerance)
            print(f"  in process, imports done ({label}): {len(comps)} figures compared, "
                  f"{len(regs)} regressions, {plots} plots, in {took[label]:.2f} s")
            if not regs:
                print("error: the injected 30 % drop was not detected", file=sys.stderr)
                return False
        if status != 1:
            print("error: the whole process did not exit 1 (regression)", file=sys.stderr)
            return False
        if old:
            print(f"  old / now (in process): {took['old'] / took['now']:.1f} x")
    if wall > budget:
        print(f"error: over budget ({wall:.2f} s > {budget:g} s)", file=sys.stderr)
        return False
    return True


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="365x11:2,1825x30:10",
                    help="SESSIONSxFIGURES:BUDGET_S, comma-separated "
                         "(default: a year x 11 figures in 2 s, 5 years x 30 in 10 s)")
    ap.add_argument("--old", action="store_true", help="also time the plotting as it was")
    ap.add_argument("--repeat", type=int, default=3,
                    help="whole-process runs per size, the best counts (default 3)")
    args = ap.parse_args()
    ok = True
    for size in args.sizes.split(","):
        try:
            dims, budget = size.split(":")
            sessions, figures = (int(x) for x in dims.split("x"))
            budget_s = float(budget)
        except ValueError:
            ap.error(f"--sizes: {size!r} is not SESSIONSxFIGURES:BUDGET_S")
        ok = measure(sessions, figures, budget_s, args.old, max(1, args.repeat)) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
