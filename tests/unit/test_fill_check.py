"""Acceptance at a declared fill level, the ReFrame half (issue 39 §1), without a cluster:
the fill's job lines run by bash with Slurm and df played by small scripts (a file system
of 16 MiB whose used bytes are what its directory holds), the node program writing real
files below a temporary target; the record they make, judged; a filler stopped by
SIGTERM; the filled checks' thresholds from their empty figures; ``fsaccept fill remove``
on a run directory with owner markers and the ledger; the session's ``-n`` pattern and
its refusals; the checks ReFrame lists for the lab's fill reference."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from fsaccept import cli
from fsaccept.core import fill
from fsaccept.core.fill import Df
from fsaccept.core.units import KIB, MIB
from fsaccept.rfm import fill as check
from fsaccept.suite import filler, fillrun, listing, owned
from fsaccept.suite.reference import ReferenceError, load_reference
from tests.unit.test_fill import filled_catalogue  # noqa: F401 (a fixture)

REPO = Path(__file__).resolve().parents[2]
LAB_FILL = REPO / "reference" / "local-gluster-fill.yaml"
RUN = "20261127T120000-4242"
#: The fake file system: its capacity, and what is used on it before the fill.
CAP, USED = 16 * MIB, 2 * MIB
SECTION = {"allowed": True, "fraction": 0.8, "tolerance": 0.1, "max_degradation": 0.3,
           "file_sizes": [{"size": "16KiB", "share": 0.5}, {"size": "64KiB", "share": 0.5}],
           "churn": {"rounds": 2, "delete_fraction": 0.25}}
NODES = ("n1", "n2", "n3", "n4")


# --------------------------------------------------------------------------- the job


def _fakes(bin_dir: Path) -> None:
    """Slurm and df, played: ``scontrol show hostnames`` gives n1..n4; ``srun`` runs its
    command once on each node (at once, each with its SLURMD_NODENAME) and fails when one
    does; ``df`` reports a file system of ``$FAKE_CAP`` bytes whose used bytes are
    ``$FAKE_USED`` and what ``$FAKE_ROOT`` holds (its inodes: a file each), and blocks
    on its ``$FAKE_DF_BLOCK_AT``-th call (a file system that stops answering)."""
    scripts = {
        "scontrol": '[ "$1 $2" = "show hostnames" ] && printf "%s\\n" n1 n2 n3 n4',
        "srun": r'''
opts=(); while [[ "$1" == --* ]]; do opts+=("$1"); shift; done
echo "srun ${opts[*]} $1 ... ${*: -4}" >> "$CALLS"
pids=(); for n in n1 n2 n3 n4; do SLURMD_NODENAME=$n "$@" & pids+=($!); done
rc=0; for p in "${pids[@]}"; do wait "$p" || rc=$?; done; exit $rc''',
        "df": r'''
[ "$1 $2" = "-B1 --output=size,used,avail,itotal,iused,iavail" ] || exit 9
echo x >> "$DF_CALLS"
if [ -n "${FAKE_DF_BLOCK_AT:-}" ] && [ "$(wc -l < "$DF_CALLS")" -ge "$FAKE_DF_BLOCK_AT" ]; then
  exec sleep 60; fi
bytes=$(du -sb --apparent-size "$FAKE_ROOT" | cut -f1)
files=$(find "$FAKE_ROOT" | wc -l)
used=$((FAKE_USED + bytes))
echo "   1B-blocks     Used    Avail Inodes IUsed IFree"
echo "$FAKE_CAP $used $((FAKE_CAP - used)) 100000 $((100 + files)) $((99900 - files))"''',
    }
    bin_dir.mkdir()
    for name, body in scripts.items():
        path = bin_dir / name
        path.write_text("#!/bin/bash\n" + body.strip() + "\n")
        path.chmod(0o755)


def _env(tmp_path: Path, target: Path, **extra) -> dict[str, str]:
    return {**os.environ, "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}",
            "SLURM_JOB_NODELIST": "n[1-4]", "SLURM_JOB_NUM_NODES": "4",
            "SLURMD_NODENAME": "n1", "FSACCEPT_FILL_WORKERS": "2",
            "FAKE_CAP": str(CAP), "FAKE_USED": str(USED), "FAKE_ROOT": str(target),
            "CALLS": str(tmp_path / "calls.txt"), "DF_CALLS": str(tmp_path / "df.txt"),
            **extra}


def _job(tmp_path: Path, section: dict = SECTION, reserve: int = 0,
         before: str = "") -> tuple[subprocess.CompletedProcess, Path, list[str]]:
    """The fill job's own lines as the check puts them (its directory made with the
    run's marker, the plan, ReFrame's launch line of the fill step, the ageing and df
    once filled), run by bash in a stage directory, with the fakes."""
    stage, target = tmp_path / "stage", tmp_path / "target"
    stage.mkdir()
    data = target / "fsaccept" / f"FillTarget.{RUN}"
    settings, plan = stage / check.SETTINGS_FILE, stage / check.PLAN_FILE
    settings.write_text(json.dumps(filler.settings_file(section, reserve, None)))
    launch = " ".join(["srun", "--distribution=block", "--kill-on-bad-exit=1",
                       *map(shlex.quote, check.fill_command(str(plan), str(data), RUN))])
    script = "\n".join([
        f"fsaccept_root={shlex.quote(str(target))}",
        f"fsaccept_data={shlex.quote(str(data))}",
        'mkdir -p -- "$fsaccept_data" && : > "$fsaccept_data/' + owned.owner_marker(RUN) + '"',
        before,
        *check.plan_cmds(str(settings), str(plan)),
        launch, "fsaccept_rc=$?",
        *check.after_fill_cmds(bool(section.get("churn")), str(plan), str(data), RUN),
        'echo "ended $fsaccept_rc"'])
    _fakes(tmp_path / "bin")
    proc = subprocess.run(["bash", "-c", script], cwd=stage, env=_env(tmp_path, target),
                          capture_output=True, text=True, timeout=600)
    calls = (tmp_path / "calls.txt").read_text().splitlines() \
        if (tmp_path / "calls.txt").exists() else []
    return proc, data, calls


def _evidence(out: str, section: dict = SECTION) -> fill.Evidence:
    parsed = fill.parse_output(out)
    p = fill.plan(parsed.df[fill.BEFORE], fill.Settings.of(section), list(NODES))
    return fill.Evidence.of(p, parsed)


def test_the_job_fills_to_the_level_ages_and_reads_df_once_filled(tmp_path):
    proc, data, calls = _job(tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.splitlines()[-1] == "ended 0", out
    assert "fsaccept-info fill_nodes n1,n2,n3,n4" in out.splitlines()
    # The fill step on every node, then the ageing step: one task a node each.
    assert [c.split()[0:4] for c in calls] == [
        ["srun", "--distribution=block", "--kill-on-bad-exit=1", sys.executable],
        ["srun", "--nodes=4", "--ntasks=4", "--ntasks-per-node=1"]]
    plan = tmp_path / "stage" / check.PLAN_FILE
    assert calls[0].endswith(f"fill {plan} {data} {RUN}")
    assert calls[1].endswith(f"churn {plan} {data} {RUN}")
    ev = _evidence(out)
    level, whole = fill.judge_level(ev), fill.judge_filler(ev)
    assert (level.verdict, whole.verdict) == (fill.PASS, fill.PASS), (level, whole)
    before, filled = ev.df[fill.BEFORE], ev.df[fill.FILLED]
    assert USED <= before.used < USED + 64 * KIB  # the directories' own blocks, no data
    p = fill.plan(before, fill.Settings.of(SECTION), list(NODES))
    # Within the tolerance of the level, never beyond it.
    assert p.target_used - 0.1 * CAP <= filled.used <= p.target_used
    assert sorted(n.node for n in ev.nodes) == list(NODES)
    assert all(n.rc == 0 and n.rounds == 2 and n.churn_bytes > 0 for n in ev.nodes)
    # Every node's directory holds the run's marker, and its files what it said.
    for n in ev.nodes:
        home = data / n.node
        assert (home / owned.owner_marker(RUN)).is_file()
        files = [f for f in home.rglob("*") if f.is_file() and not f.name.startswith(".")]
        assert len(files) == n.files and sum(f.stat().st_size for f in files) == n.bytes
        assert {f.parent.parent.name for f in files} <= {"16384B", "65536B"}
    # Random data: no two files the same.
    one = sorted((data / "n1").rglob("*B/0/0"))
    assert len({f.read_bytes() for f in one}) == len(one) == 2


def test_a_fill_the_plan_refuses_writes_nothing_and_says_why(tmp_path):
    # Already above 80 % before the fill: fsaccept deletes nothing it did not write.
    proc, data, calls = _job(tmp_path, before="export FAKE_USED=$((14 * 1024 * 1024))")
    assert proc.returncode == 3 and calls == []
    lines = proc.stdout.splitlines()
    refused = [x for x in lines if x.startswith("fsaccept-abort ")]
    assert len(refused) == 1 and ("the fill was refused before anything was written: the "
                                  "target is at 87.") in refused[0], lines
    assert sorted(p.name for p in data.iterdir()) == [owned.owner_marker(RUN)]


def test_a_node_whose_filler_fails_is_named_and_nothing_ages(tmp_path):
    # n3's directory cannot be made (a file holds its name): its filler says error.
    proc, data, calls = _job(tmp_path, before=f': > "$fsaccept_data/n3"')
    assert proc.stdout.splitlines()[-1] == "ended 1", proc.stdout
    assert len(calls) == 1  # no ageing after a failed fill
    ev = _evidence(proc.stdout)
    judged = fill.judge_filler(ev)
    assert judged.verdict == fill.INVALID
    assert any(r.startswith("n3: its filler ended with exit 1 (stop=error)")
               for r in judged.reasons), judged.reasons
    assert any("0 of 2 ageing round(s) done" in r for r in judged.reasons)


def test_a_stopped_filler_says_so_and_ends_with_143(tmp_path):
    """SIGTERM (scancel, a time limit) while a batch waits for df: the node's line, then
    exit 143; what it wrote stays with the marker, for the removal."""
    target = tmp_path / "target"
    data = target / "fsaccept" / f"FillTarget.{RUN}"
    data.mkdir(parents=True)
    _fakes(tmp_path / "bin")
    p = fill.plan(Df(CAP, USED, CAP - USED), fill.Settings.of(SECTION), ["n1"])
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(filler.plan_file(p)))
    env = _env(tmp_path, target, FAKE_DF_BLOCK_AT="3")
    proc = subprocess.Popen(check.fill_command(str(plan), str(data), RUN), env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    calls = tmp_path / "df.txt"
    deadline = time.monotonic() + 120
    while not (calls.exists() and len(calls.read_text().splitlines()) >= 3):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == filler.STOPPED_RC, err
    node = fill.parse_output(out).nodes["n1"]
    assert (node["rc"], node["stop"]) == (143, "error") and node["files"] > 0
    assert (data / "n1" / owned.owner_marker(RUN)).is_file()


def test_the_filler_interleaves_the_sizes_and_batches_below_the_line():
    files = list(filler.interleaved([(64 * KIB, 2), (16 * KIB, 6)]))
    # Each file at (i + 0.5) / n of its size's files: 1/12, 3/12 (both sizes' first
    # quarter), 5/12, 7/12, 9/12 (both), 11/12.
    assert files == [(16 * KIB, 0), (16 * KIB, 1), (64 * KIB, 0), (16 * KIB, 2),
                     (16 * KIB, 3), (16 * KIB, 4), (64 * KIB, 1), (16 * KIB, 5)]
    batches = list(filler.batches(files, 64 * KIB))
    assert all(sum(s for s, _ in b) <= 64 * KIB for b in batches)
    assert [len(b) for b in batches] == [2, 1, 3, 1, 1]
    assert list(filler.batches([(MIB, 0)], KIB)) == [[(MIB, 0)]]  # a file larger alone


def test_fill_node_stops_at_the_line_and_makes_up_the_inodes(tmp_path):
    """In process, with df played by a function: the node stops once df reads above the
    stop line, and with an inode level its empty files make up the data files it did
    not write."""
    said: list[str] = []

    def df(path):
        used = USED + sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file())
        return Df(CAP, used, CAP - used, 1000, 10, 990)
    p = fill.plan(Df(CAP, USED, CAP - USED, 1000, 10, 990),
                  fill.Settings.of({**SECTION, "inode_fraction": 0.5}), ["n1"])
    plan = filler.plan_file(p)
    planned_files = sum(n for _, n in p.nodes[0].files)
    assert filler.fill_node(plan, str(tmp_path), RUN, "n1", read_df=df,
                            say=said.append) == 0
    node = fill.parse_output("\n".join(said)).nodes["n1"]
    assert node["stop"] == "level" and node["files"] < planned_files
    assert node["empty"] == p.nodes[0].empty_files + planned_files - node["files"]
    assert node["files"] + node["empty"] == p.nodes[0].file_count
    # A node the plan does not name writes nothing.
    said.clear()
    assert filler.fill_node(plan, str(tmp_path), RUN, "n9", read_df=df, say=said.append) == 2
    assert said == [f"{fill.MARK} node n9 bytes=0 files=0 empty=0 rc=2 stop=error"]


# --------------------------------------------------------------------------- the checks


def test_the_filled_thresholds_are_the_empty_figures_scaled():
    """A filled test's ReFrame reference: each figure its empty test was judged by,
    scaled (a rate's floor, a time's ceiling); its fixed thresholds and slow-client count
    as they are; a figure the empty test did not judge, none."""
    spec = SimpleNamespace(fixed_thresholds={"incorrect_transfers": (0, None, 0, "transfers")},
                           may_be_zero=(), check="FilledIORCheckpointRestore")
    me = SimpleNamespace(spec=spec, max_degradation=0.3, reference={"*": {
        "restore_time_s": (120, None, 0.1, "s"), "incorrect_transfers": (0, None, 0, "transfers"),
        "outlier_nodes": (0, None, 0, "nodes")}})
    empty = SimpleNamespace(perfvalues={
        "lab:compute:restore_time_s": [2.0, 120, None, 0.1, "s", "pass"],
        "lab:compute:restore_bandwidth": [512.0, 0, None, None, "MiB/s", None],
        "lab:compute:incorrect_transfers": [0, 0, None, 0, "transfers", "pass"],
        "lab:compute:outlier_nodes": [0, 0, None, 0, "nodes", "pass"]})
    refs = check.Filled.filled_references(me, empty)
    assert refs == {"restore_time_s": (2.0 / 0.7, None, 0.0, "s"),
                    "incorrect_transfers": (0, None, 0, "transfers"),
                    "outlier_nodes": (0, None, 0, "nodes")}
    write = SimpleNamespace(spec=None, max_degradation=0.3, reference={"*": {
        "write_bandwidth": (10, -0.1, None, "MiB/s")}})
    assert check.Filled.filled_references(write, SimpleNamespace(perfvalues={
        "lab:compute:write_bandwidth": [200.0, 10, -0.1, None, "MiB/s", "pass"]})) == {
        "write_bandwidth": (pytest.approx(140.0), 0.0, None, "MiB/s")}


def _fill_target(out: str, stage: Path, nodelist=NODES, section=SECTION) -> SimpleNamespace:
    """The fill's check as its sanity stage sees it (its job's output, nodes, settings,
    its stage directory ``stage``)."""
    info = {}
    for line in out.splitlines():
        if line.startswith("fsaccept-info "):
            _, key, *value = line.split(" ", 2)
            info[key] = value[0] if value else ""
    me = SimpleNamespace(_stdout_text=lambda: out, job_info=lambda: info,
                         job=SimpleNamespace(nodelist=list(nodelist)),
                         fill_mode=fill.Settings.of(section), fill_reserve_bytes=0,
                         sizing_rate=lambda: None, fill_plan="", fill_record="",
                         stagedir=str(stage))
    me.evidence = lambda: check.FillTarget.evidence(me)
    return me


def test_the_fill_checks_record_is_made_from_its_job_and_judged(tmp_path):
    proc, _, _ = _job(tmp_path)
    me = _fill_target(proc.stdout, tmp_path)
    assert check.FillTarget.benchmark_reasons(me) == []
    ev = fill.Evidence.from_dict(json.loads(me.fill_record))
    # The record kept as a file beside its outputs: what the sign-off judges.
    assert (tmp_path / fill.EVIDENCE_FILE).read_text() == me.fill_record
    assert sorted(ev.planned_nodes) == list(NODES) and ev.churn_rounds == 2
    assert me.fill_plan.startswith("fill from ")
    # A job that ran on other nodes than it planned for: no record.
    other = _fill_target(proc.stdout, tmp_path, nodelist=("n1", "n2", "n3", "n5"))
    assert check.FillTarget.benchmark_reasons(other) == [
        "the job planned for n1,n2,n3,n4, but ran on n1,n2,n3,n5"]
    # A level short of the declared one (the filler stopped early): INVALID, with it.
    short = proc.stdout.replace("FSACCEPT_FILL df filled size=16777216 used=",
                                "FSACCEPT_FILL df filled size=16777216 used=1")
    reasons = check.FillTarget.benchmark_reasons(_fill_target(short, tmp_path))
    assert reasons and all(r.startswith("level: ") for r in reasons), reasons
    # A record that cannot be kept: INVALID, saying so.
    me = _fill_target(proc.stdout, tmp_path / "gone")
    assert check.FillTarget.benchmark_reasons(me) == [
        "the fill's record cannot be kept as fill-record.json: No such file or directory"]


def test_a_filled_test_is_judged_with_df_at_its_start():
    p = fill.plan(Df(CAP, USED, CAP - USED), fill.Settings.of(SECTION), ["n1"])
    filled = Df(CAP, p.stop_used + 1, CAP - p.stop_used - 1)
    out = fill.parse_output("\n".join([
        f"{fill.MARK} df before {Df(CAP, USED, CAP - USED).text()}",
        f"{fill.MARK} node n1 bytes={p.bytes} files=9 empty=0 rc=0 stop=level",
        *(f"{fill.MARK} churn n1 round={r} files=1 bytes=1 rc=0" for r in (1, 2)),
        f"{fill.MARK} df filled {filled.text()}"]))
    record = json.dumps(fill.Evidence.of(p, out).to_dict())

    def test(during: str) -> SimpleNamespace:
        info = {check.DF_INFO: during} if during is not None else {}
        return SimpleNamespace(fill_record=record, fill_df="", job_info=lambda: info)
    assert check.Filled.fill_reasons(test(filled.text())) == []
    # The filler was gone (or another's data went) by the test's start.
    low = Df(CAP, USED, CAP - USED).text()
    assert check.Filled.fill_reasons(test(low)) == [
        "its fill record: level: df at the test's start: 12.50% of the capacity used (2 MiB "
        "of 16 MiB), below the declared 80.00% less its tolerance (70.00%)"]
    assert check.Filled.fill_reasons(test(None))[0].startswith("no df at its start: ")
    broken = SimpleNamespace(fill_record="{", fill_df="", job_info=dict)
    assert check.Filled.fill_reasons(broken)[0].startswith(
        "its fill record (fill_record) cannot be read: ")


# --------------------------------------------------------------------------- removal


def _run_dir(tmp_path: Path, jobid: str = "77", ledger: bool = True,
             where: str = "fsaccept") -> tuple[Path, Path, Path]:
    """A run directory whose fill wrote ``<target>/fsaccept/FillTarget.<run>`` with a
    directory per node, each with the run's marker, recorded as the check records it."""
    run_dir, target = tmp_path / "run", tmp_path / "target"
    top = target / where / f"FillTarget.{RUN}"
    for node in NODES:
        home = top / node / "16384B" / "0"
        home.mkdir(parents=True)
        (top / node / owned.owner_marker(RUN)).touch()
        for i in range(3):
            (home / str(i)).write_bytes(os.urandom(100))
    (top / owned.owner_marker(RUN)).touch()
    stage = run_dir / "stage" / "lab" / "compute" / "openmpi" / "FillTarget"
    stage.mkdir(parents=True)
    record = {"version": fillrun.RECORD_VERSION, "directory": str(top), "run_id": RUN,
              "host": "login1", "jobid": jobid}
    (stage / fillrun.RECORD).write_text(json.dumps(record))
    out = run_dir / "output" / "lab" / "compute" / "openmpi" / "FillTarget"
    out.mkdir(parents=True)
    (out / fillrun.RECORD).write_text(json.dumps({**record, "jobid": ""}))
    book = tmp_path / "ledger"
    if ledger:
        owned.record_owned(book, RUN, str(top), jobid, "login1")
    return run_dir, top, book


