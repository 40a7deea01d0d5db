"""Acceptance at a declared fill level (issue 39 §1): the checks of ``checks/fill/``
(``docs/user/fill.md``), run by ``scripts/acceptance --fill``.

The session runs the tests the reference's ``fill.tests`` names on the empty target,
then :class:`FillTarget`, then the same tests again (``Filled<Check>``) on the filled
target.  The filler is removed by ``fsaccept fill remove`` (``scripts/acceptance``'s
trap: whatever ends the session), by :class:`FillTarget` itself when its fill is
INVALID, and else by the next session's sweep of the owned-data ledger.

**FillTarget.**  It follows every empty test (a ReFrame dependency on each: the filler is
written only once they all passed; a filled figure compared with one that failed or
that is missing proves nothing, and a fill takes hours).  At set-up it reads the
reference's ``fill:`` section (:meth:`fsaccept.core.reference.Reference.fill_settings`:
refused unless ``fill.allowed`` and ``target.dedicated``), the free space the filled
tests need (each empty test's and its dataset's planned volume over
``target.max_fill_fraction``) and plans the fill on the login node's df
(:func:`fsaccept.core.fill.plan`): a fill that cannot or must not run is skipped, saying
why, before anything is written.  It is not held to the capacity guard: the plan is its
guard (the declared level, at most 95 %, the filled tests' room kept free).

Its job, after what every benchmark job does first (its directory
``<target>/fsaccept/FillTarget.<run>`` made with the run's owner marker; recorded in the
ledger right after the job is submitted, before it can write):

1. plans again on the batch node's df, for the job's own nodes
   (``fsaccept.suite.filler plan``; ``FSACCEPT_FILL df before``); a refusal ends the job
   before anything is written;
2. one task on each node (ReFrame's launch line; each node checks its mount first)
   writes its share in batches below the stop line (``fsaccept.suite.filler fill``);
3. once every node has filled, one task on each node ages its files
   (``churn.rounds``: ``fsaccept.suite.filler churn``);
4. ``FSACCEPT_FILL df filled``.

Its sanity plans once more from the recorded df before and the job's nodes, reads the
lines into the fill's record (:class:`fsaccept.core.fill.Evidence`, kept in
``fill_record`` and in the file ``fill-record.json``:
:data:`fsaccept.core.fill.EVIDENCE_FILE`, kept with ``keep_files``) and judges the level
and the filler: INVALID with their reasons, and the filler removed at once.  The
sign-off judges FillTarget's file, never a run report's ``fill_record``: a filled test's
or FillTarget's that differs is INVALID.

**Filled<Check>.**  :class:`Filled` goes before a benchmark test's class; it depends on
:class:`FillTarget` and on its empty counterpart.  Its ReFrame reference for each figure
its empty test was judged by (the contract's) is the empty figure scaled by
``fill.max_degradation`` (:func:`fsaccept.core.fill.threshold_of`: the bound the sign-off
judges by), the class's fixed thresholds kept.  It keeps the fill's record
(``fill_record``) and df at its own start (``fill_df``); a level short of the declared one
then, or a filler not whole, makes it INVALID (:func:`fsaccept.core.fill.invalid_reasons`,
as the sign-off judges it again).  :class:`FilledDataset` goes before a read test's
dataset fixture: its data is written on the filled target, after the fill.
"""

from __future__ import annotations

import json
import math
import os
import shlex
import socket
from typing import Any

import reframe as rfm
from reframe.core.builtins import run_after, run_before, variable
from reframe.core.logging import getlogger
from reframe.utility import ScopedDict

from fsaccept.benchmarks.catalogue import FILLED_PREFIX
from fsaccept.core import fill
from fsaccept.core.reference import ReferenceError
from fsaccept.rfm import targets
from fsaccept.rfm.benchmark import BenchmarkTest
from fsaccept.rfm.jobscript import ABORT_MARKER, INFO_MARKER, OWNED_LEDGER, RUN_ID
from fsaccept.suite import filler, fillrun, owned
from fsaccept.suite.reference import fill_tests

