"""The target survey, declared once: its record and its catalogue of tests
(``checks/components/survey.py``): each storage target measured alone from the
clients, the slow one named with its server (docs/user/components.md)."""

from __future__ import annotations

from fsaccept.benchmarks.catalogue import ACCEPTANCE, Benchmark, TestSpec
from fsaccept.benchmarks.survey import command, parse

KEY = "target_survey"

TESTS = (
    TestSpec(check="TargetSurvey", role=ACCEPTANCE, key=KEY, benchmark="survey",
             descr="each storage target written alone from the clients; a target below "
                   "the spread of the median is slow, named with its server",
             tags=("components",), figures=tuple(command.FIGURES),
             schema="survey.schema.json",
             named_by={command.SLOW: "slow_targets_named"},
             # Its targets, each written alone: together, what they can take written.
             component="targets", ceiling_kinds=("write",),
             # fio's refill_buffers: the data it writes is never reducible.
             reduction_matters=False),
)

BENCHMARK = Benchmark(
    # fsaccept's own program (Python, run with the harness's interpreter), fio per target.
    name="survey", binary="fsaccept.suite.survey", spack_package="",
    version_name="survey", figure_kinds=("bandwidth",), parser=parse.parse_survey,
    tests=TESTS, built_by_check=True, placement=command.placement,
    # Opt-in: only a reference file with tests.target_survey loads it.
    checks_dir="components")