def test_remove_takes_away_every_node_directory_then_the_fill(tmp_path):
    run_dir, top, book = _run_dir(tmp_path)
    said: list[str] = []
    assert fillrun.remove_fills(run_dir, ledger=book, host="login1", say=said.append,
                                ended=lambda jobid: True) == 0
    assert not top.exists() and list(top.parent.iterdir()) == []
    assert said == [f"fill remove: {top}: removed (4 node directories)"]
    # Again: nothing there.
    said.clear()
    assert fillrun.remove_fills(run_dir, ledger=book, host="login1", say=said.append) == 0
    assert said == [f"fill remove: {top}: nothing there (removed already)"]


def test_remove_waits_for_the_job_and_cancels_it_when_asked(tmp_path):
    run_dir, top, book = _run_dir(tmp_path)
    said, cancelled, polls = [], [], []

    def ended(jobid):
        polls.append(jobid)
        return bool(cancelled) and len(polls) > 3
    assert fillrun.remove_fills(run_dir, ledger=book, host="login1", say=said.append,
                                cancel=True, ended=ended, cancel_job=cancelled.append,
                                sleep=lambda s: None) == 0
    assert cancelled == ["77"] and not top.exists()
    # A job still running, not cancelled: left, and said.
    run_dir, top, book = _run_dir(tmp_path / "again")
    said.clear()
    assert fillrun.remove_fills(run_dir, wait_s=0, ledger=book, host="login1",
                                say=said.append, ended=lambda j: False) == 1
    assert top.exists() and said == [
        f"fill remove: {top}: not removed yet: its job 77 has not ended within 0 s (give "
        "--cancel to cancel it); the next session's sweep removes it once the job has "
        "ended"]


