"""Parse md-workbench 4.0.0 output (built with IOR, same version).

What it prints (``md-workbench.c``, ``print_p_stat``), one line per phase from rank 0::

    Args: /path/md-workbench "-P" "200" "-I" "50" ...
    MD-Workbench total objects: 4800 workingset size: 11.905 MiB (version: 4.0.0) time: ...
    precreate process max:0.06s min:0.03s mean: 0.05s balance:42.4 stddev:0.0 rate:52510.2
      iops/s dsets: 16 objects:3200 rate:261.245 dset/s rate:52249.0 obj/s tp:194.4 MiB/s
      op-max:3.5722e-02s (0 errs) create(min, q1, median, q3, q90, q99, max)
    stonewall wear out 1.012182s (1918 iter)        (with -w and -W)
    benchmark process max:... rate:127775.3 iops/s objects:800 ... (0 errs)
      [stonewall-iter:N] read(...) stat(...) create(...) delete(...)   (one per -R iteration)
    cleanup process max:... (0 errs) delete(...)
    Total runtime: 1s time: ...

Every number is ``float(printed)``: the rate of a phase is md-workbench's own (all ranks'
operations over the slowest rank's time), latencies are its seven statistics of every
operation of all ranks (seconds; a list of other than seven, or a statistic that is not
a number, not finite or negative, is INVALID).  md-workbench exits 0 with errors counted in
``(N errs!!!)``: those are INVALID findings, like ``ERROR`` lines, MPI aborts and launcher
errors; output without the ``Total runtime`` line is truncated.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import asdict, dataclass, field
from typing import Any

from fsaccept.core.findings import (INVALID, WARNING, Finding, Findings, Judged, clip,
                                    figure_problem, json_safe, line_findings)

#: The seven latency statistics md-workbench prints per operation, in order.
STATISTICS = ("min", "q1", "median", "q3", "q90", "q99", "max")
OPERATIONS = ("read", "stat", "create", "delete")


def latency_figure(operation: str, statistic: str) -> str:
    """A latency figure's name: ``create_latency_q99``."""
    return f"{operation}_latency_{statistic}"


#: Every figure a run can give: the benchmark phase's rate and each latency statistic.
FIGURE_NAMES = ("rate", *(latency_figure(op, stat) for op in OPERATIONS
                          for stat in STATISTICS))
PHASES = ("precreate", "benchmark", "cleanup")


@dataclass
class PhaseResult:
    """One phase line (``precreate``, ``benchmark`` once per iteration, ``cleanup``)."""

    name: str
    line: int  #: 1-based line number
    time_max_s: float | None = None  #: ``process max``: the slowest rank's time
    time_min_s: float | None = None
    time_mean_s: float | None = None
    balance_pct: float | None = None  #: slowest vs fastest rank, 100 = even
    rate_ops: float | None = None  #: ``rate: X iops/s``: all operations of the phase
    objects: int | None = None  #: objects the phase handled (read, created or deleted)
    datasets: int | None = None
    objects_per_s: float | None = None
    throughput_mib_s: float | None = None  #: ``tp:`` (object data created + read)
    op_max_s: float | None = None  #: the longest single operation
    errors: int | None = None  #: ``(N errs)``; ``None`` when not printed (``-q``)
    stonewall_iterations: int | None = None  #: ``stonewall-iter:N`` (with -w)
    #: operation -> the seven statistics, seconds
    latency_s: dict[str, dict[str, float]] = field(default_factory=dict)


