"""What a check is, taken from fsaccept's catalogue (``fsaccept.benchmarks.registry``).

A check in ``checks/`` is named by its class; its description, tags, reference key and
the attributes that follow from what it is (IOR's phase, fio's kind...) are declared once,
in its benchmark's ``spec.py``, and set here when ReFrame instantiates it, before any
other hook: ``-t`` selects by them, and the sign-off judges a re-read run report by the
same record.
"""

from __future__ import annotations

import reframe as rfm
from reframe.core.builtins import run_after

from fsaccept.benchmarks import registry
from fsaccept.benchmarks.catalogue import TestSpec


class CataloguedTest(rfm.RegressionTestPlugin):
    """A test whose identity comes from the catalogue."""

    @property
    def spec(self) -> TestSpec:
        spec = registry.spec_of_class(type(self))
        if spec is None:
            raise ValueError(
                f"{type(self).__name__} is not in fsaccept's catalogue: declare it in its "
                "benchmark's spec.py (see docs/dev/adding-a-check.md)")
        return spec

    @run_after("init")
    def take_catalogue_record(self):
        spec = self.spec
        self.descr = spec.descr
        self.tags = set(self.tags) | set(spec.all_tags)
        for name, value in spec.attrs.items():
            setattr(self, name, value)
