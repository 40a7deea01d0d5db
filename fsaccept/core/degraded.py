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

A timeline is the fault of one job: its events lie within that job's recorded
submission and completion (:meth:`Fault.outside_job`), and the data a test reads back
was written before its fault began (:meth:`Fault.written_after`).  The nodes' answers
after the benchmark are matched to the job's node list
(:func:`not_degraded_after`).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fsaccept.core.formatting import format_number

#: Starts the job's fault lines: ``fsaccept-fault EVENT EPOCH TEXT``.
MARKER = "fsaccept-fault"

#: The figures of every degraded-mode test (seconds), each a ceiling.
DETECT, FAILOVER, RECOVERY = "time_to_detect_s", "failover_s", "recovery_s"
FIGURES = (DETECT, FAILOVER, RECOVERY)

#: The ReFrame parameter naming a degraded-mode test's scenario when the system declares
#: several (``extras.degraded.scenarios``) or the reference file names several
#: (``degraded.scenarios``): ``DegradedIORWriteBandwidth %fault_scenario=mds-failover``.
#: A read test records its dataset's in a loggable variable of the same name.  A system
#: with one fault plan and a file that names none: no parameter, the names unchanged.
SCENARIO_PARAMETER = "fault_scenario"
#: A scenario's name: lowercase letters, digits, ``-`` and ``_`` (it goes into test names,
#: ReFrame's ``-n`` patterns and keys of the reference file).
SCENARIO_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")


def scenario_name_problem(name: object) -> str:
    """Why ``name`` cannot name a scenario ('' when it can)."""
    if isinstance(name, str) and SCENARIO_NAME.fullmatch(name):
        return ""
    return (f"{name!r} is not a scenario name (at most 40 lowercase letters, digits, - and "
            "_, starting with a letter or a digit)")


#: The events that happen within the job: the degrade it asks for and waits on, and the
#: lines it prints.  (The agent restores and waits for the heal after the job, too.)
IN_JOB = ("degrade_start", "degrade_end", "nodes_down", "not_degraded", "failover",
          "restore_answer", "nodes_healthy", "nodes_not_healthy")

#: Seconds an event may lie outside its job's recorded submission and completion:
#: ReFrame records the submission once sbatch has returned, and Slurm's accounting the
#: end in whole seconds.  Another job's fault lies a whole benchmark away.
JOB_SLACK_S = 1.0


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


class TimelineError(ValueError):
    """A recorded ``fault_timeline`` that is not one; the message says why."""


def loads(text: str) -> list[dict[str, Any]]:
    """A recorded timeline (``fault_timeline`` of a run report); [] for none ('');
    TimelineError when it is not a list of events, each with its name and finite time."""
    if not text:
        return []
    try:
        data = json.loads(text)
    except RecursionError:
        raise TimelineError("fault_timeline cannot be read: nested too deeply") from None
    except ValueError as err:
        raise TimelineError(f"fault_timeline cannot be read: not JSON ({err})") from None
    if not isinstance(data, list):
        raise TimelineError("fault_timeline cannot be read: not a list of events")
    for i, e in enumerate(data):
        if not (isinstance(e, dict) and isinstance(e.get("event"), str)
                and _finite_time(e.get("t"))):
            raise TimelineError(f"fault_timeline cannot be read: item {i} is not an event "
                                "with a name and a finite time")
    return data


def _seconds(value: float) -> str:
    """A time between two events, to the millisecond ('1.2', '44.473')."""
    return format_number(round(value, 3))


