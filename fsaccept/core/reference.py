"""Per-system acceptance parameters, ``reference/<system>.yaml``: the data model.

A reference file holds, per test, the node fraction, ranks per node, sizes, deadlines
and the threshold.  This module holds what a loaded file is (:class:`Reference`,
:class:`Threshold`) and its error; reading and validating one, against the schemas and
each benchmark's rules, is ``fsaccept.suite.reference``'s (it needs the benchmarks).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from fsaccept.core import degraded, fill, scaling
from fsaccept.core.paths import REFERENCE_DIR
from fsaccept.core.units import TIME_UNITS  # noqa: F401 (re-exported)

DEFAULT_MAX_FILL_FRACTION = 0.5
DEFAULT_TIME_LIMIT_MARGIN_MIN = 10


# Bounds on what a reference file may hold: its cost to read is bounded whatever it
# holds, and a typo cannot reach a benchmark as an absurd size.
#: Largest single size (``*_size``): 1 TiB; larger is a typo (IOR's -t and -b, fio's size).
MAX_SIZE_BYTES = 2**40


#: How many times a test runs unless its entry says (``repetitions``).
DEFAULT_REPETITIONS = 1
#: What a threshold judges over a test's repetitions (``judge``): ``mean``, the mean of
#: its runs; ``min``, every run (its worst: a rate's minimum, a time's maximum), as a
#: guarantee is judged.
JUDGES = ("mean", "min")
#: The judge unless an entry says.
DEFAULT_JUDGE = "mean"
#: An entry's keys that are its repetitions' (:class:`Repeats`), not its benchmark's: a
#: benchmark that types its entry from every key it holds leaves these out.
REPEAT_KEYS = ("repetitions", "max_cov", "judge")


@dataclass(frozen=True)
class Repeats:
    """What an entry asks of a test's repetitions: how many (``repetitions``), the
    largest coefficient of variation a judged figure may have over them (``max_cov``;
    None: no bound), and what its thresholds judge (``judge``: one of :data:`JUDGES`)."""

    count: int = DEFAULT_REPETITIONS
    max_cov: float | None = None
    judge: str = DEFAULT_JUDGE

    @classmethod
    def of(cls, entry: dict[str, Any]) -> "Repeats":
        cov = entry.get("max_cov")
        return cls(int(entry.get("repetitions", DEFAULT_REPETITIONS)),
                   float(cov) if cov is not None else None,
                   str(entry.get("judge", DEFAULT_JUDGE)))


class ReferenceError(ValueError):
    """A bad reference file; the message names the file and the key."""


@dataclass(frozen=True)
class Threshold:
    value: float
    unit: str
    tolerance: float = 0.0

    def as_reframe_reference(self) -> tuple[float, float | None, float | None, str]:
        """(value, lower, upper, unit): a rate is a floor (a shortfall beyond the tolerance
        fails; no upper bound: a figure above its ceiling is judged elsewhere); a time
        (latency) is a ceiling (an excess beyond the tolerance fails)."""
        if self.unit in TIME_UNITS:
            return (self.value, None, self.tolerance, self.unit)
        return (self.value, -self.tolerance, None, self.unit)


#: A target's name under ``targets:``: an identifier (it goes into test names).
TARGET_NAME = r"^[a-z][a-z0-9_]{0,31}$"
#: The ReFrame parameter naming a test's target under ``targets:`` (``%fs_target=home``
#: in its name; a loggable value in the run report); a single ``target:`` has none.
TARGET_PARAMETER = "fs_target"


@dataclass(frozen=True)
class Target:
    """One file system the tests write on, and the tests it runs.  A file's single
    ``target:`` (with ``tests:``) is the target named ""; ``targets.<name>`` are named."""

    name: str
    path: Path
    fstype: str
    #: The mount point and source the target must be on, when the file pins them.
    mount_point: str | None = None
    source: str | None = None
    #: Every test's entry as written, validated by its benchmark's schema.
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Refuse a test whose planned data exceeds this share of the target's free space.
    max_fill_fraction: float = DEFAULT_MAX_FILL_FRACTION
    #: What the file system can absorb at most (MiB/s); bounds deadline-bound phases.
    max_bandwidth_mib_s: float | None = None
    #: The mount options every node's mount (and the login node's) must have, and those
    #: it must not have (``mount_options``: fsaccept.core.mountopts).
    required_options: tuple[str, ...] = ()
    forbidden_options: tuple[str, ...] = ()
    #: The file system holds no data but acceptance's (a new system before service): a
    #: run may fill it (``fill:``, with ``fill.allowed``).
    dedicated: bool = False

    @property
    def where(self) -> str:
        """Its keys' prefix in the file: ``target`` or ``targets.<name>``."""
        return f"targets.{self.name}" if self.name else "target"

    @property
    def tests_where(self) -> str:
        """Its tests' prefix in the file: ``tests`` or ``targets.<name>.tests``."""
        return f"targets.{self.name}.tests" if self.name else "tests"

    @classmethod
    def of(cls, name: str, section: dict[str, Any], tests: dict[str, Any]) -> "Target":
        """From a schema-valid ``target:`` (its ``tests:`` beside it) or ``targets.<name>``."""
        options = section.get("mount_options") or {}
        return cls(name=name, path=Path(section["path"]), fstype=section["fstype"],
                   mount_point=section.get("mount_point"), source=section.get("source"),
                   entries=tests, max_fill_fraction=section.get("max_fill_fraction",
                                                                DEFAULT_MAX_FILL_FRACTION),
                   max_bandwidth_mib_s=section.get("max_bandwidth_mib_s"),
                   required_options=tuple(options.get("required", ())),
                   forbidden_options=tuple(options.get("forbidden", ())),
                   dedicated=section.get("dedicated", False))


