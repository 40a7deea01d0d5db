"""Benchmark versions: which are tested (``data/tested_versions.yaml``), which have
known bugs that make a figure INVALID (``data/known_bad_versions.yaml``)."""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

import yaml

from fsaccept.core.findings import clip


@cache
def _known_bad() -> dict[str, list[dict[str, Any]]]:
    text = resources.files("fsaccept").joinpath("data/known_bad_versions.yaml").read_text()
    return yaml.safe_load(text)


def version_number(version: str | None) -> str | None:
    """'IOR-4.0.0' → '4.0.0'."""
    return version.split("-", 1)[1] if version and "-" in version else version


def _version_key(version: str) -> tuple | None:
    """A key that sorts versions (4.0.0rc1 before 4.0.0); None when a number in it
    cannot be read (more digits than Python reads, '²'): no version a tool prints."""
    parts = []
    for piece in version.replace("rc", ".-1.").split("."):
        try:
            parts.append(int(piece) if piece.lstrip("-").isdigit() else 0)
        except ValueError:
            return None
    return tuple(parts + [0] * (6 - len(parts)))


def known_bugs(benchmark: str, version: str) -> list[dict[str, Any]]:
    """Entries of the known-bad list that match ``version``."""
    hits = []
    key = _version_key(version)
    for entry in _known_bad().get(benchmark, []):
        if version in entry.get("versions", []) or (
                "before" in entry and key is not None and key < _version_key(entry["before"])):
            hits.append(entry)
    return hits


def version_reasons(benchmark: str, version: str | None, figure_kind: str) -> list[str]:
    """INVALID reasons: an unknown version, or a known bug that affects ``figure_kind``."""
    if not version:
        return [f"{benchmark} version not found in its output: cannot certify the figure"]
    if _version_key(version) is None:
        return [f"{benchmark} version {clip(version, 60)!r} cannot be read: cannot certify "
                "the figure"]
    return [f"{benchmark} {version} has a known bug affecting {figure_kind}: {e['reason']}"
            for e in known_bugs(benchmark, version) if figure_kind in e["affects"]]


@cache
def tested_versions() -> dict[str, list[str]]:
    text = resources.files("fsaccept").joinpath("data/tested_versions.yaml").read_text()
    return yaml.safe_load(text)


def version_note(benchmark: str, version: str | None) -> str:
    """'tested', or why not (results of an untested version still count, labelled)."""
    if not version:
        return "version unknown"
    known = tested_versions().get(benchmark, [])
    if version in known:
        return "tested"
    return f"untested: fsaccept's {benchmark} parser is tested on {', '.join(known)}"
