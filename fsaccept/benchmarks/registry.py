"""Every benchmark fsaccept runs, in one table: what reads its output, how its
binary is found and built, which reference keys it owns and their schema, and
what kinds of figure it reports.

The CLI (``fsaccept parse KIND``), provenance (which binaries a job records),
the reference schema (which ``tests:`` keys are allowed) and the version rules
read this table; adding a benchmark adds one entry here (see CONTRIBUTING.md).
Functions are named as ``"module:function"`` strings and imported when used,
so that this table imports nothing heavy.
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any


@dataclass(frozen=True)
class Benchmark:
    """One benchmark tool."""

    #: ``fsaccept parse <name>``; also its folder under ``fsaccept/benchmarks/``.
    name: str
    #: The executable a job runs (looked up on PATH or in the Spack view).
    binary: str
    #: The Spack package that builds it (mdtest and md-workbench come with IOR).
    spack_package: str
    #: Its name in ``data/tested_versions.yaml`` and ``data/known_bad_versions.yaml``
    #: (mdtest and md-workbench print IOR's version).
    version_name: str
    #: Figure kinds its output reports (what a known bug may affect).
    figure_kinds: tuple[str, ...]
    #: ``"module:function"``: its text output -> a parsed run with ``to_dict()``.
    parser: str
    #: ``"module:function"`` reading its JSON summary file, if it writes one.
    json_parser: str | None = None
    #: Reference keys it owns: an exact key or a ``^regex$`` -> a JSON Schema ``$ref``.
    reference_keys: dict[str, str] = field(default_factory=dict)
    #: ``"module:function"`` (path, key, entry) -> list of errors the schema cannot
    #: express (e.g. block size a multiple of the transfer size), or None.
    entry_rules: str | None = None
    #: ``"module:function"`` (path, key, entry, target fstype) -> list of errors: rules
    #: between an entry and the target (e.g. Lustre striping on another file system).
    target_rules: str | None = None
    #: ``"module:function"`` run -> (INVALID reasons, rules not applied): the live
    #: check's rules that a re-read output can be held to, or None (its parser's
    #: findings are all there is).
    reread_rules: str | None = None
    #: ``"module:function"`` (run, key, entry) -> (reasons, judged figure, rules not
    #: applied): a reference entry's rules for ``fsaccept parse --reference``.
    reference_rules: str | None = None
    #: Characters it cannot take in a path (character -> why): a target path holding
    #: one is refused (``fsaccept reference`` and every run, before any job).
    unsafe_path_chars: dict[str, str] = field(default_factory=dict)

    @property
    def schema_file(self) -> str:
        """Its reference-entry schema, a resource of the package."""
        return f"benchmarks/{self.name.replace('-', '_')}/schema.json"

    def parse(self, text: str, json_summary: bool = False) -> Any:
        spec = self.json_parser if json_summary else self.parser
        if spec is None:
            raise ValueError(f"{self.name} writes no JSON summary")
        return load(spec)(text)


def load(spec: str) -> Callable[..., Any]:
    """The function a ``"module:function"`` string names."""
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name)


BENCHMARKS: dict[str, Benchmark] = {b.name: b for b in (
    Benchmark(
        name="ior", binary="ior", spack_package="ior", version_name="ior",
        figure_kinds=("bandwidth", "iops"),
        parser="fsaccept.benchmarks.ior.parse:parse_ior",
        json_parser="fsaccept.benchmarks.ior.parse_json:parse_ior_json",
        reference_keys={
            "ior_write_bandwidth": "ior.schema.json#/$defs/bandwidth_test",
            "ior_read_bandwidth": "ior.schema.json#/$defs/read_bandwidth_test",
            "ior_random_write_iops": "ior.schema.json#/$defs/iops_test",
            "ior_random_read_iops": "ior.schema.json#/$defs/random_read_test",
            "ior_data_integrity": "ior.schema.json#/$defs/integrity_test",
            "ior_shared_write": "ior.schema.json#/$defs/shared_write_test",
            "ior_shared_read": "ior.schema.json#/$defs/shared_read_test",
        },
        entry_rules="fsaccept.benchmarks.ior.command:entry_errors",
        target_rules="fsaccept.benchmarks.ior.command:target_errors",
        reread_rules="fsaccept.benchmarks.ior.validity:reread_reasons",
        reference_rules="fsaccept.benchmarks.ior.validity:judge_against_reference",
        unsafe_path_chars={"@": "IOR reads '@' in -o as a separator between several files "
                                "(FILENAME_DELIMITER)"}),
    Benchmark(
        name="mdtest", binary="mdtest", spack_package="ior", version_name="ior",
        figure_kinds=("metadata",),
        parser="fsaccept.benchmarks.mdtest.parse:parse_mdtest",
        # The keys its checks read (checks/mdtest_metadata.py): mdtest_eazy is a typo.
        reference_keys={"mdtest_easy": "mdtest.schema.json",
                        "mdtest_hard": "mdtest.schema.json"},
        entry_rules="fsaccept.benchmarks.mdtest.command:entry_errors",
        unsafe_path_chars={"@": "mdtest reads '@' in -d as a separator between several "
                                "directories"}),
    Benchmark(
        # Its latencies are its own statistics, not IOR's Latency(s) column (which a
        # known IOR bug affects): its figures are metadata figures.
        name="md-workbench", binary="md-workbench", spack_package="ior", version_name="ior",
        figure_kinds=("metadata",),
        parser="fsaccept.benchmarks.md_workbench.parse:parse_md_workbench",
        reference_keys={"md_workbench": "md-workbench.schema.json",
                        "^md_workbench_[a-z0-9_]+$": "md-workbench.schema.json"},
        reread_rules="fsaccept.benchmarks.md_workbench.validity:reread_reasons"),
    Benchmark(
        # fio's report is JSON either way (its --output file, or stdout with messages).
        name="fio", binary="fio", spack_package="fio", version_name="fio",
        figure_kinds=("bandwidth", "iops", "latency"),
        parser="fsaccept.benchmarks.fio.parse:parse_fio",
        json_parser="fsaccept.benchmarks.fio.parse:parse_fio",
        # fio_<kind> for each kind of fio.command.KINDS (its entry rules say which).
        reference_keys={"^fio_[a-z0-9_]+$": "fio.schema.json"},
        entry_rules="fsaccept.benchmarks.fio.command:entry_errors",
        unsafe_path_chars={":": "fio reads ':' in directory= as a separator between "
                                "several directories"}),
)}


def binaries() -> tuple[str, ...]:
    """Every executable the checks may run (provenance records each)."""
    return tuple(dict.fromkeys(b.binary for b in BENCHMARKS.values()))


def spack_packages() -> tuple[str, ...]:
    """The Spack packages that build them."""
    return tuple(dict.fromkeys(b.spack_package for b in BENCHMARKS.values()))


@cache
def schemas() -> dict[str, dict[str, Any]]:
    """Each benchmark's reference-entry schema by its ``$id`` (e.g. ``ior.schema.json``)."""
    out = {}
    for bench in BENCHMARKS.values():
        schema = json.loads(resources.files("fsaccept").joinpath(bench.schema_file).read_text())
        out[schema["$id"]] = schema
    return out


def owner_of(key: str) -> Benchmark | None:
    """The benchmark a reference key ``tests.<key>`` belongs to."""
    for bench in BENCHMARKS.values():
        for pattern in bench.reference_keys:
            if (re.search(pattern, key) if pattern.startswith("^") else pattern == key):
                return bench
    return None