def targets_of(data: dict[str, Any]) -> list[Target]:
    """The targets of a schema-valid reference document, in the file's order."""
    if "targets" in data:
        return [Target.of(name, section, section["tests"])
                for name, section in data["targets"].items()]
    return [Target.of("", data["target"], data["tests"])]


@dataclass(frozen=True)
class Reference:
    """A validated reference file: its targets (each with its tests' entries, validated
    by their benchmarks' schemas; each benchmark types its own entries, e.g.
    ``fsaccept.benchmarks.ior.command.parameters``) and the keys they share.  The
    ``target_*`` properties, ``entries`` and ``entry`` are those of the selected target
    (:meth:`for_target`); a file with a single ``target:`` has it selected."""

    path: Path
    system: str
    #: Its file systems, in the file's order (one, named "", for ``target:``).
    targets: tuple[Target, ...]
    #: The target the ``target_*`` properties describe; None: not chosen yet.
    target_name: str | None = ""
    #: Every ReFrame system the file is for (``system:`` a name or a list).
    systems: tuple[str, ...] = ()
    description: str = ""
    #: Minutes added to a job's deadlines for its Slurm time limit.
    time_limit_margin_min: int = DEFAULT_TIME_LIMIT_MARGIN_MIN
    #: How a node fraction becomes a node count: "up" (default) or "down".
    node_rounding: str = "up"
    #: Shell command run on every node right before a read phase (client caches).
    drop_caches: str | None = None
    #: The whole validated document, as read (e.g. its ``nightly:`` section).
    data: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    #: SHA-256 of the bytes it was read from (what a sign-off verifies the file by).
    sha256: str = ""

    @property
    def target_names(self) -> tuple[str, ...]:
        """The names of its targets ("" alone: a single ``target:``)."""
        return tuple(t.name for t in self.targets)

    @property
    def named_targets(self) -> bool:
        """Whether the file names its targets (``targets:``): tests then carry the name."""
        return self.target_names != ("",)

    def for_target(self, name: str) -> "Reference":
        """This file with the target ``name`` selected; a clear error when it has none
        of that name."""
        if name not in self.target_names:
            have = ", ".join(n or "target" for n in self.target_names)
            if not name:
                raise ReferenceError(f"{self.path}: targets: the file names several file "
                                     f"systems ({have}) and this use names none (a check "
                                     "not parameterised over them: fsaccept.rfm.targets)")
            raise ReferenceError(f"{self.path}: targets.{name}: no such target (the file "
                                 f"has: {have})")
        return replace(self, target_name=name)

    def for_record(self, name: Any) -> "Reference | None":
        """This file with the target a test recorded selected (``name``: its
        ``TARGET_PARAMETER``, None or "" when it recorded none); None when the file has
        no such target."""
        name = name or ""
        if name == self.target_name:
            return self
        return replace(self, target_name=name) if name in self.target_names else None

    @property
    def target(self) -> Target:
        """The selected target; a clear error when the file names several and none is
        selected (a use that must say which)."""
        for t in self.targets:
            if t.name == self.target_name:
                return t
        raise ReferenceError(f"{self.path}: targets: the file names several file systems "
                             f"({', '.join(self.target_names)}): this use needs one of them")

    @property
    def target_path(self) -> Path:
        return self.target.path

    @property
    def target_fstype(self) -> str:
        return self.target.fstype

    @property
    def target_mount_point(self) -> str | None:
        return self.target.mount_point

    @property
    def target_source(self) -> str | None:
        return self.target.source

    @property
    def max_fill_fraction(self) -> float:
        return self.target.max_fill_fraction

    @property
    def max_bandwidth_mib_s(self) -> float | None:
        return self.target.max_bandwidth_mib_s

    @property
    def entries(self) -> dict[str, dict[str, Any]]:
        """The selected target's test entries."""
        return self.target.entries

    def with_entries(self, entries: dict[str, dict[str, Any]]) -> "Reference":
        """This file with the selected target's entries replaced (a sweep's point)."""
        target = replace(self.target, entries=entries)
        return replace(self, targets=tuple(target if t.name == target.name else t
                                           for t in self.targets))

    @property
    def most_repetitions(self) -> int:
        """The most repetitions an entry of any target asks (a session repeats every test
        that many times: ReFrame's ``--repeat``)."""
        return max((Repeats.of(e).count for t in self.targets for e in t.entries.values()
                    if isinstance(e, dict)), default=DEFAULT_REPETITIONS)

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
            raise ReferenceError(f"{self.path}: {self.target.tests_where}.{name}: missing{by}; "
                                 f"the file has: {have}") from None

    def thresholds(self, name: str) -> dict[str, Threshold]:
        """Figure name → threshold of an entry: ``thresholds:`` (a map) as is,
        or a single ``threshold:`` under the key ``""`` (the test's main figure)."""
        return entry_thresholds(self.entry(name))

    @property
    def degraded_mode(self) -> DegradedMode | None:
        """Its ``degraded:`` section, None when it has none."""
        section = self.data.get("degraded")
        return DegradedMode.of(section) if section else None

    @property
    def sweeps(self) -> scaling.Sweeps:
        """Its ``sweeps:`` section, with the defaults for what it does not say."""
        return scaling.Sweeps.of(self.data.get("sweeps"))

    def swept_tests(self, sweepable: dict[str, tuple[str, ...]]) -> list[str]:
        """The keys under ``tests:`` a sweep measures: those ``sweeps.tests`` lists, else
        each of ``sweepable`` (key -> dimensions: the catalogue's) the file defines that
        has a dimension its target can be swept along (the stripe matrix: Lustre's)."""
        listed = self.sweeps.tests
        return list(listed) if listed is not None else [
            k for k, dims in sweepable.items() if k in self.entries
            and any(scaling.applies(d, self.target_fstype) for d in dims)]

    @property
    def fill_mode(self) -> fill.Settings | None:
        """Its ``fill:`` section, None when it has none (allowed or not)."""
        section = self.data.get("fill")
        return fill.Settings.of(section) if section else None

    def fill_settings(self) -> fill.Settings:
        """The ``fill:`` section of a run that fills the target: a clear error when the
        file has none, does not allow it (``fill.allowed: true``) or does not declare the
        target dedicated to acceptance (``target.dedicated: true``)."""
        mode = self.fill_mode
        if mode is None:
            raise ReferenceError(f"{self.path}: fill: missing (the level to fill the target "
                                 "to, and the degradation allowed: docs/user/fill.md)")
        if not mode.allowed:
            raise ReferenceError(f"{self.path}: fill.allowed: false: filling the target is "
                                 "not allowed (write fill.allowed: true for a target that "
                                 "holds no one's data)")
        if not self.target.dedicated:
            raise ReferenceError(f"{self.path}: {self.target.where}.dedicated: not true: only a "
                                 "file system dedicated to acceptance may be filled")
        return mode

    def degraded_clause(self, scenario: str = "") -> DegradedMode:
        """The clause a degraded-mode test of ``scenario`` is judged by: the section's
        own when the file names no scenario (any scenario of the system's then), else
        that scenario's (``degraded.scenarios.<name>``); a clear error naming the key
        when the file has no ``degraded:`` or does not name the scenario."""
        mode = self.degraded_mode
        if mode is None:
            raise ReferenceError(f"{self.path}: degraded: missing (the contract's "
                                 "degraded-mode clause: fraction, tests, max_recovery_s)")
        if not mode.scenarios:
            return mode
        if scenario in mode.scenarios:
            return mode.scenarios[scenario]
        have = ", ".join(mode.scenarios)
        if not scenario:
            raise ReferenceError(f"{self.path}: degraded.scenarios: the file names "
                                 f"scenarios ({have}); this test ran under none (its system "
                                 "declares one fault plan, not extras.degraded.scenarios)")
        raise ReferenceError(f"{self.path}: degraded.scenarios.{scenario}: no such scenario "
                             f"(the file names: {have})")

    def degraded_thresholds(self, name: str, scenario: str = "") -> dict[str, Threshold]:
        """The thresholds of ``tests.<name>`` run degraded (the live check and the
        sign-off both judge by these), in ``scenario`` ('' : none named); a clear error
        when the file does not ask for it."""
        mode = self.degraded_clause(scenario)
        if name not in mode.tests:
            if mode.scenario:
                raise ReferenceError(f"{self.path}: {mode.where}.tests.{name}: missing; the "
                                     f"scenario runs degraded: {', '.join(sorted(mode.tests))}")
            raise ReferenceError(f"{self.path}: degraded.tests.{name}: missing; the file "
                                 f"runs degraded: {', '.join(sorted(mode.tests))}")
        return mode.thresholds(name, self.thresholds(name))


