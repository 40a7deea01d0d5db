"""Per-system acceptance parameters: ``reference/<system>.yaml``.

A reference file holds, per test, the node fraction, ranks per node, sizes,
deadlines and the threshold.  It is validated against a JSON Schema
(``fsaccept/schemas/reference.schema.json``) when loaded; every error names
the file and the key, and nothing is submitted with a bad file.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from fsaccept import yamlfile
from referencing import Registry, Resource

from fsaccept.localcluster import REPO_ROOT

REFERENCE_DIR = REPO_ROOT / "reference"
#: Buffered reads of less data per node than this × node memory may be served from cache.
DEFAULT_MIN_CACHE_RATIO = 1.5
DEFAULT_MAX_FILL_FRACTION = 0.5
DEFAULT_TIME_LIMIT_MARGIN_MIN = 10

_UNITS = {"": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}
_SIZE = re.compile(r"^([1-9][0-9]*)(KiB|MiB|GiB|TiB)?$")

# Bounds on what a reference file may hold: its cost to read is bounded whatever it
# holds, and a typo cannot reach a benchmark as an absurd size.
#: Largest single size (``*_size``): 1 TiB; larger is a typo (IOR's -t and -b, fio's size).
MAX_SIZE_BYTES = 2**40
#: Largest planned data of one IOR rank, block_size x segments: 1 PiB.
MAX_BYTES_PER_RANK = 2**50


class ReferenceError(ValueError):
    """A bad reference file; the message names the file and the key."""


#: The largest size a reference file may give for one transfer, block or file.
MAX_SIZE = 2**50  # 1 PiB


def parse_size(text: str | int) -> int:
    """Bytes in a binary size such as ``4KiB``, ``1MiB``, ``16GiB`` or ``4096``."""
    if isinstance(text, int) and not isinstance(text, bool) and 0 < text <= MAX_SIZE:
        return text
    match = _SIZE.match(str(text))
    if not match:
        raise ValueError(f"{text!r} is not a binary size; use bytes or KiB, MiB, GiB, TiB "
                         "(IOR sizes are powers of 2: 1MB would be ambiguous)")
    nbytes = int(match.group(1)) * _UNITS[match.group(2) or ""]
    if not 0 < nbytes <= MAX_SIZE:
        raise ValueError(f"{text!r} is not a sensible size for one transfer, block or file "
                         f"(1 byte to {format_size(MAX_SIZE)})")
    return nbytes


def format_size(nbytes: int) -> str:
    """The largest exact binary unit: 1048576 → '1MiB'."""
    for unit in ("TiB", "GiB", "MiB", "KiB"):
        if nbytes % _UNITS[unit] == 0:
            return f"{nbytes // _UNITS[unit]}{unit}"
    return str(nbytes)


@dataclass(frozen=True)
class Threshold:
    value: float
    unit: str
    tolerance: float = 0.0

    def as_reframe_reference(self) -> tuple[float, float, None, str]:
        """(value, lower, upper, unit): a shortfall beyond the tolerance fails;
        there is no upper bound (a figure above its ceiling is judged elsewhere)."""
        return (self.value, -self.tolerance, None, self.unit)


@dataclass(frozen=True)
class TestParameters:
    """One test's entry under ``tests:`` (sizes in bytes, times in seconds)."""

    name: str
    node_fraction: float
    ranks_per_node: int
    transfer_size: int
    block_size: int
    deadline_s: int
    threshold: Threshold
    segments: int = 1
    direct_io: bool = False
    min_cache_ratio: float = DEFAULT_MIN_CACHE_RATIO
    generation_deadline_s: int | None = None
    generation_transfer_size: int | None = None


