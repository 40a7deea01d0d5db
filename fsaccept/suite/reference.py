"""Reading and validating a reference file, ``reference/<system>.yaml``.

(Over 650 lines, one concept: one file read from its bytes to the typed reference, and
every rule that names one of its keys.)

It is validated against a JSON Schema (``reference.schema.json`` beside this module, with
each benchmark's ``schema.json``) and each benchmark's own entry rules (the registry) when
loaded; every error names the file and the key, and nothing is submitted with a bad file.
The file, once loaded, is a :class:`fsaccept.core.reference.Reference`.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import posixpath
import re
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fsaccept.benchmarks import registry
from fsaccept.core import degraded, fill, guards, mountopts, scaling, yamlfile
from fsaccept.core.paths import REFERENCE_DIR  # noqa: F401 (re-exported)
# The data model, re-exported: a caller that loads a file has its types in one import.
from fsaccept.core.reference import (DEFAULT_MAX_FILL_FRACTION,  # noqa: F401
                                     DEFAULT_TIME_LIMIT_MARGIN_MIN, MAX_SIZE_BYTES,
                                     TARGET_NAME, Reference, ReferenceError, Target,
                                     Threshold, entry_thresholds, reference_path,
                                     targets_of)
from fsaccept.core.units import format_size, parse_size

if TYPE_CHECKING:
    import jsonschema


#: A scenario's name under ``degraded.scenarios`` (the fault's own rule).
_SCENARIO_NAME = f"^{degraded.SCENARIO_NAME.pattern}$"


@cache
def _schemas() -> dict[str, dict[str, Any]]:
    """The reference schema (this folder's ``reference.schema.json``) with the keys of
    ``tests:`` each benchmark owns, and every benchmark's entry schema, by ``$id``."""
    main = json.loads(resources.files("fsaccept").joinpath("suite/reference.schema.json")
                      .read_text())
    tests = main["properties"]["tests"]
    for bench in registry.BENCHMARKS.values():
        for key, ref in bench.reference_keys.items():
            where = "patternProperties" if key.startswith("^") else "properties"
            tests[where][key] = {"$ref": ref}
    # One of several targets: the keys of a single target and its tests, composed.
    target = main["$defs"]["target"]
    main["$defs"]["named_target"] = {
        **target, "required": [*target["required"], "tests"],
        "properties": {**target["properties"], "tests": {"$ref": "#/properties/tests"}}}
    main["properties"]["targets"]["propertyNames"] = {"pattern": TARGET_NAME}
    main["properties"]["degraded"]["properties"]["scenarios"]["propertyNames"] = {
        "pattern": _SCENARIO_NAME}
    return {"reference.schema.json": main, **registry.schemas()}


@cache
def _validator() -> Any:
    """A validator of whole reference files; benchmark schemas are found by name."""
    # Imported here: jsonschema is heavy, and re-reading a benchmark's log (fsaccept
    # parse) needs this module's types but no validation.
    import jsonschema
    from referencing import Registry, Resource

    registry = Registry().with_resources(
        (name, Resource.from_contents(schema)) for name, schema in _schemas().items())
    strict = jsonschema.validators.extend(
        jsonschema.Draft202012Validator,
        type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine("integer",
                                                                           _is_integer))
    return strict(_schemas()["reference.schema.json"], registry=registry)


def _is_integer(_checker: Any, instance: Any) -> bool:
    # JSON Schema counts 4096.0 as an integer; IOR would receive "-s 4096.0".
    return isinstance(instance, int) and not isinstance(instance, bool)


def _key_path(error: jsonschema.ValidationError) -> str:
    """``target.mount_options.required[1]``: keys joined by dots, list items indexed."""
    out = ""
    for part in error.absolute_path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}" if out else str(part)
    return out or "(top level)"


