#!/usr/bin/env python3
"""Per-job overhead of the fsaccept checks over a bare ``srun`` (not a test).

On the emulated cluster (``scripts/local-cluster up``; export
``FSACCEPT_PORT_BASE`` first when you use another port base), each round

1. runs the fio checks through ReFrame, as a user does
   (``reframe -C config/settings.py -c checks/fio_client.py --system local -r``:
   the next job submitted while one runs, Slurm starting it once that one has
   ended, as always), and
2. runs, for every job of that session, the very same benchmark command
   (the job's own ``fsaccept-fio-node.sh``, ReFrame keeps it in the output
   directory) as a bare ``srun`` with the same node count, one task per node,
   into a directory of this script's own, and
3. that ``srun`` again as the only line of a bare batch job (``sbatch``, then
   ``squeue`` every 20 ms until it is gone): what Slurm itself costs a batch job
   over an ``srun`` when it is submitted only once the previous job has ended.

Per job, the time the suite spends on it is measured from the moment ReFrame
noticed the previous job had ended (for the first job: its ``sbatch``,
``job_submit_time``; the run hooks before it take ~20 ms) to the moment it
noticed this one had (``job_completion_time_unix``): what of the previous test's
sanity and performance, this one's run hooks, sbatch and scheduling did not
overlap the previous job (ReFrame submits the next job while one runs; it waits
in Slurm's queue), then the job preamble, MPI start-up, the benchmark and
polling.  ReFrame's own ``time_run`` is not used: for later jobs it also counts
that wait in the queue, and for the first its end is stamped only after ReFrame
has submitted the next job and slept the squeue backend's 2 s ``SQUEUE_DELAY``
before polling it (seen in ReFrame's debug log: the first test's ``time_run``
came out 2.25 s longer than its submission to completion).  The overhead is that
time minus the bare ``srun`` of the same command in the same round.  Printed:
the overhead per job (median, min, max), split into Slurm's (bare sbatch over
bare srun: a batch job submitted once the previous one has ended) and the
harness's (the suite over bare sbatch: below zero where the suite's job, queued
while the previous one ran, started without Slurm's wait), and the suite's wall
time (ReFrame's session, start to end) over the sum of its jobs' own time (the
bare ``srun``s).  Rounds alternate the two, so load from other users of the
machine falls on both alike.

    python bench/bench_overhead.py [--rounds 3] [--checks FioSequentialRead,...]
        [--target-overhead 0.5] [--target-ratio 1.1]

Exits 1 when a check did not pass or a median misses its target.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lab.cluster import OPENMPI_ENV, PARTITION, slurm_conf_path  # noqa: E402
from fsaccept.rfm.fio import NODE_SCRIPT  # noqa: E402

DEFAULT_CHECKS = ("FioRandomReadDirect", "FioRandomReadBuffered", "FioSequentialWrite",
                  "FioSequentialRead", "FioFsync", "FioMetadata")


def run_reframe(checks: list[str], prefix: Path, env: dict[str, str]) -> tuple[dict, float]:
    """One ReFrame session of ``checks``; (run report, wall seconds)."""
    report = prefix / "report.json"
    argv = [str(ROOT / ".venv" / "bin" / "reframe"), "-C", str(ROOT / "config" / "settings.py"),
            "-c", str(ROOT / "checks" / "fio_client.py"), "--system", "local",
            "-n", "^(" + "|".join(checks) + ")$", "--prefix", str(prefix),
            "--report-file", str(report), "-r"]
    t0 = time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - t0
    if not report.exists():
        sys.exit(f"bench_overhead: ReFrame wrote no run report:\n{proc.stdout}{proc.stderr}")
    return json.loads(report.read_text()), wall


def _node_script(case: dict, workdir: Path, data_dir: Path) -> int:
    """The job's own node script, aimed at ``data_dir``, into ``workdir``; its node count."""
    script = Path(case["outputdir"]) / NODE_SCRIPT
    text = script.read_text().replace(shlex.quote(case["target_dir"]), shlex.quote(str(data_dir)))
    text = text.replace(case["target_dir"], str(data_dir))
    (workdir / NODE_SCRIPT).write_text(text)
    return len(case.get("job_nodelist") or []) or int(case["num_tasks"])


def _placement(nodes: int) -> list[str]:
    return [f"--partition={PARTITION}", f"--nodes={nodes}", "--ntasks-per-node=1",
            f"--ntasks={nodes}", "--exclusive"]


def bare_srun(case: dict, workdir: Path, data_dir: Path, env: dict[str, str]) -> float:
    """The job's benchmark command as a bare srun; wall seconds."""
    nodes = _node_script(case, workdir, data_dir)
    argv = ["srun", *_placement(nodes), "--distribution=block", "bash", NODE_SCRIPT]
    t0 = time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=workdir)
    took = time.perf_counter() - t0
    shutil.rmtree(data_dir, ignore_errors=True)  # ours alone: created for this run
    if proc.returncode != 0:
        sys.exit(f"bench_overhead: bare srun failed ({' '.join(argv)}):\n"
                 f"{proc.stdout}{proc.stderr}")
    return took


