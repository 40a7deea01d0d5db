"""A degraded-mode test's fault, as recorded: one timeline (the login node's agent
and the job each add their events, with their times) and what follows from it: the
times to detect, to fail over and to recover, and why a figure is not one of a
degraded file system.  The live check and the sign-off both judge a test by these
functions, from the same recorded timeline.

Events (``fsaccept.suite.faults`` writes the agent's; the job prints its own as
``fsaccept-fault EVENT EPOCH TEXT``):

- agent: ``degrade_start``, ``degrade_end`` (status), ``restore_start`` (by),
  ``restore_end`` (status), ``healed`` or ``not_healed``, ``no_fault`` (why);
- job: ``nodes_down`` (every node's client sees the fault), ``not_degraded`` (it did
  not, within the bound), ``failover`` (the first write + fsync that succeeded after
  the fault), ``nodes_healthy`` or ``nodes_not_healthy`` (after the restore).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

#: Starts the job's fault lines: ``fsaccept-fault EVENT EPOCH TEXT``.
MARKER = "fsaccept-fault"

#: The figures of every degraded-mode test (seconds), each a ceiling.
DETECT, FAILOVER, RECOVERY = "time_to_detect_s", "failover_s", "recovery_s"
FIGURES = (DETECT, FAILOVER, RECOVERY)


def job_events(output: str) -> list[dict[str, Any]]:
    """The job's ``fsaccept-fault EVENT EPOCH TEXT`` lines as events."""
    out = []
    for line in output.splitlines():
        parts = line.split(" ", 3)
        if len(parts) < 3 or parts[0] != MARKER:
            continue
        try:
            t = float(parts[2])
        except ValueError:
            continue
        if math.isfinite(t):
            out.append({"event": parts[1], "t": t, "by": "job",
                        "output": parts[3] if len(parts) > 3 else ""})
    return out


def merged(agent: list[dict[str, Any]], job: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One timeline, in time order (the agent's events marked ``by: agent`` unless they
    say who)."""
    events = [{"by": "agent", **e} for e in agent] + list(job)
    return sorted(events, key=lambda e: e["t"])


def loads(text: str) -> list[dict[str, Any]]:
    """A recorded timeline (``fault_timeline`` of a run report); [] when it is not one."""
    try:
        data = json.loads(text) if text else []
    except ValueError:
        return []
    if not isinstance(data, list):
        return []
    return [e for e in data if isinstance(e, dict) and isinstance(e.get("event"), str)
            and isinstance(e.get("t"), (int, float)) and math.isfinite(e["t"])]


@dataclass(frozen=True)
class Fault:
    """What a timeline says."""

    events: tuple[dict[str, Any], ...]

    def first(self, name: str) -> dict[str, Any] | None:
        return next((e for e in self.events if e["event"] == name), None)

    def since(self, later: str, earlier: str) -> float | None:
        a, b = self.first(later), self.first(earlier)
        return None if a is None or b is None else max(0.0, a["t"] - b["t"])

    @property
    def figures(self) -> dict[str, float]:
        """Seconds: fault injected → every node sees it; → the first write that
        succeeded; restore started → healed and every node's client reconnected (a
        recovery not seen within the bound counts up to when the harness gave up)."""
        out = {}
        for name, later in ((DETECT, "nodes_down"), (FAILOVER, "failover")):
            value = self.since(later, "degrade_end")
            if value is not None:
                out[name] = value
        start = self.first("restore_start")
        ends = [self.first(n) for n in ("healed", "not_healed", "nodes_healthy",
                                        "nodes_not_healthy")]
        ends = [e for e in ends if e is not None]
        if start is not None and ends:
            out[RECOVERY] = max(0.0, max(e["t"] for e in ends) - start["t"])
        return out

    def invalid_reasons(self) -> list[str]:
        """Why the test measured no degraded file system (INVALID), or why its file
        system may not be healthy again; [] when the fault went as planned."""
        end = self.first("degrade_end")
        if end is None:
            why = self.first("no_fault")
            return ["the fault was never injected"
                    + (f" ({why.get('why')})" if why else " (no event from the fault agent)")]
        restored = self.restore_reasons()
        if end.get("status") != 0:
            return [f"the degrade command failed (exit {end.get('status')}: "
                    f"{end.get('output', '')}); " + (restored[0] if restored else
                                                     "the file system was restored")]
        out = []
        if self.first("nodes_down") is None:
            said = self.first("not_degraded")
            out.append("the file system was not degraded during the measurement: not every "
                       "node's client saw the fault"
                       + (f" ({said.get('output', '')})" if said else ""))
        return out + restored

    def restore_reasons(self) -> list[str]:
        end = self.first("restore_end")
        if end is None:
            return ["the file system was not restored (no restore event): it may still be "
                    "degraded"]
        if end.get("status") != 0:
            return [f"the restore command failed (exit {end.get('status')}: "
                    f"{end.get('output', '')}): the file system may still be degraded"]
        return []

    def notes(self) -> list[str]:
        """What the figures do not say: who restored, a recovery not seen in time."""
        out = []
        start = self.first("restore_start")
        if start is not None and start.get("by") not in (None, "the job's request"):
            out.append(f"restored by the harness because {start.get('by')}")
        missed = self.first("not_healed")
        if missed is not None:
            out.append(f"the file system did not report its heal done within "
                       f"{missed.get('limit_s', '?')} s")
        if self.first("nodes_not_healthy") is not None:
            out.append("not every node's client reconnected within the bound")
        return out


def fault_of(events: list[dict[str, Any]]) -> Fault:
    return Fault(tuple(events))


def not_degraded_after(answers: dict[str, list[str]], nodes: int) -> list[str]:
    """A measurement that ended with a node whose client reached every server again:
    not a degraded file system's figure (``answers``: the nodes' probe after it)."""
    down = sum(len(n) for a, n in answers.items() if a.startswith("down "))
    if answers and down >= nodes:
        return []
    said = "; ".join(f"{','.join(sorted(n))}: {a}" for a, n in answers.items()) or "no answer"
    return [f"the file system was not degraded during the measurement: when the benchmark "
            f"ended, not every node's client saw the fault ({said})"]