def _message(error: jsonschema.ValidationError) -> str:
    last = str(error.absolute_path[-1]) if error.absolute_path else ""
    parent = str(error.absolute_path[-2]) if len(error.absolute_path) > 1 else ""
    if error.validator == "pattern" and (last.endswith("_size") or last == "size"
                                         or parent.endswith("_sizes")):
        return parse_size_error(error.instance)
    if error.validator == "type" and isinstance(error.instance, float) \
            and "integer" in str(error.validator_value) and error.instance.is_integer():
        return f"{error.instance!r} is not a whole number: write {int(error.instance)}"
    if error.validator == "pattern" and error.validator_value == _SCENARIO_NAME:
        return degraded.scenario_name_problem(error.instance)
    if error.validator == "propertyNames" or (
            error.validator == "pattern" and error.validator_value == TARGET_NAME):
        return (f"target name {error.instance!r} is not an identifier (lower-case "
                "letters, digits and _, a letter first, at most 32)")
    if error.validator == "pattern" and error.schema is _schemas()[
            "reference.schema.json"]["$defs"]["mount_option"]:
        return (f"{error.instance!r} is not a mount option: a name (letters, digits, "
                "_ . + -) and, optionally, =value (letters, digits, _ . : / + @ -); no "
                "comma, blank, quote or shell character")
    if error.validator == "maximum" and parent == "fill" and last in ("fraction",
                                                                     "inode_fraction"):
        return (f"{error.instance!r} is above {error.validator_value}: fsaccept never fills "
                f"a file system beyond {error.validator_value:.0%}, whatever is asked")
    if error.validator == "const":
        return f"{error.instance!r} is not allowed here: use {error.validator_value!r}"
    if error.validator in ("additionalProperties", "unevaluatedProperties") \
            and isinstance(error.instance, dict):
        known = _known_keys(error.schema)
        unknown = _unknown_keys(error)
        allowed = ", ".join(sorted(known) + sorted(
            p.strip("^$").replace("[a-z0-9_]+", "*")
            for p in error.schema.get("patternProperties", {})))
        return f"unknown key(s) {', '.join(map(repr, unknown))}; allowed: {allowed}"
    return error.message


def _unknown_keys(error: jsonschema.ValidationError) -> list[str]:
    """The keys of an additionalProperties or unevaluatedProperties error's mapping that
    its schema does not know."""
    known = _known_keys(error.schema)
    return [k for k in error.instance if k not in known
            and not any(re.search(p, k) for p in error.schema.get("patternProperties", {}))]


def _known_keys(schema: dict[str, Any]) -> set[str]:
    keys = set(schema.get("properties", {}))
    for part in schema.get("allOf", []):
        keys |= _known_keys(_resolve(part["$ref"]) if "$ref" in part else part)
    return keys


def _resolve(ref: str) -> dict[str, Any]:
    """The schema a ``name.schema.json#/$defs/x`` reference names (``#/...``: in the
    reference schema)."""
    document, _, pointer = ref.partition("#")
    node = _schemas()[document or "reference.schema.json"]
    for part in pointer.strip("/").split("/") if pointer else []:
        node = node[part]
    return node


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
    named = data.get("targets") if isinstance(data.get("targets"), dict) else {}
    sections = [("tests", data.get("tests") or {}),
                *((f"targets.{n}.tests", (t or {}).get("tests") or {})
                  for n, t in named.items() if isinstance(t, dict)),
                ("nightly.tests", (data.get("nightly") or {}).get("tests") or {})]
    for prefix, tests in sections:
        for name, entry in tests.items():
            for key, value in (entry.items() if isinstance(entry, dict) else ()):
                if not key.endswith("_size"):
                    continue
                try:
                    nbytes = parse_size(value)
                except ValueError as err:
                    errors.append(f"{prefix}.{name}.{key}: {err}")
                    continue
                if nbytes > MAX_SIZE_BYTES:
                    errors.append(f"{prefix}.{name}.{key}: {value!r} is more than "
                                  f"{format_size(MAX_SIZE_BYTES)}, the largest size allowed")
    return errors


