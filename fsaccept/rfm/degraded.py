"""Degraded-mode acceptance: a benchmark test measured while a storage server is down.

``DegradedMode`` goes before a benchmark test's class (``checks/degraded/``).  Its job:

1. checks every node healthy, as any job does (nothing is written on a degraded file
   system before the fault is ours);
2. asks the login node's fault agent (``fsaccept.suite.faults``) to run the site's
   degrade command, and proves the fault: every node's client must see it (the server
   probe, ``fsaccept.core.servers``: the partition's own or fsaccept's) within
   ``degraded.detect_timeout_s``, else INVALID "the file system was not degraded during
   the measurement";
3. times the first write that succeeds after the fault (failover);
4. runs the benchmark while degraded (its figures judged against the reference's
   ``degraded:`` fraction of their healthy thresholds; the probe after it must still
   see the fault on every node) -- or, for the data written before the fault, after
   the recovery (``benchmark_after_recovery``);
5. asks for the restore, and times the recovery: until the file system says it has
   healed (the site's ``healed`` command) and every node's client reaches every server.

The test is then judged by the sign-off's own rules on its fault
(:mod:`fsaccept.core.degraded`), applied to its job: every node of the job's node list
saw the fault when the benchmark ended, the recovery healed, the timeline lies within
the job, and the data read back was written before the fault began.

The agent restores the file system whatever ends the job.  Degraded-mode tests run only
in a serial session (``scripts/acceptance --degraded``): no other job may run on the
file system while a server is down.

**Scenarios.**  A system may declare several named fault plans
(``extras.degraded.scenarios``: an MDS failover, an OSD rebuild), and the reference file
may name several (``degraded.scenarios``, each its own clause).  :func:`on_scenarios`, on
each check of ``checks/degraded/`` and its dataset fixtures, then gives the test the
ReFrame parameter ``fault_scenario`` (``DegradedMdtestEasy %fault_scenario=mds-failover``):
each test runs once per scenario, with that scenario's plan, judged by that scenario's
clause.  A read test takes its dataset's scenario.  With one plan and a file that names
no scenario, the checks are unchanged: their names, figures and run report as before.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import reframe as rfm
import reframe.core.runtime as rt
import reframe.utility.sanity as sn
from reframe.core.builtins import parameter, run_after, run_before, variable
from reframe.core.exceptions import ReframeFatalError
from reframe.core.meta import make_test

from fsaccept.core import degraded, servers
from fsaccept.core.degraded import SCENARIO_PARAMETER
from fsaccept.core.reference import DegradedMode as Clause
from fsaccept.core.reference import ReferenceError
from fsaccept.rfm import targets
from fsaccept.rfm.jobscript import ABORT_MARKER, END_WITH_STATUS, RETRY_SNAPSHOT
from fsaccept.suite import faults

#: Seconds the job waits for the agent to answer a request (the site's command runs
#: meanwhile, at most faults.COMMAND_TIMEOUT_S; a manual step waits for an operator).
ANSWER_LIMIT_S = faults.COMMAND_TIMEOUT_S + 60

#: The job's side of the fault (bash).  $1 of fsaccept_fault_until: down or ok.
JOB_FUNCTIONS = r"""
fsaccept_fault_now() { date +%s.%N; }
fsaccept_fault_ask() {
  local i
  : > "$FSACCEPT_FAULT_DIR/$1.request" || { echo "failed cannot write $FSACCEPT_FAULT_DIR"; return; }
  for ((i = 0; i < $2 * 5; i++)); do
    if [ -s "$FSACCEPT_FAULT_DIR/$1.done" ]; then cat -- "$FSACCEPT_FAULT_DIR/$1.done"; return; fi
    sleep 0.2
  done
  echo "failed no answer from the fault agent within $2 s"
}
fsaccept_fault_nodes() {
  srun --nodes=$SLURM_JOB_NUM_NODES --ntasks=$SLURM_JOB_NUM_NODES --ntasks-per-node=1 \
    bash -c "$fsaccept_fault_probe" fsaccept-servers "$fsaccept_fault_mount" 2>/dev/null |
    grep "^fsaccept-servers "
}
fsaccept_fault_until() {
  local t0 said
  t0=$(date +%s)
  while :; do
    said=$(fsaccept_fault_nodes)
    # Every node of the job, each once (srun runs one task on each of its nodes).
    [ "$(awk -v s="$1" '$3 == s && !seen[$2]++' <<<"$said" | wc -l)" = "$SLURM_JOB_NUM_NODES" ] && return 0
    if (( $(date +%s) - t0 >= $2 )); then tr '\n' ';' <<<"$said"; return 1; fi
    sleep 0.5
  done
}
fsaccept_fault_degrade() {
  local said t0
  said=$(fsaccept_fault_ask degrade "$fsaccept_fault_answer_s")
  if [[ "$said" != ok* ]]; then
    echo "$fsaccept_abort the degrade command failed: ${said#failed }"; return 1; fi
  if ! said=$(fsaccept_fault_until down "$fsaccept_fault_detect_s"); then
    echo "fsaccept-fault not_degraded $(fsaccept_fault_now) $said"
    echo "$fsaccept_abort the file system was not degraded during the measurement: not every node's client saw the fault within $fsaccept_fault_detect_s s ($said)"
    return 1; fi
  echo "fsaccept-fault nodes_down $(fsaccept_fault_now)"
  t0=$(date +%s)
  until dd if=/dev/urandom of="$fsaccept_data/.fsaccept-failover" bs=4k count=1 conv=fsync status=none 2>/dev/null; do
    if (( $(date +%s) - t0 >= fsaccept_fault_detect_s )); then
      echo "$fsaccept_abort no write succeeded within $fsaccept_fault_detect_s s of the fault"; return 1; fi
    sleep 0.2
  done
  rm -f -- "$fsaccept_data/.fsaccept-failover"
  echo "fsaccept-fault failover $(fsaccept_fault_now)"
}
fsaccept_fault_restore() {
  local said
  said=$(fsaccept_fault_ask restore "$fsaccept_fault_answer_s")
  echo "fsaccept-fault restore_answer $(fsaccept_fault_now) $said"
  [[ "$said" == ok* ]] || return 0
  if said=$(fsaccept_fault_until ok "$fsaccept_fault_heal_s"); then
    echo "fsaccept-fault nodes_healthy $(fsaccept_fault_now)"
  else
    echo "fsaccept-fault nodes_not_healthy $(fsaccept_fault_now) $said"
  fi
}
"""


def serial_session(argv: list[str]) -> bool:
    """Whether this ReFrame runs one test at a time (``--exec-policy=serial``): ReFrame
    keeps the option to itself, so it is read where it was given."""
    for i, arg in enumerate(argv):
        if arg == "--exec-policy=serial" or (arg == "--exec-policy"
                                             and argv[i + 1:i + 2] == ["serial"]):
            return True
    return False


def loading_scenarios() -> tuple[str, ...]:
    """The scenarios the checks are loaded for: those the reference file names
    (``degraded.scenarios``: the contract's), else those the system ReFrame is loading
    the checks for declares in any partition (``extras.degraded.scenarios``); () for
    one plan and a file that names none (or no runtime: a unit test imports the
    checks).  A declaration that cannot be used gives none here: set-up refuses it,
    naming the key."""
    ref = targets.loading_reference()
    mode = None
    if ref is not None and not ref.named_targets:
        mode = ref.degraded_mode
    if mode is not None and mode.scenarios:
        return tuple(mode.scenarios)
    try:
        system = rt.runtime().system
    except ReframeFatalError:
        return ()
    names: dict[str, None] = {}
    for part in system.partitions:
        try:
            plans = faults.plans_of(part.extras.get("degraded"))
        except faults.FaultPlanError:
            continue
        names.update(dict.fromkeys(n for n in plans if n))
    return tuple(names)


def on_scenarios(cls: type) -> type:
    """``cls`` once per scenario (:func:`loading_scenarios`): the ``fault_scenario``
    parameter, or, for a read test (a ``dataset`` fixture, which carries the parameter),
    the variable its dataset's scenario is recorded in; ``cls`` itself, unchanged,
    without scenarios."""
    names = loading_scenarios()
    if not names:
        return cls
    reads = "dataset" in cls.fixture_space
    #: The fault scenario this test runs under (its dataset's, for a read).
    body = ({SCENARIO_PARAMETER: variable(str, value="", loggable=True)} if reads
            else {SCENARIO_PARAMETER: parameter(list(names))})
    return make_test(cls.__name__, (cls,), {"__doc__": cls.__doc__, **body},
                     module=cls.__module__)


def scenario_of_test(test) -> str:
    """The scenario a test runs under: its parameter's, a read test's its dataset's;
    '' without scenarios."""
    if SCENARIO_PARAMETER in getattr(type(test), "param_space", {}):
        return getattr(test, SCENARIO_PARAMETER)
    dataset = getattr(test, "dataset", None)
    return scenario_of_test(dataset) if dataset is not None else ""


class DegradedMode(rfm.RegressionTestPlugin):
    """Runs the test it goes before while a storage server is down (module docstring)."""

    #: The fault's timeline: the agent's events and the job's, in time order (JSON).
    fault_timeline = variable(str, value="", loggable=True)
    #: How this system is degraded and restored (its system configuration's
    #: ``extras.degraded``), as run.
    fault_plan = variable(str, value="", loggable=True)
    #: The contract fraction this test's healthy thresholds were scaled by.
    degraded_fraction = variable(float, value=0.0, loggable=True)

    #: Whether the benchmark runs once the file system has recovered (the data written
    #: before the fault, read back) rather than while it is degraded (the catalogue's).
    benchmark_after_recovery = variable(bool, value=False, loggable=True)

    #: The nodes are checked in a step of their own, before the fault (the benchmark's
    #: step runs while it lasts: its own check would refuse the degraded file system).
    node_check_in_step = False

    @run_after("setup", always_last=True)
    def plan_the_fault(self):
        scenario = scenario_of_test(self)
        if SCENARIO_PARAMETER in type(self).var_space:  # a read: its dataset's scenario
            setattr(self, SCENARIO_PARAMETER, scenario)
        why = self.refusal()
        if why:
            self.skip_because(why)
        self.degraded_fraction = self.fault_clause().tests[self.reference_key]
        self.fault_plan = self.plan.describe()
        self.fault_dir = Path(self.stagedir) / "fsaccept-fault"

    def fault_clause(self) -> Clause | None:
        """The contract's clause this test is judged by: its scenario's
        (``degraded.scenarios.<name>``) when the file names scenarios, else the
        section's; None when there is none for it (:meth:`refusal` says why)."""
        scenario = scenario_of_test(self)
        mode = self.refdata.degraded_mode
        if not scenario and not getattr(mode, "scenarios", None):
            return mode
        try:
            return self.refdata.degraded_clause(scenario)
        except ReferenceError:
            return None

    def refusal(self) -> str:
        """Why this test cannot run degraded here ('' when it can)."""
        mode = self.refdata.degraded_mode
        scenario = scenario_of_test(self)
        if mode is not None and (scenario or getattr(mode, "scenarios", None)):
            try:
                clause = self.refdata.degraded_clause(scenario)
            except ReferenceError as err:
                return f"{err} (docs/user/degraded.md)"
            if self.reference_key not in clause.tests:
                return (f"{self.refdata.path}: {clause.where}.tests.{self.reference_key}: "
                        "not asked for in this scenario (the contract's degraded-mode "
                        "clause; docs/user/degraded.md)")
        elif mode is None or self.reference_key not in mode.tests:
            return (f"{self.refdata.path}: degraded.tests.{self.reference_key}: not asked for "
                    "(the contract's degraded-mode clause; docs/user/degraded.md)")
        if self._server_probe is None:
            return (f"no server probe for {self.expected_fstype()}: the fault could not be "
                    f"proven; declare one in system {self.current_system.name}'s partition "
                    f"(extras.{servers.EXTRA}: a command whose exit status says healthy or "
                    "not; docs/user/site-setup.md)")
        try:
            self.plan = faults.scenario_plan(self.current_partition.extras.get("degraded"),
                                             scenario)
        except faults.FaultPlanError as err:
            return (f"system {self.current_system.name}: {err} (config/systems/<site>.py; "
                    "docs/user/degraded.md)")
        if not serial_session(sys.argv):
            return ("degraded-mode tests run only one test at a time (reframe "
                    "--exec-policy=serial, as scripts/acceptance --degraded runs them): no "
                    "other job may use the file system while a server is down")
        return ""

    def heal_limit_s(self) -> int:
        """How long the recovery is watched before it counts as not seen."""
        return int(max(3 * self.fault_clause().max_recovery_s, 60))

    def deadlines_s(self) -> int:
        """The time limit covers the fault too: its proof, failover and recovery."""
        mode = self.fault_clause()
        extra = 2 * mode.detect_timeout_s + self.heal_limit_s() + 60 if mode else 0
        return super().deadlines_s() + extra

    def threshold_references(self) -> dict[str, tuple]:
        """The healthy entry's thresholds scaled by the contract fraction, with the
        recovery (and failover) ceilings: ``Reference.degraded_thresholds``, by which the
        sign-off judges too (of the test's scenario)."""
        scenario = scenario_of_test(self)
        clause = self.fault_clause() if scenario else None
        if scenario and (clause is None or self.reference_key not in clause.tests):
            return {}  # set-up skips it, saying why (plan_the_fault: refusal)
        return {name or self.figure_name(): th.as_reframe_reference()
                for name, th in self.refdata.degraded_thresholds(self.reference_key,
                                                                 scenario).items()}

    @run_after("setup", always_last=True)
    def add_fault_thresholds(self):
        """A test whose thresholds its class fixes (data integrity) keeps them, and gets
        the recovery's."""
        fixed = dict(self.spec.fixed_thresholds) if self.spec else {}
        self.reference = {"*": {**fixed, **self.threshold_references()}}

    @run_before("run", always_last=True)
    def inject_the_fault(self):
        mode, heal_s = self.fault_clause(), self.heal_limit_s()
        setup = [f"export FSACCEPT_FAULT_DIR={shlex.quote(str(self.fault_dir))}",
                 'echo "$SLURM_JOB_ID" > "$FSACCEPT_FAULT_DIR/jobid"',
                 # Every node's probe line: "fsaccept-servers NODE ok|down WHAT".
                 "fsaccept_fault_probe="
                 + shlex.quote(servers.after_script(self._server_probe)),
                 f"fsaccept_fault_mount={shlex.quote(self.target_mount)}",
                 f"fsaccept_fault_detect_s={mode.detect_timeout_s}",
                 f"fsaccept_fault_heal_s={heal_s}",
                 f"fsaccept_fault_answer_s={ANSWER_LIMIT_S}",
                 f"fsaccept_abort={ABORT_MARKER}",
                 JOB_FUNCTIONS.strip(),
                 "fsaccept_fault_degrade || exit 3"]
        # Before the crashed-launch retry takes its snapshot of the job's output and
        # data (BenchmarkTest.retry_a_launch_that_crashed): the fault's lines are not the
        # benchmark's, and a launch that crashed in MPI_Init is still retried.
        at = next((i for i, line in enumerate(self.prerun_cmds)
                   if line.startswith(RETRY_SNAPSHOT)), len(self.prerun_cmds))
        if self.benchmark_after_recovery:
            self.prerun_cmds[at:at] = setup + ["fsaccept_fault_restore"]
        else:
            self.prerun_cmds[at:at] = setup
            at = self.postrun_cmds.index(END_WITH_STATUS)
            self.postrun_cmds[at:at] = ["fsaccept_fault_restore"]
        limit = self.job.time_limit or 86400
        self._agent = faults.start_agent(self.fault_dir, self.plan,
                                         deadline_s=float(limit) + 600, heal_limit_s=heal_s)

    @run_after("run")
    def end_the_fault(self):
        """The job has ended: the agent restores if the job did not ask, waits for the
        heal, and stops; its events and the job's make the timeline."""
        agent = getattr(self, "_agent", None)
        if agent is None:
            return
        (self.fault_dir / "job.ended").touch()
        try:
            agent.wait(timeout=2 * faults.COMMAND_TIMEOUT_S + 3 * 3600)
        except subprocess.TimeoutExpired:
            agent.kill()
        events = degraded.merged(
            faults.read_timeline(self.fault_dir / "timeline.jsonl"),
            degraded.job_events(self._stdout_text()))
        self.fault_timeline = json.dumps(events)

    def fault(self) -> degraded.Fault:
        return degraded.fault_from(self.fault_timeline)[0]

    def fault_reasons(self) -> list[str]:
        """The sign-off's rules on the recorded fault
        (``fsaccept.reporting.signoff.degraded``), on this job: the fault as planned,
        within this job, and the data read back written before it began."""
        fault, unreadable = degraded.fault_from(self.fault_timeline)
        if unreadable:
            return unreadable
        out = fault.invalid_reasons() + fault.outside_job(
            str(self.job.jobid or ""), self.job.submit_time, self.job.completion_time)
        dataset = getattr(self, "dataset", None)
        if dataset is not None:
            out += fault.written_after(type(dataset).__name__, dataset.job.completion_time)
        return out

    def invalid_reasons_list(self) -> list[str]:
        # The fault's reasons first: a fault not proven leaves no figure to judge.
        return self.fault_reasons() + [r for r in super().invalid_reasons_list()
                                       if not _said_by_the_fault(r)]

    def degraded_reasons(self) -> list[str]:
        """Measured while degraded: the nodes must still see the fault when the
        benchmark ended (the opposite of a healthy test's rule).  Measured after the
        recovery: a healthy test's rule."""
        if self.benchmark_after_recovery:
            return super().degraded_reasons()
        answers = servers.node_answers(self._stdout_text())
        self.servers_after = "; ".join(servers.grouped(answers))
        return degraded.not_degraded_after(answers, list(self.job.nodelist or []))

    @run_before("performance", always_last=True)
    def add_fault_figures(self):
        figures = self.fault().figures
        for name in degraded.FIGURES:
            if name in figures:
                self.perf_variables[name] = sn.make_performance_function(
                    lambda value=figures[name]: value, "s")


def _said_by_the_fault(reason: str) -> bool:
    """A refusal the fault already explains (the job aborts after a failed degrade)."""
    return reason.startswith("the job refused to run the benchmark: the degrade command") \
        or "was not degraded during the measurement" in reason
