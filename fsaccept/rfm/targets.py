"""Several file systems in one session: each check once per target of the reference
file's ``targets:`` (``docs/user/reference-file.md``).

A check in ``checks/`` carries :func:`on_targets` under ``@rfm.simple_test`` (a dataset
fixture carries it alone).  With a single ``target:`` it changes nothing: the class, its
names and its run report stay as they are.  With ``targets:`` it returns the class with
one ReFrame ``parameter()``, ``fs_target`` (``fsaccept.core.reference.TARGET_PARAMETER``),
whose values are the targets whose ``tests:`` have the check's key: ReFrame names each
test by its target (``IORWriteBandwidth %fs_target=scratch``) and logs it.  A read test
takes its target from its dataset fixture, which carries the parameter (ReFrame makes
one read per dataset: ``%dataset.fs_target=scratch``); it records it in a loggable
variable of the same name.  Each test then reads its own target's part of the file
(``AcceptanceTest.load_reference``).

The names come from the reference file of the system ReFrame is loading the checks for,
read once while the checks load (:func:`loading_reference`).
"""

from __future__ import annotations

import os
from functools import cache

import reframe.core.runtime as rt
from reframe.core.builtins import parameter, variable
from reframe.core.exceptions import ReframeFatalError
from reframe.core.meta import make_test

from fsaccept.benchmarks import registry
from fsaccept.core.reference import TARGET_PARAMETER
from fsaccept.suite import reference


def loading_reference() -> reference.Reference | None:
    """The reference file of the system ReFrame is loading the checks for (as the
    tests will read it: ``$FSACCEPT_REFERENCE``, else ``reference/<system>.yaml``);
    None when it cannot be read: the tests then refuse it at set-up, with its errors."""
    try:
        system = rt.runtime().system.name
    except ReframeFatalError:  # no runtime: a unit test imports the checks
        return None
    return _load(str(os.environ.get("FSACCEPT_REFERENCE")
                     or reference.reference_path(system)))


@cache
def _load(path: str) -> reference.Reference | None:
    # Once per file while the checks load (each check's class asks).
    try:
        return reference.load_reference(path)
    except (reference.ReferenceError, OSError):
        return None


def targets_of_check(name: str, ref: reference.Reference | None) -> tuple[str, ...]:
    """The targets a check (by class name) runs on: those whose tests have its key (all
    of them for a check without a key, or when none has it: set-up then says which entry
    is missing); () for a single ``target:``."""
    if ref is None or not ref.named_targets:
        return ()
    spec = registry.TESTS.get(name)
    having = tuple(t.name for t in ref.targets if spec is not None and spec.key in t.entries)
    return having or ref.target_names


def on_targets(cls: type) -> type:
    """``cls`` once per target of the loading reference file's ``targets:`` (itself,
    unchanged, with a single ``target:``): the ``fs_target`` parameter, or, for a read
    test (a ``dataset`` fixture), the variable its dataset's target is recorded in."""
    names = targets_of_check(cls.__name__, loading_reference())
    if not names:
        return cls
    reads = "dataset" in cls.fixture_space
    body = ({TARGET_PARAMETER: variable(str, value="", loggable=True)} if reads
            else {TARGET_PARAMETER: parameter(list(names))})
    return make_test(cls.__name__, (cls,), {"__doc__": cls.__doc__, **body},
                     module=cls.__module__)


def target_of_test(test) -> str:
    """The target a test runs on: its parameter's, a read test's its dataset's; "" for a
    single ``target:``."""
    if TARGET_PARAMETER in type(test).param_space:
        return getattr(test, TARGET_PARAMETER)
    dataset = getattr(test, "dataset", None)
    return target_of_test(dataset) if dataset is not None else ""