def _schema_errors(data: Any) -> list[str]:
    errors = sorted(_validator().iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))
    # An enum error beside a const error on the same key says the same thing less well.
    const_paths = {_key_path(e) for e in errors if e.validator == "const"}
    errors = [e for e in errors if not (e.validator == "enum" and _key_path(e) in const_paths)]
    # unevaluatedProperties beside another error of the same entry names no unknown key
    # (a key its allOf part refused counts as not evaluated): the other error says it.
    errors = [e for e in errors if not (
        e.validator == "unevaluatedProperties" and isinstance(e.instance, dict)
        and not _unknown_keys(e) and len(errors) > 1)]
    # target: or tests: beside targets: (the schema's ``false``, which names no key).
    refused = any(e.validator is None and e.schema is False for e in errors)
    beside = [f"{key}: not allowed beside targets: (each target's keys and tests go under "
              "targets.<name>)" for key in ("target", "tests") if refused and key in data]
    return beside + [f"{_key_path(e)}: {_message(e)}" for e in errors
                     if not (e.validator is None and e.schema is False)]


def read_yaml(path: Path | str) -> Any:
    """The YAML document of a reference file, read strictly (see ``fsaccept.core.yamlfile``);
    ReferenceError naming the file (and the key or line) otherwise."""
    return _parse(_read(Path(path)), Path(path))


def _read(path: Path) -> bytes:
    try:
        return yamlfile.read(path)  # bounded: a FIFO, /dev/zero or 1 GB file is refused
    except yamlfile.StrictYAMLError as err:
        raise ReferenceError(str(err)) from None


def _parse(raw: bytes, path: Path) -> Any:
    try:
        return yamlfile.parse(raw, path)
    except yamlfile.StrictYAMLError as err:
        raise ReferenceError(str(err)) from None


#: Reference files read and found valid in this process, by path and SHA-256 of their
#: bytes: every test of a session loads the same file (~50 ms each to parse and validate).
_VALID: dict[tuple[str, str], Reference] = {}


def load_reference(path: Path | str, raw: bytes | None = None) -> Reference:
    """Read and validate a reference file; raises ReferenceError naming file and keys.
    Everything a run refuses before it submits a job and that the file alone decides
    is refused here (``fsaccept reference FILE`` says "valid" only then): the schemas,
    each benchmark's entry rules, the target path's text, the nightly entries.  The
    Reference's ``sha256`` is that of the very bytes validated; the same bytes are
    validated once per process, and each caller gets its own copy.  ``raw``: the file's
    bytes as the caller already read them (the sign-off, which digests the same bytes),
    instead of reading ``path``."""
    path = Path(path)
    raw = _read(path) if raw is None else raw
    key = (str(path), hashlib.sha256(raw).hexdigest())
    if key not in _VALID:
        _VALID[key] = _validated(path, raw, key[1])
    return copy.deepcopy(_VALID[key])


def _validated(path: Path, raw: bytes, sha256: str) -> Reference:
    data = _parse(raw, path)
    errors = validation_errors(data)
    if errors:
        raise ReferenceError(f"{path}: " + f"\n{path}: ".join(errors))
    targets = targets_of(data)
    errors = []
    for target in targets:
        errors += _entry_rule_errors(target)
        errors += _target_errors(target, _section(data, target))
    errors += _same_path_errors(targets) + _one_fs_errors(targets) + _path_errors(data)
    errors += _nightly_errors(data, errors) + _several_errors(data)
    errors += _degraded_errors(data) + _sweeps_errors(data) + _fill_errors(data)
    if errors:
        raise ReferenceError(f"{path}: " + f"\n{path}: ".join(errors))
    systems = data["system"] if isinstance(data["system"], list) else [data["system"]]
    return Reference(path=path, system=systems[0], systems=tuple(systems),
                     description=data.get("description", ""), targets=tuple(targets),
                     target_name="" if "target" in data else None,
                     time_limit_margin_min=data.get("time_limit_margin_min",
                                                    DEFAULT_TIME_LIMIT_MARGIN_MIN),
                     node_rounding=data.get("node_rounding", "up"),
                     drop_caches=data.get("drop_caches"), data=data, sha256=sha256)


def _same_path_errors(targets: list[Target]) -> list[str]:
    """Two targets with one path: a slip of copying (each file system has its own)."""
    first: dict[str, Target] = {}
    errors = []
    for target in targets:
        path = posixpath.normpath(str(target.path))
        if path in first:
            errors.append(f"{target.where}.path: {str(target.path)!r} is "
                          f"{first[path].where}.path too: each target is a file system "
                          "of its own")
        first.setdefault(path, target)
    return errors