@dataclass(frozen=True)
class Reference:
    """A validated reference file.  ``entries`` holds every test's entry as
    written (validated by its kind's schema); ``tests`` the IOR entries typed."""

    path: Path
    system: str
    target_path: Path
    target_fstype: str
    #: Every ReFrame system the file is for (``system:`` a name or a list).
    systems: tuple[str, ...] = ()
    #: The mount point and source the target must be on, when the file pins them.
    target_mount_point: str | None = None
    target_source: str | None = None
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)
    tests: dict[str, TestParameters] = field(default_factory=dict)
    description: str = ""
    #: Refuse a test whose planned data exceeds this share of the target's free space.
    max_fill_fraction: float = DEFAULT_MAX_FILL_FRACTION
    #: What the file system can absorb at most (MiB/s); bounds deadline-bound phases.
    max_bandwidth_mib_s: float | None = None
    #: Minutes added to a job's deadlines for its Slurm time limit.
    time_limit_margin_min: int = DEFAULT_TIME_LIMIT_MARGIN_MIN

    def check_system(self, system: str) -> None:
        """Refuse to use this file on another ReFrame system than it is written for."""
        if system not in self.systems:
            raise ReferenceError(f"{self.path}: system: written for {', '.join(self.systems)}, "
                                 f"not for the ReFrame system {system!r}: use "
                                 f"reference/{system}.yaml or add {system!r} to system:")

    def entry(self, name: str, needed_by: str = "") -> dict[str, Any]:
        """The raw entry ``tests.<name>``; a clear error when the file lacks it."""
        try:
            return self.entries[name]
        except KeyError:
            by = f" (needed by {needed_by})" if needed_by else ""
            have = ", ".join(sorted(self.entries)) or "no tests"
            raise ReferenceError(f"{self.path}: tests.{name}: missing{by}; "
                                 f"the file has: {have}") from None

    def test(self, name: str, needed_by: str = "") -> TestParameters:
        """The typed IOR entry ``tests.<name>``."""
        self.entry(name, needed_by)
        return self.tests[name]

    def thresholds(self, name: str) -> dict[str, Threshold]:
        """Figure name → threshold of an entry: ``thresholds:`` (a map) as is,
        or a single ``threshold:`` under the key ``""`` (the test's main figure)."""
        entry = self.entry(name)
        if "thresholds" in entry:
            return {k: Threshold(**v) for k, v in entry["thresholds"].items()}
        return {"": Threshold(**entry["threshold"])} if "threshold" in entry else {}


@cache
def _validator() -> Any:
    """The reference schema; each test kind's entry schema is a file of its own
    (``schemas/<kind>.schema.json``) that the main one refers to by name."""
    schemas = resources.files("fsaccept").joinpath("schemas")
    registry: Registry = Registry()
    for res in schemas.iterdir():
        if res.name.endswith(".schema.json"):
            registry = registry.with_resource(
                res.name, Resource.from_contents(json.loads(res.read_text())))
    main = json.loads(schemas.joinpath("reference.schema.json").read_text())
    return _StrictValidator(main, registry=registry)


def _is_integer(_checker: Any, instance: Any) -> bool:
    # JSON Schema counts 4096.0 as an integer; IOR would receive "-s 4096.0".
    return isinstance(instance, int) and not isinstance(instance, bool)


_StrictValidator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_integer))


def _key_path(error: jsonschema.ValidationError) -> str:
    return ".".join(str(p) for p in error.absolute_path) or "(top level)"


def _message(error: jsonschema.ValidationError) -> str:
    last = str(error.absolute_path[-1]) if error.absolute_path else ""
    if error.validator == "pattern" and last.endswith("_size"):
        return parse_size_error(error.instance)
    if error.validator == "type" and isinstance(error.instance, float) \
            and "integer" in str(error.validator_value) and error.instance.is_integer():
        return f"{error.instance!r} is not a whole number: write {int(error.instance)}"
    if error.validator == "const":
        return f"{error.instance!r} is not allowed here: use {error.validator_value!r}"
    if error.validator in ("additionalProperties", "unevaluatedProperties") \
            and isinstance(error.instance, dict):
        known = _known_keys(error.schema)
        unknown = [k for k in error.instance if k not in known
                   and not any(re.search(p, k) for p in error.schema.get("patternProperties", {}))]
        allowed = ", ".join(sorted(known) + sorted(
            p.strip("^$").replace("[a-z0-9_]+", "*")
            for p in error.schema.get("patternProperties", {})))
        return f"unknown key(s) {', '.join(map(repr, unknown))}; allowed: {allowed}"
    return error.message


def _known_keys(schema: dict[str, Any]) -> set[str]:
    keys = set(schema.get("properties", {}))
    for part in schema.get("allOf", []):
        keys |= _known_keys(_validator().schema["$defs"][part["$ref"].rsplit("/", 1)[1]]) \
            if "$ref" in part else _known_keys(part)
    return keys


def parse_size_error(value: Any) -> str:
    try:
        parse_size(value)
    except ValueError as err:
        return str(err)
    return f"{value!r} is not a valid size"


def validation_errors(data: Any) -> list[str]:
    """Every schema violation as 'key.path: message', sorted by key; values no schema
    refuses (NaN, infinities, keys that are not strings, absurd sizes) first."""
    value_errors = _value_errors(data)
    if value_errors:
        return value_errors
    return _schema_errors(data) or _size_errors(data)


def _value_errors(data: Any, path: str = "") -> list[str]:
    """NaN and infinities (every JSON Schema bound is false for NaN, so it would pass),
    and mapping keys that are not strings (``1:``, ``yes:``)."""
    where = path or "(top level)"
    if isinstance(data, float) and not math.isfinite(data):
        return [f"{where}: {data!r} is not a finite number"]
    errors = []
    if isinstance(data, dict):
        for key, value in data.items():
            if not isinstance(key, str):
                errors.append(f"{where}: key {key!r} is a {type(key).__name__}, not a name "
                              "(quote it)")
                continue
            errors += _value_errors(value, f"{path}.{key}" if path else key)
    elif isinstance(data, list):
        for i, value in enumerate(data):
            errors += _value_errors(value, f"{where}[{i}]")
    return errors


