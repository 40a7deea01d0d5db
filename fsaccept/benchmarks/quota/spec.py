"""The quota check, declared once: its record and its catalogue of tests
(``checks/quota/quota.py``): a quota the site's own commands set on the test's directory
(``extras.quota``), written past on one node, and the usage the file system reports."""

from __future__ import annotations

from fsaccept.benchmarks.catalogue import ACCEPTANCE, Benchmark, TestSpec
from fsaccept.benchmarks.quota import command, parse, validity

KEY = "quota"

TESTS = (
    TestSpec(check="QuotaEnforcement", role=ACCEPTANCE, key=KEY, benchmark="quota",
             descr="quota: EDQUOT within the slack of a quota the site's command sets, "
                   "and the usage reported following the data",
             tags=("semantics", "quota"), figures=tuple(command.FIGURES),
             schema="quota.schema.json",
             # Random data (os.urandom): a quota counts what a user wrote.
             reduction_matters=False),
)

BENCHMARK = Benchmark(
    # fsaccept's own program (Python, run with the harness's interpreter on the node).
    name="quota", binary="fsaccept.benchmarks.quota.probe", spack_package="",
    version_name="quota", figure_kinds=("quota",), parser=parse.parse_quota, tests=TESTS,
    entry_rules=command.entry_rules, reread_rules=validity.reread_reasons,
    built_by_check=True, placement=command.placement,
    # Opt-in: only a reference file that promises a quota (tests.quota) loads it.
    checks_dir="quota")
