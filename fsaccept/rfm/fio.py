"""ReFrame base of the fio client checks (``checks/fio_client.py``).

One fio per node: the test asks for one task per node (``num_tasks_per_node
= 1``; fio is not an MPI program), and the launcher (``srun`` on Slurm
systems, nothing on the single-host ``workstation``) starts a small script,
``fsaccept-fio-node.sh``, once per node.  Each copy works on its own
directory ``<target>/fsaccept/<test>/<node>/`` and writes fio's JSON report to
``fio-<node>.json`` (fio's own messages to ``fio-<node>.log``) in the stage
directory, which is shared with the nodes, so every node's report is
recovered intact, never from interleaved output.

What the test runs (rw, direct, fsync, engine...) is in
``fsaccept/benchmarks/fio/command.py``; parsing, figures, aggregation and outliers in
``fsaccept/benchmarks/fio/``.

Figures (perf variables, names carry the regime, e.g.
``randread_4k_direct_iops``):

- throughput (IOPS, MiB/s, ops/s): the sum over nodes, and ``<name>_node_min``
  (the slowest node);
- latency (us): the worst node's value (fio's own percentile of that node:
  percentiles of different nodes cannot be merged);
- ``outlier_nodes``: how many nodes are below ``outlier_fraction`` x the
  median node (per throughput figure); more than 0 FAILs, and the loggable
  variable ``outlier_nodes_named`` names them with their figure and ratio;
- every node's figures in the loggable variable ``per_node_figures``
  (``{fig: {node: value}}``), not as perf variables: their number follows the
  node count.

Thresholds (``thresholds:`` in the entry): throughput figures are lower bounds
(as in every acceptance test), latencies are upper bounds: the ReFrame
reference is built here, ``(value, None, +tolerance, unit)``, instead of
``Threshold.as_reframe_reference()`` (a lower bound).

The directory under test is ``AcceptanceTest.target_root()``: the reference
file's ``target.path``, or ``FSACCEPT_TARGET`` / ``-S target=DIR``; its
file-system type must be ``target.fstype`` (or ``FSACCEPT_TARGET_FSTYPE`` /
``-S target_fstype_expected=nfs4``), before submission (AcceptanceTest's guard)
and again where the job runs (a node without the mount is INVALID).
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field

import reframe.utility.sanity as sn
from reframe.core.builtins import run_after, run_before, variable
from reframe.core.exceptions import SanityError

from fsaccept.benchmarks import registry
from fsaccept.benchmarks.fio import command as fiocmd
from fsaccept.benchmarks.fio import figures
from fsaccept.benchmarks.fio import parse as fio
from fsaccept.benchmarks.fio.command import NODE_MARKER
from fsaccept.core import reduction, versions
from fsaccept.rfm.benchmark import PER_NODE_FIGURES, BenchmarkTest
from fsaccept.rfm.jobscript import INFO_MARKER

NODE_SCRIPT = fiocmd.NODE_SCRIPT
#: fio's directory in a node script's fio line, before it becomes the node's ``$dir``.
NODE_DIR = "@FSACCEPT_DIR@"


@dataclass
class FioResults:
    """Every node's parsed run and the combined figures (``combined`` is None when
    no figure could be read)."""

    runs: dict[str, fio.FioRun] = field(default_factory=dict)
    per_node: dict[str, dict[str, float]] = field(default_factory=dict)
    combined: figures.Combined | None = None
    reasons: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class FioTest(BenchmarkTest):
    """One fio job kind (``fsaccept.benchmarks.fio.command.KINDS``) on a node fraction, one fio per node."""

    unsafe_path_chars = registry.BENCHMARKS["fio"].unsafe_path_chars

    #: The job kind, a key of ``fsaccept.benchmarks.fio.command.KINDS``.
    kind = variable(str)

    #: fio executable (from PATH: Debian's fio package, a module, a Spack view).
    fio_binary = variable(str, value="fio")

    # Provenance and findings (loggable: in the perflog and the run report).
    fio_settings = variable(str, value="", loggable=True)
    file_size_bytes = variable(int, value=0, loggable=True)
    bytes_per_node = variable(int, value=0, loggable=True)
    node_memtotal_bytes = variable(int, value=0, loggable=True)
    per_node_figures = variable(PER_NODE_FIGURES, value={}, loggable=True)
    outlier_fraction = variable(float, value=0.0, loggable=True)
    outlier_nodes_named = variable(str, value="", loggable=True)
    notes = variable(str, value="", loggable=True)

    valid_systems = ["+fio"]
    valid_prog_environs = ["*"]
    # fio is not an MPI program (no start-up crash to retry), and it reports into files,
    # not stdout: "printed nothing" would not mean "did nothing".
    retry_crashed_launch = False

    # ------------------------------------------------------------------ set-up

    @property
    def params(self) -> fiocmd.FioParameters:
        """This test's typed entry of the reference file."""
        if not hasattr(self, "_params"):
            self._params = fiocmd.parameters(self.reference_key, self.kind, self.entry,
                                             where=self.reference_path)
        return self._params

    @property
    def specs(self) -> list[figures.FigureSpec]:
        return fiocmd.figure_specs(self.params)

    def deadlines_s(self) -> int:
        return fiocmd.deadline_s(self.params)

    @run_after("setup")
    def set_threshold(self):
        # Overrides AcceptanceTest.set_threshold (same name, same place in the
        # pipeline): latency thresholds are upper bounds.
        self.outlier_fraction = self.params.outlier_fraction
        self.reference = {"*": self.fio_references()}

    def fio_references(self) -> dict[str, tuple]:
        """ReFrame's reference of every judged figure (the entry's thresholds)."""
        return fiocmd.reframe_references(
            self.refdata.thresholds(self.reference_key), self.specs,
            outlier_detection=self.outlier_fraction > 0,
            where=f"{self.reference_path}: tests.{self.reference_key}.thresholds")

    #: The data fio wrote, e.g. "fio random (irreducible)" (none for the metadata test).
    data_pattern = variable(str, value="", loggable=True)

    @run_after("setup")
    def set_fio_command(self):
        p = self.params
        if not p.spec.metadata:
            self.data_pattern = reduction.pattern_label(
                "fio", p.data_pattern, fiocmd.pattern_reducible(p.data_pattern),
                "data_pattern" in self.entry)
        self.file_size_bytes = p.file_size or 0
        self.bytes_per_node = p.bytes_per_node
        self.executable = "bash"
        self.executable_opts = [NODE_SCRIPT]
        self.keep_files = [NODE_SCRIPT, "fio-*.json", "fio-*.log"]

    def benchmark_binary(self) -> str:
        return self.fio_binary

    def uses_direct_io(self) -> bool:
        return self.params.direct

    def command_line(self) -> str:
        return fiocmd.command_line(self.params, self.fio_binary, self.target_dir)

    def extra_info_cmds(self) -> list[str]:
        fio_bin = shlex.quote(self.fio_binary)
        return [f"echo {INFO_MARKER} fio_version $({fio_bin} --version)"]

    # One fio per node: each node's report gives its own placement reasons.
    def placement_reasons(self) -> list[str]:
        return []

    def planned_volume(self) -> int:
        # Read tests write their files too (fio lays them out before reading).
        return self.params.bytes_per_node * self.num_nodes

    def node_fio_line(self, opts: list[str]) -> str:
        """fio's line in a node script: ``opts`` made for the directory ``@FSACCEPT_DIR@``,
        which becomes the script's ``$dir``, and the node's name its ``$node``."""
        return shlex.join([self.fio_binary, *opts]).replace(
            f"--directory={NODE_DIR}", '--directory="$dir"').replace(
            fiocmd.NODE_PLACEHOLDER, '"$node"')

    @run_before("run")
    def write_node_script(self):
        fio_line = self.node_fio_line(fiocmd.fio_options(self.params, NODE_DIR))
        script = "\n".join([
            "#!/bin/bash",
            "# One fio per node (fsaccept.rfm.fio): run once on every node by the launcher.",
            'node=${SLURMD_NODENAME:-$(hostname -s)}',
            f'dir={shlex.quote(self.target_dir)}/"$node"',
            'mkdir -p "$dir" || { echo "' + NODE_MARKER + ' $node exit mkdir-failed"; exit 1; }',
            fiocmd.MEMORY_LINE,
            f'{fio_line} --output=fio-"$node".json > fio-"$node".log 2>&1',
            "rc=$?",
            f'echo "{NODE_MARKER} $node exit $rc"',
            "exit $rc",
            "",
        ])
        with open(os.path.join(self.stagedir, NODE_SCRIPT), "w") as f:
            f.write(script)

    # ------------------------------------------------------------------ results

    def _read_stage(self, name: str) -> str | None:
        try:
            with open(os.path.join(self.stagedir, name), encoding="utf-8",
                      errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return None

    def fio_results(self) -> FioResults:
        """Every node's fio report, parsed once."""
        if hasattr(self, "_results"):
            return self._results
        res = self._results = FioResults()
        text = self._stdout_text()
        self.benchmark_version = self.job_info().get("fio_version", "")
        exits = fiocmd.node_exits(text)
        memory = fiocmd.node_memory_bytes(text)
        self.node_memtotal_bytes = min(memory.values(), default=0)
        res.reasons += self._placement_reasons(sorted(exits))
        findings = {node: self._parse_node(res, node, exits[node],
                                           memory.get(node) or self.node_memory_bytes or None)
                    for node in sorted(exits)}
        res.reasons += figures.node_reasons(findings)
        res.notes = figures.summarize_by_node(
            {n: [f for f in fs if f.severity != fio.INVALID] for n, fs in findings.items()})
        if res.per_node and len(res.per_node) == len(exits):
            res.combined = figures.combine(res.per_node, self.specs, self.outlier_fraction)
            self.per_node_figures = figures.per_node_figures(res.per_node, self.specs)
            self.outlier_nodes_named = res.combined.describe_outliers()
        self.notes = "; ".join(res.notes)
        return res

    def _placement_reasons(self, nodes: list[str]) -> list[str]:
        reasons = figures.node_count_reasons(nodes, self.num_tasks)
        ranks = self.record_rank_map() if self.current_partition.launcher_type. \
            registered_name == "srun" else {}
        if ranks and sorted(ranks.values()) != sorted(set(ranks.values())):
            reasons.append(f"more than one fio task on a node ({self.rank_map}): "
                           "one fio per node was asked")
        if ranks and set(ranks.values()) != set(nodes):
            missing = sorted(set(ranks.values()) - set(nodes))
            reasons.append(f"Slurm placed tasks on {self.rank_map}, fio reported from "
                           f"{','.join(nodes) or 'no node'}"
                           + (f": no report from {','.join(missing)} in job {self.job.jobid} "
                              "(the node failed, or fio never ran there)" if missing else ""))
        return reasons

    def figure_kinds(self) -> list[str]:
        """What its figures are, in the words of ``known_bad_versions.yaml``'s ``affects``
        (a fio version with a known bug affecting one is INVALID)."""
        return fiocmd.figure_kinds(self.specs)

    def _parse_node(self, res: FioResults, node: str, exit_code: str,
                    memory: int | None, stem: str = "",
                    specs: list[figures.FigureSpec] | None = None) -> list[fio.Finding]:
        """Judge one node's report, ``fio-<stem>.json`` (the stem is the node's name
        unless the test runs fio more than once on a node), and its messages
        (``fio-<stem>.log``) by :func:`fsaccept.benchmarks.fio.figures.judge_node`, the
        sign-off's function too; its figures (``specs``, by default the test's) go to
        ``res.per_node[stem]``, and its findings (fio's and the harness's) are returned."""
        stem = stem or node
        specs = self.specs if specs is None else specs
        name = f"fio-{stem}.json"
        judged = figures.judge_node(node, name, self._read_stage(name),
                                    self._read_stage(f"fio-{stem}.log") or "", exit_code,
                                    memory, self.target_dir, specs, self.figure_kinds())
        run = judged.run
        if run is None:
            return judged.findings
        res.runs[stem] = run
        if not self.version_note:
            self.version_note = versions.version_note("fio", run.version_number)
        if not self.fio_settings and run.jobs:
            self.fio_settings = "; ".join(f"{job.name}: {fio.format_settings(job)}"
                                          for job in run.jobs)
        if judged.figures is not None:
            res.per_node[stem] = judged.figures
        return judged.findings

    def benchmark_reasons(self) -> list[str]:
        reasons = self.fio_results().reasons
        if not self.params.spec.metadata:
            reasons = reasons + reduction.reducible_data_reasons(
                f"fio's {self.params.data_pattern} buffers",
                fiocmd.pattern_reducible(self.params.data_pattern),
                reduction.SESSION_RESULTS.get(self.target_mount))
        return reasons

    @run_before("performance")
    def set_perf_variables(self):
        self.perf_variables = {
            r.name: sn.make_performance_function(self._reported, r.unit, r.name)
            for r in figures.reported(self.specs, self.outlier_fraction)}

    def _combined(self) -> figures.Combined:
        combined = self.fio_results().combined
        if combined is None:  # sanity has already made this INVALID
            raise SanityError("INVALID: no figures")
        return combined

    def _reported(self, name: str) -> float:
        """The figure ``name`` the test reports
        (:func:`fsaccept.benchmarks.fio.figures.reported_figures`)."""
        return figures.reported_figures(self._combined())[name]
