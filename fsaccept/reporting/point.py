"""One stored figure of a nightly session, as the trend plots draw it: the record that
:mod:`.trends` makes and :mod:`.plots` draws (below both, so neither imports the other)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Point:
    time: float
    session: str
    value: float
    threshold: float | None  # the passing limit: reference × (1 + lower)
