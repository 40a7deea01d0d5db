"""The degraded-mode fault: the site's declaration, the login node's agent (run here
with real bash commands and a job played by the test through the same files), and the
timeline read back (``fsaccept.core.degraded``)."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from fsaccept.core import degraded
from fsaccept.suite import faults

# -- the declaration -------------------------------------------------------------------


@pytest.mark.parametrize("declared, message", [
    (None, "extras.degraded: not declared"),
    ("manual", "extras.degraded: not declared"),
    ({"degrade": "x", "restore": "y"}, "extras.degraded.healed: missing or empty"),
    ({"degrade": " ", "restore": "y", "healed": "z"}, "extras.degraded.degrade: missing"),
    ({"degrade": "a\nb", "restore": "y", "healed": "z"}, "extras.degraded.degrade: one line"),
    ({"degrade": "a", "restore": 3, "healed": "z"}, "extras.degraded.restore: missing"),
    ({"manual": "yes", "healed": "z"}, "extras.degraded.manual: 'yes' is not true or false"),
    ({"degrade": "a", "restore": "b", "healed": "c", "undo": "d"},
     "extras.degraded: unknown key(s) undo"),
])
def test_a_bad_declaration_is_named(declared, message):
    with pytest.raises(faults.FaultPlanError, match=re.escape(message)):
        faults.plan_of(declared)


def test_a_manual_declaration_needs_only_the_heal_check():
    plan = faults.plan_of({"manual": True, "healed": "true"})
    assert plan.manual and "manual" in plan.describe()


# -- the agent -------------------------------------------------------------------------


#: How long a wait here may last: it only catches a hang, however loaded the machine.
WAIT_S = 300.0


def start(tmp_path: Path, degrade="touch degraded", restore="rm -f degraded",
          healed="test ! -e degraded", parent=None, heal_limit_s=WAIT_S):
    """The agent in a thread, its commands run in ``tmp_path`` (a file plays the fault)."""
    here = f"cd {shlex.quote(str(tmp_path))} && "
    degrade, restore, healed = here + degrade, here + restore, here + healed
    d = tmp_path / "fault"
    d.mkdir()
    plan = faults.FaultPlan(healed=healed, degrade=degrade, restore=restore)
    agent = faults.Agent(d, plan, parent or os.getpid(), deadline_s=3600,
                         heal_limit_s=heal_limit_s)
    thread = threading.Thread(target=agent.run)
    thread.start()
    return d, thread


def wait_for(path: Path, agent: threading.Thread | None = None) -> Path:
    """``path`` once the agent has written it; fails at once when the ``agent`` ended
    without writing it (the bound only catches a hang)."""
    deadline = time.monotonic() + WAIT_S
    while not path.exists():
        assert agent is None or agent.is_alive() or path.exists(), \
            f"the agent ended without writing {path.name}"
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)
    return path


def ask(d: Path, request: str) -> str:
    (d / f"{request}.request").touch()
    return wait_for(d / f"{request}.done").read_text().strip()


def finish(thread: threading.Thread) -> None:
    thread.join(WAIT_S)
    assert not thread.is_alive(), "the agent did not end"


def names(d: Path) -> list[str]:
    return [e["event"] for e in faults.read_timeline(d / "timeline.jsonl")]


def test_the_job_asks_degrade_then_restore_and_the_heal_is_timed(tmp_path):
    d, thread = start(tmp_path)
    assert ask(d, "degrade") == "ok" and (tmp_path / "degraded").exists()
    assert ask(d, "restore") == "ok"
    finish(thread)
    assert names(d) == ["agent_start", "degrade_start", "degrade_end", "restore_start",
                        "restore_end", "healed", "agent_end"]
    assert not (tmp_path / "degraded").exists()
    fault = degraded.fault_of(faults.read_timeline(d / "timeline.jsonl"))
    assert fault.first("restore_start")["by"] == "the job's request"


def test_a_job_that_ends_without_asking_is_restored_all_the_same(tmp_path):
    """Cancelled, timed out, killed: the job never asks for the restore."""
    d, thread = start(tmp_path)
    assert ask(d, "degrade") == "ok"
    (d / "job.ended").touch()
    finish(thread)
    assert not (tmp_path / "degraded").exists()
    by = faults.read_timeline(d / "timeline.jsonl")[3]
    assert by["event"] == "restore_start" and by["by"] == "the job ended"


def test_reframe_gone_restores(tmp_path):
    """The agent's parent (ReFrame) dies while the file system is degraded."""
    parent = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    d, thread = start(tmp_path, parent=parent.pid)
    assert ask(d, "degrade") == "ok"
    parent.kill()
    parent.wait()
    finish(thread)
    assert not (tmp_path / "degraded").exists()
    assert "ReFrame" in faults.read_timeline(d / "timeline.jsonl")[3]["by"]


