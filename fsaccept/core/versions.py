"""Benchmark versions: which are tested (``data/tested_versions.yaml``), which have
known bugs that make a figure INVALID (``data/known_bad_versions.yaml``)."""

from __future__ import annotations

import re
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


#: A release as tools print it: dotted numbers, an optional release candidate; anything
#: after it (``+dev``, ``-g1a2b3c``, ``.dirty``) is a suffix.  ASCII digits only, at most
#: 9 each: a number Python would misread or refuse is no version a tool prints.
_N = r"[0-9]{1,9}(?![0-9])"
_RELEASE_RE = re.compile(rf"^({_N}(?:\.{_N})*)(?:[-.]?rc({_N}))?(.*)$", re.DOTALL)


def _parse(version: str) -> tuple[tuple[int, ...], str, bool] | None:
    """(sort key, base release, has a suffix) of a version (4.0.0rc1 sorts before 4.0.0,
    its base is 4.0.0rc1); None when it does not start with a release number (unknown)."""
    m = _RELEASE_RE.match(version)
    if not m or m.group(3).lstrip(".")[:1].isdigit():  # a number too long, or '²'
        return None
    release, rc, suffix = m.groups()
    parts = [int(p) for p in release.split(".")]
    parts += [0] * (8 - len(parts))
    key = (*parts, -1, int(rc)) if rc else (*parts, 0, 0)
    return key, version[:m.end(2) if rc else m.end(1)], bool(suffix)


def _key(version: str) -> tuple[int, ...] | None:
    """The sort key of a listed version (None: not a release number)."""
    parsed = _parse(version)
    return parsed[0] if parsed else None


def known_bugs(benchmark: str, version: str) -> list[dict[str, Any]]:
    """Entries of the known-bad list that match ``version``.  A version with a suffix
    (``3.3.0+dev``: IOR's master before 3.3.0) is at most its base version, so it gets
    its base's rules and those of ``before: B`` when its base is B or older; a version
    that cannot be read matches nothing here (:func:`version_reasons` refuses it)."""
    parsed = _parse(version)
    if parsed is None:
        return []
    key, _, suffixed = parsed
    hits = []
    for entry in _known_bad().get(benchmark, []):
        # By sort key: 3.3, 3.3.0.0 and 03.3.0 are the release 3.3.0 is.
        listed = {_key(str(v)) for v in entry.get("versions", [])}
        before = _parse(str(entry["before"])) if "before" in entry else None
        if (key in listed
                or (before is not None
                    and (key < before[0] or (suffixed and key == before[0])))):
            hits.append(entry)
    return hits


def version_reasons(benchmark: str, version: str | None, figure_kind: str) -> list[str]:
    """INVALID reasons: an unknown version, or a known bug that affects ``figure_kind``."""
    if not version:
        return [f"{benchmark} version not found in its output: cannot certify the figure"]
    if _parse(version) is None:
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
    parsed = _parse(version)
    # A release is tested when its sort key is a tested one's (4.0 is 4.0.0); a build
    # with a suffix never is.
    if parsed and not parsed[2] and parsed[0] in {_key(str(v)) for v in known}:
        return "tested"
    note = f"untested: fsaccept's {benchmark} parser is tested on {', '.join(known)}"
    if parsed is None:
        return note + f"; {clip(version, 60)!r} is not a release number (unknown version)"
    if parsed[2]:
        return (note + f"; {clip(version, 60)!r} is a build of {parsed[1]} or older, "
                "not a release")
    return note