def _one_fs_errors(targets: list[Target]) -> list[str]:
    """Two targets that are one file system: the same pinned mount point (one mount point
    holds one mount, whatever its path below), or one inside the other's ``fsaccept``
    directory, where the other's tests write.  A test of one would sign off the other."""
    errors = []
    for i, b in enumerate(targets):
        for a in targets[:i]:
            if posixpath.normpath(str(a.path)) == posixpath.normpath(str(b.path)):
                continue  # said by _same_path_errors
            if a.mount_point and a.mount_point == b.mount_point:
                source = f" and source {b.source!r}" if b.source and b.source == a.source \
                    else ""
                errors.append(f"{b.where}: the mount point {b.mount_point!r}{source} of "
                              f"{a.where} too: two paths on one mount are one file system, "
                              "and a test of one would sign off the other")
            for inner, outer in ((b, a), (a, b)):
                if guards.path_within(str(inner.path), str(outer.path / "fsaccept")):
                    errors.append(f"{inner.where}.path: {str(inner.path)!r} is inside "
                                  f"{outer.where}'s data directory {str(outer.path / 'fsaccept')!r}, "
                                  "where its tests write: a test of one would sign off the "
                                  "other")
    return errors


def _section(data: dict[str, Any], target: Target) -> dict[str, Any]:
    """The target's own keys as written: ``target:`` or ``targets.<name>``."""
    return data["targets"][target.name] if target.name else data["target"]


def _entry_rule_errors(target: Target) -> list[str]:
    """Rules the schema cannot express, each benchmark's own (``entry_rules``, and
    ``target_rules`` against the target's type)."""
    errors = []
    for key, entry in target.entries.items():
        bench = registry.owner_of(key)
        where = f"{target.tests_where}.{key}"
        if bench and bench.entry_rules:
            errors += bench.entry_rules(where, entry)
        if bench and bench.target_rules:
            errors += bench.target_rules(where, entry, target.fstype)
    return errors


def _target_errors(target: Target, section: dict[str, Any]) -> list[str]:
    """The run's guards on the target's text (``fsaccept.core.guards``): the path
    (relative, control characters, a character a benchmark of the target's tests splits
    paths on), blanks or control characters in its type, mount point and source, and a
    path outside its mount point."""
    forbidden: dict[str, str] = {}
    for key in target.entries:
        bench = registry.owner_of(key)
        if bench:
            forbidden.update({c: f"{why} ({target.tests_where}.{key})"
                              for c, why in bench.unsafe_path_chars.items()
                              if c not in forbidden})
    errors = _guard_errors(guards.check_path_text, section["path"], f"{target.where}.path",
                           forbidden)
    for key in ("fstype", "mount_point", "source"):
        if key in section:
            errors += _guard_errors(guards.check_field_text, section[key],
                                    f"{target.where}.{key}", blanks=True)
    errors += mountopts.spec_errors(f"{target.where}.mount_options",
                                    list(target.required_options),
                                    list(target.forbidden_options))
    return errors or _mount_point_errors(target.where, section)


def _guard_errors(check: Any, *args: Any, **kwargs: Any) -> list[str]:
    try:
        check(*args, **kwargs)
    except guards.GuardError as err:
        return [str(err)]
    return []


def _mount_point_errors(where: str, target: dict[str, Any]) -> list[str]:
    """A mount point as findmnt prints it (the guard compares the text), and the target
    path on it (``where``: the target's keys' prefix)."""
    mount_point = target.get("mount_point")
    if mount_point is None:
        return []
    if posixpath.normpath(mount_point) != mount_point:
        return [f"{where}.mount_point: {mount_point!r} is not how findmnt prints a mount "
                f"point: write {posixpath.normpath(mount_point)!r}"]
    if not guards.path_within(target["path"], mount_point):
        return [f"{where}.path: {target['path']!r} is not below {where}.mount_point "
                f"{mount_point!r}: the tests would write on another file system"]
    return []