@pytest.mark.parametrize("case, why", [
    (dict(ledger=False), "left alone: the owned-data ledger ({book}) does not record it "
                         f"for run {RUN}"),
    (dict(where="elsewhere"), "left alone: not where a test writes (<target>/fsaccept/...)"),
])
def test_remove_leaves_what_it_cannot_prove_is_the_runs(tmp_path, case, why):
    run_dir, top, book = _run_dir(tmp_path, **case)
    said: list[str] = []
    assert fillrun.remove_fills(run_dir, ledger=book, host="login1", say=said.append,
                                ended=lambda j: True) == 1
    assert top.exists() and said == [f"fill remove: {top}: " + why.format(book=book)]
    said.clear()
    assert fillrun.remove_fills(run_dir, ledger=book, host="login2", say=said.append) == 1
    assert said == [f"fill remove: {top}: left alone: written by a run on login1, this is "
                    "login2"]


def test_remove_says_what_it_could_not_remove(tmp_path, monkeypatch):
    run_dir, top, book = _run_dir(tmp_path)
    real = os.unlink

    def unlink(path, *a, dir_fd=None, **k):
        # By descriptor: the path is its directory's and the name.
        where = os.readlink(f"/proc/self/fd/{dir_fd}") if dir_fd is not None else ""
        if os.path.join(where, path).endswith(f"n2{os.sep}16384B{os.sep}0{os.sep}1"):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, *a, dir_fd=dir_fd, **k)
    monkeypatch.setattr(os, "unlink", unlink)
    said: list[str] = []
    assert fillrun.remove_fills(run_dir, ledger=book, host="login1", say=said.append,
                                ended=lambda j: True) == 1
    # The proof stays with what is left (the fill's own marker too: the ledger's sweep
    # resumes it); the other nodes' directories are gone.
    assert (top / "n2" / owned.owner_marker(RUN)).exists()
    assert (top / owned.owner_marker(RUN)).exists()
    assert sorted(p.name for p in top.iterdir()) == [owned.owner_marker(RUN), "n2"]
    assert len(said) == 1 and said[0].startswith(
        f"fill remove: left: {top / 'n2'}: 1 file could not be removed"), said


