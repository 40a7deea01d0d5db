#!/usr/bin/env python3
"""Benchmark the sign-off report at scale (not a test).

Three shapes of a 10,000-case run report, each built in a temporary directory from a
real run report of ``tests/data/reframe/``, figures varied by a few percent:

- ``distributed``: ``--distribute=all`` on 1,382 nodes makes one test case per node
  and check.  ``fio-client.json`` (six fio checks: PASS, FAIL and ERROR) replicated
  as ReFrame names distributed tests (``Check %$nid=nNNNN``, one node each, a few
  nodes slow).
- ``named``: 10,000 separately named tests, as parameter sweeps and many-check sites
  make them.  ``full-suite.json`` (fio, IOR with its fixtures, mdtest; PASS, FAIL,
  SKIP) replicated: two thirds as parameter variants (``IORWriteBandwidth %nodes=4
  %xfer=1m %sweep=17``), one third as distinct names (``IORWriteBandwidth0042``).
- ``unrelated`` (the worst case of ``named``): every test a name that shares no
  family with another (``IORWriteBandwidthSiteQXB``).

Then it runs ``fsaccept report`` on each as a child process and prints, for each
shape and size: wall time, the child's peak RSS (a fresh Python per run, its own
``ru_maxrss``) and the bytes written (report.md, report.html, plots).

Budget at 10,000 test cases: 60 s, 1 GiB peak, 50 MB written.  Exits 1 when a size
is over its budget (smaller sizes: the same budget).

    python bench/bench_report.py [--sizes 1000,10000] [--shapes distributed,named,unrelated]
                                 [--keep DIR]
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import re
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "tests" / "data" / "reframe" / "fio-client.json"
NAMED_SOURCE = ROOT / "tests" / "data" / "reframe" / "full-suite.json"
BUDGET_S, BUDGET_RSS, BUDGET_BYTES = 60.0, 2**30, 50 * 10**6


def distributed(cases: int, seed: int = 1) -> dict:
    """The real run report, each of its test cases replicated over nodes until there
    are ``cases`` test cases, as ``--distribute=all`` names them."""
    report = json.loads(SOURCE.read_text())
    templates = [tc for run in report["runs"] for tc in run["testcases"]]
    nodes = -(-cases // len(templates))
    rng = random.Random(seed)
    out = []
    for tc in templates:
        for i in range(nodes):
            if len(out) == cases:
                break
            node = f"nid{i + 1:05d}"
            c = copy.deepcopy(tc)
            name = f"{tc['name']} %$nid={node}"
            c.update(name=name, display_name=name, unique_name=f"{tc['name']}_{i}",
                     uuid=str(uuid.UUID(int=rng.getrandbits(128))), job_nodelist=[node],
                     num_nodes=1)
            slow = 0.3 if rng.random() < 0.003 else 1.0
            for pv in (c.get("perfvalues") or {}).values():
                if isinstance(pv[0], (int, float)) and pv[4] not in ("nodes",):
                    pv[0] = round(pv[0] * slow * rng.uniform(0.95, 1.05), 6)
            if isinstance(c.get("per_node_figures"), str):
                c["per_node_figures"] = re.sub(r"\bn\d+:", f"{node}:",
                                               c["per_node_figures"].split(",")[0])
            out.append(c)
    report["runs"] = [{**report["runs"][0], "testcases": out}]
    return report


def _vary(tc: dict, rng: random.Random) -> None:
    slow = 0.3 if rng.random() < 0.003 else 1.0
    for pv in (tc.get("perfvalues") or {}).values():
        if isinstance(pv[0], (int, float)) and pv[4] not in ("nodes",):
            pv[0] = round(pv[0] * slow * rng.uniform(0.95, 1.05), 6)


def named(cases: int, seed: int = 1) -> dict:
    """The real run report's tests (its fixtures once, as they ran) replicated into
    ``cases`` separately named tests: parameter variants and distinct names."""
    report = json.loads(NAMED_SOURCE.read_text())
    every = [tc for run in report["runs"] for tc in run["testcases"]]
    fixtures = [tc for tc in every if tc.get("fixture")]
    templates = [tc for tc in every if not tc.get("fixture")]
    rng = random.Random(seed)
    out = list(fixtures)
    session = report["session_info"]["uuid"]
    i = 0
    while len(out) < cases:
        tc = templates[i % len(templates)]
        k = i // len(templates)
        if k % 3 == 2:  # a many-check site: a class of its own
            name = f"{tc['name']}{k:04d}"
        else:  # a parameter sweep
            name = (f"{tc['name']} %nodes={2 ** (k % 4)} %xfer={('64k', '1m', '16m')[k % 3]}"
                    f" %sweep={k}")
        c = copy.deepcopy(tc)
        c.update(name=name, display_name=name, unique_name=f"{tc['name']}_{k}",
                 uuid=f"{session}:0:{len(out)}")
        _vary(c, rng)
        out.append(c)
        i += 1
    report["runs"] = [{**report["runs"][0], "testcases": out}]
    info = report["session_info"]
    info["num_cases"] = len(out)
    info["num_failures"] = sum(tc.get("result") == "fail" for tc in out)
    info["num_skipped"] = sum(tc.get("result") == "skip" for tc in out)
    return report


def unrelated(cases: int, seed: int = 1) -> dict:
    """As :func:`named`, but every test a name of its own that shares no family with
    another (``IORWriteBandwidthSiteQXB``): the worst case of a many-check site."""
    report = named(cases, seed)
    for k, tc in enumerate(report["runs"][0]["testcases"]):
        if not tc.get("fixture"):
            word = ""
            while True:
                word, k = word + chr(ord("A") + k % 26), k // 26
                if not k:
                    break
            tc["name"] = tc["display_name"] = (
                tc["name"].split()[0].rstrip("0123456789") + "Site" + word)
    return report


SHAPES = {"distributed": distributed, "named": named, "unrelated": unrelated}


def measure(shape: str, cases: int, work: Path) -> tuple[float, int, int]:
    """(seconds, peak RSS bytes of the child, bytes written) of one report."""
    src = work / f"run-report-{shape}-{cases}.json"
    src.write_text(json.dumps(SHAPES[shape](cases)))
    out = work / f"report-{shape}-{cases}"
    cmd = [sys.executable, "-m", "fsaccept.cli", "report", str(src), "--out", str(out),
           "--signed-by", "bench"]
    # The child's own peak: a wrapper reports its child's ru_maxrss (RUSAGE_CHILDREN
    # here would be the largest of every report run so far, of both shapes).
    wrapper = ("import resource, subprocess, sys; rc = subprocess.call(sys.argv[1:]); "
               "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, "
               "file=sys.stderr); sys.exit(rc)")
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", wrapper, *cmd], cwd=ROOT,
                          capture_output=True, text=True,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    seconds = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        sys.exit(f"bench_report: {' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr}")
    rss = int(proc.stderr.split()[-1]) * 1024
    written = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    return seconds, rss, written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000", help="test cases, comma-separated")
    ap.add_argument("--shapes", default=",".join(SHAPES),
                    help=f"comma-separated, of: {', '.join(SHAPES)}")
    ap.add_argument("--keep", type=Path, help="write into DIR and keep it (to look at it)")
    args = ap.parse_args(argv)
    sizes = sorted(int(s) for s in args.sizes.split(","))
    shapes = args.shapes.split(",")
    if unknown := [s for s in shapes if s not in SHAPES]:
        ap.error(f"--shapes: unknown {', '.join(unknown)} (known: {', '.join(SHAPES)})")
    over = False
    with tempfile.TemporaryDirectory(prefix="fsaccept-bench-report-") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        print(f"{'shape':>11}  {'test cases':>10}  {'time':>8}  {'peak RSS':>10}  {'written':>10}  budget "
              f"{BUDGET_S:.0f} s, {BUDGET_RSS / 2**20:.0f} MiB, {BUDGET_BYTES / 1e6:.0f} MB")
        for shape, n in ((shape, n) for shape in shapes for n in sizes):
            s, rss, written = measure(shape, n, work)
            ok = s <= BUDGET_S and rss <= BUDGET_RSS and written <= BUDGET_BYTES
            over |= not ok
            print(f"{shape:>11}  {n:>10,}  {s:>6.1f} s  {rss / 2**20:>6.0f} MiB  {written / 1e6:>7.2f} MB  "
                  f"{'ok' if ok else 'OVER BUDGET'}", flush=True)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