def _path_errors(data: Any, where: str = "") -> list[str]:
    """Control characters in any other path the file holds (a key naming a path or a
    directory, e.g. a dataset's ``*_path`` or ``*_dir``), by the guard's own rule."""
    errors = []
    for key, value in (data.items() if isinstance(data, dict) else ()):
        here = f"{where}.{key}" if where else key
        if here == "target":
            continue  # checked with the target's own rules (_target_errors)
        if where == "targets":  # a named target: its keys likewise, its tests here
            errors += _path_errors((value or {}).get("tests"), f"{here}.tests")
            continue
        if isinstance(value, str) and _PATH_KEY.search(key):
            errors += _guard_errors(guards.check_field_text, value, here)
        elif isinstance(value, list) and _PATH_KEY.search(key):
            errors += [e for i, v in enumerate(value) if isinstance(v, str)
                       for e in _guard_errors(guards.check_field_text, v, f"{here}[{i}]")]
        else:
            errors += _path_errors(value, here)
    return errors


#: A key naming a path or a directory (``path``, ``data_dir``, ``dataset_paths``,
#: ``directory``), not one that merely starts alike (``direct_io``).
_PATH_KEY = re.compile(r"(^|_)(paths?|dirs?|directory|directories|mount_point)(_|$)")


def nightly_merged(data: dict[str, Any], source: str = "reference") -> dict[str, Any]:
    """The reference data of a nightly run: ``tests.<name>`` (with several targets, each
    ``targets.<target>.tests.<name>``) updated with ``nightly.tests.<name>`` (``data`` is
    left as it is). An override of a test no target has is a ReferenceError naming
    ``source``."""
    out = copy.deepcopy(data)
    overrides = ((data.get("nightly") or {}).get("tests")) or {}
    sections = ([t.get("tests", {}) for t in out["targets"].values()]
                if "targets" in out else [out.get("tests", {})])
    for name, keys in overrides.items():
        if not any(name in tests for tests in sections):
            have = ", ".join(sorted({k for tests in sections for k in tests})) or "none"
            under = "any target's tests:" if "targets" in out else "tests:"
            raise ReferenceError(f"{source}: nightly.tests.{name}: no such test under "
                                 f"{under} (the file has: {have})")
        for tests in sections:
            if name in tests:
                tests[name].update(copy.deepcopy(keys))
    out["description"] = (str(data.get("description", "")) + " [nightly sizes]").strip()
    return out


#: Sections that judge one target's tests, not yet given a meaning with several.
_ONE_TARGET_SECTIONS = ("degraded", "sweeps", "fill")


def _several_errors(data: dict[str, Any]) -> list[str]:
    """With ``targets:``, the sections that judge a single target's tests are refused
    (they do not say which target)."""
    if "targets" not in data:
        return []
    return [f"{key}: not yet possible with targets: (it does not say which file system); "
            "write a file with one target: for it" for key in _ONE_TARGET_SECTIONS
            if key in data]


def _degraded_errors(data: dict[str, Any]) -> list[str]:
    """Each test the ``degraded:`` section runs degraded (and each of its scenarios'
    own ``tests``) has an entry under ``tests:`` (its healthy thresholds) and a
    degraded-mode check in the catalogue."""
    section = data.get("degraded") or {}
    if "targets" in data:
        return []  # refused whole (_several_errors)
    lists = [("degraded.tests", section.get("tests") or {})] + [
        (f"degraded.scenarios.{name}.tests", own["tests"])
        for name, own in (section.get("scenarios") or {}).items()
        if own and own.get("tests")]
    errors = []
    for where, listed in lists:
        for key in listed:
            if key not in data["tests"]:
                errors.append(f"{where}.{key}: no such test under tests: (its healthy "
                              "entry gives the thresholds the fraction applies to)")
            elif key not in registry.degraded_keys():
                errors.append(f"{where}.{key}: no degraded-mode check runs it (those "
                              f"that do: {', '.join(sorted(registry.degraded_keys()))})")
    return errors


