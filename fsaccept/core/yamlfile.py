"""Strict reading of the YAML files people write (reference files): what plain
``yaml.safe_load`` lets through silently is refused with ``FILE: key: message``.

- a key given twice (``safe_load`` keeps the last: ``node_fraction: 0.9`` then
  ``0.01`` would run on 1 % of the nodes);
- keys that are not strings (``1: ...``);
- more aliases than :data:`MAX_ALIASES`, or more than :data:`MAX_EXPANDED_NODES`
  values once they are expanded ("billion laughs": a few hundred bytes that expand
  to gigabytes downstream), refused before anything is built;
- an alias inside the value it names (``&t {self: *t}``: a value that contains
  itself, which no check can walk);
- YAML merge keys (``<<: *base``) are read as YAML defines them: the keys given
  beside ``<<`` override the merged ones;
- numbers YAML 1.1 would reread: ``010`` as 8, ``0x10`` as 16, ``1:30`` as 90 and
  ``1:30.5`` as 90.5 (base 60);
- ``.nan`` and ``.inf`` anywhere (no JSON Schema bound ever fails on NaN);
- a file that is not UTF-8 text, holds NUL bytes, is larger than :data:`MAX_BYTES`, or is
  not a regular file (a FIFO, ``/dev/zero``: :mod:`fsaccept.core.inputs`).
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import yaml

from fsaccept.core import inputs

#: A reference file is a few KiB; anything this large is not one.
MAX_BYTES = 1 << 20
#: YAML aliases (``*name``): enough to share a few thresholds, far too few for an
#: exponential expansion.
MAX_ALIASES = 20
#: Values of the document with every alias expanded (what the schema walks).
MAX_EXPANDED_NODES = 100_000


class StrictYAMLError(ValueError):
    """The message names the file, the key (or line) and what is wrong."""


class _Refused(yaml.YAMLError):
    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class _StrictLoader(yaml.SafeLoader):
    def __init__(self, stream: str):
        super().__init__(stream)
        self.aliases = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            self.aliases += 1
            if self.aliases > MAX_ALIASES:
                mark = self.peek_event().start_mark
                raise _Refused(f"line {mark.line + 1}: more than {MAX_ALIASES} YAML "
                               "aliases (*name): refused (a reference file needs few)")
        return super().compose_node(parent, index)

    def get_single_node(self) -> Any:
        node = super().get_single_node()
        if node is not None:
            _check_nodes(node, "", {})
        return node

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        path = getattr(node, "fsaccept_path", "")
        # Merge keys (<<) first, as SafeConstructor does: the merged keys are checked
        # too, and << itself is not a key (it has no constructor of its own).
        self.flatten_mapping(node)
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, str):
                raise _Refused(f"{path or '(top level)'}: key {key!r} is a "
                               f"{type(key).__name__}, not a name (quote it)")
        return super().construct_mapping(node, deep=deep)


    def construct_yaml_int(self, node: Any) -> Any:
        # YAML 1.1 reads 010 as 8, 0x10 as 16 and 1:30 as 90: a number in a reference
        # file means what it says in decimal, anything else is refused, never reread.
        value = super().construct_yaml_int(node)
        if not re.fullmatch(r"[-+]?(0|[1-9][0-9_]*)", str(node.value)):
            raise _Refused(f"line {node.start_mark.line + 1}: {node.value} is read by YAML "
                           f"as {value}: write the number in decimal (or quote it)")
        return value


    def construct_yaml_float(self, node: Any) -> Any:
        # YAML 1.1 reads 1:30.5 as 90.5 (base 60), as it reads 1:30 as 90: refused alike.
        value = super().construct_yaml_float(node)
        if ":" in str(node.value):
            raise _Refused(f"line {node.start_mark.line + 1}: {node.value} is read by YAML "
                           f"as {value!r} (base 60): write the number in decimal (or quote "
                           "it)")
        return value


_StrictLoader.add_constructor("tag:yaml.org,2002:int", _StrictLoader.construct_yaml_int)
_StrictLoader.add_constructor("tag:yaml.org,2002:float", _StrictLoader.construct_yaml_float)


def _check_nodes(node: yaml.Node, path: str, sizes: dict[int, int]) -> int:
    """Values under ``node`` with aliases expanded (memoised: linear in the document);
    refuses a duplicate key (naming its key path), a recursive alias or too many values."""
    if id(node) in sizes:
        if sizes[id(node)] < 0:  # still being walked: the node contains itself
            raise _Refused(f"{path or '(top level)'}: a YAML alias (*name) inside the value "
                           "it names (a value that contains itself): refused")
        return sizes[id(node)]
    sizes[id(node)] = -1
    size = 1
    if isinstance(node, yaml.MappingNode):
        node.fsaccept_path = path
        seen: dict[Any, int] = {}
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
            where = f"{path}.{key}" if path else str(key)
            if key is not None and key_node.tag != "tag:yaml.org,2002:merge":
                if (key_node.tag, key) in seen:
                    raise _Refused(
                        f"{where}: duplicate key (line {key_node.start_mark.line + 1}; first "
                        f"on line {seen[(key_node.tag, key)]}): YAML would keep the last one")
                seen[(key_node.tag, key)] = key_node.start_mark.line + 1
            size += _check_nodes(key_node, where, sizes) + _check_nodes(value_node, where, sizes)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            size += _check_nodes(item, f"{path}[{i}]", sizes)
    if size > MAX_EXPANDED_NODES:
        raise _Refused(f"{path or '(top level)'}: more than {MAX_EXPANDED_NODES:,} values "
                       "once its YAML aliases are expanded: refused")
    sizes[id(node)] = size
    return size


def _non_finite(data: Any, where: str = "") -> list[str]:
    if isinstance(data, float) and not math.isfinite(data):
        return [f"{where or '(top level)'}: {data!r} is not a finite number"]
    if isinstance(data, dict):
        return [e for k, v in data.items() for e in _non_finite(v, f"{where}.{k}".lstrip("."))]
    if isinstance(data, list):
        return [e for i, v in enumerate(data) for e in _non_finite(v, f"{where}[{i}]")]
    return []


def load(path: Path | str) -> Any:
    """The file's data, or StrictYAMLError naming the file: also a file that cannot be
    read, is not a regular file (a FIFO, /dev/zero) or is larger than MAX_BYTES."""
    return parse(read(path), path)


def read(path: Path | str) -> bytes:
    """The file's bytes (see ``load``), or StrictYAMLError naming the file."""
    try:
        return inputs.read_bytes(path, MAX_BYTES, "reference file")
    except inputs.InputError as err:
        raise StrictYAMLError(str(err)) from None


def parse(raw: bytes, path: Path | str) -> Any:
    """The data of ``raw``, the bytes read from ``path`` (named in every error)."""
    if b"\0" in raw:
        raise StrictYAMLError(f"{path}: a binary file (it holds NUL bytes), not a reference "
                              "file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw[:err.start].count(b"\n") + 1
        raise StrictYAMLError(f"{path}: line {line}: not UTF-8 text ({err.reason}): not a "
                              "reference file") from None
    try:
        data = yaml.load(text, Loader=_StrictLoader)  # noqa: S506 (a SafeLoader)
    except _Refused as err:
        raise StrictYAMLError(f"{path}: {err.message}") from None
    except yaml.YAMLError as err:
        raise StrictYAMLError(f"{path}: not valid YAML: {' '.join(str(err).split())}") \
            from None
    except RecursionError:
        raise StrictYAMLError(f"{path}: not valid YAML: nested too deeply") from None
    problems = _non_finite(data)
    if problems:
        raise StrictYAMLError(f"{path}: " + f"\n{path}: ".join(problems))
    return data