@dataclass(frozen=True)
class DegradedMode:
    """The reference file's ``degraded:`` section: the contract's high-availability
    clause (which tests run while a server is down, the fraction of each healthy
    threshold they must reach, and the time the file system has to recover).  With
    ``scenarios:``, each named scenario is a clause of its own: the section's, with the
    keys it gives itself."""

    fraction: float
    #: Key under ``tests:`` -> its own fraction (the section's when it gives none).
    tests: dict[str, float]
    max_recovery_s: float
    max_failover_s: float | None = None
    detect_timeout_s: int = 60
    #: The contract's named scenarios (``degraded.scenarios``), each its clause, in the
    #: file's order; empty when it names none.
    scenarios: dict[str, "DegradedMode"] = field(default_factory=dict)
    #: The scenario this clause is of ('' : the section's own).
    scenario: str = ""

    @classmethod
    def of(cls, section: dict[str, Any], scenario: str = "") -> "DegradedMode":
        """From a schema-valid ``degraded:`` section (``scenario``: the name of the
        scenario it is the clause of)."""
        fraction = section["fraction"]
        named = section.get("scenarios") or {}
        base = {k: v for k, v in section.items() if k != "scenarios"}
        return cls(fraction=fraction,
                   tests={k: (v or {}).get("fraction", fraction)
                          for k, v in section["tests"].items()},
                   max_recovery_s=section["max_recovery_s"],
                   max_failover_s=section.get("max_failover_s"),
                   detect_timeout_s=section.get("detect_timeout_s", 60),
                   scenarios={name: cls.of({**base, **(own or {})}, name)
                              for name, own in named.items()},
                   scenario=scenario)

    @property
    def where(self) -> str:
        """Its key in the reference file."""
        return f"degraded.scenarios.{self.scenario}" if self.scenario else "degraded"

    @property
    def clauses(self) -> list["DegradedMode"]:
        """Each clause a session is judged by: each named scenario's, else the section's."""
        return list(self.scenarios.values()) or [self]

    @property
    def all_tests(self) -> set[str]:
        """The keys run degraded in any scenario (the section's without scenarios)."""
        return {key for clause in self.clauses for key in clause.tests}

    def thresholds(self, name: str, healthy: dict[str, Threshold]) -> dict[str, Threshold]:
        """A degraded-mode test's thresholds: each healthy one scaled by the test's
        fraction (a rate's floor times it, a time's ceiling divided by it), and the
        recovery (and failover) ceilings."""
        f = self.tests[name]
        out = {fig: Threshold(th.value / f if th.unit in TIME_UNITS else th.value * f,
                              th.unit, th.tolerance) for fig, th in healthy.items()}
        out[degraded.RECOVERY] = Threshold(self.max_recovery_s, "s")
        if self.max_failover_s is not None:
            out[degraded.FAILOVER] = Threshold(self.max_failover_s, "s")
        return out


def entry_thresholds(entry: dict[str, Any]) -> dict[str, Threshold]:
    """Figure name → threshold of a (schema-valid) entry: ``thresholds:`` (a map) as is,
    or a single ``threshold:`` under the key ``""`` (the test's main figure)."""
    if "thresholds" in entry:
        return {k: Threshold(**v) for k, v in entry["thresholds"].items()}
    return {"": Threshold(**entry["threshold"])} if "threshold" in entry else {}


def reference_path(system: str, directory: Path = REFERENCE_DIR) -> Path:
    return directory / f"{system}.yaml"
