"""The target survey's entry (``tests.target_survey``) typed, and what the check asks of
the program: its options, its deadline, its references."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fsaccept.core import components
from fsaccept.core.units import MIB

#: The figures: the slowest and the median target's write bandwidth, and how many
#: targets are slow (must be 0).
MIN = "target_write_min"
MEDIAN = "target_write_median"
SLOW = "slow_targets"
FIGURES = {MIN: "MiB/s", MEDIAN: "MiB/s", SLOW: "targets"}
#: Seconds allowed per round beyond its runtime (job steps start, files placed).
ROUND_MARGIN_S = 30


@dataclass(frozen=True)
class SurveyParameters:
    """The survey's entry of a reference file, typed."""

    name: str
    size_mib: int
    runtime_s: int
    max_spread: float
    node_fraction: float

    @property
    def size(self) -> int:
        return self.size_mib * MIB


def parameters(name: str, entry: dict[str, Any]) -> SurveyParameters:
    return SurveyParameters(
        name=name, size_mib=int(entry.get("size_mib", 64)),
        runtime_s=int(entry.get("runtime_s", 10)),
        max_spread=float(entry.get("max_spread", components.DEFAULT_MAX_SPREAD)),
        node_fraction=float(entry.get("node_fraction", 1.0)))


def placement(entry: dict[str, Any]) -> tuple[float | None, int]:
    """The entry's node fraction, one task per node (the clients the survey spreads
    over); the program itself runs once, on the job's first node."""
    return float(entry.get("node_fraction", 1.0)), 1


def program_options(p: SurveyParameters, directory: str, out: str) -> list[str]:
    """The program's arguments (``python -m fsaccept.suite.survey``)."""
    return ["--in-dir", directory, "--out", out, "--size", f"{p.size_mib}MiB",
            "--runtime", str(p.runtime_s), "--max-spread", repr(p.max_spread)]


def deadline_s(p: SurveyParameters, targets: int = 64, nodes: int = 1) -> int:
    """Seconds the job may run: each round its runtime and a margin, for up to
    ``targets`` targets on at least one server."""
    rounds = max(1, targets)  # every target on one server: one round each
    return rounds * (p.runtime_s + ROUND_MARGIN_S) + 120


def references(p: SurveyParameters) -> dict[str, tuple]:
    """No slow target (the count's limit is 0); the bandwidths are reported."""
    return {SLOW: (0, None, 0, "targets")}
