"""Strict reading of the YAML files people write (reference files): what plain
``yaml.safe_load`` lets through silently is refused with ``FILE: key: message``.

- a key given twice (``safe_load`` keeps the last: ``node_fraction: 0.9`` then
  ``0.01`` would run on 1 % of the nodes);
- keys that are not strings (``1: ...``);
- more aliases than :data:`MAX_ALIASES` ("billion laughs": a few hundred bytes
  that expand to gigabytes downstream);
- ``.nan`` and ``.inf`` anywhere (no JSON Schema bound ever fails on NaN);
- a file that is not UTF-8 text, holds NUL bytes, or is larger than :data:`MAX_BYTES`.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import yaml

#: A reference file is a few KiB; anything this large is not one.
MAX_BYTES = 1 << 20
#: Anchors and aliases are allowed (a site may share a block), within this budget...
MAX_ALIASES = 100
#: ...and as long as the document, with every alias expanded, stays this small.
MAX_EXPANDED_NODES = 100_000


class StrictYAMLError(ValueError):
    """The message names the file, the key (or line) and what is wrong."""


class _StrictLoader(yaml.SafeLoader):
    def __init__(self, stream):
        super().__init__(stream)
        self.aliases = 0

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            self.aliases += 1
            if self.aliases > MAX_ALIASES:
                mark = self.peek_event().start_mark
                raise yaml.constructor.ConstructorError(
                    None, None, f"more than {MAX_ALIASES} aliases (*name): refused", mark)
        return super().compose_node(parent, index)

    def construct_document(self, node):
        size = _expanded_size(node, {})
        if size > MAX_EXPANDED_NODES:
            raise yaml.constructor.ConstructorError(
                None, None, f"its aliases expand to {size:,} values (more than "
                f"{MAX_EXPANDED_NODES:,}): refused", node.start_mark)
        return super().construct_document(node)

    def construct_mapping(self, node, deep=False):
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            if not isinstance(key, str):
                raise yaml.constructor.ConstructorError(
                    None, None, f"key {key!r} is not a string (write it in quotes)",
                    key_node.start_mark)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"{key}: given twice (lines {seen[key]} and {line}): say each "
                    "setting once", key_node.start_mark)
            seen[key] = line
        return super().construct_mapping(node, deep=deep)


def _expanded_size(node, sizes: dict[int, int]) -> int:
    """Values in ``node`` with aliases expanded, counted without expanding them."""
    if id(node) not in sizes:
        sizes[id(node)] = 1  # a cycle counts once
        children = node.value if isinstance(node, yaml.SequenceNode) else (
            [n for pair in node.value for n in pair] if isinstance(node, yaml.MappingNode)
            else [])
        sizes[id(node)] = min(1 + sum(_expanded_size(c, sizes) for c in children),
                              MAX_EXPANDED_NODES + 1)
    return sizes[id(node)]


def _non_finite(data: Any, where: str = "") -> list[str]:
    if isinstance(data, float) and not math.isfinite(data):
        return [f"{where or '(top level)'}: {data} is not a finite number"]
    if isinstance(data, dict):
        return [e for k, v in data.items() for e in _non_finite(v, f"{where}.{k}".lstrip("."))]
    if isinstance(data, list):
        return [e for i, v in enumerate(data) for e in _non_finite(v, f"{where}.{i}")]
    return []


def load(path: Path) -> Any:
    """The file's data, or StrictYAMLError naming the file (OSError passes through)."""
    with open(path, "rb") as f:
        raw = f.read(MAX_BYTES + 1)
    if len(raw) > MAX_BYTES:
        raise StrictYAMLError(f"{path}: larger than {MAX_BYTES // 1024} KiB: not a reference file")
    if b"\0" in raw:
        raise StrictYAMLError(f"{path}: binary data (NUL bytes): not a YAML text file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise StrictYAMLError(f"{path}: not UTF-8 text (byte {err.start}): not a YAML "
                              "text file") from None
    try:
        data = yaml.load(text, Loader=_StrictLoader)  # noqa: S506 (a SafeLoader)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f"line {mark.line + 1}: " if mark else ""
        kind = "" if isinstance(err, yaml.constructor.ConstructorError) else "not valid YAML: "
        raise StrictYAMLError(f"{path}: {kind}{where}{err.problem or err}") from None
    except yaml.YAMLError as err:
        raise StrictYAMLError(f"{path}: not valid YAML: {err}") from None
    problems = _non_finite(data)
    if problems:
        raise StrictYAMLError(f"{path}: " + f"\n{path}: ".join(problems))
    return data
