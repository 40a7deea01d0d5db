"""A noisy neighbour (``checks/interference/interference.py``, issue 39 §2): the victims'
4 KiB direct reads at queue depth 1 measured alone, then beside the aggressors' writes,
in one job (``docs/user/interference.md``).

The job's nodes are split in two groups: the first ``victim_nodes`` of the job's node
list (``scontrol show hostnames``, the order ReFrame reads it in too) are the victims, the
others the aggressors.  After what every benchmark job does first (its data directory
created and owned, removed by its EXIT trap; every node's mount and O_DIRECT checked, in
a step of its own: ``node_check_in_step``), the job runs:

1. **alone**: the victims' step (ReFrame's launch line, ``srun ... --exclusive
   --nodes=V ... --nodelist=<victims>``): fio for ``runtime_s``;
2. **under load**: the aggressors' step and the victims' step at once
   (``srun --exclusive ... &`` each, then ``wait``).  The aggressors write for
   ``lead_s + runtime_s + 2 lead_s``; the victims wait ``lead_s``, then read as in 1.
   When the run alone failed, this phase does not run (the job says why).

Every node of a step runs ``fsaccept-fio-node.sh ROLE`` (:func:`node_script`): it prints
the step's markers (``FSACCEPT_STEP ROLE NODE start|end SECONDS``) around its fio, which
writes its JSON report to ``fio-<role>-<node>.json`` (its messages to ``.log``) in the
stage directory, and an aggressor its bandwidth log to ``aggressor-<node>_bw.1.log``.

After the job each report is parsed as every fio test's is (exit status, version, fio's
own findings); the record is made from fio's numbers
(:func:`fsaccept.benchmarks.fio.interference.evidence`), each run's span in fio's clock
checked against its step's markers, kept (``interference_record``, and the file
``interference-record.json``:
:data:`fsaccept.benchmarks.fio.interference_judge.RECORD_FILE`, kept with ``keep_files``)
and judged by :func:`fsaccept.benchmarks.fio.interference_judge.judge`.  A run that did not
overlap, an aggressor without load, a p99 that is no latency: INVALID, with the judges'
reasons.  The worst victim's p99 ratio above ``max_p99_ratio``: FAIL (ReFrame's
reference), the judge's reasons in ``interference_failures``.  The sign-off judges the
same record again, read from the kept file (which the manifest digests), never from the
run report's field.

For tests only: ``step_delay`` (``FSACCEPT_TEST_STEP_DELAY``), ``ROLE:SECONDS``, makes
that role's step wait so much longer before its fio
(``tests/integration/test_interference.py`` makes the steps miss each other with it).
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Mapping

import reframe.utility.sanity as sn
from reframe.core.builtins import run_after, run_before, variable
from reframe.core.exceptions import SanityError
from reframe.core.logging import getlogger

from fsaccept.benchmarks.fio import command as fiocmd
from fsaccept.benchmarks.fio import figures
from fsaccept.benchmarks.fio import interference as fio_interference
from fsaccept.benchmarks.fio import logs as fiologs
from fsaccept.benchmarks.fio import parse as fio
from fsaccept.benchmarks.fio.logs import IntervalLog
from fsaccept.benchmarks.fio.run import FioRun
from fsaccept.benchmarks.fio import interference_judge as interference
from fsaccept.rfm.fio import NODE_DIR, NODE_MARKER, NODE_SCRIPT, FioResults, FioTest
from fsaccept.rfm.jobscript import ABORT_MARKER, INFO_MARKER, KEEP_STATUS

#: The steps' roles, in the order the job starts them (the record's module's).
ALONE, LOADED, AGGRESSOR = fio_interference.ALONE, fio_interference.LOADED, \
    fio_interference.AGGRESSOR
ROLES = fio_interference.ROLES
#: The job's shell variables holding each group's nodes (comma-separated).
VICTIMS_VAR, AGGRESSORS_VAR = "fsaccept_victims", "fsaccept_aggressors"
#: The job line saying the run under load did not run (``fsaccept-info under_load ...``).
UNDER_LOAD_INFO = fio_interference.UNDER_LOAD_INFO
#: The environment variable ``step_delay`` takes its default from (tests only).
STEP_DELAY_ENV = "FSACCEPT_TEST_STEP_DELAY"
MAX_STEP_DELAY_S = 3600


def parse_step_delay(text: str) -> tuple[str, int] | None:
    """``ROLE:SECONDS`` -> (role, seconds); None for ''.  ValueError naming the setting
    for anything else."""
    if not text:
        return None
    role, _, seconds = text.partition(":")
    if role not in interference.ROLES or not re.fullmatch(r"[0-9]{1,4}", seconds) \
            or int(seconds) > MAX_STEP_DELAY_S:
        raise ValueError(f"step_delay ({STEP_DELAY_ENV}) {text[:80]!r} is not ROLE:SECONDS, "
                         f"ROLE one of {', '.join(interference.ROLES)} and SECONDS 0 to "
                         f"{MAX_STEP_DELAY_S} (a test-only delay of one step)")
    return role, int(seconds)


# --------------------------------------------------------------------------- the job


def node_script(victim_fio: str, aggressor_fio: str, target_dir: str,
                waits: Mapping[str, int]) -> str:
    """The script every node of a step runs, ``$1`` its role: it makes the node's
    directory below ``target_dir``, waits its role's seconds (``waits``: the victims'
    run under load waits ``lead_s``), prints the step's start marker, runs its fio line
    (``$dir`` its directory, ``$node`` its name), and prints the end marker with fio's
    exit status, then ``fsaccept-node NODE ROLE exit STATUS``."""
    return "\n".join([
        "#!/bin/bash",
        "# The interference test's node script (fsaccept.rfm.interference): run by each",
        "# step on each of its nodes; $1 is the step's role.",
        "role=$1",
        "node=${SLURMD_NODENAME:-$(hostname -s)}",
        f'dir={shlex.quote(target_dir)}/"$node"',
        'out=fio-"$role"-"$node"',
        'case "$role" in',
        *(f"  {role}) wait_s={int(waits.get(role, 0))} ;;" for role in ROLES),
        f'  *) echo "{NODE_MARKER} $node $role exit bad-role"; exit 2 ;;',
        "esac",
        f'mkdir -p "$dir" || {{ echo "{NODE_MARKER} $node $role exit mkdir-failed"; exit 1; }}',
        fiocmd.MEMORY_LINE,
        'sleep "$wait_s"',
        f'echo "{interference.STEP_MARK} $role $node start $(date +%s.%N)"',
        f'if [ "$role" = {AGGRESSOR} ]; then',
        f'  {aggressor_fio} --output="$out".json > "$out".log 2>&1',
        "else",
        f'  {victim_fio} --output="$out".json > "$out".log 2>&1',
        "fi",
        "rc=$?",
        f'echo "{interference.STEP_MARK} $role $node end $(date +%s.%N) exit $rc"',
        f'echo "{NODE_MARKER} $node $role exit $rc"',
        "exit $rc",
        "",
    ])


def split_cmds(victim_nodes: int) -> list[str]:
    """Job lines that name the two groups: the first ``victim_nodes`` of the job's nodes
    (Slurm's own expansion of its node list) are the victims, the rest the aggressors;
    printed (``fsaccept-info victims|aggressors``).  A list that does not give one name
    per node of the job refuses the run."""
    count = "${#fsaccept_hosts[@]}"
    return [
        'fsaccept_hosts=($(scontrol show hostnames "$SLURM_JOB_NODELIST"))',
        f'[ "{count}" = "$SLURM_JOB_NUM_NODES" ] || {{ echo "{ABORT_MARKER} node '
        f"$SLURMD_NODENAME: the job's node list $SLURM_JOB_NODELIST gave {count} names for "
        'its $SLURM_JOB_NUM_NODES nodes"; exit 3; }',
        f'{VICTIMS_VAR}=$(IFS=,; echo "${{fsaccept_hosts[*]:0:{victim_nodes}}}")',
        f'{AGGRESSORS_VAR}=$(IFS=,; echo "${{fsaccept_hosts[*]:{victim_nodes}}}")',
        f'echo "{INFO_MARKER} victims ${VICTIMS_VAR}"',
        f'echo "{INFO_MARKER} aggressors ${AGGRESSORS_VAR}"',
    ]


def step_options(nodes: int, group_var: str) -> list[str]:
    """srun's options of a step on one group: ``nodes`` nodes, those the job's shell
    variable ``group_var`` names, one task each, CPUs of its own (``--exclusive``)."""
    return ["--exclusive", f"--nodes={nodes}", f"--ntasks={nodes}", "--ntasks-per-node=1",
            f'--nodelist="${group_var}"']


def under_load_cmds(victim_nodes: int, aggressor_nodes: int) -> list[str]:
    """Job lines of the run under load, right after the victims' run alone (its status in
    ``$fsaccept_rc``): the aggressors' step and the victims' step at once, each in the
    background, then both waited for; the job's status the victims' (the aggressors'
    when the victims' is 0).  Not run, and said, when the run alone failed."""
    def step(nodes: int, group_var: str, role: str) -> str:
        return " ".join(["srun", "--kill-on-bad-exit=1", *step_options(nodes, group_var),
                         "bash", NODE_SCRIPT, role, "&"])
    return [
        'if [ "$fsaccept_rc" = 0 ]; then',
        "  " + step(aggressor_nodes, AGGRESSORS_VAR, AGGRESSOR),
        "  fsaccept_aggressor_pid=$!",
        "  " + step(victim_nodes, VICTIMS_VAR, LOADED),
        "  fsaccept_victim_pid=$!",
        '  wait "$fsaccept_aggressor_pid"; fsaccept_aggressor_rc=$?',
        '  wait "$fsaccept_victim_pid"; fsaccept_rc=$?',
        '  [ "$fsaccept_rc" != 0 ] || fsaccept_rc=$fsaccept_aggressor_rc',
        "else",
        f'  echo "{INFO_MARKER} {UNDER_LOAD_INFO} was not run: the victims\' run alone ended '
        'with exit $fsaccept_rc"',
        "fi",
    ]


# --------------------------------------------------------------------------- the record


def judged_reasons(evidence: interference.Evidence) -> tuple[list[str], list[str]]:
    """(INVALID reasons, FAIL reasons) of the record's judgements, as the judges give
    them, each after what it judged (``overlap: did not overlap: ...``)."""
    judged = interference.judge(evidence)
    return ([f"{j.what}: {r}" for j in judged if j.verdict == interference.INVALID
             for r in j.reasons],
            [f"{j.what}: {r}" for j in judged if j.verdict == interference.FAIL
             for r in j.reasons])


# --------------------------------------------------------------------------- the test


class InterferenceTest(FioTest):
    """The victims alone, then beside the aggressors, in one job (module docstring)."""

    #: The record (``fsaccept.benchmarks.fio.interference_judge.Evidence.to_dict``, JSON):
    #: each victim's two p99s, their read counts and spans, each aggressor's bandwidth and
    #: span; what the sign-off judges again.
    interference_record = variable(str, value="", loggable=True)
    #: The slowdown judgement's reasons when it FAILs (which nodes, by how much).
    interference_failures = variable(str, value="", loggable=True)
    #: The victim nodes, as the job split its node list ("n1,n2").
    victims = variable(str, value="", loggable=True)
    #: The aggressor nodes ("n3,n4").
    aggressors = variable(str, value="", loggable=True)
    #: The aggressors' fio command (``benchmark_command`` is the victims').
    aggressor_command = variable(str, value="", loggable=True)
    #: The file each aggressor node writes over and over (bytes).
    aggressor_file_size_bytes = variable(int, value=0, loggable=True)
    #: Seconds the aggressors write before the victims start under load.
    lead_s = variable(int, value=0, loggable=True)
    #: For tests only: ``ROLE:SECONDS`` (``victim-alone``, ``victim-loaded`` or
    #: ``aggressor``) makes that role's step wait so much longer before its fio; ''
    #: (the default, from ``$FSACCEPT_TEST_STEP_DELAY``): none.  Recorded when set.
    step_delay = variable(str, value=os.environ.get(STEP_DELAY_ENV, ""), loggable=True)

    #: The nodes are checked in a step of their own: the benchmark's first step (the
    #: victims' run alone) runs on the victims only.
    node_check_in_step = False

    # ------------------------------------------------------------------ set-up

    @property
    def specs(self) -> list[figures.FigureSpec]:
        """None of fio's per-node figures: the test's come from its record."""
        return []

    def figure_kinds(self) -> list[str]:
        return fio_interference.figure_kinds()

    def delay(self) -> tuple[str, int] | None:
        """The test-only delay (role, seconds), or None."""
        return parse_step_delay(self.step_delay)

    def group_sizes(self) -> tuple[int, int]:
        """(victim nodes, aggressor nodes) of the job."""
        victims = self.params.interference.victim_nodes
        return victims, self.num_nodes - victims

    def deadlines_s(self) -> int:
        """The run alone, then the aggressors' run (the longer under load), and the
        test-only delay."""
        delay = self.delay()
        return (fiocmd.deadline_s(self.params)
                + fiocmd.deadline_s(fiocmd.aggressor_parameters(self.params))
                + (delay[1] if delay else 0))

    def planned_volume(self) -> int:
        victims, aggressors = self.group_sizes()
        return (self.params.bytes_per_node * max(min(victims, self.num_nodes), 0)
                + self.params.interference.aggressor_file_size * max(aggressors, 0))

    @run_after("setup")
    def set_threshold(self):
        # Overrides FioTest.set_threshold (same name, same place): the one judged figure
        # is the victims' p99 ratio, at most max_p99_ratio (no outlier detection).
        self.reference = {"*": fiocmd.interference_references(self.params.interference)}

    @run_after("setup")
    def set_fio_command(self):
        # Overrides FioTest.set_fio_command (same name, same place): the victims' run
        # alone is the launch line's; the aggressors' command and sizes are recorded.
        super().set_fio_command()
        p = self.params
        self.executable_opts = [NODE_SCRIPT, ALONE]
        self.keep_files = [*self.keep_files, f"{fiocmd.AGGRESSOR_LOG}*.log",
                           interference.RECORD_FILE]
        self.aggressor_file_size_bytes = p.interference.aggressor_file_size
        self.lead_s = p.interference.lead_s
        self.aggressor_command = self._planned(fiocmd.aggressor_options(
            p, os.path.join(self.target_dir, "<node>")))

    @run_after("setup")
    def need_two_groups(self):
        """Skip, saying why, where the job cannot hold a victim and an aggressor node, or
        where its steps cannot be placed (srun)."""
        if self.current_partition.launcher_type.registered_name != "srun":
            self.skip_because("the interference test places its steps on its two groups of "
                              "nodes with Slurm's srun; this partition launches with "
                              f"{self.current_partition.launcher_type.registered_name}")
        try:
            fiocmd.split_nodes([str(i) for i in range(self.num_nodes)],
                               self.params.interference.victim_nodes)
        except fiocmd.FioEntryError as err:
            self.skip_because(f"{self.reference_path}: tests.{self.reference_key}: {err}")

    def _planned(self, opts: list[str]) -> str:
        return shlex.join([self.fio_binary, *opts, "--output=fio-<role>-<node>.json"]
                          ).replace(fiocmd.NODE_PLACEHOLDER, "<node>")

    def command_line(self) -> str:
        return self._planned(fiocmd.fio_options(self.params,
                                                os.path.join(self.target_dir, "<node>")))

    @run_before("run")
    def write_node_script(self):
        # Overrides FioTest.write_node_script (same name, same place).
        p = self.params
        waits = {ALONE: 0, AGGRESSOR: 0, LOADED: p.interference.lead_s}
        delay = self.delay()
        if delay:
            waits[delay[0]] += delay[1]
            getlogger().warning(f"fsaccept: {self.display_name}: step_delay {self.step_delay}:"
                                f" the {delay[0]} step waits {delay[1]} s more (for tests "
                                "only)")
        text = node_script(self.node_fio_line(fiocmd.fio_options(p, NODE_DIR)),
                           self.node_fio_line(fiocmd.aggressor_options(p, NODE_DIR)),
                           self.target_dir, waits)
        with open(os.path.join(self.stagedir, NODE_SCRIPT), "w") as f:
            f.write(text)

    @run_before("run")
    def run_both_phases(self):
        """The groups named before the first step; the launch line's step on the victims
        alone; the run under load right after it (its status kept)."""
        victims, aggressors = self.group_sizes()
        self.prerun_cmds += split_cmds(victims)
        self.job.launcher.options += step_options(victims, VICTIMS_VAR)
        at = self.postrun_cmds.index(KEEP_STATUS) + 1
        self.postrun_cmds[at:at] = under_load_cmds(victims, aggressors)

    # ------------------------------------------------------------------ results

    def fio_results(self) -> FioResults:
        """Every step's report on every node, parsed once (keyed ``<role>-<node>``), with
        what makes the run INVALID before its record: a group that is not the one the
        entry asks for, a report missing or not fio's, fio's own findings."""
        if hasattr(self, "_results"):
            return self._results
        res = self._results = FioResults()
        self._runs: dict[tuple[str, str], FioRun] = {}
        text = self._stdout_text()
        info = self.job_info()
        self.benchmark_version = info.get("fio_version", "")
        self.victims, self.aggressors = info.get("victims", ""), info.get("aggressors", "")
        victims = fio_interference.names(self.victims)
        res.reasons += self.group_reasons(victims, fio_interference.names(self.aggressors))
        exits = fio_interference.role_exits(text)
        memory = fiocmd.node_memory_bytes(text)
        self.node_memtotal_bytes = min(memory.values(), default=0)
        expected = fio_interference.expected_steps(victims,
                                                   fio_interference.names(self.aggressors))
        found: dict[str, dict[str, list[fio.Finding]]] = {role: {} for role in ROLES}
        for role, node in expected:
            if (role, node) not in exits:
                continue
            stem = f"{role}-{node}"
            found[role][node] = self._parse_node(
                res, node, exits[(role, node)], memory.get(node) or self.node_memory_bytes
                or None, stem=stem, specs=[])
            if stem in res.runs:
                self._runs[(role, node)] = res.runs[stem]
        invalid, notes = fio_interference.role_reasons(found)
        res.reasons += invalid
        res.notes += notes
        res.reasons += self.missing_reasons(expected, exits, info.get(UNDER_LOAD_INFO))
        self.fio_settings = "; ".join(
            f"{who}: {fio.format_settings(run.jobs[0])}" for who, run in
            (("victim", self._first_run(ALONE)), ("aggressor", self._first_run(AGGRESSOR)))
            if run is not None and run.jobs)
        self.notes = "; ".join(res.notes)
        return res

    def _first_run(self, role: str) -> FioRun | None:
        return next((run for (r, _), run in self._runs.items() if r == role), None)

    def group_reasons(self, victims: list[str], aggressors: list[str]) -> list[str]:
        """The groups the job used against the entry and the job's node list
        (:func:`fsaccept.benchmarks.fio.interference.group_reasons`, the sign-off's too),
        and where Slurm placed the launch line's step (the run alone): on the victims."""
        out = fio_interference.group_reasons(self.victims, self.aggressors,
                                             self.params.interference.victim_nodes,
                                             list(self.job.nodelist or []))
        if not victims or not aggressors:
            return out
        ranks = self.record_rank_map()
        if ranks and sorted(ranks.values()) != sorted(victims):
            out.append(f"the victims' run alone ran on {self.rank_map} (Slurm's placement), "
                       f"not one task on each victim node ({self.victims})")
        return out

    def missing_reasons(self, expected: list[tuple[str, str]],
                        exits: Mapping[tuple[str, str], str],
                        under_load: str | None) -> list[str]:
        """A step that did not run on a node of its group, or ran on a node of the other."""
        return fio_interference.missing_reasons(expected, exits, under_load, self.victims,
                                                self.aggressors)

    def aggressor_logs(self) -> tuple[dict[str, IntervalLog], list[str]]:
        """Each aggressor's bandwidth log from the stage directory; (logs, why not)."""
        logs, why = {}, []
        for node in fio_interference.names(self.aggressors):
            path = os.path.join(self.stagedir, fio_interference.aggressor_log_name(node))
            try:
                logs[node] = fiologs.read_log(path)
            except (ValueError, OSError) as err:
                why.append(f"{node} (aggressor): its bandwidth log cannot be read: {err}")
        return logs, why

    def interference_evidence(self) -> interference.Evidence | None:
        """The record made from the steps' reports, once (None: it could not be made; the
        reason is in :meth:`benchmark_reasons`), judged."""
        if hasattr(self, "_evidence"):
            return self._evidence
        self._evidence, self._interference_reasons = None, []
        if self.fio_results().reasons:
            return None
        logs, why = self.aggressor_logs()
        if why:
            self._interference_reasons = why
            return None
        evidence, reasons = fio_interference.make_record(self.params.interference.settings, self._runs, logs,
                                        self._stdout_text())
        if evidence is None:
            self._interference_reasons = reasons
            return None
        self._evidence = evidence
        self.interference_record = json.dumps(evidence.to_dict(), sort_keys=True)
        invalid, failed = judged_reasons(evidence)
        self._interference_reasons = reasons + invalid
        try:  # the evidence the sign-off reads (the run report's field is not taken on trust)
            with open(os.path.join(self.stagedir, interference.RECORD_FILE), "w",
                      encoding="utf-8") as f:
                f.write(self.interference_record)
        except OSError as err:
            self._interference_reasons.append(
                f"the interference record cannot be kept as {interference.RECORD_FILE}: "
                f"{err.strerror or err}")
        self.interference_failures = "; ".join(failed)
        if self.interference_failures:
            getlogger().warning(f"fsaccept: {self.display_name}: {self.interference_failures}")
        return evidence

    def benchmark_reasons(self) -> list[str]:
        reasons = super().benchmark_reasons()
        if reasons:
            return reasons
        self.interference_evidence()
        return self._interference_reasons

    @run_before("performance")
    def set_perf_variables(self):
        # Overrides FioTest.set_perf_variables (same name, same place): the record's.
        self.perf_variables = {
            name: sn.make_performance_function(self._interference_figure, unit, name)
            for name, unit in fiocmd.INTERFERENCE_FIGURES.items()}

    def _interference_figure(self, name: str) -> float:
        evidence = self.interference_evidence()
        if evidence is None:
            raise SanityError("INVALID: no interference record")
        given = fiocmd.interference_figures(evidence)
        if name not in given:
            raise SanityError(f"INVALID: the interference record gives no {name}")
        return given[name]