def _finite_time(t: Any) -> bool:
    if isinstance(t, bool) or not isinstance(t, (int, float)):
        return False
    try:
        return math.isfinite(t)
    except OverflowError:  # an integer no float holds
        return False


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

    def every(self, name: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["event"] == name]

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
        start = self.first("degrade_start")
        if start is None or start["t"] > end["t"]:
            out.append("the fault's start is not recorded (no degrade_start before its "
                       "degrade_end)")
        if self.first("nodes_down") is None:
            said = self.first("not_degraded")
            out.append("the file system was not degraded during the measurement: not every "
                       "node's client saw the fault"
                       + (f" ({said.get('output', '')})" if said else ""))
        return out + restored

    def restore_reasons(self) -> list[str]:
        """The last restore says how the file system was left: it must have succeeded,
        and the file system healed after it."""
        ends = self.every("restore_end")
        if not ends:
            return ["the file system was not restored (no restore event): it may still be "
                    "degraded"]
        end = max(ends, key=lambda e: e["t"])
        if end.get("status") != 0:
            return [f"the restore command failed (exit {end.get('status')}: "
                    f"{end.get('output', '')}): the file system may still be degraded"]
        return self.heal_reasons(end["t"])

    def heal_reasons(self, restored_at: float) -> list[str]:
        """A recovery not seen: no ``healed`` after the restore (at ``restored_at``), a
        ``not_healed`` at any time, a node whose client did not reconnect."""
        out = []
        missed = self.first("not_healed")
        if missed is not None:
            out.append(f"the file system did not report its heal done (not_healed, limit "
                       f"{missed.get('limit_s', '?')} s): it may still be degraded")
        elif not any(e["t"] >= restored_at for e in self.every("healed")):
            out.append("the file system never reported its heal done after its restore (no "
                       "healed event after the last restore_end): it may still be degraded")
        if self.first("nodes_not_healthy") is not None:
            out.append("not every node's client reached every server again after the "
                       "restore (nodes_not_healthy): the file system may still be degraded")
        return out

    def outside_job(self, jobid: str, submitted: float | None,
                    completed: float | None) -> list[str]:
        """Why this timeline is not the fault of job ``jobid`` (its recorded submission
        and completion, Unix times): every event follows the submission (the agent's
        start aside: it starts right before it), and those within the job
        (:data:`IN_JOB`) precede its completion, each within :data:`JOB_SLACK_S`."""
        if not self.events:
            return []
        job = f"job {jobid or '?'}"
        if not (_finite_time(submitted) and _finite_time(completed)):
            return [f"the fault timeline cannot be matched to its {job}: the job's "
                    "submission or completion time is not recorded"]
        out = []
        for e in self.events:
            if e["event"] != "agent_start" and e["t"] < submitted - JOB_SLACK_S:
                out.append(f"{e['event']} {_seconds(submitted - e['t'])} s before "
                           "it was submitted")
            elif e["event"] in IN_JOB and e["t"] > completed + JOB_SLACK_S:
                out.append(f"{e['event']} {_seconds(e['t'] - completed)} s after "
                           "it completed")
        return [f"the fault timeline is not that of its own {job}: {'; '.join(out[:3])}"
                + ("; ..." if len(out) > 3 else "")] if out else []

    def written_after(self, dataset: str, completed: float | None) -> list[str]:
        """Why the data a test reads (written by ``dataset``, whose job completed at
        ``completed``, Unix time) is not data written before its fault began."""
        start = self.first("degrade_start") or self.first("degrade_end")
        if start is None:
            return []  # no fault: invalid_reasons says so
        if not _finite_time(completed):
            return [f"evidence missing: when {dataset}'s job completed is not recorded: the "
                    "data it wrote cannot be shown to predate the fault"]
        if completed >= start["t"]:
            return [f"the data it reads was written after the fault began: {dataset}'s job "
                    f"completed {_seconds(completed - start['t'])} s after "
                    f"{start['event']}"]
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


def fault_from(text: str) -> tuple[Fault, list[str]]:
    """The fault a recorded ``fault_timeline`` gives, and why it cannot be read ([]
    when it can: an unreadable timeline gives a fault without events)."""
    try:
        return fault_of(loads(text)), []
    except TimelineError as err:
        return fault_of([]), [str(err)]


def not_degraded_after(answers: dict[str, list[str]], nodes: Sequence[str]) -> list[str]:
    """Why a measurement did not end on a degraded file system (``answers``: the nodes'
    probe after it, ``{answer: its nodes}``; ``nodes``: the job's node list): every node
    of the job must answer "down"; an answer from a node not of the job, or a node
    answering twice, is not one the job's probe gives."""
    said = Counter(n for who in answers.values() for n in who)
    out = []
    strangers = sorted(n for n in said if n not in nodes)
    if strangers:
        out.append(f"the nodes' probe after the benchmark names node "
                   f"{','.join(strangers)}, not of the job ({','.join(nodes) or 'none'})")
    twice = sorted(n for n, k in said.items() if k > 1)
    if twice:
        out.append(f"node {','.join(twice)} answered the nodes' probe after the benchmark "
                   "more than once")
    down = {n for a, who in answers.items() if a.startswith("down ") for n in who}
    if not nodes or set(nodes) - down:
        healthy = {a: [n for n in who if n in nodes and n not in down]
                   for a, who in answers.items()}
        unheard = sorted(set(nodes) - set(said))
        groups = ([f"{','.join(sorted(who))}: {a}" for a, who in healthy.items() if who]
                  + ([f"{','.join(unheard)}: no answer"] if unheard else []))
        out.append("the file system was not degraded during the measurement: when the "
                   "benchmark ended, not every node's client saw the fault ("
                   + ("; ".join(groups) or "no node of the job recorded") + ")")
    return out