def test_fsaccept_fill_remove_exit_codes(tmp_path, capsys):
    assert cli.main(["fill", "remove", str(tmp_path / "none")]) == 2
    assert "is not a directory" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert cli.main(["fill", "remove", str(tmp_path / "empty")]) == 0  # no fill in it


# --------------------------------------------------------------------------- the session


def test_the_session_pattern_and_its_refusals(tmp_path, capsys):
    ref = load_reference(LAB_FILL)
    assert listing.fill_session_pattern(ref) == (
        r"^(MPILaunchSanity|IORWriteBandwidth|MdtestEasy|FillTarget|FilledIORWriteBandwidth"
        r"|FilledMdtestEasy)\b")
    assert cli.main(["reference", str(LAB_FILL), "--fill-checks"]) == 0
    # No fill: section, or one that does not allow it: refused, naming the key.
    with pytest.raises(ReferenceError, match="fill: missing"):
        listing.fill_session_pattern(load_reference(REPO / "reference" / "local-gluster.yaml"))
    text = LAB_FILL.read_text()
    closed = tmp_path / "closed.yaml"
    closed.write_text(text.replace("  allowed: true", "  allowed: false"))
    capsys.readouterr()
    assert cli.main(["reference", str(closed), "--fill-checks"]) == 2
    assert "fill.allowed: false: filling the target is not allowed" in capsys.readouterr().err
    # A target not declared dedicated: the file itself is refused.
    shared = tmp_path / "shared.yaml"
    shared.write_text(text.replace("  dedicated: true\n", ""))
    assert cli.main(["reference", str(shared), "--fill-checks"]) == 2
    assert "fill.allowed: true, but target.dedicated is not true" in capsys.readouterr().err