#: The fill's check, by class name (its filled tests depend on it).
FILL_TARGET = "FillTarget"
#: Files the fill's job leaves in its stage directory (kept with its output): the
#: settings it plans with, the plan the nodes follow, and the record ``fsaccept fill
#: remove`` reads (where the filler is, the run that owns it, its job).
SETTINGS_FILE, PLAN_FILE, RECORD_FILE = "fill-settings.json", "fill-plan.json", fillrun.RECORD
#: The ``fsaccept-info`` key of the job's node list (the order the plan shares them in).
NODES_INFO = fill.NODES_INFO
#: The ``fsaccept-info`` key of df at a filled test's start.
DF_INFO = fill.DF_INFO
#: With no rate to size the fill by and no ``fill.deadline_s``: its time limit.
UNSIZED_LIMIT_S = 24 * 3600


def filler_cmd(*args: str) -> str:
    """A job line running :mod:`fsaccept.suite.filler` with ``args`` (quoted; a ``$``
    argument given as ``"$var"`` stays the shell's)."""
    def q(a: str) -> str:
        return a if a.startswith('"$') or a.startswith("$(") else shlex.quote(a)
    return " ".join([*map(shlex.quote, filler.command()), *map(q, args)])


def plan_cmds(settings_path: str, plan_path: str) -> list[str]:
    """Job lines, once the fill's directory exists: the job's nodes (Slurm's own
    expansion of its node list, printed: ``fsaccept-info fill_nodes``), then the plan on
    the batch node's df for them, or the refusal (``fsaccept-abort``; nothing written)."""
    return [
        'fsaccept_fill_nodes=($(scontrol show hostnames "$SLURM_JOB_NODELIST"))',
        f'echo "{INFO_MARKER} {NODES_INFO} $(IFS=,; echo "${{fsaccept_fill_nodes[*]}}")"',
        filler_cmd("plan", settings_path, '"$fsaccept_root"', plan_path, ABORT_MARKER)
        + ' "${fsaccept_fill_nodes[@]}" || exit 3',
    ]


def fill_command(plan_path: str, target_dir: str, run_id: str) -> list[str]:
    """What ReFrame launches on every node (one task each): the node's filler."""
    return [*filler.command(), "fill", plan_path, target_dir, run_id]


def after_fill_cmds(churn: bool, plan_path: str, target_dir: str, run_id: str) -> list[str]:
    """Job lines after the fill step (its status in ``$fsaccept_rc``): with ``churn``,
    the ageing step on every node once all have filled (not when the fill failed), its
    status printed (``fsaccept-info churn_ended``); then ``FSACCEPT_FILL df filled``."""
    steps = []
    if churn:
        steps += ['if [ "$fsaccept_rc" = 0 ]; then',
                  "  srun --nodes=$SLURM_JOB_NUM_NODES --ntasks=$SLURM_JOB_NUM_NODES "
                  "--ntasks-per-node=1 --kill-on-bad-exit=1 "
                  + filler_cmd("churn", plan_path, target_dir, run_id),
                  f'  echo "{INFO_MARKER} churn_ended $?"',
                  "fi"]
    return steps + [filler_cmd("df", '"$fsaccept_root"', fill.MARK, "df", fill.FILLED)]



def own_thresholds(reference: Any) -> dict[str, tuple]:
    """figure -> threshold of a check's ReFrame ``reference``: once set it is ReFrame's
    ``ScopedDict``, whose keys are ``scope:figure`` and whose values are the thresholds;
    a plain ``{scope: {figure: threshold}}`` before."""
    if not reference:
        return {}
    if isinstance(reference, ScopedDict):
        return {key.rsplit(":", 1)[-1]: value for key, value in reference.items()}
    return dict(next(iter(reference.values()), {}))