def _fill_errors(data: dict[str, Any]) -> list[str]:
    """The ``fill:`` section against the file and the catalogue: allowed only on a target
    dedicated to acceptance; a tolerance below each level; the file sizes distinct, each
    at most MAX_SIZE_BYTES, their shares summing to 1; each test listed a check of the
    catalogue that can run filled, whose entry the file has (without a list, at least
    one of the catalogue's defaults); a time budget with a rate to size it by."""
    section = data.get("fill")
    if not section or "targets" in data:  # with targets: refused whole (_several_errors)
        return []
    errors = []
    if section["allowed"] and data["target"].get("dedicated") is not True:
        errors.append("fill.allowed: true, but target.dedicated is not true: only a file "
                      "system dedicated to acceptance (no one's data on it) may be filled; "
                      "write target.dedicated: true if it is (docs/user/fill.md)")
    tolerance = section.get("tolerance", fill.DEFAULT_TOLERANCE)
    for key in ("fraction", "inode_fraction"):
        if key in section and tolerance >= section[key]:
            errors.append(f"fill.tolerance: {tolerance!r} is not below fill.{key} "
                          f"{section[key]!r}: the level reached would prove nothing")
    first: dict[int, int] = {}
    for i, item in enumerate(section.get("file_sizes") or []):
        try:
            size = parse_size(item["size"])
        except ValueError as err:
            errors.append(f"fill.file_sizes[{i}].size: {err}")
            continue
        if size > MAX_SIZE_BYTES:
            errors.append(f"fill.file_sizes[{i}].size: {item['size']!r} is more than "
                          f"{format_size(MAX_SIZE_BYTES)}, the largest size allowed")
        elif size in first:
            errors.append(f"fill.file_sizes[{i}].size: {format_size(size)} is "
                          f"fill.file_sizes[{first[size]}]'s too: give each size once")
        first.setdefault(size, i)
    shares = [item["share"] for item in section.get("file_sizes") or []]
    if shares and abs(math.fsum(shares) - 1) > 1e-9:
        errors.append(f"fill.file_sizes: the shares sum to {math.fsum(shares):g}, not 1 "
                      "(each is the share of the filler's bytes in files of its size)")
    can = registry.fill_checks()
    for i, check in enumerate(section.get("tests") or []):
        spec = registry.TESTS.get(check)
        if spec is None or check not in can:
            what = ("is no check of the catalogue" if spec is None
                    else "cannot run filled (its figure is no rate or time a fuller file "
                         "system slows, or no single benchmark run)")
            errors.append(f"fill.tests[{i}]: {check!r} {what}; those that can: "
                          f"{', '.join(can)}")
        elif spec.key not in data["tests"]:
            errors.append(f"fill.tests[{i}]: {check} reads tests.{spec.key}, which the file "
                          "has not (its entry gives the sizes, and the empty figure to "
                          "compare with)")
    if "tests" not in section and not any(can[c].key in data["tests"]
                                          for c in registry.fill_defaults()):
        errors.append(f"fill.tests: none given, and none of the checks re-run filled by "
                      f"default ({', '.join(registry.fill_defaults())}) has an entry under "
                      "tests:; list those to run filled")
    if "deadline_s" in section and not (section.get("bandwidth_mib_s")
                                        or data["target"].get("max_bandwidth_mib_s")):
        errors.append("fill.deadline_s: no rate to size the fill by: give "
                      "fill.bandwidth_mib_s (e.g. the empty write bandwidth) or "
                      "target.max_bandwidth_mib_s")
    return errors


def fill_tests(reference: Reference) -> list[str]:
    """The class names a fill of ``reference`` runs again filled: ``fill.tests``, else
    the catalogue's defaults whose entry the file has (a file without ``fill:``: none)."""
    mode = reference.fill_mode
    if mode is None:
        return []
    if mode.tests is not None:
        return list(mode.tests)
    can = registry.fill_checks()
    return [c for c in registry.fill_defaults() if can[c].key in reference.entries]