@dataclass
class MdWorkbenchRun(Judged):
    """Everything parsed from one md-workbench run."""

    version: str | None = None  #: ``4.0.0`` (IOR's version: md-workbench is built with it)
    command_line: str | None = None  #: the ``Args:`` line as a shell command
    total_objects: int | None = None
    workingset_mib: float | None = None
    options: dict[str, str] = field(default_factory=dict)  #: flag -> value, from Args
    phases: list[PhaseResult] = field(default_factory=list)
    wearout_s: float | None = None  #: ``stonewall wear out T s`` (-w with -W)
    wearout_iterations: int | None = None
    total_runtime_s: float | None = None
    findings: list[Finding] = field(default_factory=Findings)

    def benchmark(self) -> list[PhaseResult]:
        """The benchmark phase's lines, one per iteration (``-R``)."""
        return [p for p in self.phases if p.name == "benchmark"]

    def figures(self) -> dict[str, float]:
        """The acceptance figures: the benchmark phase's rate (ops/s) and each
        operation's latency statistics (s), taken from the worst of its iterations
        (lowest rate, highest latency): printed numbers, selected, never averaged."""
        bench = self.benchmark()
        if not bench or any(p.rate_ops is None for p in bench):
            return {}
        out = {"rate": min(p.rate_ops for p in bench)}
        for op in OPERATIONS:
            for stat in STATISTICS:
                values = [p.latency_s[op][stat] for p in bench if op in p.latency_s]
                if values and len(values) == len(bench):
                    # A bogus value is the figure: max() would hide a NaN or a negative
                    # behind another iteration's number.
                    bogus = [v for v in values if figure_problem(v, io_done=False)]
                    out[latency_figure(op, stat)] = bogus[0] if bogus else max(values)
        return out

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["findings"] = [asdict(f) for f in self.findings]
        d["valid"], d["reasons"], d["figures"] = self.valid, self.reasons, self.figures()
        return json_safe(d)


_ARGS = "Args: "
_HEADER = re.compile(r"^MD-Workbench total objects: (\d+) workingset size: (\S+) MiB "
                     r"\(version: ([^)]+)\)")
_PHASE = re.compile(r"^(precreate|benchmark|cleanup) process max:(\S+?)s ")
_FIELDS = {
    "time_min_s": re.compile(r" min:(\S+?)s "), "time_mean_s": re.compile(r" mean: (\S+?)s "),
    "balance_pct": re.compile(r" balance:(\S+) "),
    "rate_ops": re.compile(r" rate:(\S+) iops/s"),
    "objects": re.compile(r" objects:(\d+)"), "datasets": re.compile(r" dsets: (\d+)"),
    "objects_per_s": re.compile(r" rate:(\S+) obj/s"),
    "throughput_mib_s": re.compile(r" tp:(\S+) MiB/s"),
    "op_max_s": re.compile(r" op-max:(\S+?)s"), "errors": re.compile(r" \((\d+) errs"),
    "stonewall_iterations": re.compile(r" stonewall-iter:(\d+)"),
}
_INTEGER = {"objects", "datasets", "errors", "stonewall_iterations"}
# [^()]: a scan stops at the next "(", so a line of "read(read(..." stays linear
_LATENCY = re.compile(r" (read|stat|create|delete)\(([^()]*)\)")
_WEAROUT = re.compile(r"^stonewall wear out (\S+)s \((\d+) iter\)")
_TOTAL = re.compile(r"^Total runtime: (\d+)s")


def _classify(line: str) -> tuple[str, str] | None:
    """(severity, kind) of a line that bears on validity, or None."""
    if line.startswith("ERROR") or " ERROR" in line[:40]:
        return INVALID, "error"
    if "MPI_ABORT was invoked" in line:
        return INVALID, "mpi-abort"
    if line.startswith(("srun: error", "slurmstepd")) and "error" in line:
        return INVALID, "launcher"
    if line.startswith("WARNING: Unable to create test directory"):
        return INVALID, "no-directory"
    if line.startswith("WARNING"):
        return WARNING, "warning"
    if "Segmentation fault" in line or "exited on signal" in line:
        return INVALID, "launcher"
    return None


def error_findings(text: str) -> list[Finding]:
    """Findings in text that is not md-workbench's own report (the job's stderr)."""
    return line_findings(text, _classify)


def _number(text: str, integer: bool) -> float | int | None:
    try:
        return int(text) if integer else float(text)
    except ValueError:
        return None


