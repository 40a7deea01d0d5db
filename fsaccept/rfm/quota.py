"""The quota check's ReFrame test (``checks/quota/quota.py``): one task on one node runs
fsaccept's quota program (``python -m fsaccept.benchmarks.quota.probe``) in the test's
own directory.  The site's commands come from the partition's ``extras.quota``
(:mod:`fsaccept.benchmarks.quota.command`); a reference that promises a quota on a
system that declares none skips, saying so, and the session is then INCOMPLETE."""

from __future__ import annotations

import shlex
import sys

import reframe.utility.sanity as sn
from reframe.core.builtins import run_after, run_before, variable
from reframe.core.exceptions import SanityError
from reframe.core.logging import getlogger

from fsaccept.benchmarks.quota import command, parse, probe, validity
from fsaccept.core import guards
from fsaccept.core.paths import REPO_ROOT
from fsaccept.rfm.benchmark import BenchmarkTest


class QuotaTest(BenchmarkTest):
    """A quota the site's command sets, written past on one node."""

    #: The program's lines as printed: the sign-off parses and judges them again.
    quota_lines = variable(str, value="", loggable=True)
    #: What failed, in words ("; " between them).
    quota_failures = variable(str, value="", loggable=True)
    #: The site's commands, as declared (provenance).
    quota_commands = variable(str, value="", loggable=True)

    #: A refusal at 0 MiB and a delay of 0 s are measurements.
    counts = BenchmarkTest.counts | set(command.FIGURES)

    def load_entry(self) -> None:
        """Skip, saying why, where the reference promises no quota."""
        if self.reference_key not in self.refdata.entries:
            self.skip_because(f"{self.refdata.path}: no tests.{self.reference_key}: the "
                              "reference promises no quota (docs/user/quota.md)")
        self.entry = self.refdata.entry(self.reference_key, needed_by=self.display_name)
        self.take_placement()  # one task on one node: its record's placement

    @property
    def params(self) -> command.QuotaParameters:
        return command.parameters(self.reference_key, self.entry)

    @run_after("setup")
    def set_quota_command(self):
        where = f"{self.current_partition.fullname}: extras.{command.EXTRA}"
        try:
            declared = command.declaration(
                self.current_partition.extras.get(command.EXTRA), where)
        except command.DeclarationError as err:
            self.skip_because(f"{err}: the reference promises a quota, and this system "
                              "declares no commands to set it")
        self.quota_commands = "; ".join(f"{k}: {v}" for k, v in declared.items())
        for name, cmd in declared.items():
            self.env_vars[probe.COMMAND_VARIABLES[name]] = shlex.quote(cmd)
        self.env_vars["PYTHONPATH"] = shlex.quote(str(REPO_ROOT))
        self.executable = shlex.quote(sys.executable)
        self.executable_opts = ["-m", probe.__name__, *map(shlex.quote, command.probe_options(
            self.params, command.quota_directory(self.target_dir)))]

    def prepare_data_cmds(self) -> list[str]:
        return [f'mkdir -- "$fsaccept_data/{command.SUBDIR}"']

    def deadlines_s(self) -> int:
        return command.deadline_s(self.params)

    def planned_volume(self) -> int:
        return guards.planned_volume(self.params.stop)

    def figure_name(self) -> str:
        return command.WRITTEN

    def threshold_references(self) -> dict[str, tuple]:
        return command.references(self.params)

    def quota_run(self) -> parse.QuotaRun:
        """The program's lines, parsed once (with the job's stderr findings)."""
        return self.parsed_run(parse.parse_quota, parse.error_findings)

    def record_run(self, run: parse.QuotaRun) -> None:
        self.job_info()
        self.record_version("quota", run.version)
        self.quota_lines = parse.program_lines(self._stdout_text())
        self.quota_failures = "; ".join(validity.failures(run, self.params))
        if self.quota_failures:
            getlogger().warning(f"fsaccept: {self.display_name}: {self.quota_failures}")

    def benchmark_reasons(self) -> list[str]:
        return validity.invalid_reasons(self.quota_run(), self.params,
                                        command.quota_directory(self.target_dir),
                                        str(self.target_root()))

    @run_before("performance")
    def set_perf_variables(self):
        self.perf_variables = {
            name: sn.make_performance_function(self.figure, command.FIGURES[name], name)
            for name in self.quota_run().figures()}

    def figure(self, name: str) -> float:
        value = self.quota_run().figures().get(name)
        if value is None:  # sanity has already made this INVALID
            raise SanityError(f"INVALID: the quota program printed no {name}")
        return value