class FillTarget(BenchmarkTest):
    """Brings the target to the reference's ``fill:`` level (module docstring)."""

    judged = False  # no figure: the fill's record, judged by the filled tests too
    reference_key = ""  # no entry of its own: the reference's fill: section
    #: A filler that fails is not launched again: its record says what happened.
    retry_crashed_launch = False

    #: Threads writing each node's files at once (each file written, fsynced and
    #: closed by one of them; at most one batch of files in flight a node).
    filler_threads = variable(int, value=filler.DEFAULT_WORKERS, loggable=True)
    #: The fill as planned on the job's nodes (from where to where, how much, the stop
    #: line, the ageing, the time at the sizing rate).
    fill_plan = variable(str, value="", loggable=True)
    #: The fill's record (``fsaccept.core.fill.Evidence``, JSON): what every filled test
    #: keeps and is judged by.
    fill_record = variable(str, value="", loggable=True)
    #: The free space the filled tests need once the target is full (their capacity
    #: guard: the largest planned volume over ``target.max_fill_fraction``).
    fill_reserve_bytes = variable(int, value=0, loggable=True)
    #: The empty tests this fill follows (the reference's ``fill.tests``).
    empty_tests = variable(str, value="", loggable=True)

    @run_after("init")
    def follow_the_empty_tests(self):
        """A dependency on each empty test the loading reference's ``fill.tests`` names
        (none when it cannot be read: set-up then refuses it, saying why)."""
        ref = targets.loading_reference()
        names = fill_tests(ref) if ref is not None and not ref.named_targets else []
        for name in names:
            self.depends_on(name)
        self.empty_tests = ",".join(names)

    def load_entry(self) -> None:
        # No entry of its own: the fill: section, refused unless the file allows it.
        self.entry = {}
        self.ranks_per_node = 1
        self.fill_mode = None
        try:
            self.fill_mode = self.refdata.fill_settings()
        except ReferenceError as err:
            self.skip_because(f"{err} (docs/user/fill.md)")
        self.node_fraction = self.fill_mode.node_fraction

    @run_after("setup")
    def require_srun(self):
        if self.current_partition.launcher_type.registered_name != "srun":
            self.skip_because(f"the filler runs one task on each node with srun; partition "
                              f"{self.current_partition.fullname} launches with "
                              f"{self.current_partition.launcher_type.registered_name}")

    def reserve_bytes(self) -> int:
        """The free space the filled tests need: each empty test's (and its dataset's)
        planned volume, as its capacity guard holds it, the largest."""
        planned = []
        for name in filter(None, self.empty_tests.split(",")):
            test = self.getdep(name)
            planned.append(test.planned_bytes)
            dataset = getattr(test, "dataset", None)
            if dataset is not None:
                planned.append(dataset.planned_bytes)
        return math.ceil(max(planned, default=0) / self.refdata.max_fill_fraction)

    def sizing_rate(self) -> float | None:
        return self.refdata.target.max_bandwidth_mib_s

    def provisional_plan(self) -> fill.Plan:
        """The fill planned on the login node's df, for as many nodes as the job gets
        (their names come with the job: the job plans again): a refusal skips the test
        before anything is written."""
        if not hasattr(self, "_plan"):
            self.fill_reserve_bytes = self.reserve_bytes()
            try:
                df = filler.df(str(self.target_root()))
            except (OSError, ValueError) as err:
                self.skip_because(f"the fill cannot be planned: {err}")
            nodes = [f"node{i + 1}" for i in range(max(self.num_nodes, 1))]
            try:
                self._plan = fill.plan(df, self.fill_mode, nodes, self.fill_reserve_bytes,
                                       self.sizing_rate())
            except fill.PlanError as err:
                self.skip_because(f"the fill was refused before anything was written: {err} "
                                  "(docs/user/fill.md)")
            self.fill_plan = self._plan.summary()
        return self._plan

    def deadlines_s(self) -> int:
        """The fill's time budget (``fill.deadline_s``), else twice its time at the sizing
        rate and ten minutes, else a day."""
        if self.fill_mode is None:
            return 0
        p = self.provisional_plan()
        if self.fill_mode.deadline_s is not None:
            return int(self.fill_mode.deadline_s)
        if p.seconds is not None:
            return int(2 * p.seconds) + 600
        return UNSIZED_LIMIT_S

    def planned_volume(self) -> int:
        return self.provisional_plan().bytes if self.fill_mode is not None else 0

    def check_capacity(self) -> None:
        """Not the capacity guard: the plan is the fill's guard (the declared level, at
        most 95 %, the filled tests' room kept free), and it passed."""

    def removes_data(self) -> bool:
        return False  # the filler stays for the filled tests (fsaccept fill remove)

    @run_after("setup")
    def set_filler_command(self):
        stage = self.stagedir
        self.settings_path = os.path.join(stage, SETTINGS_FILE)
        self.plan_path = os.path.join(stage, PLAN_FILE)
        self.record_path = os.path.join(stage, RECORD_FILE)
        self.keep_files = [SETTINGS_FILE, PLAN_FILE, RECORD_FILE, fill.EVIDENCE_FILE]
        self.env_vars["FSACCEPT_FILL_WORKERS"] = str(self.filler_threads)
        self.executable, *self.executable_opts = fill_command(self.plan_path,
                                                              self.target_dir, RUN_ID)

    def benchmark_binary(self) -> str:
        return self.executable

    def command_line(self) -> str:
        return f"fsaccept.suite.filler fill {self.plan_path} {self.target_dir} {RUN_ID}"

    def prepare_data_cmds(self) -> list[str]:
        """Job lines, once its directory exists: the plan on the batch node's df for the
        job's nodes, or the refusal (nothing written)."""
        return plan_cmds(self.settings_path, self.plan_path)

    @run_before("run")
    def age_and_read_the_level(self):
        """After the fill step: the ageing step (every node, once all have filled), then
        df once filled."""
        steps = after_fill_cmds(self.fill_mode.churn_rounds > 0, self.plan_path,
                                self.target_dir, RUN_ID)
        ended = f"echo {INFO_MARKER} benchmark_ended"
        at = next(i for i, line in enumerate(self.postrun_cmds) if line.startswith(ended))
        self.postrun_cmds[at:at] = steps

    @run_before("run")
    def write_the_settings(self):
        with open(self.settings_path, "w") as f:
            json.dump(filler.settings_file(self.refdata.data["fill"], self.fill_reserve_bytes,
                                           self.sizing_rate()), f)

    def _write_record(self, jobid: str) -> None:
        record = {"version": fillrun.RECORD_VERSION, "directory": self.target_dir,
                  "run_id": RUN_ID, "host": socket.gethostname(), "jobid": jobid}
        with open(self.record_path, "w") as f:
            json.dump(record, f)

    @run_before("run", always_last=True)
    def record_the_filler_when_submitted(self):
        """The filler's directory in the record ``fsaccept fill remove`` reads (before
        the job exists), and in the owned-data ledger with the record's job id as soon
        as Slurm has given one, before the job can write (ReFrame has no hook between
        its submission and its wait: its ``submit`` is wrapped)."""
        self._write_record("")
        submit = self.job.submit

        def submitted(*args, **kwargs):
            out = submit(*args, **kwargs)
            del self.job.submit  # the job's own again
            jobid = str(self.job.jobid or "")
            self._write_record(jobid)
            try:
                owned.record_owned(OWNED_LEDGER, RUN_ID, self.target_dir, jobid,
                                    socket.gethostname())
            except OSError as err:
                getlogger().warning(f"fsaccept: cannot record {self.target_dir} in "
                                    f"{OWNED_LEDGER} ({err}): a later session will not "
                                    "remove it")
            return out
        self.job.submit = submitted

    @run_after("run")
    def record_owned_data(self):
        """Recorded when the job was submitted (``record_the_filler_when_submitted``)."""

    def evidence(self) -> tuple[fill.Evidence | None, list[str]]:
        """The fill's record from the job's output, planned again from its df before and
        its nodes (:func:`fsaccept.core.fill.record_of`, the sign-off's too); (None, why)
        when it cannot be made."""
        evidence, p, why = fill.record_of(self._stdout_text(),
                                          self.job_info().get(NODES_INFO, ""),
                                          list(self.job.nodelist or []), self.fill_mode,
                                          self.fill_reserve_bytes, self.sizing_rate())
        if p is not None:
            self.fill_plan = p.summary()
        return evidence, why

    def benchmark_reasons(self) -> list[str]:
        evidence, why = self.evidence()
        if evidence is None:
            return why
        self.fill_record = json.dumps(evidence.to_dict())
        out = [f"{j.what}: {r}" for j in (fill.judge_level(evidence),
                                          fill.judge_filler(evidence))
               if j.verdict == fill.INVALID for r in j.reasons]
        try:  # the evidence the sign-off reads (no run report's field is taken on trust)
            with open(os.path.join(self.stagedir, fill.EVIDENCE_FILE), "w",
                      encoding="utf-8") as f:
                f.write(self.fill_record)
        except OSError as err:
            out.append(f"the fill's record cannot be kept as {fill.EVIDENCE_FILE}: "
                       f"{err.strerror or err}")
        return out

    @run_before("performance")
    def set_perf_variables(self):
        self.perf_variables = {}  # its record is judged, no figure


