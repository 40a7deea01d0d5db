"""mdtest command lines from a reference entry (``tests.mdtest_*``)."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fsaccept.benchmarks.catalogue import MISSING
from fsaccept.benchmarks.mdtest.parse import DEFAULT_MIN_PHASE_S, STONEWALL_FIGURE
from fsaccept.core import reference


@dataclass(frozen=True)
class MdtestParameters:
    """One mdtest entry of a reference file (``tests.mdtest_*``), typed."""

    name: str
    node_fraction: float
    ranks_per_node: int
    items_per_rank: int  #: ``-n``; with a stonewall, the most a rank may create
    thresholds: tuple[str, ...]  #: figures with a threshold
    iterations: int = 1  #: ``-i``
    stonewall_s: int | None = None  #: ``-W`` (create phase only)
    write_bytes: int = 0  #: ``-w``: bytes written to each file after it is created
    read_bytes: int = 0  #: ``-e``: bytes read from each file
    min_phase_s: float = DEFAULT_MIN_PHASE_S


def parameters(name: str, entry: dict[str, Any], path: Path | str = "") -> MdtestParameters:
    """Typed entry; rules the schema cannot express raise ``ReferenceError`` naming
    the file and the key. ``entry`` has already been validated by the schema."""
    key = f"{path}: tests.{name}" if path else f"tests.{name}"
    params = MdtestParameters(
        name=name, node_fraction=entry["node_fraction"],
        ranks_per_node=entry["ranks_per_node"], items_per_rank=entry["items_per_rank"],
        thresholds=tuple(entry.get("thresholds", {})),
        iterations=entry.get("iterations", 1), stonewall_s=entry.get("stonewall_s"),
        write_bytes=entry.get("write_bytes", 0), read_bytes=entry.get("read_bytes", 0),
        min_phase_s=entry.get("min_phase_s", DEFAULT_MIN_PHASE_S))
    if params.read_bytes > params.write_bytes:
        raise reference.ReferenceError(
            f"{key}.read_bytes: {params.read_bytes} is more than write_bytes "
            f"{params.write_bytes}: mdtest would fail to read every file")
    if STONEWALL_FIGURE in params.thresholds and not params.stonewall_s:
        raise reference.ReferenceError(
            f"{key}.thresholds.{STONEWALL_FIGURE}: needs stonewall_s (the create rate up "
            "to the stonewall exists only with one)")
    if params.stonewall_s and params.iterations > 1:
        raise reference.ReferenceError(
            f"{key}.iterations: mdtest 4.0.0 carries a stonewalled item count into the "
            "next iteration; use iterations: 1 with stonewall_s")
    return params


def planned_bytes(params: MdtestParameters, tasks: int) -> int:
    """Most data a run can write: every rank fills ``write_bytes`` into each of its
    ``items_per_rank`` files (with a stonewall, fewer files are usually created)."""
    return tasks * params.items_per_rank * params.write_bytes


def mdtest_options(params: MdtestParameters, target_dir: str, unique_dir: bool,
                   status_file: str | None = None) -> list[str]:
    """mdtest arguments for an acceptance run of ``params`` below ``target_dir``.

    ``-F`` files only (as the field's easy/hard runs), ``-P`` rate *and* time tables
    (phase times), ``-v`` per-iteration lines and stonewall item counts, ``-N 1`` stat
    and read the files of the next node's ranks, ``-u`` a directory per rank (easy).
    """
    opts = ["-F", "-P", "-v", "-N", "1", "-n", str(params.items_per_rank)]
    if params.iterations != 1:
        opts += ["-i", str(params.iterations)]
    if unique_dir:
        opts.append("-u")
    if params.write_bytes:
        opts += ["-w", str(params.write_bytes)]
    if params.read_bytes:
        opts += ["-e", str(params.read_bytes)]
    if params.stonewall_s:
        opts += ["-W", str(params.stonewall_s)]
        if status_file:
            opts += ["-x", status_file]
    return opts + ["-d", target_dir]


def run_options(params: MdtestParameters, unique_dir: bool, target_dir: str) -> list[str]:
    """mdtest's arguments for a run of ``params`` in a test's ``target_dir``: its files
    in ``mdtest``, its stonewall status in ``stonewall.status``.  The live check builds
    its command with it; the sign-off holds the recorded one to it."""
    return mdtest_options(params, posixpath.join(target_dir, "mdtest"), unique_dir,
                          status_file=posixpath.join(target_dir, "stonewall.status"))


def contract_options(params: MdtestParameters, unique_dir: bool,
                     recorded: list[str]) -> list[str]:
    """:func:`run_options` in the directory of the ``recorded`` arguments' ``-d`` (the
    path a run alone decides; the last ``-d``, as mdtest takes it)."""
    where = [recorded[i + 1] for i, arg in enumerate(recorded[:-1]) if arg == "-d"]
    return run_options(params, unique_dir,
                       posixpath.dirname(where[-1]) if where else MISSING)


def entry_errors(where: str, entry: dict[str, Any]) -> list[str]:
    """What the mdtest check refuses in its entry at set-up (:func:`parameters`), found
    before any run (``where`` is ``tests.<key>``)."""
    try:
        parameters(where.rsplit(".", 1)[-1], entry)
    except reference.ReferenceError as err:
        return [str(err)]
    return []
