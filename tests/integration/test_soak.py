"""The soak on the real volume (issue 39 §3): fio on every node for 40 s, its interval
logs judged.

- Left alone, it passes; its record, figures and judgements are in the run report.
- The brick holding one node's file stopped with SIGSTOP for 12 s mid-run (resumed in
  every exit path): that node's client makes no progress, and the soak FAILs naming
  when and on which node.  No figure is compared with the machine's speed: the stall is
  made by the fixture, and the limit (5 s) is far below it.
"""

import json
import os
import signal
import threading
import time

import pytest

from tests.conftest import gluster_reference, run_gluster_checks

pytestmark = [pytest.mark.integration, pytest.mark.volume_cluster]

SOAK = {"node_fraction": 1.0, "file_size": "64MiB", "runtime_s": 40, "max_stall_s": 5,
        # The lab's bandwidth follows whatever else the host runs (a CI beside other
        # work drifted 94 % in 40 s, a CI alone 101 %): drift and shortfall are judged at
        # limits no series reaches (drift 6, soak.DRIFT_CEILING; shortfall 1), so that
        # only a stall, which the test makes, can fail it; their rules are tested on
        # series in tests/unit/test_soak.py.
        "max_drift": 6.0, "max_node_shortfall": 1.0,
        # As the lab's fio entries (reference/local-gluster.yaml): the emulated nodes
        # share 2 cores with everything else, so one of them may lag a loaded host: no
        # outlier rule here.
        "outlier_fraction": 0}
STOPPED_S = 12


def soak(tmp_path, layout):
    return run_gluster_checks("soak", tmp_path, "-n", "FioSoak",
                              env=gluster_reference(tmp_path, layout,
                                                    lambda d: d["tests"].update(fio_soak=SOAK)))


def test_a_soak_left_alone_passes(gluster_env, tmp_path):
    _, layout = gluster_env
    proc, cases = soak(tmp_path, layout)
    case = cases["FioSoak"]
    assert case["result"] == "pass", proc.stdout[-3000:]
    record = json.loads(case["soak_record"])
    assert record["settings"]["max_stall_s"] == 5
    assert {s["name"] for s in record["series"]} >= {"write bandwidth"}
    assert case["soak_failures"] == ""


def _stop_a_brick_mid_run(layout, said: dict, stop: threading.Event):
    """Once a brick holds a node's fio file (fio writes its logs only when it ends), let
    fio run 5 s, then stop that brick for STOPPED_S seconds."""
    from lab.gluster import Gluster
    deadline = time.monotonic() + 300
    held = []
    while time.monotonic() < deadline and not stop.is_set() and not held:
        held = [(b, f) for b in layout.brick_dirs for f in b.glob("fsaccept/FioSoak*/*/soak.0.0")]
        time.sleep(0.2)
    if not held:
        said["error"] = "no brick held a soak file while the soak ran"
        return
    if stop.wait(5):
        said["error"] = "the soak ended within 5 s of its files appearing"
        return
    brick, data = held[0]
    pid = Gluster(layout).brick_pids()[brick.name]
    said.update(brick=brick.name, node=data.parent.name, pid=pid)
    os.kill(pid, signal.SIGSTOP)
    try:
        stop.wait(STOPPED_S)
    finally:
        os.kill(pid, signal.SIGCONT)


def test_a_stopped_brick_is_a_stall_named_by_time_and_node(gluster_env, tmp_path):
    _, layout = gluster_env
    said, stop = {}, threading.Event()
    stopper = threading.Thread(target=_stop_a_brick_mid_run,
                               args=(layout, said, stop))
    stopper.start()
    try:
        proc, cases = soak(tmp_path, layout)
    finally:
        stop.set()
        stopper.join()
        if "pid" in said:  # resumed whatever happened
            os.kill(said["pid"], signal.SIGCONT)
    assert "error" not in said and "node" in said, said
    case = cases["FioSoak"]
    assert case["result"] == "fail", proc.stdout[-3000:]
    failures = case["soak_failures"]
    assert failures.startswith("stall: no progress from t+"), failures
    assert f"on {said['node']}" in failures or f", {said['node']}" in failures, (said, failures)
    stalled = [v for k, v in case["perfvalues"].items() if k.endswith(":soak_longest_stall_s")]
    assert stalled and stalled[0][0] > SOAK["max_stall_s"], stalled
