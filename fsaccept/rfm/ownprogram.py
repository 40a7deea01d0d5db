"""The ReFrame half every check of a program of fsaccept's own shares, when that program
runs once, on the job's first node, and launches each measurement as a job step of its
own (``srun -N1 -n1 --exact -w NODE``): the target survey (:mod:`fsaccept.rfm.survey`)
and the network check (:mod:`fsaccept.rfm.network`).  A check gives its entry's typed
parameters (``params``) and its figures' units (``FIGURES``); the job's steps' reports,
kept in the stage directory, are read by name (:meth:`OwnProgramTest.kept`)."""

from __future__ import annotations

import os
from typing import Any, ClassVar

import reframe.utility.sanity as sn
from reframe.core.backends import getlauncher
from reframe.core.builtins import run_before

from fsaccept.rfm.benchmark import BenchmarkTest


class OwnProgramTest(BenchmarkTest):
    """A program of fsaccept's own, run once on the job's first node; its steps its own."""

    #: Each figure's unit (the benchmark's ``command.FIGURES``).
    FIGURES: ClassVar[dict[str, str]] = {}
    #: A kept report is read up to this many characters.
    MAX_REPORT: ClassVar[int] = 64 << 20

    # The nodes are checked in a step of their own: the program runs once, not per node.
    node_check_in_step = False

    def load_entry(self) -> None:
        self.entry = self.refdata.entry(self.reference_key, needed_by=self.display_name)
        self.take_placement()

    @property
    def params(self) -> Any:
        raise NotImplementedError

    @run_before("run")
    def run_once_on_the_first_node(self):
        # The program launches its own job steps: it is not one.
        self.job.launcher = getlauncher("local")()

    def kept(self, name: str) -> str | None:
        """A report the job kept in the stage directory, by its file name (None: not
        there)."""
        try:
            with open(os.path.join(self.stagedir, name), errors="replace") as fh:
                return fh.read(self.MAX_REPORT + 1)
        except OSError:
            return None

    @run_before("performance")
    def set_perf_variables(self):
        self.perf_variables = {
            name: sn.make_performance_function(self.figure, unit, name)
            for name, unit in self.FIGURES.items()}

    def figure(self, name: str) -> float:
        raise NotImplementedError
