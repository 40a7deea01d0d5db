"""The cross-node semantics check, declared once: its record and its catalogue of tests
(``checks/semantics/semantics.py``): fsaccept's own program (``checks/semantics/src/fsaccept_semantics.c``,
built by the check), one rank per node, each writer and its reader on different nodes."""

from __future__ import annotations

from fsaccept.benchmarks.catalogue import ACCEPTANCE, FIXTURE, Benchmark, TestSpec
from fsaccept.benchmarks.semantics import command, parse, validity

KEY = "semantics"

TESTS = (
    TestSpec(check="SemanticsProgram", role=FIXTURE, key=KEY, benchmark="semantics",
             descr="the cross-node semantics program, built for this environment",
             runs_job=False),
    TestSpec(check="CrossNodeSemantics", role=ACCEPTANCE, key=KEY, benchmark="semantics",
             descr="cross-node semantics: visibility, attributes, locks, append, rename, "
                   "unlink, create races, links, xattrs, namespace scale, root squash, "
                   "POSIX ACLs",
             tags=("semantics",), figures=tuple(parse.FIGURES),
             schema="semantics.schema.json",
             reduction_matters=False),
)

BENCHMARK = Benchmark(
    # fsaccept's own program: built by the check from checks/src/, no Spack package.
    name="semantics", binary=command.EXECUTABLE, spack_package="", version_name="semantics",
    figure_kinds=("semantics",), parser=parse.parse_semantics, tests=TESTS,
    entry_rules=command.entry_rules, reread_rules=validity.reread_reasons,
    built_by_check=True, placement=command.placement,
    # Opt-in: a reference without tests.semantics (one client serving every node) does
    # not load it, so its skip never makes a session INCOMPLETE.
    checks_dir="semantics")
