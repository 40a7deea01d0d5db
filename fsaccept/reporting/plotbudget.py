"""The plots a report draws, and their file names under ``plots/``.

A normal run draws them all. A run of more checks than
:data:`.sections.FAMILY_LIMIT` draws the first :data:`MAX_PLOTS`, and counts each one
left out (the tables show every figure). One :class:`PlotBudget` per report decides.
"""

from __future__ import annotations

import base64
import hashlib
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field

#: Plots drawn at most in a run of more checks than FAMILY_LIMIT (one per check family,
#: the first ones; the tables show every figure).  A normal run draws them all.
MAX_PLOTS = 30

#: Longest plot file name kept as it is (a file name has at most 255 bytes; a ReFrame
#: test name can be longer).
_PLOT_STEM_CHARS = 80
_PLAIN_STEM = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*[A-Za-z0-9_]")


@dataclass
class Plot:
    name: str  # file name under plots/
    title: str
    png: bytes

    @property
    def base64(self) -> str:
        return base64.b64encode(self.png).decode("ascii")


def plot_file(stem: str, key: str, used: set[str]) -> str:
    """``stem.png`` when ``stem`` is a short, plain file name not yet used in this report
    (case-insensitively: some file systems are); else its slug cut short and a hash of
    ``key`` (the full names): non-ASCII test names all slug to 'test-', a long one is too
    long for a file name, and two plots must never share (overwrite) one file."""
    name = stem
    if not (len(stem) <= _PLOT_STEM_CHARS and _PLAIN_STEM.fullmatch(stem)
            and stem.lower() not in used):
        slug = re.sub(r"[^a-z0-9]+", "-", stem.lower()).strip("-")[:_PLOT_STEM_CHARS]
        digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()
        name = f"{slug}-{digest[:12]}"
        if name.lower() in used:  # taken by a plain name: the whole hash
            name = f"{slug}-{digest}"
    used.add(name.lower())
    return name + ".png"


@dataclass
class PlotBudget:
    """The report's plots: ``drawing`` (False: none), at most ``limit`` of them, and how
    many were left out."""

    drawing: bool
    limit: float = math.inf
    plots: list[Plot] = field(default_factory=list)
    left_out: int = 0
    _names: set[str] = field(default_factory=set)

    def draw(self, stem: str, key: str, title: str, make: Callable[[], bytes | None], *,
             budgeted: bool = True) -> Plot | None:
        """The plot ``make`` draws, named after ``stem`` (``key``: its full names), or None:
        when not drawing, when nothing is drawn, or when the budget is spent (counted as
        left out). ``budgeted``: False for a plot drawn whatever the budget."""
        if not self.drawing:
            return None
        if budgeted and len(self.plots) >= self.limit:
            self.left_out += 1
            return None
        png = make()
        if not png:
            return None
        self.plots.append(Plot(plot_file(stem, key, self._names), title, png))
        return self.plots[-1]