def test_a_failing_degrade_is_answered_and_restored(tmp_path):
    d, thread = start(tmp_path, degrade="touch degraded; echo half done >&2; exit 7")
    said = ask(d, "degrade")
    assert said == "failed the degrade command exited 7: half done"
    (d / "job.ended").touch()  # the job aborts
    finish(thread)
    assert not (tmp_path / "degraded").exists()
    fault = degraded.fault_of(faults.read_timeline(d / "timeline.jsonl"))
    assert fault.invalid_reasons() == ["the degrade command failed (exit 7: half done); "
                                       "the file system was restored"]


def test_a_heal_never_seen_is_given_up_after_its_bound(tmp_path):
    d, thread = start(tmp_path, healed="false", heal_limit_s=0.5)
    ask(d, "degrade")
    ask(d, "restore")
    finish(thread)
    fault = degraded.fault_of(faults.read_timeline(d / "timeline.jsonl"))
    assert fault.first("not_healed")["limit_s"] == 0.5
    assert fault.figures[degraded.RECOVERY] >= 0.5
    assert "did not report its heal done within 0.5 s" in fault.notes()[0]


def test_a_failing_restore_is_said_and_no_heal_awaited(tmp_path):
    # Awaited, the heal would keep the agent for an hour.
    d, thread = start(tmp_path, restore="exit 3", heal_limit_s=3600)
    ask(d, "degrade")
    assert ask(d, "restore").startswith("failed the restore command exited 3")
    finish(thread)
    assert "healed" not in names(d)
    fault = degraded.fault_of(faults.read_timeline(d / "timeline.jsonl"))
    assert fault.restore_reasons() == ["the restore command failed (exit 3: ): the file "
                                       "system may still be degraded"]


def test_a_job_that_never_starts_injects_nothing(tmp_path):
    d, thread = start(tmp_path)
    (d / "job.ended").touch()
    finish(thread)
    assert names(d) == ["agent_start", "no_fault", "agent_end"]
    assert not (tmp_path / "degraded").exists()


def test_the_agent_process_restores_when_terminated(tmp_path):
    """``python -m fsaccept.suite.faults agent``, sent SIGTERM while degraded."""
    flag = shlex.quote(str(tmp_path / "degraded"))
    plan = faults.FaultPlan(healed="true", degrade=f"touch {flag}", restore=f"rm -f {flag}")
    proc = faults.start_agent(tmp_path / "fault", plan, deadline_s=3600, heal_limit_s=WAIT_S)
    try:
        assert ask(tmp_path / "fault", "degrade") == "ok"
        proc.terminate()
        proc.wait(WAIT_S)
    finally:
        proc.kill()
    assert not (tmp_path / "degraded").exists()


def test_manual_mode_waits_for_the_operator(tmp_path):
    """``manual``: the operator is asked (a file says what to do and how to confirm),
    and the agent goes on once the confirmation is there."""
    d = tmp_path / "fault"
    d.mkdir()
    plan = faults.plan_of({"manual": True, "healed": "true"})
    agent = faults.Agent(d, plan, os.getpid(), deadline_s=3600, heal_limit_s=WAIT_S)
    thread = threading.Thread(target=agent.run)
    thread.start()
    (d / "degrade.request").touch()
    said = wait_for(d / "degrade.operator", thread).read_text()
    assert f"touch {d / 'degrade.confirmed'}" in said
    assert not (d / "degrade.done").exists()
    (d / "degrade.confirmed").touch()
    assert ask(d, "degrade") == "ok"
    (d / "restore.request").touch()
    wait_for(d / "restore.operator", thread)
    (d / "restore.confirmed").touch()
    finish(thread)
    assert names(d)[-2:] == ["healed", "agent_end"]


def test_the_operator_never_reads_half_an_instruction(tmp_path, monkeypatch):
    """The agent's thread held right after the file's creation, before its text (as a
    loaded machine may hold it): what the operator (or this test) finds is the whole
    instruction or nothing.  The agent wrote DIR/degrade.operator in place: the manual
    test above once read it empty."""
    created, go_on = threading.Event(), threading.Event()
    write_text = Path.write_text

    def held(self, text, *a, **k):
        if self.name.endswith(".operator") and not created.is_set():
            self.touch()
            created.set()
            assert go_on.wait(WAIT_S), "the test never let the agent go on"
        return write_text(self, text, *a, **k)

    monkeypatch.setattr(Path, "write_text", held)
    d = tmp_path / "fault"
    d.mkdir()
    agent = faults.Agent(d, faults.plan_of({"manual": True, "healed": "true"}), os.getpid(),
                         deadline_s=3600, heal_limit_s=WAIT_S)
    thread = threading.Thread(target=agent.run)
    thread.start()
    seen = d / "degrade.operator"
    try:
        (d / "degrade.request").touch()
        assert created.wait(WAIT_S)
        assert not seen.exists() or "touch " in seen.read_text()
        go_on.set()
        assert "touch " in wait_for(seen, thread).read_text()
    finally:  # the agent ends whatever was asserted: confirmed, the job gone
        go_on.set()
        for name in ("degrade.confirmed", "job.ended", "restore.confirmed"):
            (d / name).touch()
        finish(thread)


