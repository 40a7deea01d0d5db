"""md-workbench command lines from a reference entry (``tests.md_workbench*``)."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Any

from fsaccept.benchmarks.catalogue import MISSING
from fsaccept.core.reference import REPEAT_KEYS
from fsaccept.core.units import parse_size


@dataclass(frozen=True)
class MdWorkbenchParameters:
    """One md-workbench entry of a reference file, typed (md-workbench's flag in brackets)."""

    name: str
    node_fraction: float
    ranks_per_node: int
    datasets: int = 10  #: [-D] data sets (directories) per rank
    precreate_per_set: int = 3000  #: [-P] objects created per data set before the benchmark
    objects_per_set: int = 1000  #: [-I] objects created, read, stat'd and deleted per set
    object_size: int = 3901  #: [-S] bytes per object (IO500's 3901)
    iterations: int = 1  #: [-R] benchmark phases
    offset: int | None = None  #: [-O] rank offset between writer and reader (default: ranks per node)
    stonewall_s: int = 0  #: [-w with -W] each iteration stops at this many seconds, wear-out
    verify: bool = True  #: [-X] verify the data read


def parameters(name: str, entry: dict[str, Any]) -> MdWorkbenchParameters:
    """The typed entry (sizes in bytes)."""
    plain = {k: v for k, v in entry.items() if k not in ("thresholds", *REPEAT_KEYS)}
    if "object_size" in plain:
        plain["object_size"] = parse_size(plain["object_size"])
    return MdWorkbenchParameters(name=name, **plain)


def md_workbench_options(p: MdWorkbenchParameters, directory: str) -> list[str]:
    """md-workbench's arguments (a list: every path one element).  The reader of an
    object is ``offset`` ranks away from its writer: with block placement and the
    default offset (ranks per node) it is on the next node, so no client cache answers."""
    opts = ["-D", str(p.datasets), "-P", str(p.precreate_per_set),
            "-I", str(p.objects_per_set), "-S", str(p.object_size), "-R", str(p.iterations),
            "-O", str(p.offset or p.ranks_per_node)]
    if p.stonewall_s:
        opts += ["-w", str(p.stonewall_s), "-W"]
    if p.verify:
        opts.append("-X")
    return opts + ["-o", directory, f"--run-info-file={directory}.status"]


def run_options(p: MdWorkbenchParameters, target_dir: str) -> list[str]:
    """md-workbench's arguments for a run of ``p`` in a test's ``target_dir`` (its objects
    in ``md-workbench``).  The live check builds its command with it; the sign-off holds
    the recorded one to it."""
    return md_workbench_options(p, posixpath.join(target_dir, "md-workbench"))


def contract_options(p: MdWorkbenchParameters, recorded: list[str]) -> list[str]:
    """:func:`run_options` in the directory of the ``recorded`` arguments' ``-o`` (the
    path a run alone decides; the last one)."""
    where = [recorded[i + 1] for i, arg in enumerate(recorded[:-1]) if arg == "-o"]
    return run_options(p, posixpath.dirname(where[-1]) if where else MISSING)


def planned_bytes(p: MdWorkbenchParameters, ranks: int) -> int:
    """The most data alive at once: every rank's precreated objects plus one
    iteration's new ones (each iteration deletes as many as it creates)."""
    return ranks * p.datasets * (p.precreate_per_set + p.objects_per_set) * p.object_size


def deadline_s(p: MdWorkbenchParameters) -> int:
    """Seconds the stonewalled iterations may take (0 without a stonewall)."""
    return p.stonewall_s * p.iterations