def _phase(match: re.Match[str], line: str, lineno: int,
           findings: list[Finding]) -> PhaseResult:
    phase = PhaseResult(name=match.group(1), line=lineno, time_max_s=_number(match.group(2),
                                                                           False))
    for name, regex in _FIELDS.items():
        m = regex.search(line)
        if m:
            setattr(phase, name, _number(m.group(1), name in _INTEGER))
    for op, values in _LATENCY.findall(line):
        printed = [v.strip().removesuffix("s") for v in values.split(",")]
        if len(printed) != len(STATISTICS):
            findings.append(Finding(INVALID, "bogus-figure", lineno, clip(
                f"{phase.name} {op}: {len(printed)} statistics, md-workbench prints "
                f"{len(STATISTICS)}")))
            continue
        stats = [_number(v, False) for v in printed]
        for stat, text, value in zip(STATISTICS, printed, stats):
            # md-workbench prints "%.4es" and only when the max exceeds 1e-9 s: a
            # statistic of 0 (0.0000e+00s) is an operation under the timer's resolution,
            # a figure; NaN, an infinity or a negative latency is not.
            why = figure_problem(text if value is None else value, io_done=False)
            if why:
                findings.append(Finding(INVALID, "bogus-figure", lineno, clip(
                    f"{phase.name} {op} latency {stat}: {why}")))
        if None not in stats:
            phase.latency_s[op] = dict(zip(STATISTICS, stats))
    return phase


def parse_md_workbench(text: str) -> MdWorkbenchRun:
    """Parse md-workbench's output (stdout and stderr of one run).

    Never raises on its input: empty output (a run killed before it printed), or text
    that is not md-workbench's, is a run with INVALID findings, as for IOR and mdtest."""
    run = MdWorkbenchRun()
    findings = run.findings
    if not text.strip():
        findings.append(Finding(INVALID, "empty", None, "md-workbench output is empty"))
        return run
    if _ARGS not in text and "MD-Workbench total objects" not in text:
        findings.append(Finding(INVALID, "not-md-workbench", None,
                                "not md-workbench output (no 'Args:' line and no "
                                "'MD-Workbench total objects' header)"))
    for lineno, line in enumerate(text.splitlines(), start=1):
        if line.startswith(_ARGS) and run.command_line is None:
            try:
                argv = shlex.split(line[len(_ARGS):])
            except ValueError:
                argv = line[len(_ARGS):].split()
            run.command_line = shlex.join(argv)
            run.options = _options(argv[1:])
            continue
        m = _HEADER.match(line)
        if m:
            if run.version is not None:
                findings.append(Finding(INVALID, "two-runs", lineno, "a second md-workbench "
                                        "run in the same output: which one is meant?"))
            run.total_objects, run.version = int(m.group(1)), m.group(3)
            run.workingset_mib = _number(m.group(2), False)
            continue
        m = _PHASE.match(line)
        if m:
            phase = _phase(m, line, lineno, findings)
            run.phases.append(phase)
            if phase.errors:
                findings.append(Finding(INVALID, "errors", lineno, clip(
                    f"{phase.name}: md-workbench counted {phase.errors} failed operations "
                    "(it exits 0 all the same)")))
            # Times print with two decimals (a fast phase is "0.00s"): only the rate,
            # which every phase with operations has, must be a real figure.
            why = figure_problem(phase.rate_ops, io_done=True)
            if why:
                findings.append(Finding(INVALID, "bogus-figure", lineno,
                                        f"{phase.name} rate: {why}"))
            continue
        m = _WEAROUT.match(line)
        if m:
            run.wearout_s, run.wearout_iterations = float(m.group(1)), int(m.group(2))
            continue
        m = _TOTAL.match(line)
        if m:
            run.total_runtime_s = float(m.group(1))
            continue
        cls = _classify(line)
        if cls:
            findings.append(Finding(cls[0], cls[1], lineno, clip(line)))
    if not run.benchmark() and not run.reasons:
        findings.append(Finding(INVALID, "no-benchmark", None,
                                "no benchmark phase line: md-workbench measured nothing"))
    if run.total_runtime_s is None and not run.reasons:
        findings.append(Finding(INVALID, "truncated", None,
                                "no 'Total runtime' line: the output is truncated"))
    return run


def _options(argv: list[str]) -> dict[str, str]:
    """``-P 200 -X --run-info-file=F`` -> {"-P": "200", "-X": "", "--run-info-file": "F"}."""
    out: dict[str, str] = {}
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg.startswith("--") and "=" in arg:
            key, _, value = arg.partition("=")
            out[key] = value
        elif arg.startswith("-") and i + 1 < len(argv) and not argv[i + 1].startswith("-"):
            out[arg] = argv[i + 1]
            i += 1
        else:
            out[arg] = ""
        i += 1
    return out
