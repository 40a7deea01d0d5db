"""``BenchmarkTest``: an acceptance test that runs a benchmark in a job of its own.  On
top of :class:`.acceptance.AcceptanceTest` it owns the data directory (created, recorded in
the owned-data ledger, removed by the job itself: :mod:`.jobscript`), checks every node
before the benchmark and the storage servers after it, records the environment and the
benchmark's version, retries a launch that crashed, and turns what it finds into INVALID
reasons (``assert_valid``); each benchmark's module (:mod:`.ior`, :mod:`.mdtest`,
:mod:`.fio`, :mod:`.md_workbench`) supplies only what differs: its command, its planned
volume and deadlines, its parsed run and its own reasons.

(Over 650 lines, one concept: one class's hooks, in the order ReFrame runs them; split
across modules, their order could no longer be read in one place.)

Verdicts: PASS is ReFrame's pass; FAIL is a performance failure against the threshold;
INVALID is a sanity failure whose message starts with ``INVALID:`` and gives the reasons.
A figure is never judged when invalid.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import socket
import subprocess

import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.builtins import run_after, run_before, sanity_function, variable
from reframe.core.exceptions import SanityError
from reframe.core.logging import getlogger

from fsaccept.core import (guards, joboutput, mountopts, pernode, placement, servers, slurm,
                           versions)
from fsaccept.suite import owned, provision
from fsaccept.core.findings import figure_problem
from fsaccept.rfm.acceptance import AcceptanceTest
from fsaccept.suite import sites
from fsaccept.rfm.jobscript import (ABORT_MARKER, END_WITH_STATUS, INFO_MARKER, KEEP_STATUS,
                                    NODE_CHECK_MARKER, NODE_CHECK_SCRIPT, OWNED_LEDGER,
                                    RANK_MARKER, RETRY_MARKER, RETRY_SNAPSHOT, RUN_ID,
                                    remove_data, sweep_earlier_runs)

#: How many times a benchmark step that crashed before it printed or wrote anything is
#: launched again (``BenchmarkTest.retry_a_launch_that_crashed``), and the pause before
#: the second retry (twice that before a third): a start-up crash 1 launch in 80 here
#: crashed a retry too, once.
LAUNCH_RETRIES = 2
RETRY_PAUSE_S = 5
#: The type of a loggable ``per_node_figures``: {figure: {node: value}}, data in the run
#: report (a JSON object) and the perflog (JSON), never text to parse back.
PER_NODE_FIGURES = typ.Dict[str, typ.Dict[str, float]]


def NO_IOR_FIX(test) -> str:  # noqa: N802 - the checks pass it where advice text goes
    """How to get IOR and mdtest, said by every check that cannot run without them: on
    the emulated cluster, which --system to add or which set-up command to run (it
    depends on what set-up built, so it is worked out when the check runs)."""
    return sites.ior_fix("emulated" in test.current_partition.features)


class BenchmarkTest(AcceptanceTest):
    """One benchmark job that writes below the target.

    Owns what every benchmark check needs the same way: its own data
    directory (removed by the last test that needs it, also when the job
    fails or is cancelled), the job-side record of the binary, file-system
    type and MPI, and the INVALID verdict with its reasons (``invalid_reasons_list``,
    which subclasses leave alone).  A subclass supplies what differs: ``executable`` and
    ``executable_opts`` in a hook after setup (``set_<tool>_command``), ``planned_volume``,
    ``deadlines_s``, its run parsed once (``parsed_run``, which calls its
    ``record_run``), ``benchmark_reasons`` (the INVALID reasons its output gives) and
    ``set_perf_variables``.  Its pipeline hooks, in the order ReFrame runs them:
    docs/dev/api.md (:mod:`fsaccept.rfm.apiref`).
    """

    # Provenance (loggable: perflog and run report).
    benchmark_command = variable(str, value="", loggable=True)
    benchmark_version = variable(str, value="", loggable=True)
    #: Whether the version is one fsaccept's parser is tested on.
    version_note = variable(str, value="", loggable=True)
    binary_path = variable(str, value="", loggable=True)
    mpi_version = variable(str, value="", loggable=True)
    #: File-system type as the compute node sees the test directory.
    job_fstype = variable(str, value="", loggable=True)
    invalid_reasons = variable(str, value="", loggable=True)
    #: Launch the benchmark step again when it failed before the benchmark printed or
    #: wrote anything (an MPI start-up crash; see ``retry_a_launch_that_crashed``).
    retry_crashed_launch = variable(bool, value=True)
    #: Why the benchmark step was launched more than once ("" when it was not).
    launch_retry = variable(str, value="", loggable=True)
    #: Set when the job's time limit came after the benchmark had ended, while its data
    #: was being removed: not a reason to doubt the figure (the sanity stage finishes
    #: the removal; what it cannot remove is in ``data_left``).
    time_limit_after_benchmark = variable(str, value="", loggable=True)
    #: What every node of the job saw before the benchmark: its mount of the target
    #: (type, mount point, source; its options when the reference declares
    #: ``mount_options``) and, for direct I/O, whether O_DIRECT is honoured.
    node_mounts = variable(str, value="", loggable=True)
    #: What every node's client said of the storage servers after the benchmark (file
    #: systems with a probe: fsaccept.core.servers; "" for the others): before it, the
    #: same answer is part of ``node_mounts``.
    servers_after = variable(str, value="", loggable=True)
    #: Which probe asked them: fsaccept's own for the type ("Lustre"), or the one the
    #: partition declares ("site: CMD"); "" when none did.
    server_probe = variable(str, value="", loggable=True)

    #: What of the data could not be removed, or was left alone (not this run's), one
    #: "<path>: N files ... (why)" per directory, "; " between them: this test's, and
    #: for the first test of a session, earlier runs' it found (``sweep_earlier_runs``).
    data_left = variable(str, value="", loggable=True)

    @run_before("run")
    def resume_earlier_removals(self):
        """Earlier runs' data left behind is removed first (their removal resumed), what
        stays reported."""
        # Before this session's first job: earlier runs' jobs have all been submitted
        # by sessions that ended (or are still running: then left alone).
        for removal in sweep_earlier_runs():
            if removal.left:
                self.data_left = "; ".join(filter(None, [
                    self.data_left, f"left by an earlier run: {removal.left}"]))

    @run_after("run")
    def record_owned_data(self):
        """Record, outside the data directory, that this run's job creates it: the proof
        a later session needs to resume its removal if this one cannot."""
        if not self.creates_data_dir or self.keep_data or not self.job.jobid:
            return
        try:
            owned.record_owned(OWNED_LEDGER, RUN_ID, self.target_dir, str(self.job.jobid),
                                socket.gethostname())
        except OSError as err:
            getlogger().warning(f"fsaccept: cannot record {self.target_dir} in "
                                f"{OWNED_LEDGER} ({err}): a later session will not remove it")

    @run_after("setup")
    def choose_server_probe(self):
        """The probe that asks the storage servers: the partition's own
        (``extras.server_probe``), else fsaccept's for the target's type; a declaration
        that cannot be used skips, naming the system, partition and key."""
        where = (f"system {self.current_system.name}:{self.current_partition.name}: "
                 f"extras.{servers.EXTRA}")
        try:
            declared = servers.declared(self.current_partition.extras.get(servers.EXTRA),
                                        where)
        except servers.ProbeDeclarationError as err:
            self._server_probe = None
            self.skip_because(f"{err} (config/systems/<site>.py; docs/user/site-setup.md)")
        self._server_probe = servers.probe_for(self.expected_fstype(), declared)
        self.server_probe = servers.describe(self._server_probe)

    @run_after("setup")
    def set_data_directory(self):
        """Its data directory below the target: ``fsaccept/<test>.<run id>``, its own."""
        self.target_dir = os.path.join(str(self.target_root()), "fsaccept", self.data_name())

    def data_name(self) -> str:
        """Directory name of this test's files below the target (unique per run)."""
        return f"{self.unique_name}.{RUN_ID}"

    def removes_data(self) -> bool:
        """Whether this test is the last one to need its files."""
        return True

    def require_binary(self, name: str, how_to_get) -> None:
        """Skip, saying how to get it (a string, or a function of the test), when a
        benchmark is missing."""
        if callable(how_to_get):
            how_to_get = how_to_get(self)
        if self.binaries.unavailable:
            self.skip_because(f"{name}: {self.binaries.unavailable}")
        if provision.mode(self.current_partition.extras) == "modules":
            if self.binaries.source_of(name) == "module:missing":
                self.skip_because(provision.missing_from_modules(
                    name, self.binaries.modules_listed(), self.binaries.modules_fix()))
            return
        if provision.mode(self.current_partition.extras) != "path":
            return  # built or activated from Spack in the job
        if shutil.which(name) is None:
            self.skip_because(f"{name} not found on PATH: {how_to_get}")

    #: Why ranks must be placed in blocks for this benchmark (said when they were not).
    block_placement_needed_for = "the benchmark's rank shift would not move data off-node"

    def benchmark_binary(self) -> str:
        """The benchmark's executable, as the job resolves it."""
        return self.executable

    def command_line(self) -> str:
        """The benchmark's command line as planned (the printed one replaces it)."""
        return shlex.join([self.executable, *self.executable_opts])

    def extra_info_cmds(self) -> list[str]:
        """More ``fsaccept-info KEY VALUE`` lines for the job to print."""
        return []

    def uses_direct_io(self) -> bool:
        """Whether the benchmark asks for O_DIRECT (then probed on every node)."""
        return False

    #: Whether the per-node check runs in the benchmark's own step (one step launch less
    #: per job): each node's first task checks, then execs the benchmark, and the job
    #: refuses once the step has ended.  Nothing is written on a node before it has
    #: checked: an MPI benchmark's other ranks wait in ``MPI_Init`` for the checking
    #: ones, fio runs one task per node, which checks first, and a bad node ends the
    #: step at once (``--kill-on-bad-exit``; fio already running on other nodes wrote
    #: only into this run's data directory).  A degraded-mode test checks in a step of
    #: its own, before its fault.
    node_check_in_step = True

    def _node_check(self) -> tuple[str, list[str]]:
        """The per-node check's bash script and its arguments (see NODE_CHECK_SCRIPT)."""
        expected = self.expected_fstype()
        target = self.refdata.target
        options = mountopts.function(list(target.required_options),
                                     list(target.forbidden_options),
                                     servers.node_python("fsaccept.core.mountopts"))
        script = servers.probe(self._server_probe) + options + NODE_CHECK_SCRIPT.replace(
            "$NODE_CHECK_MARKER", NODE_CHECK_MARKER)
        return script, [str(self.target_root()), expected, self.target_mount,
                        "1" if self.uses_direct_io() else "0"]

    def node_check_first(self) -> str:
        """Bash for the benchmark step's tasks, before the benchmark: each node's first
        task checks its node, prints its answer, and ends the task unless it is "ok"."""
        if (not self.node_check_in_step
                or self.current_partition.launcher_type.registered_name != "srun"):
            return ""
        script, args = self._node_check()
        args = " ".join(shlex.quote(a) for a in [self.target_dir, *args])
        return ('if [ "${SLURM_LOCALID:-0}" = 0 ]; then '
                f"fsaccept_said=$(set -- {args}\n{script}); "
                'echo "$fsaccept_said"; read -r _ _ fsaccept_verdict _ <<< "$fsaccept_said"; '
                '[ "$fsaccept_verdict" = ok ] || exit 3; fi; ')

    def _refusals(self, answers: str) -> str:
        """Job line: a node that answered "bad" is named, one abort line each; exit 3."""
        bad = f"^{NODE_CHECK_MARKER} [^ ]* bad "
        return (f'if {answers} | grep -q "{bad}"; then {answers} | grep "{bad}" | '
                f'sed "s/^{NODE_CHECK_MARKER} \\([^ ]*\\) bad /{ABORT_MARKER} node \\1: /"; '
                "exit 3; fi")

    def node_check_cmds(self) -> list[str]:
        """Job lines that check, on every node of the job, that the target is on the
        expected file system and mount (a node that lost its mount is named, and the
        benchmark does not run), and that O_DIRECT is honoured when the test uses it:
        a step of its own, when the benchmark step does not check (see
        ``node_check_in_step``)."""
        if self.current_partition.launcher_type.registered_name != "srun":
            return []
        if self.node_check_in_step:
            return []
        return self._node_check_step()

    def _node_check_step(self) -> list[str]:
        """Job lines: the per-node check in a step of its own, every node's answer
        printed, and the job refused (exit 3) when a node answered "bad" or not at all."""
        script, args = self._node_check()
        args = " ".join(shlex.quote(a) for a in args)
        ok = f"^{NODE_CHECK_MARKER} [^ ]* ok "
        answers = 'printf "%s\\n" "$fsaccept_nodes"'
        return [
            f"fsaccept_nodes=$(srun --nodes=$SLURM_JOB_NUM_NODES --ntasks=$SLURM_JOB_NUM_NODES "
            f"--ntasks-per-node=1 bash -c {shlex.quote(script)} fsaccept-node "
            f'"$fsaccept_data" {args} 2>&1)',
            answers,
            # A node that answered "bad": nothing written.
            self._refusals(answers),
            # A node that did not answer at all (its step failed): not checked, not used.
            f'if [ "$({answers} | grep -c "{ok}")" != "$SLURM_JOB_NUM_NODES" ]; then '
            f'echo "{ABORT_MARKER} not every node of the job answered the mount check: '
            f"$({answers} | tail -n 3 | tr '\\n' ' ')\"; exit 3; fi",
        ]

    def _lost_answers_asked_again(self, out: str) -> str:
        """Job line, after a benchmark step that checked its nodes itself and failed:
        when the job's output lacks a node's answer, every node is asked again in a step
        of its own.  srun drops the last lines of a task when ``--kill-on-bad-exit``
        ends the step (seen once in CI: a node's "bad" answer lost, the refusal
        unsaid).  Asking again writes nothing a failed step has not; a node that answers
        "bad" (or nothing) then refuses the job, as before the benchmark."""
        answered = f"^{NODE_CHECK_MARKER} [^ ]* \\(ok\\|bad\\) "
        return (f'if [ "$fsaccept_rc" -ne 0 ] && [ "$(grep -c "{answered}" {out})" '
                '-lt "$SLURM_JOB_NUM_NODES" ]; then\n'
                + "\n".join(self._node_check_step()) + "\nfi")

    def record_node_checks(self) -> list[str]:
        """``node_mounts``: the nodes' answers, nodes with the same answer together; and
        what they say against the test (the job refuses a node that answers "bad"
        before anything is written; this is the same rule the sign-off applies to the
        recorded answers)."""
        ok = joboutput.node_mount_answers(self._stdout_text())
        self.node_mounts = joboutput.recorded_fields(self._stdout_text())["node_mounts"]
        if not ok:  # no per-node check in this job (a launcher other than srun)
            return []
        target = self.refdata.target
        return guards.node_mount_reasons(ok, self.expected_fstype(), self.target_mount,
                                         list(self.job.nodelist or []),
                                         self.uses_direct_io()) + mountopts.node_reasons(
            ok, self.target_mount, list(target.required_options),
            list(target.forbidden_options))

    def servers_after_cmds(self) -> list[str]:
        """Job lines that ask every node's client, once the benchmark has ended, whether
        it still reaches every storage server (only printed lines of the probe: a node
        whose step failed says nothing, and srun's complaints stay out of stderr)."""
        if (self._server_probe is None
                or self.current_partition.launcher_type.registered_name != "srun"):
            return []
        script = servers.after_script(self._server_probe)
        return [f"srun --nodes=$SLURM_JOB_NUM_NODES --ntasks=$SLURM_JOB_NUM_NODES "
                f"--ntasks-per-node=1 bash -c {shlex.quote(script)} "
                f"fsaccept-servers {shlex.quote(self.target_mount)} 2>/dev/null | "
                f'grep "^{servers.MARKER} "']

    def degraded_reasons(self) -> list[str]:
        """A storage server the nodes' clients did not reach after the benchmark: the
        figure measured a degraded file system (a replica may have kept the run alive)."""
        answers = servers.node_answers(self._stdout_text())
        self.servers_after = joboutput.recorded_fields(self._stdout_text())["servers_after"]
        if not self.servers_after_cmds():
            return servers.degraded_reasons(answers)  # no probe asked after the benchmark
        return servers.after_reasons(answers, list(self.job.nodelist or []))

    def prepare_data_cmds(self) -> list[str]:
        """Job lines run once the data directory exists (``$fsaccept_data``), before the
        benchmark: e.g. its Lustre striping."""
        return []

    #: Whether this test's job creates its data directory (a read test reuses its
    #: dataset's); only a directory holding this run's owner marker is ever removed.
    creates_data_dir = True

    #: Whether this test reads data an earlier job wrote: the reference's
    #: ``drop_caches`` command then runs on every node right before it.
    reads_written_data = False

    #: The cache drop command run before the read ("" if none), and its exit status.
    drop_caches_command = variable(str, value="", loggable=True)
    drop_caches_status = variable(str, value="", loggable=True)

    def drop_caches_cmds(self) -> list[str]:
        """Job lines that run the reference's ``drop_caches`` on every node of the job
        (one task each) and record its exit status."""
        if not (self.reads_written_data and self.refdata.drop_caches):
            return []
        self.drop_caches_command = self.refdata.drop_caches
        return [f"srun --nodes=$SLURM_JOB_NUM_NODES --ntasks=$SLURM_JOB_NUM_NODES "
                f"--ntasks-per-node=1 --label bash -c {shlex.quote(self.drop_caches_command)}",
                f"echo {INFO_MARKER} drop_caches_status $?"]

    def drop_caches_reasons(self) -> list[str]:
        """A requested cache drop that did not run, or failed, leaves the read's figure
        open to client caches."""
        if not self.drop_caches_command:
            return []
        self.drop_caches_status = self.job_info().get("drop_caches_status", "")
        if self.drop_caches_status == "0":
            return []
        how = (f"exited {self.drop_caches_status}" if self.drop_caches_status
               else "did not run")
        return [f"the cache drop before the read ({self.drop_caches_command!r}) {how} on the "
                "job's nodes: the read may have been served from client caches"]

    @run_before("run")
    def record_environment(self):
        """The command, binary, versions and MPI recorded, and the command quoted for the
        job script."""
        self.benchmark_command = self.command_line()
        binary = shlex.quote(self.benchmark_binary())
        # The one place where paths meet the shell: ReFrame pastes the executable
        # and its options into the job script as they are, so quote each once here.
        self.executable = shlex.quote(self.executable)
        self.executable_opts = [shlex.quote(o) for o in self.executable_opts]
        wrapper = self.rank_map_wrapper(first=self.node_check_first())
        if wrapper:
            self.executable, self.executable_opts = wrapper[0], [
                *wrapper[1:], self.executable, *self.executable_opts]
        marker = owned.owner_marker(RUN_ID)
        # Each refusal names the node where the batch script runs (the job's first).
        abort = f'{{ echo "{ABORT_MARKER} node $SLURMD_NODENAME:'
        setup = [
            f"fsaccept_data={shlex.quote(self.target_dir)}",
            f"fsaccept_root={shlex.quote(str(self.target_root()))}",
            f"fsaccept_owner={shlex.quote(marker)}",
        ]
        if not self.keep_data and self.removes_data():
            # Also when the benchmark fails or the job is cancelled (scancel sends TERM);
            # never a directory this run did not create (no marker: left alone).
            # The marker goes last (everything else first, then the marker, then the
            # directory): a removal cut short (Slurm kills the job KillWait seconds
            # after its TERM) keeps its proof of ownership, and the sanity stage (or the
            # next session) resumes it; `rm -rf` could delete the marker first.
            setup += ['fsaccept_remove_data() { if [ -f "$fsaccept_data/$fsaccept_owner" ] '
                      '&& [ ! -L "$fsaccept_data" ]; then ( cd -- "$fsaccept_data" && '
                      'find . -mindepth 1 ! -path "./$fsaccept_owner" -delete ) && '
                      'rm -f -- "$fsaccept_data/$fsaccept_owner" && { '
                      # A directory that cannot go (a storage server down) keeps its proof.
                      'rmdir -- "$fsaccept_data" || : > "$fsaccept_data/$fsaccept_owner"; }; '
                      'fi; }',
                      "trap fsaccept_remove_data EXIT", "trap 'exit 143' TERM INT"]
        # Where the data really goes (symbolic links resolved) must be the mount the
        # guard checked before the job: checked before anything is written there.
        expected = shlex.quote(self.target_mount)

        def on_mount(path: str) -> str:
            return (f'fsaccept_mount="$(findmnt -n -o TARGET -T "{path}" | head -n 1)"; '
                    f'[ "$fsaccept_mount" = {expected} ] || {abort} {path} is on the mount '
                    f'$fsaccept_mount, not on {expected}"; exit 3; }}')

        # A client that has lost a storage server (the batch node's; every node's is
        # asked again below): nothing is created on a degraded file system.
        probe = servers.probe(self._server_probe)
        degraded = [probe + f'fsaccept_servers_said=$(fsaccept_servers {expected}); '
                    f'[[ "$fsaccept_servers_said" != down* ]] || {abort} the file system is '
                    'degraded: ${fsaccept_servers_said#down }"; exit 3; }'] if probe else []
        if self.creates_data_dir:
            parent = '$(dirname -- "$fsaccept_data")'
            # The target itself first: nothing is created on a node that lost its mount.
            prepare = [on_mount("$fsaccept_root"), *degraded,
                       f'mkdir -p -- "{parent}" || {abort} cannot create {parent}"; exit 3; }}',
                       on_mount(parent),
                       f'mkdir -- "$fsaccept_data" && : > "$fsaccept_data/$fsaccept_owner" || '
                       f'{abort} cannot create a new $fsaccept_data"; exit 3; }}']
        else:
            prepare = [on_mount("$fsaccept_data"), *degraded,
                       f'[ -f "$fsaccept_data/$fsaccept_owner" ] || '
                       f'{abort} $fsaccept_data was not created by this run"; exit 3; }}']
        # After the benchmarks are activated, so that the path recorded is the one used.
        self.prerun_cmds = setup + self.prerun_cmds + prepare + self.node_check_cmds() + [
            f"echo {INFO_MARKER} binary_path $(command -v {binary})",
            f'echo {INFO_MARKER} fstype $(findmnt -n -o FSTYPE -T "$fsaccept_data")',
            f"echo {INFO_MARKER} mpi $( (ompi_info --version 2>/dev/null || "
            "mpichversion 2>/dev/null || echo unknown) | head -n 1)",
        ] + self.prepare_data_cmds() + self.extra_info_cmds() + self.drop_caches_cmds()

    @run_before("run")
    def retry_a_launch_that_crashed(self):
        """Launch the benchmark step once more when it failed before the benchmark did
        anything: a non-zero exit, no line on stdout but the ranks' own markers, and the
        data directory's entries unchanged (nothing written, nothing read into a
        cache).  Open MPI 4.1.4's TCP BTL segfaults in ``MPI_Init`` now and then (both
        ranks of one node, a null function pointer in its event loop: 1 of 80 8-rank
        launches on the loaded emulated cluster; once a retry crashed too, in CI).  Up to
        :data:`LAUNCH_RETRIES` retries, the later ones after a pause
        (:data:`RETRY_PAUSE_S` more each time), each printed in the job's output and
        recorded in ``launch_retry``; a crash of the last one is judged like any
        failure."""
        if (not self.retry_crashed_launch
                or self.current_partition.launcher_type.registered_name != "srun"):
            return
        out = shlex.quote(self.stdout.evaluate())
        count = 'find "$fsaccept_data" 2>/dev/null | wc -l'
        self.prerun_cmds += [f"{RETRY_SNAPSHOT}$(stat -c %s -- {out} 2>/dev/null || echo 0); "
                             f"fsaccept_entries=$({count})"]
        launch = " ".join([self.job.launcher.run_command(self.job), self.executable,
                           *self.executable_opts])
        said = (f"{RETRY_MARKER} the benchmark step ended with exit $fsaccept_rc before the "
                "benchmark printed or wrote anything: launching it once more")
        self.postrun_cmds = [
            KEEP_STATUS,
            # Printed nothing but the ranks' lines, the nodes' "ok" answers and the
            # retries' own lines.
            f'fsaccept_launch=1; while [ "$fsaccept_launch" -le {LAUNCH_RETRIES} ] && '
            f'[ "$fsaccept_rc" -ne 0 ] && [ "$({count})" = "$fsaccept_entries" ] && '
            f'! tail -c +$((fsaccept_out_bytes + 1)) -- {out} | grep -v "^{RANK_MARKER} " | '
            f'grep -v "^{RETRY_MARKER} " | grep -qv "^{NODE_CHECK_MARKER} [^ ]* ok "; '
            f'do echo "{said}"; echo "{said}" >&2; '
            f'sleep $(((fsaccept_launch - 1) * {RETRY_PAUSE_S})); {launch}; fsaccept_rc=$?; '
            'fsaccept_launch=$((fsaccept_launch + 1)); done',
            END_WITH_STATUS,
        ] + self.postrun_cmds

    @run_before("run")
    def after_the_benchmark(self):
        """After the benchmark step (and its retry), before the job ends with its status:
        a line saying the benchmark has ended (a time limit after it cut short only the
        removal of the data), then the nodes' clients asked about the storage servers."""
        if END_WITH_STATUS not in self.postrun_cmds:
            self.postrun_cmds = [KEEP_STATUS, END_WITH_STATUS] + self.postrun_cmds
        if self.node_check_first():
            # Before a retry: a node that answered "bad" ends the step on purpose.
            out = shlex.quote(self.stdout.evaluate())
            at = self.postrun_cmds.index(KEEP_STATUS) + 1
            self.postrun_cmds[at:at] = [self._refusals(f"cat -- {out}"),
                                        self._lost_answers_asked_again(out)]
        at = self.postrun_cmds.index(END_WITH_STATUS)
        self.postrun_cmds[at:at] = [f'echo {INFO_MARKER} benchmark_ended "$fsaccept_rc"',
                                    *self.servers_after_cmds()]

    def launch_retry_note(self) -> str:
        """What the retried launch's first attempt ended with ("" when there was none)."""
        crashed = self._crashed_launch_stderr()
        if not crashed:
            return ""
        why = self.task_failure_reasons(crashed) or [
            line.strip() for line in crashed.splitlines() if line.strip()][-1:]
        retries = sum(1 for line in crashed.splitlines() if line.startswith(RETRY_MARKER + " "))
        times, failed = (("twice", "the first attempt") if retries == 0 else
                         (f"{retries + 2} times", f"the first {retries + 1} attempts"))
        return (f"the benchmark step was launched {times}: {failed} failed before the "
                "benchmark printed or wrote anything (" + "; ".join(why)[:500] + ")")

    def name_failed_nodes(self, reason: str) -> str:
        """A node failure that the job's output does not name (it came before any
        step printed it): ask Slurm which of the job's nodes are down now."""
        if "due to node failure" not in reason or "failed during the run" in reason:
            return reason
        nodes = ",".join(self.job.nodelist or [])
        if not nodes:
            return reason
        proc = subprocess.run(["sinfo", "-h", "-N", "-n", nodes, "-o", "%N %t"],
                              capture_output=True, text=True, timeout=30)
        down = slurm.down_nodes(proc.stdout)
        return reason + (f": node {', '.join(down)} failed during the run (Slurm: down now)"
                         if down else "")

    def job_failures(self, stderr: str) -> list[str]:
        """What Slurm says ended the job; a time limit that came once the benchmark
        had ended well (exit 0; no job step cancelled: during the removal of its data)
        is a note, not a reason.  (A step the time limit cancels can still let the
        script print its "ended" line, with the step's status: that one stays.)"""
        failures = slurm.slurm_job_failures(stderr)
        late = [f for f in failures
                if f.endswith(" due to time limit") and self._ended_well(stderr)]
        for failure in late:
            self.time_limit_after_benchmark = (
                f"{failure}, after the benchmark had ended (exit "
                f"{self.job_info()['benchmark_ended']}), while the job removed its data")
            getlogger().warning(f"fsaccept: {self.display_name}: "
                                f"{self.time_limit_after_benchmark}")
        return [f for f in failures if f not in late]

    def _ended_well(self, stderr: str) -> bool:
        """Whether the benchmark step ended with exit 0 and no step was cancelled."""
        return joboutput.ended_well(self.job_info(), stderr)

    def _benchmark_stderr(self) -> str:
        """The job's stderr as the benchmark's aftermath: without Slurm's line of a time
        limit that came after the benchmark had ended well (``job_failures``;
        :func:`fsaccept.core.joboutput.benchmark_stderr`, as the sign-off reads it)."""
        return joboutput.benchmark_stderr(self.job_info(), self._stderr_text())

    def abort_reasons(self) -> list[str]:
        """Why the job refused to run the benchmark (its own checks before it)."""
        return [line.split(" ", 1)[1] for line in self._stdout_text().splitlines()
                if line.startswith(ABORT_MARKER + " ")]

    def job_info(self) -> dict[str, str]:
        """What the job recorded about itself (``fsaccept-info KEY VALUE`` lines:
        :func:`fsaccept.core.joboutput.job_info`, as the sign-off reads them)."""
        if not hasattr(self, "_job_info"):
            info = joboutput.job_info(self._stdout_text())
            self._job_info = info
            self.binary_path = info.get("binary_path", "")
            self.job_fstype = joboutput.job_fstype(info)
            self.mpi_version = info.get("mpi", "")
        return self._job_info

    def record_version(self, benchmark: str, printed: str | None) -> None:
        """Record the version the benchmark printed (e.g. 'IOR-4.0.0') and whether it is
        tested."""
        self.benchmark_version = printed or ""
        self.version_note = versions.version_note(benchmark, versions.version_number(printed))

    def fstype_reasons(self) -> list[str]:
        """The file system where the job ran must be the one the guard checked."""
        self.job_info()
        return guards.fstype_reasons(self.job_fstype, self.expected_fstype(), self.target_dir)

    def placement_reasons(self) -> list[str]:
        return placement.block_reasons(self.record_rank_map(), self.ranks_per_node,
                                       self.block_placement_needed_for)

    def benchmark_reasons(self) -> list[str]:
        """INVALID reasons the benchmark's own output gives."""
        raise NotImplementedError

    def parsed_run(self, parse, error_findings):
        """The benchmark's report (stdout) parsed once, with the findings of the job's
        stderr added after it (stdout carries the benchmark's own error lines; stderr
        the aftermath); ``record_run(run)`` then records its provenance."""
        if not hasattr(self, "_parsed_run"):
            run = joboutput.parsed(parse, error_findings, self._stdout_text(),
                                   self._benchmark_stderr())
            self._parsed_run = run
            self.record_run(run)
        return self._parsed_run

    def record_run(self, run) -> None:
        """Record what the parsed run says about itself (version, command, ...)."""

    def task_failure_reasons(self, stderr: str) -> list[str]:
        """Tasks srun saw end abnormally (usually the aftermath of an error the
        benchmark printed first)."""
        return slurm.slurm_task_failures(stderr, self.job.jobid)

    def invalid_reasons_list(self) -> list[str]:
        stderr = self._stderr_text()
        # Root cause first (what ended the job, a missing mount), then the
        # benchmark's own lines, then the aftermath (tasks that died), then placement.
        reasons = [self.name_failed_nodes(r) for r in self.job_failures(stderr)]
        # What Slurm's accounting says ended the job, when its output did not say it.
        reasons = reasons or slurm.accounting_reasons(
            self.job_accounting, str(self.job.jobid or ""), self.time_limit_after_benchmark,
            self.current_partition.scheduler.registered_name)
        if slurm.never_started(self.job_accounting):  # nothing ran: nothing else to judge
            return reasons
        mounts = self.record_node_checks()
        aborted = self.abort_reasons()
        if aborted:  # the benchmark never ran: nothing else to judge
            return reasons + [f"the job refused to run the benchmark: {a}" for a in aborted]
        reasons += mounts + self.fstype_reasons()
        reasons += self.drop_caches_reasons()
        reasons += self.benchmark_reasons()
        reasons += self.task_failure_reasons(stderr)
        reasons += self.degraded_reasons()
        reasons += self.placement_reasons()
        return reasons

    @sanity_function
    def assert_valid(self):
        self.launch_retry = self.launch_retry_note()
        reasons = self.invalid_reasons_list()
        if not reasons:
            reasons = self.bogus_figure_reasons()
        self.invalid_reasons = "; ".join(reasons)
        # No later test will read data from an invalid run (datasets included).
        self.finish_removal(invalid=bool(reasons))
        if reasons:
            raise SanityError("INVALID: " + "; ".join(reasons))
        return True

    def finish_removal(self, invalid: bool) -> None:
        """After the job (also a cancelled one: ReFrame runs sanity then too), remove
        what its EXIT trap did not: a removal cut short by the time limit resumes here
        (the marker, deleted last, is still there).  What stays is said on the console
        and in ``data_left`` (the reports show it), with its path and file count."""
        if self.keep_data or not self.target_dir or not (invalid or self.removes_data()):
            return
        removal = remove_data(self.target_dir)
        if removal.left:
            self.note_data_left(removal.left)

    def note_data_left(self, line: str) -> None:
        self.data_left = "; ".join(filter(None, [self.data_left, line]))
        getlogger().warning(f"fsaccept: {self.display_name}: data left on the target: {line}")


    #: Figures that count something (0 is a measurement: no outlier node, no bad transfer).
    counts: frozenset[str] = frozenset({pernode.OUTLIER_FIGURE})

    def bogus_figure_reasons(self) -> list[str]:
        """A figure no file system can have is never judged: non-finite or negative,
        or zero where a threshold judges it (I/O was done).  Every check's figures
        pass here, whichever benchmark produced them."""
        self.set_perf_variables()  # the figures the performance stage will report
        judged = set(next(iter(self.reference.values()), {})) if self.reference else set()
        reasons = []
        for name, function in getattr(self, "perf_variables", {}).items():
            try:
                value = float(sn.evaluate(function))
            except (SanityError, TypeError, ValueError):
                continue  # no figure at all: the benchmark's own reasons say why
            why = figure_problem(value, io_done=name in judged and name not in self.counts)
            if why:
                reasons.append(f"{name} is {value}: not a figure a file system can have "
                               f"({why})")
        return reasons