def _sweeps_errors(data: dict[str, Any]) -> list[str]:
    """The ``sweeps:`` section against the file and the catalogue: each test listed has
    an entry under ``tests:`` and scaling checks that sweep it; each dimension's points
    ascending, none twice; each transfer size a divisor of the block size of every IOR
    test swept (IOR's rule); each point threshold at a point of a swept test's curve, in
    its entry's unit, given once."""
    section = data.get("sweeps")
    if not section or "targets" in data:  # with targets: refused whole (_several_errors)
        return []
    sweepable = registry.scaling_keys()
    fstype = data["target"]["fstype"]
    errors = []
    for i, key in enumerate(section.get("tests") or []):
        if key not in sweepable:
            errors.append(f"sweeps.tests[{i}]: {key!r}: no scaling check sweeps it (those "
                          f"that do: {', '.join(sorted(sweepable))})")
        elif key not in data["tests"]:
            errors.append(f"sweeps.tests[{i}]: {key!r}: no such test under tests: (its "
                          "entry gives each point's sizes and placement)")
        elif not any(scaling.applies(d, fstype) for d in sweepable[key]):
            errors.append(f"sweeps.tests[{i}]: {key!r} is swept over "
                          f"{', '.join(sweepable[key])} only, which a {fstype} target has not")
    for dim, key in scaling.SECTION_KEYS.items():
        if key not in section:
            continue
        if not scaling.applies(dim, fstype):
            errors.append(f"sweeps.{key}: a {scaling.ONLY_ON[dim]} setting and the target "
                          f"is {fstype}: remove it")
        elif dim == scaling.STRIPE:
            errors += scaling.stripes_errors(f"sweeps.{key}", section[key])
        else:
            errors += scaling.points_errors(f"sweeps.{key}", section[key], dim)
    if errors:
        return errors
    sweeps = scaling.Sweeps.of(section)
    swept = [k for k in (sweeps.tests if sweeps.tests is not None else sweepable)
             if k in data["tests"]]
    for key in swept:
        if scaling.TRANSFER not in sweepable[key]:
            continue
        block = parse_size(data["tests"][key].get("block_size", 1))
        for i, t in enumerate(sweeps.points[scaling.TRANSFER]):
            if t < block and block % t:
                errors.append(f"sweeps.transfer_sizes[{i}]: {format_size(t)} does not divide "
                              f"tests.{key}.block_size {format_size(block)} (IOR needs the "
                              "block a multiple of the transfer)")
    seen: dict[tuple[str, str, int], int] = {}
    for i, (th, item) in enumerate(zip(sweeps.thresholds, section.get("thresholds") or [])):
        where = f"sweeps.thresholds[{i}]"
        if th.test not in swept:
            errors.append(f"{where}.test: {th.test!r} is not swept (swept: "
                          f"{', '.join(swept) or 'none'})")
            continue
        if th.dimension not in sweepable[th.test]:
            errors.append(f"{where}.{th.dimension}: {th.test} is not swept over "
                          f"{th.dimension} (only {', '.join(sweepable[th.test])})")
            continue
        if th.x not in sweeps.points[th.dimension]:
            errors.append(f"{where}.{th.dimension}: {item[th.dimension]!r} is not one of "
                          f"sweeps.{scaling.SECTION_KEYS[th.dimension]}")
        units = {t.unit for t in entry_thresholds(data["tests"][th.test]).values()}
        if units and th.unit not in units:
            errors.append(f"{where}.threshold.unit: {th.unit!r}, but tests.{th.test} is "
                          f"judged in {', '.join(sorted(units))}")
        if (th.test, th.dimension, th.x) in seen:
            errors.append(f"{where}: the same point as sweeps.thresholds"
                          f"[{seen[(th.test, th.dimension, th.x)]}]")
        seen.setdefault((th.test, th.dimension, th.x), i)
    return errors


def _nightly_errors(data: dict[str, Any], known: list[str]) -> list[str]:
    """The test entries a nightly run would use (``nightly.tests`` merged in), held to
    the same rules as the file's own (errors already ``known`` of the file's own
    entries are not repeated)."""
    if not (data.get("nightly") or {}).get("tests"):
        return []
    try:
        merged = nightly_merged(data, "")
    except ReferenceError as err:
        return [str(err).removeprefix(": ")]
    errors = validation_errors(merged) or [
        e for target in targets_of(merged) for e in _entry_rule_errors(target)]
    return [f"nightly.tests: the test entries with the nightly values are not valid: {e}"
            for e in errors if e not in known]