def bare_sbatch(case: dict, workdir: Path, data_dir: Path, env: dict[str, str]) -> float:
    """The same srun as the only line of a batch job: seconds from sbatch to the job
    gone from squeue (polled every 20 ms).  Slurm's own cost of a batch job, which no
    harness on sbatch avoids (slurmctld starts a submitted job on its next scheduling
    pass; an srun's allocation is tried at once)."""
    nodes = _node_script(case, workdir, data_dir)
    (workdir / "job.sh").write_text(
        f"#!/bin/bash\nsrun --distribution=block bash {NODE_SCRIPT}\n")
    argv = ["sbatch", "--parsable", *_placement(nodes), "--output=job.out", "--error=job.err",
            "job.sh"]
    t0 = time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=workdir)
    jobid = proc.stdout.strip().split(";")[0]
    while proc.returncode == 0 and subprocess.run(
            ["squeue", "-h", "-j", jobid, "-o", "%T"], env=env, capture_output=True,
            text=True).stdout.strip():
        time.sleep(0.02)
    took = time.perf_counter() - t0
    shutil.rmtree(data_dir, ignore_errors=True)
    out = (workdir / "job.out").read_text() if (workdir / "job.out").exists() else ""
    if proc.returncode != 0 or out.count(" exit 0\n") != nodes:
        sys.exit(f"bench_overhead: bare sbatch failed ({' '.join(argv)}):\n"
                 f"{proc.stdout}{proc.stderr}{out}")
    return took


def summary(name: str, values: list[float], unit: str = " s") -> str:
    return (f"{name}: median {statistics.median(values):.2f}{unit}, "
            f"min {min(values):.2f}{unit}, max {max(values):.2f}{unit} (n = {len(values)})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--checks", default=",".join(DEFAULT_CHECKS),
                    help="comma-separated fio check names (default: all six)")
    ap.add_argument("--target-overhead", type=float, default=0.5,
                    help="seconds per job over bare srun, median (default 0.5: issue 31)")
    ap.add_argument("--target-ratio", type=float, default=1.1,
                    help="suite wall time over the sum of its jobs' own time, median "
                    "(default 1.1: issue 31)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = ap.parse_args()
    checks = [c.strip() for c in args.checks.split(",") if c.strip()]
    env = dict(os.environ, SLURM_CONF=str(slurm_conf_path()), **OPENMPI_ENV)
    up = subprocess.run([str(ROOT / "scripts" / "local-cluster"), "up"], env=env,
                        capture_output=True, text=True)
    if up.returncode != 0:
        sys.exit(f"bench_overhead: local-cluster up failed:\n{up.stdout}{up.stderr}")
    tmp = Path(tempfile.mkdtemp(prefix="fsaccept-bench-overhead-"))
    data_root = Path("/var/tmp/fsaccept") / f"bench-overhead-{os.getpid()}"
    overheads: list[float] = []
    per_check: dict[str, list[float]] = {}
    ratios: list[float] = []
    over_batch: list[float] = []   # the suite's time per job over a bare sbatch's
    slurm_batch: list[float] = []  # a bare sbatch's over a bare srun's
    failed = []
    try:
        for r in range(1, args.rounds + 1):
            report, wall = run_reframe(checks, tmp / f"round{r}", env)
            # Benchmark jobs only (not the BenchmarkBinaries fixture, which runs no job).
            cases = [tc for run in report["runs"] for tc in run["testcases"]
                     if tc["name"] in checks]
            info = report["session_info"]
            session = float(info.get("time_elapsed") or wall)
            own = 0.0
            cases.sort(key=lambda tc: tc.get("job_completion_time_unix") or 0)
            previous_end = None
            for tc in cases:
                if tc["result"] != "pass":
                    failed.append(f"round {r}: {tc['name']}: {tc['result']} "
                                  f"({tc.get('fail_reason')})")
                    continue
                work = tmp / f"round{r}-bare-{tc['name']}"
                work.mkdir()
                bare = bare_srun(tc, work, data_root / tc["name"], env)
                batch = bare_sbatch(tc, work, data_root / tc["name"], env)
                own += bare
                end = float(tc["job_completion_time_unix"])
                start = float(tc["job_submit_time"]) if previous_end is None else previous_end
                spent = end - start
                previous_end = end
                over = spent - bare
                overheads.append(over)
                over_batch.append(spent - batch)
                slurm_batch.append(batch - bare)
                per_check.setdefault(tc["name"], []).append(over)
                print(f"round {r}: {tc['name']}: in the suite {spent:.2f} s (submitted to "
                      f"noticed {end - float(tc['job_submit_time']):.2f} s), bare srun "
                      f"{bare:.2f} s, overhead {over:.2f} s; bare sbatch {batch:.2f} s, "
                      f"overhead {spent - batch:.2f} s", flush=True)
            if own:
                ratios.append(session / own)
                print(f"round {r}: suite {session:.1f} s (ReFrame session; {wall:.1f} s with "
                      f"its start-up) over its jobs' own {own:.1f} s = {session / own:.2f}",
                      flush=True)
    finally:
        shutil.rmtree(data_root, ignore_errors=True)
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    for f in failed:
        print(f"error: {f}", file=sys.stderr)
    if not overheads:
        return 1
    print()
    for name, vals in per_check.items():
        print(summary(f"  {name}", vals))
    print(summary("overhead per job over bare srun", overheads)
          + f"; target <= {args.target_overhead:g} s")
    print(summary("  of which Slurm's own (bare sbatch over bare srun)", slurm_batch))
    print(summary("  the harness's (suite over bare sbatch)", over_batch))
    print(summary("suite wall time / sum of its jobs' own time", ratios, "")
          + f"; target <= {args.target_ratio:g}")
    ok = (statistics.median(overheads) <= args.target_overhead
          and statistics.median(ratios) <= args.target_ratio and not failed)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
