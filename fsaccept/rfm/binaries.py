"""The session fixture that provides IOR, mdtest and fio to every check of a
partition, and records where they come from."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import run_after, run_before, sanity_function, variable

from fsaccept.rfm.logged import SKIPPED, Logged
from fsaccept.suite import provision
from fsaccept.suite import sites
from fsaccept.suite import spack as spackenv


class BenchmarkBinaries(rfm.CompileOnlyRegressionTest, Logged):
    """Provides the benchmarks for a partition (its ``extras.benchmarks``, see
    ``fsaccept.suite.provision``) and records where they come from, once per session.

    ``spack-build``: ``spack -e <env> install`` with ReFrame's Spack build
    system; ``spack-env``: an environment built beforehand; both then write the
    activation script every job sources.  ``path``: nothing to build, only the
    record.  ``modules``: each of the partition's modules loaded first, on its own, as
    the jobs' shell will: one that does not load skips this fixture, naming it, and
    with it every check (ReFrame itself would fail this build at its `module load`).
    When Spack is missing, nothing fails here: ``unavailable`` says why, and each
    check skips with that reason.
    """

    descr = "IOR, mdtest and fio for this partition, and their provenance"
    valid_systems = ["*"]
    valid_prog_environs = ["*"]
    build_locally = True
    build_system = "CustomBuild"

    #: Where each benchmark comes from: "ior spack:ior@4.0.0/<hash> (Spack 1.1.1,
    #: spack-packages 119680a); fio path:/usr/bin/fio" (what built a Spack environment:
    #: the origin file scripts/setup wrote beside it, else the Spack's version).
    provenance = variable(str, value="", loggable=True)

    #: Why the benchmarks cannot be provided, and the command that fixes it ("" if they can).
    unavailable = variable(str, value="", loggable=True)

    #: Why this fixture skipped, and the fix ("" if it did not): the checks it skips
    #: report it as their own (fsaccept.rfm.acceptance.fixture_skip_reason).
    skip_reason = variable(str, value="", loggable=True)

    @run_after("setup")
    def load_the_modules(self):
        """``benchmarks: modules``: load each module the partition's jobs will load, in a
        shell started as theirs (the partition's prepare_cmds, ReFrame's environment),
        before ReFrame writes them into this fixture's build script."""
        if provision.mode(self.current_partition.extras) != "modules":
            return
        modules = self.modules_listed()
        said = ""
        if modules:
            script = "\n".join([*self.current_partition.prepare_cmds,
                                *provision.module_check_commands(modules)])
            try:
                said = subprocess.run(["bash", "-c", script], capture_output=True, text=True,
                                      timeout=300).stdout
            except subprocess.TimeoutExpired:
                said = "\n".join(f"{provision.MODULE_MARKER} {m} failed: `module load` did "
                                 "not return within 300 s" for m in modules)
        why = provision.module_problems(modules, said, self.modules_fix())
        if why:
            self.skip_reason = why
            SKIPPED[self.unique_name] = (type(self).__name__, why)
            self.skip(why)

    @run_before("compile")
    def choose_build(self):
        extras = self.current_partition.extras
        # Systems that share hardware share one build (extras `spack_system`).
        system = extras.get("spack_system", self.current_system.name)
        mode = provision.mode(extras)
        if mode in ("spack-build", "spack-env") and shutil.which("spack") is None:
            emulated = "emulated" in self.current_partition.features
            self.unavailable = (f"Spack not found (partition extras benchmarks: {mode}): "
                                + sites.spack_fix(emulated, system))
            self.build_system.commands = ["true"]
            return
        record = provision.session_commands(extras, system)
        record[-1] += " > provenance.txt"
        if mode == "spack-build":
            spackenv.write_environment(system)
            self.build_system = "Spack"
            # The environment lists its pinned specs itself: no `spack add`.
            self.build_system.environment = shlex.quote(
                str(provision.spack_env_dir(extras, system)))
            self.build_system.emit_load_cmds = False
            self.postbuild_cmds = record
        else:
            self.build_system.commands = record

    def modules_listed(self) -> list[str]:
        """The modules ReFrame loads in this partition's jobs: the partition's, then its
        environment's."""
        return [*self.current_partition.local_env.modules, *self.current_environ.modules]

    def modules_fix(self) -> str:
        return sites.modules_fix("emulated" in self.current_partition.features,
                                 self.current_system.name, self.current_partition.name)

    @sanity_function
    def record_provenance(self):
        if self.unavailable:
            return True
        path = os.path.join(self.stagedir, "provenance.txt")
        found = provision.parse_provenance(open(path).read())
        self.provenance = "; ".join(f"{k} {v}" for k, v in sorted(found.items()))
        return sn.assert_true(found, "no benchmark provenance recorded")

    def source_of(self, name: str) -> str:
        for item in self.provenance.split("; "):
            if item.startswith(name + " "):
                return item.split(" ", 1)[1]
        return ""
