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
    def spec(self) -> TestSpec | None:
        """Its record; None for a check the catalogue does not know (a site's own, or a
        test's): it runs as its class declares it, and the sign-off does not accept it
        until it has a record in its benchmark's ``spec.py``."""
        return registry.spec_of_class(type(self))

    @run_after("init")
    def take_catalogue_record(self):
        """Its description, tags and attributes from its catalogue record (``TestSpec``)."""
        spec = self.spec
        if spec is None:
            return
        self.descr = spec.descr
        self.tags = set(self.tags) | set(spec.all_tags)
        for name, value in spec.attrs.items():
            setattr(self, name, value)