# -- the timeline ----------------------------------------------------------------------


def test_job_lines_are_events_and_garbage_is_not():
    out = "\n".join([
        "fsaccept-fault nodes_down 100.5",
        "fsaccept-fault failover 100.75 written",
        "fsaccept-fault nodes_down nan",
        "fsaccept-fault bogus",
        "fsaccept-faultx nodes_down 1",
        "IOR output",
    ])
    assert degraded.job_events(out) == [
        {"event": "nodes_down", "t": 100.5, "by": "job", "output": ""},
        {"event": "failover", "t": 100.75, "by": "job", "output": "written"}]


@pytest.mark.parametrize("text", ["", "null", "{}", "[1, 2]", "[{\"event\": 3, \"t\": 1}]",
                                  "[{\"event\": \"x\", \"t\": \"NaN\"}]", "not json",
                                  "[{\"event\": \"x\", \"t\": Infinity}]"])
def test_a_recorded_timeline_that_is_not_one_reads_as_none(text):
    assert degraded.loads(text) == []


def test_figures_from_a_timeline():
    events = [{"event": "degrade_end", "t": 10.0, "status": 0},
              {"event": "nodes_down", "t": 10.5}, {"event": "failover", "t": 11.0},
              {"event": "restore_start", "t": 20.0, "by": "the job's request"},
              {"event": "restore_end", "t": 21.0, "status": 0},
              {"event": "nodes_healthy", "t": 22.0}, {"event": "healed", "t": 25.0}]
    fault = degraded.fault_of(json.loads(json.dumps(events)))
    assert fault.figures == {degraded.DETECT: 0.5, degraded.FAILOVER: 1.0,
                             degraded.RECOVERY: 5.0}
    assert fault.invalid_reasons() == [] and fault.notes() == []
    unseen = degraded.fault_of([e for e in events if e["event"] != "nodes_down"])
    assert unseen.invalid_reasons()[0].startswith(
        "the file system was not degraded during the measurement")
    never = degraded.fault_of([{"event": "no_fault", "t": 1, "why": "the job ended"}])
    assert never.invalid_reasons() == ["the fault was never injected (the job ended)"]


def test_a_measurement_must_end_with_every_node_seeing_the_fault():
    down = "down GlusterFS client not connected to brick 127.0.0.2:/b2"
    assert degraded.not_degraded_after({down: ["n1", "n2"]}, 2) == []
    said = degraded.not_degraded_after({down: ["n1"], "ok 4 of 4 bricks connected": ["n2"]},
                                       2)
    assert said and "n2: ok 4 of 4" in said[0]
    assert degraded.not_degraded_after({}, 2)


# -- the documented declarations -------------------------------------------------------


def _example_site():
    import importlib.util
    path = Path(__file__).resolve().parents[2] / "config" / "systems" / "example_lustre.py"
    spec = importlib.util.spec_from_file_location("_example_lustre", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["LUSTRE_OSS_FAILOVER", "LUSTRE_OST_REBUILD",
                                  "GPFS_DISK_STOP"])
def test_the_documented_declarations_pass_a_dry_run(name):
    """docs/user/degraded.md's Lustre and GPFS examples: valid declarations whose
    commands parse, in the order a job runs them (nothing is executed)."""
    site = _example_site()
    plan = faults.plan_of(getattr(site, name))
    steps = faults.dry_run(plan)
    assert steps[1] == "degrade: " + plan.degrade and steps[5] == "restore: " + plan.restore
    doc = (Path(__file__).resolve().parents[2] / "docs" / "user" / "degraded.md").read_text()
    for command in (plan.degrade, plan.restore, plan.healed):
        assert command in doc, f"{name}: docs/user/degraded.md does not show {command!r}"
    extras = site.site_configuration["systems"][0]["partitions"][0]["extras"]
    assert faults.plan_of(extras["degraded"]) == faults.plan_of(site.LUSTRE_OSS_FAILOVER)


def test_a_command_that_does_not_parse_fails_the_dry_run():
    plan = faults.plan_of({"degrade": "ssh oss01 'umount", "restore": "true",
                           "healed": "true"})
    with pytest.raises(ValueError, match="degrade: .* is not valid shell"):
        faults.dry_run(plan)


def test_a_site_dry_runs_its_own_declaration(capsys):
    """``fsaccept system NAME --degraded-dry-run``: the steps in order, or exit 2 naming
    the system, partition and key."""
    from fsaccept.suite import sites
    assert sites.main(["example-lustre", "--degraded-dry-run"]) == 0
    out = capsys.readouterr().out
    assert "example-lustre:compute: a degraded-mode job would:" in out
    assert "2. degrade: ssh oss01 'umount -a -t lustre'" in out
    assert sites.main(["workstation", "--degraded-dry-run"]) == 2
    assert "workstation:" in capsys.readouterr().err
