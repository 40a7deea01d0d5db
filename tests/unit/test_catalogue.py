"""fsaccept's catalogue of tests: every check of ``checks/`` is in it and takes its
identity from it, and every figure a real run reported is one its test declares."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from fsaccept.benchmarks import registry
from fsaccept.benchmarks.catalogue import ACCEPTANCE, FIXTURE, PREFLIGHT, SCALING
from fsaccept.rfm.binaries import BenchmarkBinaries

REPO = Path(__file__).resolve().parents[2]
RUN_REPORTS = sorted((REPO / "tests/data/reframe").glob("*.json"))


def _check_classes() -> dict[str, type]:
    """Every ReFrame test class the files of ``checks/`` define (fixtures included)."""
    import importlib.util

    import reframe.core.pipeline as pipeline
    out = {}
    # The opt-in directories too (-c checks/degraded, checks/io500, checks/scaling,
    # checks/semantics): every folder under checks/ but the C sources'.
    for path in sorted((REPO / "checks").glob("*.py")) + sorted(
            (REPO / "checks").glob("*/*.py")):
        spec = importlib.util.spec_from_file_location(f"_checks_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # ReFrame asks inspect for each class's file
        spec.loader.exec_module(module)
        for name, obj in vars(module).items():
            if (isinstance(obj, type) and issubclass(obj, pipeline.RegressionTest)
                    and obj.__module__ == module.__name__):
                out[name] = obj
    return out


def test_every_check_is_in_the_catalogue_and_every_entry_is_a_check() -> None:
    classes = _check_classes()
    classes["BenchmarkBinaries"] = BenchmarkBinaries  # every benchmark test's fixture
    assert set(classes) == set(registry.TESTS), (
        f"checks without a record: {sorted(set(classes) - set(registry.TESTS))}; "
        f"records without a check: {sorted(set(registry.TESTS) - set(classes))}")
    for name, cls in classes.items():
        assert registry.spec_of_class(cls) is registry.TESTS[name]


def test_each_key_has_one_acceptance_test_and_each_fixture_serves_one() -> None:
    for spec in registry.TESTS.values():
        assert spec.role in (ACCEPTANCE, FIXTURE, PREFLIGHT, SCALING)
        if not spec.key:
            assert spec.role == PREFLIGHT or spec.check == "BenchmarkBinaries"
        else:
            # One healthy acceptance test per key, at most one degraded-mode one and at
            # most one filled re-run (each test that can run filled has one).
            for degraded in (False, True):
                users = [t for t in registry.tests_with_key(spec.key)
                         if t.role == ACCEPTANCE and t.degraded == degraded and not t.filled]
                assert len(users) == (0 if degraded and spec.key not in
                                      registry.degraded_keys() else 1), (spec.check, users)
            filled = [t for t in registry.tests_with_key(spec.key)
                      if t.role == ACCEPTANCE and t.filled]
            can = {t.key for t in registry.fill_checks().values()}
            assert len(filled) == (1 if spec.key in can else 0), (spec.check, filled)
            assert registry.owner_of(spec.key) is registry.BENCHMARKS[spec.benchmark]
        if spec.role == FIXTURE:
            assert not spec.figures and not spec.all_tags
        if spec.role == ACCEPTANCE:
            assert spec.figures and spec.schema


@pytest.mark.parametrize("path", RUN_REPORTS, ids=lambda p: p.name)
def test_every_figure_of_a_real_run_is_one_its_test_declares(path: Path) -> None:
    report = json.loads(path.read_text())
    for run in report["runs"]:
        for case in run["testcases"]:
            spec = registry.TESTS[registry.class_of_case(case["name"])]
            assert case.get("reference_key") in (spec.key, None), case["name"]
            assert set(case.get("tags") or []) == set(spec.all_tags), case["name"]
            assert bool(case["fixture"]) == (spec.role == FIXTURE), case["name"]
            for key in case.get("perfvalues") or {}:
                assert spec.reports(key.rsplit(":", 1)[-1]), (case["name"], key)


def test_every_check_logs_every_attribute_but_reframes_deprecated_alias() -> None:
    # Reading `variables` walks the call stack each time (fsaccept/rfm/logged.py); its
    # value is logged as env_vars.  Nothing else is dropped.
    import reframe as rfm

    from fsaccept.rfm.logged import DEPRECATED_ALIAS, Logged
    classes = dict(_check_classes(), BenchmarkBinaries=BenchmarkBinaries)
    for name, cls in classes.items():
        assert issubclass(cls, Logged), name
        logged = cls.loggable_attrs()
        assert logged == [a for a in type(cls).loggable_attrs(cls) if a[0] != DEPRECATED_ALIAS]
        assert ("env_vars", None) in logged and DEPRECATED_ALIAS not in dict(logged), name
    assert DEPRECATED_ALIAS in dict(rfm.RunOnlyRegressionTest.loggable_attrs())