class Filled(rfm.RegressionTestPlugin):
    """Runs the test it goes before on the filled target, judged against its empty
    counterpart's figures (module docstring)."""

    #: The fill this test ran at (:class:`FillTarget`'s ``fill_record``).
    fill_record = variable(str, value="", loggable=True)
    #: df of the target at this test's start (``size=N used=N ...``: the filler was
    #: there): its level is judged too.
    fill_df = variable(str, value="", loggable=True)
    #: The test it is compared with: the same test, run on the empty target.
    empty_test = variable(str, value="", loggable=True)
    #: Each compared figure at least ``1 - max_degradation`` of its empty figure (a
    #: time at most its empty figure over that): the reference's ``fill:``.
    max_degradation = variable(float, value=0.0, loggable=True)

    @run_after("init")
    def after_the_fill(self):
        name = self.spec.check if self.spec is not None else type(self).__name__
        self.empty_test = name.removeprefix(FILLED_PREFIX)
        self.depends_on(FILL_TARGET)
        self.depends_on(self.empty_test)

    @run_after("setup", always_last=True)
    def judge_against_the_empty_test(self):
        try:
            mode = self.refdata.fill_settings()
        except ReferenceError as err:
            self.skip_because(f"{err} (docs/user/fill.md)")
        self.max_degradation = mode.limits.max_degradation
        self.fill_record = self.getdep(FILL_TARGET).fill_record
        self.reference = {"*": self.filled_references(self.getdep(self.empty_test))}

    def filled_references(self, empty) -> dict[str, tuple]:
        """Each figure the empty test was judged by and a filled test is compared by:
        its empty figure, scaled (``fill.threshold_of``); the class's other thresholds
        (fixed ones, the slow-client count) as they are."""
        spec = self.spec
        fixed = spec.fixed_thresholds if spec is not None else {}
        may_be_zero = spec.may_be_zero if spec is not None else ()
        own = own_thresholds(self.reference)
        out = {k: v for k, v in own.items() if not fill.compares(k, fixed, may_be_zero)}
        for key, (value, ref, lower, upper, unit, _) in empty.perfvalues.items():
            figure = key.rsplit(":", 1)[-1]
            judged = lower is not None or upper is not None or bool(ref)
            if (judged and fill.compares(figure, fixed, may_be_zero)
                    and isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                out[figure] = fill.threshold_of(float(value), unit, self.max_degradation)
        return out

    def extra_info_cmds(self) -> list[str]:
        return [*super().extra_info_cmds(),
                filler_cmd("df", '"$fsaccept_root"', INFO_MARKER, DF_INFO)]

    def fill_reasons(self) -> list[str]:
        """The fill's record judged with df at this test's start (the sign-off's rule:
        ``fsaccept.reporting.signoff.fill.fill_reasons``)."""
        try:
            evidence = fill.Evidence.from_dict(json.loads(self.fill_record))
        except (ValueError, fill.EvidenceError) as err:
            return [f"its fill record (fill_record) cannot be read: {str(err)[:300]}"]
        self.fill_df = self.job_info().get(DF_INFO, "")
        return fill.filled_reasons(evidence, self.fill_df)

    def invalid_reasons_list(self) -> list[str]:
        reasons = super().invalid_reasons_list()
        if reasons and DF_INFO not in self.job_info():  # its job never got that far
            return reasons
        return self.fill_reasons() + reasons


class FilledDataset(rfm.RegressionTestPlugin):
    """Goes before a read test's dataset fixture: its data is written on the filled
    target (after :class:`FillTarget`)."""

    @run_after("init")
    def after_the_fill(self):
        self.depends_on(FILL_TARGET)