def test_no_other_session_runs_the_fill():
    ref = load_reference(REPO / "reference" / "local-gluster-replica.yaml")
    assert "FillTarget" not in listing.degraded_session_pattern(ref)
    assert "Filled" not in listing.degraded_session_pattern(ref)
    gluster = load_reference(REPO / "reference" / "local-gluster.yaml")
    assert "Fill" not in listing.scaling_session_pattern(gluster)
    assert "checks/fill" not in listing.main_session_dirs(gluster)


def test_reframe_lists_the_fill_session_of_the_lab():
    """The lab's fill reference, as scripts/acceptance --fill selects it: the launch
    check, the two tests run empty, the filler and the two filled tests (each after the
    filler and its empty test: the dependencies resolve)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "FSACCEPT_REFERENCE": str(LAB_FILL)}
    proc = subprocess.run([str(Path(sys.executable).parent / "reframe"), "-C",
                           str(REPO / "config/settings.py"), "-c", str(REPO / "checks"),
                           "-c", str(REPO / "checks" / "fill"), "-l",
                           "-n", listing.fill_session_pattern(load_reference(LAB_FILL)),
                           "--system", "local-gluster"], capture_output=True, text=True,
                          cwd=tempfile.gettempdir(), env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    listed = {line.strip().lstrip("-^ ").rsplit(" /", 1)[0]
              for line in proc.stdout.splitlines() if line.strip().startswith(("- ", "^"))}
    assert {"MPILaunchSanity", "IORWriteBandwidth", "MdtestEasy", "FillTarget",
            "FilledIORWriteBandwidth", "FilledMdtestEasy"} <= listed, proc.stdout
    assert "Found 6 check(s)" in proc.stdout


# --------------------------------------------------------------------------- the sign-off


def _with_the_filler(data, result: str = "pass") -> dict:
    """A fill session's run report (tests/unit/test_fill.py's filled re-runs, the filler's
    own test case beside them), the filler's case recorded with ``result``."""
    run = data["runs"][0]
    case = next(c for c in run["testcases"] if c["name"] == "FillTarget")
    case.update(result=result)
    if result != "pass":
        case.update(fail_phase="sanity", fail_reason="sanity error: INVALID: level: df "
                    "filled: 60.00% of the capacity used")
        run["num_failures"] += 1
        data["session_info"]["num_failures"] += 1
    return data


