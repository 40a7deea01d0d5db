"""The target survey's ReFrame test (``checks/components/survey.py``): the job holds the
entry's node fraction, one task per node; fsaccept's survey program
(``python -m fsaccept.suite.survey``) runs once, on the job's first node, in the test's
own directory on the target.  It places one file per brick and has each node write its
targets' files with fio, each as a job step of this job (``srun -N1 -n1 --exact -w
NODE``), round after round.  fio's JSON of each step is kept (``r<round>-<node>.json``):
the figures are read from them, by the live check and by the sign-off alike
(:mod:`fsaccept.benchmarks.survey.validity`)."""

from __future__ import annotations

import os
import shlex
import sys

from reframe.core.builtins import run_after, variable
from reframe.core.exceptions import SanityError
from reframe.core.logging import getlogger

from fsaccept.benchmarks.survey import command, parse, validity
from fsaccept.core import guards
from fsaccept.core.paths import REPO_ROOT
from fsaccept.rfm.ownprogram import OwnProgramTest

#: The survey's own directory, below the test's (``target_dir``).
SUBDIR = "survey"


class SurveyTest(OwnProgramTest):
    """Each storage target written alone from the clients; the slow one named."""

    #: The program's lines as printed: the sign-off parses and judges them again.
    survey_lines = variable(str, value="", loggable=True)
    #: Each target's write bandwidth, MiB/s (``{target: value}``).
    target_figures = variable(dict, value={}, loggable=True)
    #: The slow targets, in words ("; " between them).
    slow_targets_named = variable(str, value="", loggable=True)
    max_spread = variable(float, value=0.0, loggable=True)

    #: No slow target is a measurement.
    counts = OwnProgramTest.counts | {command.SLOW}

    valid_systems = ["+fio"]
    FIGURES = command.FIGURES

    @property
    def params(self) -> command.SurveyParameters:
        return command.parameters(self.reference_key, self.entry)

    def survey_dir(self) -> str:
        return os.path.join(self.target_dir, SUBDIR)

    @run_after("setup")
    def set_survey_command(self):
        self.max_spread = self.params.max_spread
        self.env_vars["PYTHONPATH"] = shlex.quote(str(REPO_ROOT))
        self.executable = shlex.quote(sys.executable)
        self.executable_opts = ["-m", "fsaccept.suite.survey", *map(shlex.quote,
                                command.program_options(self.params, self.survey_dir(), "."))]
        self.keep_files = ["r*-*.json"]

    def prepare_data_cmds(self) -> list[str]:
        return super().prepare_data_cmds() + [f'mkdir -- "$fsaccept_data/{SUBDIR}"']

    def deadlines_s(self) -> int:
        return command.deadline_s(self.params)

    def planned_volume(self) -> int:
        return guards.planned_volume(self.params.size * 64)

    def figure_name(self) -> str:
        return command.SLOW

    def threshold_references(self) -> dict[str, tuple]:
        return command.references(self.params)

    def survey_run(self) -> parse.SurveyRun:
        return self.parsed_run(parse.parse_survey, lambda text: [])

    def values(self):
        """Each target's figure, from its own fio report (cached as pairs: a test's
        attributes go into ReFrame's JSON report, whose keys must be strings)."""
        if not hasattr(self, "_values"):
            self._values = tuple(validity.measured(self.survey_run(), self.kept)[0].items())
        return dict(self._values)

    def record_run(self, run: parse.SurveyRun) -> None:
        self.job_info()
        self.record_version("survey", run.version)
        self.survey_lines = parse.program_lines(self._stdout_text())
        self.target_figures = {t.name: v for t, v in sorted(self.values().items())}
        named = validity.failures(self.values(), self.params.max_spread)
        self.slow_targets_named = "; ".join(named)
        if named:
            getlogger().warning(f"fsaccept: {self.display_name}: {self.slow_targets_named}")

    def benchmark_reasons(self) -> list[str]:
        return validity.invalid_reasons(self.survey_run(), self.kept, self.params,
                                        self.survey_dir())

    def figure(self, name: str) -> float:
        value = validity.figures(self.values(), self.params.max_spread).get(name)
        if value is None:  # sanity has already made this INVALID
            raise SanityError(f"INVALID: the survey measured no target ({name})")
        return value