def _size_errors(data: dict[str, Any]) -> list[str]:
    """Sizes beyond MAX_SIZE_BYTES (the schema checks their spelling)."""
    errors = []
    sections = [("tests", data.get("tests") or {}),
                ("nightly.tests", (data.get("nightly") or {}).get("tests") or {})]
    for prefix, tests in sections:
        for name, entry in tests.items():
            for key, value in (entry.items() if isinstance(entry, dict) else ()):
                if not key.endswith("_size"):
                    continue
                try:
                    nbytes = parse_size(value)
                except ValueError:
                    continue  # the merged nightly entry is validated again
                if nbytes > MAX_SIZE_BYTES:
                    errors.append(f"{prefix}.{name}.{key}: {value!r} is more than "
                                  f"{format_size(MAX_SIZE_BYTES)}, the largest size allowed")
    return errors


def _schema_errors(data: Any) -> list[str]:
    errors = sorted(_validator().iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))
    # An enum error beside a const error on the same key says the same thing less well.
    const_paths = {_key_path(e) for e in errors if e.validator == "const"}
    errors = [e for e in errors if not (e.validator == "enum" and _key_path(e) in const_paths)]
    return [f"{_key_path(e)}: {_message(e)}" for e in errors]


def read_yaml(path: Path | str) -> Any:
    """The YAML document of a reference file, read strictly (see ``fsaccept.yamlfile``);
    ReferenceError naming the file (and the key or line) otherwise."""
    path = Path(path)
    try:
        return yamlfile.load(path)
    except OSError as err:
        raise ReferenceError(f"{path}: cannot read reference file: {err.strerror}") from None
    except yamlfile.StrictYAMLError as err:
        raise ReferenceError(str(err)) from None


def load_reference(path: Path | str) -> Reference:
    """Read and validate a reference file; raises ReferenceError naming file and keys."""
    path = Path(path)
    data = read_yaml(path)
    errors = validation_errors(data)
    if errors:
        raise ReferenceError(f"{path}: " + f"\n{path}: ".join(errors))
    tests = {}
    for name, entry in data["tests"].items():
        if not name.startswith("ior_"):
            continue
        sizes = {}
        for key, value in entry.items():
            if key.endswith("_size"):
                try:
                    sizes[key] = parse_size(value)
                except ValueError as err:
                    raise ReferenceError(f"{path}: tests.{name}.{key}: {err}") from None
        plain = {k: v for k, v in entry.items() if not k.endswith("_size") and k != "threshold"}
        tests[name] = TestParameters(name=name, threshold=Threshold(**entry["threshold"]),
                                     **sizes, **plain)
        _check_consistency(path, tests[name])
    systems = data["system"] if isinstance(data["system"], list) else [data["system"]]
    return Reference(path=path, system=systems[0], systems=tuple(systems),
                     description=data.get("description", ""),
                     target_path=Path(data["target"]["path"]),
                     target_mount_point=data["target"].get("mount_point"),
                     target_source=data["target"].get("source"),
                     target_fstype=data["target"]["fstype"], entries=data["tests"],
                     tests=tests,
                     max_fill_fraction=data["target"].get("max_fill_fraction",
                                                          DEFAULT_MAX_FILL_FRACTION),
                     max_bandwidth_mib_s=data["target"].get("max_bandwidth_mib_s"),
                     time_limit_margin_min=data.get("time_limit_margin_min",
                                                    DEFAULT_TIME_LIMIT_MARGIN_MIN))


def _check_consistency(path: Path, t: TestParameters) -> None:
    """Rules the schema cannot express (IOR would refuse these at run time)."""
    key = f"{path}: tests.{t.name}"
    if t.block_size % t.transfer_size:
        raise ReferenceError(f"{key}.block_size: {format_size(t.block_size)} is not a multiple "
                             f"of transfer_size {format_size(t.transfer_size)}")
    if t.name.startswith("ior_random") and t.block_size <= t.transfer_size:
        raise ReferenceError(f"{key}.block_size: random offsets need block_size > "
                             f"transfer_size (IOR refuses -z with -b = -t)")
    if t.block_size * t.segments > MAX_BYTES_PER_RANK:
        raise ReferenceError(f"{key}.segments: block_size x segments = "
                             f"{format_size(t.block_size * t.segments)} per rank is more than "
                             f"{format_size(MAX_BYTES_PER_RANK)}, the most allowed")
    gen = t.generation_transfer_size
    if gen is not None and t.block_size % gen:
        raise ReferenceError(f"{key}.block_size: {format_size(t.block_size)} is not a multiple "
                             f"of generation_transfer_size {format_size(gen)}")


def reference_path(system: str, directory: Path = REFERENCE_DIR) -> Path:
    return directory / f"{system}.yaml"
