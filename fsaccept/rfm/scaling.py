"""Scaling sweeps: an existing benchmark test measured at each point of one dimension.

A sweep's check (``checks/scaling/``) is its healthy test's class with one of these
plugins before it and one ReFrame ``parameter()``, named after the dimension (``nodes``,
``ranks``, ``transfer``; on Lustre ``stripe``, a stripe count x size), whose values are
the points of the reference's ``sweeps:`` section (:func:`points`): ReFrame puts the
value in the test's name (``%nodes=4``), its perflogs and its results database.  At
set-up the plugin puts the point into the test's entry
(:func:`fsaccept.core.scaling.point_entry`) or its placement, and skips a point beyond
what the partition allows, saying so (``fsaccept.core.scaling.BEYOND``).  The figure is
judged against the point's own threshold, if the section gives one, else not
by ReFrame: the sign-off judges the curve (:mod:`fsaccept.reporting.scaling`).

A read test's point is its dataset fixture's (the fixture carries the parameter, and
ReFrame makes one read per dataset: ``%dataset.nodes=4``).
"""

from __future__ import annotations


import reframe as rfm
from reframe.core.builtins import variable

from fsaccept.benchmarks import registry
from fsaccept.core import scaling
from fsaccept.core.pernode import OUTLIER_FIGURE
from fsaccept.core.reference import Threshold
from fsaccept.rfm.targets import loading_reference

#: The ReFrame parameter of each dimension (``ranks_per_node`` is a variable already).
PARAMETERS = {scaling.NODES: "nodes", scaling.RANKS: "ranks", scaling.TRANSFER: "transfer",
              scaling.STRIPE: "stripe"}


def points(check: str) -> list:
    """The points of a sweep's check (by its class name), from the reference's ``sweeps:``
    section or its defaults; sizes as people write them ('1MiB', '4x1MiB')."""
    dimension = registry.TESTS[check].attrs["sweep_dimension"]
    ref = loading_reference()
    values = (ref.sweeps if ref is not None else scaling.Sweeps()).points[dimension]
    return [v if dimension in (scaling.NODES, scaling.RANKS) else
            scaling.label(dimension, v) for v in values]


def swept_test(cls: type) -> type:
    """``rfm.simple_test`` for a sweep's check whose test the reference sweeps (all of
    them when it cannot be read: set-up then refuses it, with its errors); a check of a
    test it does not sweep stays unregistered, and ReFrame makes no test of it."""
    ref = loading_reference()
    spec = registry.TESTS[cls.__name__]
    if ref is not None and ref.named_targets:
        return cls  # several targets: no sweeps: (refused with targets:)
    if ref is not None and (spec.key not in ref.swept_tests(registry.scaling_keys())
                            or not scaling.applies(spec.attrs["sweep_dimension"],
                                                   ref.target_fstype)):
        return cls
    return rfm.simple_test(cls)


class SweepPoint(rfm.RegressionTestPlugin):
    """A test at one point of its sweep: goes before the benchmark test's class."""

    #: The dimension swept (the catalogue's) and this test's point, as the name has it.
    sweep_dimension = variable(str, value="", loggable=True)
    sweep_point = variable(str, value="", loggable=True)

    def point(self):
        """This test's point: nodes, ranks per node, bytes, or (stripe count, size)."""
        return scaling._number(self._point_value(), self.sweep_dimension)

    def _point_value(self):
        return getattr(self, PARAMETERS[self.sweep_dimension])

    def load_entry(self) -> None:
        # The entry at this point, read by everything after (the IOR and mdtest
        # parameters, the placement): the benchmark's own code, no copy of it.
        x = self.point()
        self.sweep_point = str(self._point_value())
        key = self.reference_key
        self.refdata = self.refdata.with_entries({
            **self.refdata.entries,
            key: scaling.point_entry(self.refdata.entry(key, self.display_name),
                                     self.sweep_dimension, x)})
        super().load_entry()

    def nodes_to_use(self, base: int, usable: list) -> int:
        fraction = super().nodes_to_use(base, usable)
        if self.sweep_dimension == scaling.RANKS:
            cpus = [scaling.node_cpus(getattr(n, "descr", "")) for n in usable]
            fewest = min((c for c in cpus if c), default=None)
            if fewest is not None and self.ranks_per_node > fewest:
                self.skip_because(f"{scaling.BEYOND} {self.ranks_per_node} ranks per node, "
                                  f"more than the {fewest} CPUs of a node")
        if self.sweep_dimension != scaling.NODES:
            return fraction
        needs = self.spec.attrs.get("min_nodes", 1) if self.spec else 1
        if self.point() < needs:
            self.skip_because(f"{scaling.BELOW} {self.point()} node, fewer than the "
                              f"{needs} this test needs")
        if self.point() > fraction:
            self.skip_because(f"{scaling.BEYOND} {self.point()} nodes, more than the "
                              f"test's node fraction {self.node_fraction:g} of {base} "
                              f"{self.fraction_of} nodes ({fraction})")
        return self.point()

    def threshold_references(self) -> dict[str, tuple]:
        """The point's own threshold (the sweep's), if any: the test's entry gives the
        thresholds of its full placement, which a point is not held to."""
        refs = {k: v for k, v in super().threshold_references().items()
                if k == OUTLIER_FIGURE}
        th = self.refdata.sweeps.threshold(self.reference_key, self.sweep_dimension,
                                           self.point())
        if th is not None:
            refs[self.spec.main_figure] = Threshold(th.value, th.unit,
                                                    th.tolerance).as_reframe_reference()
        return refs


class SweptRead(SweepPoint):
    """A read test whose point is its dataset fixture's."""

    def _point_value(self):
        return self.dataset._point_value()

