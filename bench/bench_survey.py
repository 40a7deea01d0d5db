#!/usr/bin/env python3
"""Benchmark the target survey's model at scale (not a test).

Times, side by side in one run, what a survey of a large system costs the harness itself
(not the file system): the plan of rounds (``fsaccept.core.components.survey_plan``), the
slow-target judgement and the bound, for 1,000 targets on 100 servers read by 1,000
nodes, and for 10,000 targets on 1,000 servers read by 1,000 nodes.  Each size is timed
in process (best of ``--repeat``) and as a whole fresh Python process that imports the
model and does the same (the budget: 10 s).  It prints the rounds each plan needs beside
the fewest any plan can have.

The sign-off of a survey of up to :data:`SIGNOFF_AT_MOST` targets is timed too: the
program's lines and one fio JSON per target (a real capture's, its bandwidth changed)
written as a job keeps them, then the sign-off's re-judging (``survey_reasons``: every
report read and parsed) and the report's Components rows (the budget: 10 s).  So is
the network check's sign-off for the same nodes and servers: three iperf3 JSONs per node
(alone, all at once, all at once receiving: real captures, their bytes changed), re-judged by
``network_reasons``, with the report's rows.  And the bound: derived from those two
checks' cases, ten IOR aggregate bandwidths on all the nodes judged against it, and the
bound's and the components' charts drawn (``bound``).  Exits 1 when a size is over
budget.

    python bench/bench_survey.py [--repeat 3] [--sizes 1000x100x1000,10000x1000x1000]
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from fsaccept.core import components  # noqa: E402
from fsaccept.core.components import Target  # noqa: E402

BUDGET_S = 10.0
#: The largest survey whose sign-off is timed (its fio reports are written first).
SIGNOFF_AT_MOST = 2000
CAPTURE = REPO / "tests" / "data" / "survey" / "healthy" / "r0-n1.json"
IPERF3 = REPO / "tests" / "data" / "network" / "limited-30MiB" / "t-n1.json"
IPERF3_READ = REPO / "tests" / "data" / "network" / "read-limited-30MiB" / "r-n1.json"


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


def signoff(targets: int, servers: int, nodes: int, root: Path) -> float:
    """Seconds the sign-off takes to re-judge a survey of this size and lay out its rows
    (its files written first, not timed); it must find the survey valid."""
    import json
    import statistics
    from types import SimpleNamespace

    from fsaccept.benchmarks import registry
    from fsaccept.benchmarks.survey import command, parse, validity
    from fsaccept.core import inputs
    from fsaccept.reporting.case import case_of
    from fsaccept.reporting.components import survey_rows
    from fsaccept.reporting.signoff.common import RunFiles
    from fsaccept.reporting.signoff.survey import survey_reasons

    rng = random.Random(2)
    ts = [Target(f"oss{i % servers}:/ost/{i}", f"oss{i % servers}") for i in range(targets)]
    names = [f"nid{i:05d}" for i in range(nodes)]
    plan = components.survey_plan(ts, names)
    report = json.loads(CAPTURE.read_text())
    out = root / "output"
    out.mkdir(parents=True)
    lines = [f"fsaccept-survey version 1 size {64 << 20} runtime_s 10 bricks {targets} "
             f"nodes {','.join(names)} dir /lustre/survey"]
    lines += [f"fsaccept-survey target {s.round} {s.node} {s.target.server} {s.target.name}"
              for r in plan for s in r]
    for r in plan:
        for s in r:
            name = f"r{s.round}-{s.node}.json"
            report["jobs"][0]["write"]["bw_bytes"] = int(rng.uniform(900, 1100) * 2**20)
            (out / name).write_text(json.dumps(report))
            lines.append(f"fsaccept-survey result {s.round} {s.node} 0 {name}")
    lines.append("fsaccept-survey end")
    text = "\n".join(lines) + "\n"
    (out / "rfm_job.out").write_text(text)
    (out / "rfm_job.err").write_text("")
    files = RunFiles(inputs.Reader(root))
    run = parse.parse_survey(text)
    values = validity.measured(run, lambda n: (out / n).read_text())[0]
    figures = validity.figures(values, 0.2)
    case = case_of({
        "name": "TargetSurvey", "result": "pass", "outputdir": str(out),
        "perfvalues": {f"s:p:{f}": [figures[f], 0, None, None, u, "pass"]
                       for f, u in command.FIGURES.items()},
        "survey_lines": parse.program_lines(text), "max_spread": 0.2,
        "target_figures": {t.name: v for t, v in values.items()},
        "slow_targets_named": "; ".join(validity.failures(values, 0.2))})
    ref = SimpleNamespace(entries={"target_survey": {"size_mib": 64, "runtime_s": 10,
                                                     "max_spread": 0.2}})
    start = time.perf_counter()
    reasons = survey_reasons(case, registry.TESTS["TargetSurvey"], ref, files)
    rows = survey_rows(SimpleNamespace(name="TargetSurvey", case=case, verdict="PASS"))
    took = time.perf_counter() - start
    assert reasons == [] and len(rows) == targets, reasons[:3]
    assert statistics.median(values.values()) > 0
    return took, case


def network_signoff(servers: int, nodes: int, root: Path) -> float:
    """Seconds the sign-off takes to re-judge a network check of ``nodes`` nodes on
    ``servers`` servers and lay out its rows (its files written first, not timed)."""
    import json
    import math
    from types import SimpleNamespace

    from fsaccept.benchmarks import registry
    from fsaccept.benchmarks.network import command, parse, validity
    from fsaccept.core import inputs
    from fsaccept.reporting.case import case_of
    from fsaccept.reporting.components import network_rows
    from fsaccept.reporting.signoff.common import RunFiles
    from fsaccept.reporting.signoff.network import network_reasons

    rng = random.Random(3)
    names = [f"nid{i:05d}" for i in range(nodes)]
    hosts = [f"oss{i}" for i in range(servers)]
    ports = math.ceil(nodes / servers)
    endpoints = [(h, 5201 + k) for k in range(ports) for h in hosts]
    alone, together = components.network_plan(names, endpoints)
    captures = {False: json.loads(IPERF3.read_text()),
                True: json.loads(IPERF3_READ.read_text())}
    out = root / "output"
    out.mkdir(parents=True)
    lines = [f"fsaccept-network version 2 runtime_s 5 servers "
             f"{','.join(f'{h}:{p}' for h, p in endpoints)} nodes {','.join(names)}"]
    steps = [("alone", r, s) for r, round_ in enumerate(alone) for s in round_]
    steps += [("together", len(alone), s) for s in together]
    steps += [("together_read", len(alone) + 1, s) for s in together]
    lines += [f"fsaccept-network step {k} {r} {n} {h} {p}" for k, r, (n, h, p) in steps]
    for kind, r, (node, _, _) in steps:
        name = {"alone": f"a{r}", "together": "t", "together_read": "r"}[kind] + \
            f"-{node}.json"
        capture = captures[kind == "together_read"]
        capture["end"]["sum_received"]["bytes"] = int(3e9 * rng.uniform(0.9, 1.1))
        (out / name).write_text(json.dumps(capture))
        lines.append(f"fsaccept-network result {r} {node} 0 {name}")
    lines.append("fsaccept-network end")
    text = "\n".join(lines) + "\n"
    (out / "rfm_job.out").write_text(text)
    (out / "rfm_job.err").write_text("")
    files = RunFiles(inputs.Reader(root))
    entry = {"port": 5201, "ports": ports, "servers": hosts}
    p = command.parameters("network_survey", entry)
    run = parse.parse_network(text)

    def read(name: str) -> str:
        return (out / name).read_text()
    links = validity.measured(run, read)[0]
    figures = validity.figures(links, validity.measured(run, read, "together")[0], p,
                               validity.measured(run, read, "together_read")[0])
    case = case_of({
        "name": "NetworkSurvey", "result": "pass", "outputdir": str(out),
        "perfvalues": {f"s:p:{f}": [figures[f], 0, None, None, u, "pass"]
                       for f, u in command.FIGURES.items() if f in figures},
        "network_lines": parse.program_lines(text), "max_spread": p.max_spread,
        "link_figures": {n: x.mib_s for n, x in links.items()},
        "link_servers": validity.servers_of(run),
        "link_rtt_ms": {n: x.rtt_ms for n, x in links.items()},
        "link_retransmits": {n: x.retransmits for n, x in links.items()},
        "slow_links_named": ""})
    ref = SimpleNamespace(entries={"network_survey": entry})
    start = time.perf_counter()
    reasons = network_reasons(case, registry.TESTS["NetworkSurvey"], ref, files)
    rows = network_rows(SimpleNamespace(name="NetworkSurvey", case=case, verdict="PASS"))
    took = time.perf_counter() - start
    assert reasons == [] and len(rows) == nodes + 2, reasons[:3]
    return took, case


def bound_section(survey, network, nodes: int, tests: int = 10) -> float:
    """Seconds the report takes to derive the bound from the two component cases and
    judge ``tests`` aggregate bandwidths of IOR on all ``nodes`` against it, with the
    bound's chart and the two components' charts drawn."""
    from types import SimpleNamespace

    from fsaccept.reporting import bound, components as section
    from fsaccept.reporting.case import case_of

    names = [f"nid{i:05d}" for i in range(nodes)]
    ior = [SimpleNamespace(name=f"IORWriteBandwidth_{i}", verdict="PASS", target="",
                           case=case_of({"name": "IORWriteBandwidth", "result": "pass",
                                         "job_nodelist": names}),
                           figures=[SimpleNamespace(name="write_bandwidth",
                                                    value=1000.0 + i)])
           for i in range(tests)]
    parts = [SimpleNamespace(name=n, case=c, verdict="PASS", target="", figures=[])
             for n, c in (("TargetSurvey", survey), ("NetworkSurvey", network))]
    start = time.perf_counter()
    found = bound.bound_section([*parts, *ior])
    rows = section.components_section(parts)
    drawn = [bound.plot(k, found.figures) for k in found.kinds if k.bound]
    drawn += [section.plot(rows.targets, "targets"), section.plot(rows.links, "links")]
    took = time.perf_counter() - start
    assert len(found.figures) == tests and all(f.verdict == "PASS" for f in found.figures)
    assert all(drawn), "a chart was not drawn"
    return took


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sizes", default="1000x100x1000,10000x1000x1000",
                    help="TARGETSxSERVERSxNODES, comma-separated")
    args = ap.parse_args()
    over = False
    print(f"{'targets':>8} {'servers':>8} {'nodes':>6} {'rounds':>7} {'fewest':>7} "
          f"{'slow':>5} {'in process':>11} {'process':>9} {'sign-off':>9} {'network':>9} "
          f"{'bound':>7}")
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
        signed = network = bounded = "—"
        if t <= SIGNOFF_AT_MOST:
            with tempfile.TemporaryDirectory(prefix="bench-survey-") as tmp:
                took, survey = signoff(t, s, n, Path(tmp))
            over |= took > BUDGET_S
            signed = f"{took:.3f}s"
            with tempfile.TemporaryDirectory(prefix="bench-network-") as tmp:
                took, net = network_signoff(s, n, Path(tmp))
            over |= took > BUDGET_S
            network = f"{took:.3f}s"
            took = bound_section(survey, net, n)
            over |= took > BUDGET_S
            bounded = f"{took:.2f}s"
        over |= whole > BUDGET_S
        print(f"{t:>8} {s:>8} {n:>6} {rounds:>7} {fewest:>7} {slow:>5} {best:>10.3f}s "
              f"{whole:>8.3f}s {signed:>9} {network:>9} {bounded:>7}")
    print(f"budget: {BUDGET_S:g} s a whole process, and a sign-off: "
          f"{'OVER' if over else 'within'}")
    return 1 if over else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one"]:
        model(*(int(x) for x in sys.argv[2].split("x")))
        sys.exit(0)
    sys.exit(main())
