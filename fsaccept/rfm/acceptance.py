"""``AcceptanceTest``, the template every acceptance check inherits: it reads
``reference/<system>.yaml``, places the test on the node fraction it prescribes (rounded
up), block rank distribution, exclusive nodes, a time limit that follows from the
deadlines, thresholds as ReFrame references, and provenance as loggable variables.  What
a check is (its reference key, tags, IOR phase...) comes from the catalogue
(:mod:`.catalogued`).

Its hooks, in the order ReFrame runs them: after init, the catalogue's record; after
setup, ``load_reference``, ``guard_target``, ``place_on_node_fraction``,
``set_time_limit``, ``guard_capacity``, ``set_threshold``; before run,
``recheck_capacity``, ``activate_benchmarks``, ``set_slurm_job_options``,
``launch_block_distributed``, last ``count_while_running``; after run,
``count_what_it_left``.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import reframe as rfm
from reframe.core.builtins import fixture, loggable, run_after, run_before, variable

from fsaccept.benchmarks import registry
from fsaccept.core import guards, joboutput, placement
from fsaccept.core.reference import TARGET_PARAMETER
from fsaccept.core.slurm import benchmark_job_name
from fsaccept.rfm import targets
from fsaccept.rfm.accounted import Accounted
from fsaccept.rfm.binaries import BenchmarkBinaries
from fsaccept.rfm.catalogued import CataloguedTest
from fsaccept.rfm.logged import SKIPPED, Logged
from fsaccept.rfm.jobscript import KEPT_DATASETS, RANK_MARKER, RETRY_MARKER
from fsaccept.suite import provision, reference


def fixture_skip_reason(test) -> str:
    """'its fixture IORIntegrityDataset was skipped: ior not found on PATH: ...' for a
    test that was never set up and one of whose fixtures skipped ("" otherwise)."""
    if test.current_partition is not None:
        return ""  # set up: it skipped (or not) for reasons of its own
    for target, _ in test.user_deps():
        if target in SKIPPED:
            name, why = SKIPPED[target]
            return f"its fixture {name} was skipped: {why}"
    return ""


def partition_nodes(job) -> tuple[list, list]:
    """(all nodes, usable nodes) of the partition ``job`` is for, as Slurm sees them now."""
    sched = job.scheduler
    nodes = list(sched.filternodes(job, sched.allnodes()))
    return nodes, [n for n in nodes if placement.is_usable(getattr(n, "states", ()))]


def slurm_job_options(test: rfm.RegressionTest) -> list[str]:
    """The Slurm options of every job of an acceptance run (none off Slurm).  ReFrame
    submits the next job while one runs (the partition's ``max_jobs``): Slurm holds it
    until that one has ended (singleton), then starts it at once, without a new wait in
    its queue."""
    if test.current_partition.scheduler.registered_name not in ("slurm", "squeue"):
        return []
    return [
        # Slurm requeues a batch job whose node failed; a benchmark must not
        # silently run a second time (double writes, a second figure).
        "--no-requeue",
        # One job of this system at a time, also across ReFrame sessions (a nightly
        # and an acceptance run started together): Slurm sees them all.  Later
        # #SBATCH lines win: this name replaces ReFrame's rfm_<test>.
        f"--job-name={benchmark_job_name(test.current_system.name)}",
        "--dependency=singleton",
        f"--comment={test.unique_name}",  # which test it is, in squeue -o %k
    ]


class AcceptanceTest(rfm.RunOnlyRegressionTest, CataloguedTest, Accounted, Logged):
    """Placement, reference and provenance common to every acceptance check."""

    #: Key of this test's entry under ``tests:`` in the reference file (the catalogue's).
    reference_key = variable(str)

    @run_after("init")
    def take_reference_key(self):
        """Its entry's key under ``tests:`` from its catalogue record."""
        if self.spec is not None:  # else its class's own (a check the catalogue lacks)
            self.reference_key = self.spec.key

    #: Reference file to use; empty: ``$FSACCEPT_REFERENCE`` if set (a system may
    #: set it in its ``env_vars``), else ``reference/<system>.yaml`` of this repository.
    reference_file = variable(str, value="")

    #: What the node fraction is a fraction of: ``total`` (all nodes of the
    #: partition: the acceptance rule) or ``available`` (the nodes usable now).
    fraction_of = variable(str, value="total")

    #: Keep the files the test writes; by default the last test that needs
    #: them removes them.
    keep_data = variable(bool, value=False)

    #: Directory to test instead of the reference file's ``target.path`` (refused with
    #: several targets: each has its own).
    target = variable(str, value=os.environ.get("FSACCEPT_TARGET", ""))

    #: Expected file-system type of ``target`` (default: the reference file's).
    target_fstype_expected = variable(str, value=os.environ.get("FSACCEPT_TARGET_FSTYPE", ""))

    #: Minutes added to the deadlines for the Slurm time limit (start-up,
    #: wear-out, fsync, close), so a hung benchmark cannot hold nodes forever;
    #: 0: the reference file's ``time_limit_margin_min`` (default 10).
    time_limit_margin_min = variable(int, value=0)

    # Provenance: logged with every figure (perflog, run report).
    node_fraction = variable(float, value=0.0, loggable=True)
    #: How the fraction became ``num_nodes``: "up" or "down" (reference ``node_rounding``).
    node_rounding = variable(str, value="up", loggable=True)
    partition_nodes = variable(int, value=0, loggable=True)
    usable_nodes = variable(int, value=0, loggable=True)
    num_nodes = variable(int, value=0, loggable=True)
    ranks_per_node = variable(int, value=0, loggable=True)
    node_memory_bytes = variable(int, value=0, loggable=True)
    target_dir = variable(str, value="", loggable=True)
    target_fstype = variable(str, value="", loggable=True)
    #: Mount point holding the target, as the login node sees it; jobs refuse to
    #: write when their data directory is on another one.
    target_mount = variable(str, value="", loggable=True)
    planned_bytes = variable(int, value=0, loggable=True)
    reference_path = variable(str, value="", loggable=True)
    reference_sha256 = variable(str, value="", loggable=True)
    rank_map = variable(str, value="", loggable=True)

    valid_systems = ["+mpi"]
    valid_prog_environs = ["+mpi"]
    exclusive_access = True

    #: Provides (or just locates) the benchmark binaries; one per partition+environment.
    binaries = fixture(BenchmarkBinaries, scope="environment")

    #: Where the benchmark binaries came from (path, or Spack spec and hash).
    benchmark_provenance = variable(str, value="", loggable=True)

    def skip_because(self, reason: str) -> None:
        """Skip, keeping the reason in the run report (and so in the sign-off report)."""
        self._fsaccept_skip_reason = reason
        SKIPPED[self.unique_name] = (type(self).__name__, reason)
        self.skip(reason)

    @loggable
    @property
    def skip_reason(self) -> str:
        """Why this test did not run, with the fix (ReFrame's run report keeps no skip
        reason): its own, else that of the fixture whose skip skipped it (ReFrame then
        skips it "due to skipped dependencies", before any of its hooks run)."""
        own = getattr(self, "_fsaccept_skip_reason", "")
        return own or fixture_skip_reason(self)

    @run_after("setup")
    def load_reference(self):
        """The reference file read and validated, and this test's target and entry taken
        from it."""
        path = (self.reference_file or os.environ.get("FSACCEPT_REFERENCE")
                or reference.reference_path(self.current_system.name))
        self.reference_path = str(path)
        name = targets.target_of_test(self)
        if TARGET_PARAMETER in type(self).var_space:  # a read: its dataset's target
            setattr(self, TARGET_PARAMETER, name)
        whole = reference.load_reference(path)
        whole.check_system(self.current_system.name)
        if whole.named_targets and self.target:
            raise reference.ReferenceError(
                f"{path}: targets: target={self.target!r} (FSACCEPT_TARGET) would put every "
                "target's tests in one directory: give each target's path in the file")
        # Its own target's part of the file (the only one with a single target:).
        self.refdata = whole.for_target(name)
        self.reference_sha256 = self.refdata.sha256  # of the bytes validated, not a new read
        self.load_entry()

    def load_entry(self) -> None:
        """This test's entry of the reference file, and the placement it asks for."""
        self.entry = self.refdata.entry(self.reference_key, needed_by=self.display_name)
        self.take_placement()

    def take_placement(self) -> None:
        """The node fraction and ranks per node its entry asks, by its benchmark's rule
        (:func:`fsaccept.benchmarks.registry.placement_of`, which the sign-off holds the
        run to); no fraction: one node (recorded as 0)."""
        fraction, self.ranks_per_node = registry.placement_of(self.spec, self.entry)
        self.node_fraction = 0.0 if fraction is None else fraction

    #: Characters the benchmark cannot take in a path (character -> why), refused
    #: in the target before any job (e.g. fio splits directory= on ':').
    unsafe_path_chars: dict[str, str] = {}

    @run_after("setup")
    def guard_target(self):
        """Refuse, before any job, a target that is missing, read-only, on
        another file system than expected (type; mount point and source when
        the reference pins them), mounted here without an option the reference
        requires or with one it forbids, reached through a symbolic link to another
        file system, on the mount of another target of the file, or whose path the
        benchmark cannot take (a mistyped path must never fill a home file system)."""
        mount = guards.check_target(
            self.target_root(), self.expected_fstype(),
            self.refdata.path, mount_point=self.refdata.target_mount_point,
            source=self.refdata.target_source, forbidden=self.unsafe_path_chars,
            mount_options=(list(self.refdata.target.required_options),
                           list(self.refdata.target.forbidden_options)))
        self.target_fstype, self.target_mount = mount.fstype, mount.target
        if self.refdata.named_targets:  # several targets: each its own file system
            own = self.refdata.target
            guards.check_own_file_system(
                own.where, self.target_root(), mount, self.refdata.path,
                [(t.where, t.path, t.fstype) for t in self.refdata.targets if t.name != own.name])

    def expected_fstype(self) -> str:
        """The file-system type the target must be on (``target_fstype_expected``, else
        the reference file's)."""
        return self.target_fstype_expected or self.refdata.target_fstype

    def target_root(self) -> Path:
        """The directory this test writes below."""
        return Path(self.target) if self.target else self.refdata.target_path

    @run_after("setup")
    def place_on_node_fraction(self):
        """Its nodes and ranks from the entry's node fraction of the partition (of its
        nodes, or of those available)."""
        nodes, usable = partition_nodes(self.job)
        self.partition_nodes, self.usable_nodes = len(nodes), len(usable)
        base = len(usable) if self.fraction_of == "available" else len(nodes)
        self.node_rounding = self.refdata.node_rounding
        self.num_nodes = self.nodes_to_use(base, usable)
        if self.num_nodes > len(usable):
            self.skip_because(
                f"needs {self.num_nodes} nodes ({self.node_fraction:g} of {base} "
                f"{self.fraction_of} nodes, rounded {self.node_rounding}) but only "
                f"{len(usable)} are usable; "
                f"set fraction_of=available to base the fraction on usable nodes")
        memories = [placement.node_memory_bytes(getattr(n, "descr", "")) for n in usable]
        self.node_memory_bytes = min((m for m in memories if m), default=0)
        self.num_tasks_per_node = self.ranks_per_node
        self.num_tasks = self.num_nodes * self.ranks_per_node

    def nodes_to_use(self, base: int, usable: list) -> int:
        """How many nodes the test runs on: its node fraction of ``base`` nodes (a
        scaling sweep's point instead: ``fsaccept.rfm.scaling``)."""
        return placement.nodes_asked(self.node_fraction or None, base, self.node_rounding)

    @run_after("setup")
    def set_time_limit(self):
        """The job's time limit: its deadlines, rounded up to minutes, plus the reference's
        margin."""
        margin = self.time_limit_margin_min or self.refdata.time_limit_margin_min
        minutes = -(-self.deadlines_s() // 60) + margin
        self.time_limit = f"{minutes}m"

    @run_after("setup")
    def guard_capacity(self):
        """Refuse a test that could fill more than the allowed share of the target,
        counting the datasets this run keeps there for later reads."""
        self.planned_bytes = self.planned_volume()
        self.check_capacity()

    @run_before("run")
    def recheck_capacity(self):
        """The capacity guard again, just before the job is submitted."""
        # Again just before the job is submitted: datasets set up after this test are
        # known now, and so is what the job submitted before it (maybe still running,
        # Slurm starts this one after it) may write.
        self.check_capacity()

    @run_before("run", always_last=True)
    def count_while_running(self):
        """From its submission to its end, later tests' capacity guards count what
        this job may write (``guards.KeptData.running``)."""
        if self.planned_bytes and self.target_dir:
            KEPT_DATASETS.running(guards.KeptDataset(self.unique_name, self.target_dir,
                                                     self.target_mount, self.planned_bytes))

    @run_after("run")
    def count_what_it_left(self):
        """Once the job has ended, the capacity guards count what it left on the target."""
        # The job has ended: the free space shows what it left.
        KEPT_DATASETS.ended(self.target_dir)

    def check_capacity(self) -> None:
        root = self.target_root()
        guards.check_capacity(root, self.planned_bytes, guards.free_bytes(root),
                              self.refdata.max_fill_fraction,
                              kept=KEPT_DATASETS.on(self.target_mount,
                                                    excluding=self.target_dir))

    def planned_volume(self) -> int:
        """Bytes this test may write (0: it only reads)."""
        return 0

    @run_after("setup")
    def set_threshold(self):
        """ReFrame's reference from the entry's thresholds (a test judged on no figure has
        none)."""
        if not getattr(self, "judged", True):
            return
        self.reference = {"*": self.threshold_references()}

    def threshold_references(self) -> dict[str, tuple]:
        """Figure name -> ReFrame reference tuple, from the reference entry."""
        return {name or self.figure_name(): threshold.as_reframe_reference()
                for name, threshold in self.refdata.thresholds(self.reference_key).items()}

    @run_before("run")
    def activate_benchmarks(self):
        """The commands that put the benchmarks on the job's PATH (the partition's Spack
        view or modules), first in the job."""
        self.benchmark_provenance = self.binaries.provenance
        self.prerun_cmds = provision.activation_commands(
            self.current_partition.extras, self.binaries.stagedir) + self.prerun_cmds

    @run_before("run")
    def set_slurm_job_options(self):
        """Slurm's options of every acceptance job: never requeued, one job of the system at
        a time (singleton, across sessions), the test named in its comment."""
        self.job.options += slurm_job_options(self)

    @run_before("run")
    def launch_block_distributed(self):
        """srun places ranks in blocks (each node's ranks together), and a task that dies
        ends the step."""
        # Block placement: ranks 0..k-1 on the first node, ... IOR's -C shift is
        # node 0's rank count, so only with blocks does each reader move to another node.
        if self.current_partition.launcher_type.registered_name != "srun":
            return
        # A task that dies (a rank crashing in MPI_Init) ends the whole step at once:
        # its MPI peers would otherwise wait for it until the job's time limit.
        self.job.launcher.options = ["--distribution=block", "--kill-on-bad-exit=1"]

    #: Whether the benchmark's exit status, when it exits by itself, is a count of what
    #: it found (IOR's: its incorrect transfers, modulo 256), not a failure.  Every rank
    #: exits with the same count once MPI has finalized; with ``--kill-on-bad-exit`` the
    #: first rank to exit would end the others, and rank 0 can lose its last output
    #: (the summary, "Finished") before its exit flushes it: a corrupted file then read
    #: as INVALID instead of FAIL (seen in CI, under load).  Such a task runs the
    #: benchmark as a child and ends with 0 for a count of 1 to 128; a status above 128
    #: (a signal: a crashed rank) still ends the step.  The count itself is judged from
    #: the output (``Incorrect data``), never from the status.
    exit_status_counts = False

    def rank_map_wrapper(self, first: str = "") -> list[str]:
        """Where every rank really ran, from Slurm itself (not from the benchmark): each
        task of the benchmark's own step prints its rank and node, runs ``first`` (bash;
        it may end the task), then execs the benchmark (same process: MPI and PMIx see
        no difference; a child, for one whose status is a count: ``exit_status_counts``).
        One step, not a second one just for the map (a step launch costs ~0.3 s here)."""
        if self.current_partition.launcher_type.registered_name != "srun":
            return []
        # Run by the path PATH resolves to, as srun itself would: the benchmark's
        # own "Command line" then names the binary that ran (provenance).
        run = ('"$b" "$@"; s=$?; [ "$s" -gt 128 ] || s=0; exit "$s"'
               if self.exit_status_counts else 'exec "$b" "$@"')
        return ["bash", "-c", shlex.quote(f'echo {RANK_MARKER} $SLURM_PROCID $SLURMD_NODENAME; '
                                          + first + 'b=$(command -v "$1") || b=$1; shift; '
                                          + run), RANK_MARKER]

    def deadlines_s(self) -> int:
        """Seconds of deadlines the job runs through (for its time limit)."""
        return int(self.entry.get("deadline_s", 0))

    def figure_name(self) -> str:
        raise NotImplementedError

    def record_rank_map(self):
        ranks = placement.parse_rank_map(self._stdout_text(), RANK_MARKER)
        self.rank_map = placement.format_rank_map(ranks)
        return ranks

    def _stdout_text(self) -> str:
        """The job's stdout, without the rank lines of a launch that crashed
        (:func:`fsaccept.core.joboutput.counted_stdout`, as the sign-off reads it)."""
        return joboutput.counted_stdout(self._read_stage_file(self.stdout.evaluate()))

    def _stderr_text(self) -> str:
        """The job's stderr from the launch that counts (the last one) on."""
        return joboutput.counted_stderr(self._read_stage_file(self.stderr.evaluate()))

    def _crashed_launch_stderr(self) -> str:
        """What a crashed launch printed on stderr before it was retried ("" if none)."""
        text = self._read_stage_file(self.stderr.evaluate())
        return text[:text.rfind(RETRY_MARKER + " ")] if RETRY_MARKER + " " in text else ""

    def _read_stage_file(self, name: str) -> str:
        try:  # decoded as the sign-off decodes the copy it reads (one function)
            with open(os.path.join(self.stagedir, name), "rb") as f:
                return joboutput.decoded(f.read())
        except FileNotFoundError:
            return ""