def test_the_sign_off_of_a_fill_session_with_its_filler(filled_catalogue, tmp_path):
    from tests.unit.test_fill import _signoff, filled_run
    code, md, _ = _signoff(_with_the_filler(filled_run(tmp_path)), tmp_path)
    assert code == 0 and "**Overall verdict: ACCEPTED**" in md, md[:3000]
    assert re.search(r"^\| \[FillTarget\]\(#test-filltarget\) \|.*\| PASS \|", md, re.M)
    (tmp_path / "bad").mkdir()
    code, md, _ = _signoff(_with_the_filler(filled_run(tmp_path / "bad"), "fail"),
                           tmp_path / "bad")
    assert code == 1 and "**Overall verdict: NOT ACCEPTED**" in md
    assert "FillTarget: INVALID (level: df filled: 60.00% of the capacity used)" in md


def test_a_checks_own_thresholds_are_read_from_reframes_scoped_dict():
    """Once set, a check's ``reference`` is ReFrame's ScopedDict (keys ``scope:figure``):
    the lab's first filled run failed in set-up reading it as a plain dict."""
    from reframe.utility import ScopedDict

    from fsaccept.rfm.fill import own_thresholds
    limit = (0, None, 0, "clients")
    assert own_thresholds(ScopedDict({"*": {"slow_clients": limit}})) == {"slow_clients": limit}
    assert own_thresholds({"*": {"slow_clients": limit}}) == {"slow_clients": limit}
    assert own_thresholds(None) == {} and own_thresholds({}) == {}
