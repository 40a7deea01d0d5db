"""Degraded-mode acceptance: the site's declaration of how its file system is degraded
and restored, and the agent that carries it out on the login node for one job.

**The declaration** lives in the site's ReFrame system configuration (code the site
trusts; never the reference file, which is data), in the partition's ``extras``::

    'degraded': {'degrade': 'CMD', 'restore': 'CMD', 'healed': 'CMD'}
    'degraded': {'manual': True, 'healed': 'CMD'}    # an operator degrades and restores
    'degraded': {'scenarios': {'mds-failover': {...a plan...},   # several, each named
                               'osd-rebuild': {...a plan...}}}

With ``scenarios``, each degraded-mode test runs once per scenario (the ReFrame parameter
``fault_scenario``: ``fsaccept.rfm.degraded.on_scenarios``), each with its own plan.  Each CMD runs with ``bash -c`` on the login node, with the rights of who runs the
harness; ``healed`` exits 0 once the file system reports its rebuild or heal done.  How
the harness sees the fault is the server probe every job already runs
(``fsaccept.core.servers``: the partition's ``extras.server_probe``, else fsaccept's own
for the target's type): the job proves on every node that the fault is seen.

**The agent** (``python -m fsaccept.suite.faults agent DIR``) is started by a
degraded-mode test right before its job is submitted, in a session of its own (a
Ctrl-C of ReFrame does not reach it).  The job and the agent talk through files in
``DIR`` (the test's stage directory, which both see): the job asks
(``degrade.request``, ``restore.request``), the agent answers (``degrade.done``,
``restore.done``: ``ok`` or ``failed WHY``) and appends every event, with its time, to
``timeline.jsonl``.  Whatever ends the job (its own restore request, a cancel, the time
limit, ReFrame interrupted, the agent's deadline), the agent runs the restore command
once the fault was injected, then waits (bounded) for ``healed``: the file system is
left healthy in every exit path, and the timeline says who restored it and when.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fsaccept.core import degraded, servers

#: The job's lines about the fault start with this (``fsaccept-fault EVENT EPOCH ...``).
MARKER = "fsaccept-fault"
#: How long the agent gives each command before it counts as failed.
COMMAND_TIMEOUT_S = 600
#: How often the agent looks for requests and polls ``healed``.
POLL_S = 0.2
HEAL_POLL_S = 1.0

_KEYS = {"degrade", "restore", "healed", "manual"}
#: The key of several named plans.
SCENARIOS = "scenarios"


class FaultPlanError(ValueError):
    """A declaration that cannot be used; the message names the key."""


@dataclass(frozen=True)
class FaultPlan:
    """How this system is degraded and restored (``manual``: by an operator)."""

    healed: str
    degrade: str = ""
    restore: str = ""
    manual: bool = False
    #: Its scenario's name ('' : the system's one plan).
    name: str = ""

    def describe(self) -> str:
        how = ("manual (an operator degrades and restores)" if self.manual else
               f"degrade: {self.degrade}; restore: {self.restore}")
        return (f"scenario {self.name}: " if self.name else "") + f"{how}; healed: {self.healed}"


def plan_of(declared: Any, where: str = "extras.degraded", name: str = "",
            also_known: tuple[str, ...] = ()) -> FaultPlan:
    """The one plan a declaration holds (``name``: its scenario's);
    FaultPlanError naming the key otherwise."""
    if not isinstance(declared, dict):
        raise FaultPlanError(f"{where}: not declared (a dict with degrade, restore and "
                             "healed commands, or manual: True and healed)")
    unknown = sorted(set(declared) - _KEYS)
    if unknown:
        raise FaultPlanError(f"{where}: unknown key(s) {', '.join(unknown)} "
                             f"(known: {', '.join(sorted(_KEYS | set(also_known)))})")
    manual = declared.get("manual", False)
    if not isinstance(manual, bool):
        raise FaultPlanError(f"{where}.manual: {manual!r} is not true or false")
    needed = ("healed",) if manual else ("degrade", "restore", "healed")
    for key in needed:
        value = declared.get(key)
        if not isinstance(value, str) or not value.strip():
            raise FaultPlanError(f"{where}.{key}: missing or empty (a shell command run on "
                                 "the login node)")
        if "\0" in value or "\n" in value:
            raise FaultPlanError(f"{where}.{key}: one line, no control characters")
    return FaultPlan(healed=declared["healed"], degrade=declared.get("degrade", ""),
                     restore=declared.get("restore", ""), manual=manual, name=name)


def plans_of(declared: Any, where: str = "extras.degraded") -> dict[str, FaultPlan]:
    """Every plan a system declares, by scenario: ``{'': plan}`` for one plan,
    ``{name: plan}`` for ``scenarios``; FaultPlanError naming the key otherwise."""
    if not (isinstance(declared, dict) and SCENARIOS in declared):
        return {"": plan_of(declared, where, also_known=(SCENARIOS,))}
    beside = sorted(set(declared) - {SCENARIOS})
    if beside:
        raise FaultPlanError(f"{where}: {', '.join(beside)} beside {SCENARIOS}: declare "
                             f"each plan under {SCENARIOS}.<name>, or one plan without "
                             f"{SCENARIOS}")
    named = declared[SCENARIOS]
    if not isinstance(named, dict) or not named:
        raise FaultPlanError(f"{where}.{SCENARIOS}: not a dict of named plans (name -> a "
                             "plan: degrade, restore and healed, or manual and healed)")
    out = {}
    for name, plan in named.items():
        problem = degraded.scenario_name_problem(name)
        if problem:
            raise FaultPlanError(f"{where}.{SCENARIOS}: {problem}")
        out[name] = plan_of(plan, f"{where}.{SCENARIOS}.{name}", name)
    return out


def scenario_plan(declared: Any, scenario: str = "",
                  where: str = "extras.degraded") -> FaultPlan:
    """The plan of ``scenario`` ('' : the system's one plan); FaultPlanError naming the
    key when the system does not declare it."""
    plans = plans_of(declared, where)
    if scenario in plans:
        return plans[scenario]
    if not scenario:
        raise FaultPlanError(f"{where}.{SCENARIOS}: several scenarios declared "
                             f"({', '.join(plans)}); this test names none")
    if "" in plans:
        raise FaultPlanError(f"{where}.{SCENARIOS}.{scenario}: not declared (the system "
                             f"declares one plan without a name; the scenario needs "
                             f"{where}.{SCENARIOS}.{scenario})")
    raise FaultPlanError(f"{where}.{SCENARIOS}.{scenario}: not declared (the system "
                         f"declares: {', '.join(plans)})")


def dry_run(plan: FaultPlan, probe: servers.Probe) -> list[str]:
    """What a degraded-mode job runs, in order, with each command's shell syntax checked
    (``bash -n``) and nothing executed: the plan's commands, and those of the server
    probe that proves the fault (the partition's own, else fsaccept's for the target's
    type); ValueError naming a command that does not parse."""
    steps = ([("degrade", plan.degrade)] if not plan.manual else []) + (
        [("restore", plan.restore)] if not plan.manual else []) + [("healed", plan.healed)]
    for name, command in steps + [(f"server probe {probe.name}", c) for c in probe.commands]:
        proc = subprocess.run(["bash", "-n", "-c", command], capture_output=True, text=True,
                              timeout=30)
        if proc.returncode != 0:
            raise ValueError(f"{name}: {command!r} is not valid shell: "
                             f"{proc.stderr.strip()[:300]}")
    how = dict(steps)
    seen = f"server probe {servers.describe(probe)}"
    return [
        f"every node checked healthy (mount, {seen})",
        "degrade: " + (how.get("degrade") or "an operator degrades, then confirms"),
        f"every node's client must see the fault ({seen}: {servers.reads(probe)}), "
        "else INVALID",
        "the first write + fsync after the fault is timed (failover)",
        "the benchmark runs (data written before the fault: after the recovery)",
        "restore: " + (how.get("restore") or "an operator restores, then confirms"),
        f"recovery timed until every node reaches every server and `{plan.healed}` exits 0",
    ]


# ---------------------------------------------------------------------------------------
# The agent (login node)


def run_command(command: str, timeout: float = COMMAND_TIMEOUT_S) -> tuple[int, str]:
    """(exit status, last lines of its output); 124 when it ran out of time."""
    try:
        proc = subprocess.run(["bash", "-c", command], capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL, errors="replace")
    except subprocess.TimeoutExpired:
        return 124, f"timed out after {timeout:.0f} s"
    except OSError as err:
        return 127, str(err)
    said = (proc.stdout + proc.stderr).strip().splitlines()
    return proc.returncode, " / ".join(said[-3:])[:500]


class Agent:
    """One job's fault, from the degrade request to the healed file system."""

    def __init__(self, directory: Path, plan: FaultPlan, parent: int, deadline_s: float,
                 heal_limit_s: float) -> None:
        self.dir, self.plan, self.parent = directory, plan, parent
        self.deadline = time.time() + deadline_s
        self.heal_limit_s = heal_limit_s
        self.degraded = False

    def event(self, name: str, **fields: Any) -> None:
        with open(self.dir / "timeline.jsonl", "a") as f:
            f.write(json.dumps({"event": name, "t": time.time(), **fields}) + "\n")

    def write(self, name: str, text: str) -> None:
        """``DIR/name`` whole or not at all (written beside, then renamed): the job and the
        operator never read half an answer or half an instruction."""
        tmp = self.dir / f".{name}"
        tmp.write_text(text + "\n")
        tmp.rename(self.dir / name)

    def answer(self, request: str, text: str) -> None:
        self.write(f"{request}.done", text)

    def why_stop(self) -> str:
        """Why to stop waiting for the job ('' to go on)."""
        if (self.dir / "job.ended").exists():
            return "the job ended"
        if not _alive(self.parent):
            return "ReFrame (the agent's parent) ended"
        if time.time() > self.deadline:
            return "the agent's deadline passed"
        jobid = _read(self.dir / "jobid")
        if jobid and not _job_listed(jobid):
            return f"job {jobid} is no longer in the queue"
        return ""

    def wait_for(self, request: str) -> str:
        """'' once ``request`` is asked for, else why it will not be."""
        while not (self.dir / f"{request}.request").exists():
            why = self.why_stop()
            if why:
                return why
            time.sleep(POLL_S)
        return ""

    def degrade(self) -> None:
        self.event("degrade_start")
        if self.plan.manual:
            code, said = self.operator("degrade")
        else:
            code, said = run_command(self.plan.degrade)
        self.degraded = True  # even a failed command may have done half of it
        self.event("degrade_end", status=code, output=said)
        self.answer("degrade", "ok" if code == 0 else
                    f"failed the degrade command exited {code}: {said}")

    def operator(self, what: str) -> tuple[int, str]:
        """Manual mode: ask, and wait for ``DIR/<what>.confirmed`` (bounded)."""
        self.write(f"{what}.operator",
                   f"{what} the file system now, then: touch {self.dir / (what + '.confirmed')}")
        print(f"fsaccept: operator: {what} the file system, then touch "
              f"{self.dir / (what + '.confirmed')}", file=sys.stderr, flush=True)
        while not (self.dir / f"{what}.confirmed").exists():
            if time.time() > self.deadline:
                return 1, "no operator confirmed before the agent's deadline"
            time.sleep(POLL_S)
        return 0, "confirmed by the operator"

    def restore(self, by: str) -> None:
        self.event("restore_start", by=by)
        if self.plan.manual:
            code, said = self.operator("restore")
        else:
            code, said = run_command(self.plan.restore)
        self.event("restore_end", status=code, output=said)
        self.answer("restore", "ok" if code == 0 else
                    f"failed the restore command exited {code}: {said}")
        if code == 0:  # after a failed restore there is no recovery to wait for
            self.wait_healed()

    def wait_healed(self) -> None:
        """Poll ``healed`` until it says done, at most ``heal_limit_s``."""
        start = time.time()
        while True:
            code, said = run_command(self.plan.healed, timeout=max(self.heal_limit_s, 10))
            if code == 0:
                self.event("healed", output=said)
                return
            if time.time() - start >= self.heal_limit_s:
                self.event("not_healed", status=code, output=said,
                           limit_s=self.heal_limit_s)
                return
            time.sleep(HEAL_POLL_S)

    def run(self) -> None:
        self.event("agent_start", pid=os.getpid(), plan=self.plan.describe())
        try:
            why = self.wait_for("degrade")
            if why:
                self.event("no_fault", why=why)
                return
            self.degrade()
            why = self.wait_for("restore")
            self.restore(by=why or "the job's request")
        finally:
            if self.degraded and not _has_event(self.dir, "restore_end"):
                self.restore(by="the agent's exit path")  # never leave it degraded
            self.event("agent_end")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def _job_listed(jobid: str) -> bool:
    """Whether Slurm still lists the job as pending or running (squeue's answer; a
    failing squeue counts as listed: only a clear "gone" ends the wait)."""
    try:
        proc = subprocess.run(["squeue", "-h", "-j", jobid, "-o", "%T"], capture_output=True,
                              text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return True
    if proc.returncode != 0:
        return "Invalid job id" not in proc.stderr
    return proc.stdout.strip() not in ("", "COMPLETED", "CANCELLED", "FAILED", "TIMEOUT",
                                       "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY")


def _has_event(directory: Path, name: str) -> bool:
    return any(e["event"] == name for e in read_timeline(directory / "timeline.jsonl"))


def read_timeline(path: Path) -> list[dict[str, Any]]:
    """The agent's events, in order (a line cut short by a kill is skipped)."""
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict) and isinstance(item.get("event"), str):
            out.append(item)
    return out


def start_agent(directory: Path, plan: FaultPlan, deadline_s: float,
                heal_limit_s: float) -> subprocess.Popen:
    """Start the agent for one job, in a session of its own (ReFrame's Ctrl-C does not
    reach it: it restores what it degraded when ReFrame is gone)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "plan.json").write_text(json.dumps({
        "healed": plan.healed, "degrade": plan.degrade, "restore": plan.restore,
        "manual": plan.manual, "name": plan.name, "parent": os.getpid(), "deadline_s": deadline_s,
        "heal_limit_s": heal_limit_s}))
    log = open(directory / "agent.log", "ab")
    return subprocess.Popen([sys.executable, "-m", "fsaccept.suite.faults", "agent",
                             str(directory)], stdin=subprocess.DEVNULL, stdout=log,
                            stderr=log, start_new_session=True)


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] != "agent":
        print("usage: python -m fsaccept.suite.faults agent DIR", file=sys.stderr)
        return 2
    # A TERM or HUP (a shutdown, a closed terminal) goes through run()'s exit path, which
    # restores what was degraded.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda signum, _frame: sys.exit(128 + signum))
    directory = Path(argv[1])
    conf = json.loads((directory / "plan.json").read_text())
    plan = FaultPlan(healed=conf["healed"], degrade=conf["degrade"],
                     restore=conf["restore"], manual=conf["manual"],
                     name=conf.get("name", ""))
    Agent(directory, plan, conf["parent"], conf["deadline_s"], conf["heal_limit_s"]).run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
