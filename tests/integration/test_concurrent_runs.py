"""Runs at once: a nightly and two acceptance runs started together.

Their benchmark jobs must never overlap (Slurm's start and end times say so),
although each ReFrame session only limits its own jobs, and the results
database both store into must stay readable.  Each fio test here takes one node
of four, so without the shared job name and ``--dependency=singleton`` Slurm
would run the two sessions' jobs side by side.
"""

import json
import re
import sqlite3
import subprocess
from datetime import datetime
from pathlib import Path

import pytest
import yaml

from fsaccept.core.slurm import benchmark_job_name
from tests.conftest import REPO, run

pytestmark = pytest.mark.integration

#: Short fio tests on one node each (reference keys).
ONE_NODE_TESTS = {"fio_seq_write": "FioSequentialWrite", "fio_randread_direct": "FioRandomReadDirect",
                  "fio_seq_read": "FioSequentialRead"}


def one_node_reference(tmp_path: Path) -> Path:
    raw = yaml.safe_load((REPO / "reference" / "local.yaml").read_text())
    for key in ONE_NODE_TESTS:
        raw["tests"][key].update(node_fraction=0.25, runtime_s=2, file_size="32MiB")
    raw["nightly"] = {"sessions": 3, "tolerance": 0.2,
                      "tests": {key: {} for key in ONE_NODE_TESTS}}
    path = tmp_path / "one-node.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


def benchmark_jobs_since(start: datetime, env: dict) -> dict[str, dict[str, str]]:
    """Every job named like the system's benchmark jobs submitted since ``start``, as
    Slurm recorded it (squeue keeps ended jobs for MinJobAge): id -> fields."""
    fields = ["id", "submit", "start", "end", "comment", "state", "nodes"]
    out = run(["squeue", "-h", "-t", "all", "-n", benchmark_job_name("local"),
               "-o", "%i|%V|%S|%e|%k|%T|%D"], env=env).stdout
    jobs = {}
    for line in out.splitlines():
        job = dict(zip(fields, line.split("|")))
        if when(job["submit"]) >= start:
            jobs[job["id"]] = job
    return jobs


def when(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S")


def test_a_nightly_and_two_acceptance_runs_at_once_never_overlap_jobs(cluster_env, tmp_path,
                                                                        results_dirs):
    db = tmp_path / "results.db"
    reference = one_node_reference(tmp_path)
    env = dict(cluster_env, RFM_SQLITE_DB_FILE=str(db), FSACCEPT_REFERENCE=str(reference))
    names = "|".join(ONE_NODE_TESTS.values())
    # The system named: the host's default follows what set-up built.
    acceptance = [str(REPO / "scripts" / "acceptance"), "--system", "local"]
    select = ["-n", f"^({names})$"]
    # The first also measures the disk's ceilings with fio: a benchmark job too.
    commands = {"acceptance-1": [*acceptance, *select],
                "acceptance-2": [*acceptance, "--no-ceilings", *select],
                "nightly": [str(REPO / "scripts" / "nightly"), "--system", "local",
                            "--reference", str(reference)]}
    started = datetime.now().replace(microsecond=0)
    procs = {kind: subprocess.Popen(argv, env=env, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, text=True)
             for kind, argv in commands.items()}
    outputs = {kind: p.communicate(timeout=1200)[0] for kind, p in procs.items()}
    run_dirs = {kind: re.search(r"acceptance: results in (\S+)|output in (\S+)/reframe\.out",
                                out) for kind, out in outputs.items()}
    results_dirs.extend(Path(m.group(1) or m.group(2)) for m in run_dirs.values() if m)
    for kind, found in run_dirs.items():
        assert found, f"{kind} printed no run directory:\n{outputs[kind][-4000:]}"
    run_dirs = {kind: Path(m.group(1) or m.group(2)) for kind, m in run_dirs.items()}
    # Started in the same second, each run still has its own directory.
    assert len(set(run_dirs.values())) == len(run_dirs), run_dirs
    reports = {kind: json.loads((d / "run-report.json").read_text())
               for kind, d in run_dirs.items()}
    assert (run_dirs["acceptance-1"] / "ceilings.yaml").read_text().count("ceilings:") == 1

    # Every session ran every test, all at the same time, each test in a benchmark job.
    jobs = benchmark_jobs_since(started, cluster_env)
    session_of = {}
    for kind, report in reports.items():
        cases = [c for c in report["runs"][-1]["testcases"]
                 if not c["name"].startswith("BenchmarkBinaries")]
        assert sorted(c["name"] for c in cases) == sorted(ONE_NODE_TESTS.values()), kind
        for case in cases:
            assert str(case["jobid"]) in jobs, (kind, case["name"], case["fail_reason"], jobs)
            session_of[str(case["jobid"])] = kind
    [ceilings] = [j for j in jobs.values() if j["comment"] == "ceilings"]
    session_of[ceilings["id"]] = "acceptance-1"
    assert sorted(session_of) == sorted(jobs), jobs  # nothing else ran under that name
    for job in jobs.values():
        assert job["state"] == "COMPLETED", job
        assert job["nodes"] == "1", job  # room for several sessions' jobs at once
    info = [r["session_info"] for r in reports.values()]
    # Each session ran while another did (all three at once is not needed, nor certain).
    # acceptance-1's run begins with its ceilings job, before its ReFrame session: that
    # job waits its turn too, and on a loaded host its session once started after the
    # others had ended (ci10), while its ceilings job had been held behind theirs.
    ceilings_submitted = when(ceilings["submit"]).timestamp()
    spans_of = [(min(i["time_start_unix"], ceilings_submitted) if kind == "acceptance-1"
                 else i["time_start_unix"], i["time_end_unix"])
                for kind, i in zip(reports, info)]
    for n, (start, end) in enumerate(spans_of):
        assert any(s < end and start < e for m, (s, e) in enumerate(spans_of) if m != n), \
            f"a session ran alone ({spans_of}): this test proved nothing for it"

    # No two benchmark jobs ran at once (Slurm's times, whole seconds: an end and
    # the next start in the same second is the singleton handing over).
    spans = sorted((when(j["start"]), when(j["end"]), when(j["submit"]),
                    f"{session_of[j['id']]} {j['comment']} job {j['id']}") for j in jobs.values())
    for (s1, e1, _, j1), (s2, e2, _, j2) in zip(spans, spans[1:]):
        assert e1 <= s2, f"{j1} ({s1}..{e1}) overlaps {j2} ({s2}..{e2})"
    # ... and that was Slurm holding one back: a job was submitted while another
    # session's job was running, and started only when it ended.
    held = [(j2, j1) for s1, e1, _, j1 in spans for s2, _, sub2, j2 in spans
            if j1.split()[0] != j2.split()[0] and s1 <= sub2 < e1 and s2 >= e1]
    assert held, f"no job waited for another session's job: {spans}"
    # ... also within a session: ReFrame hands Slurm the next job before the one
    # ahead of it has ended (max_jobs 2), and Slurm holds it until then.
    queued = [(j2, j1) for s1, e1, _, j1 in spans for s2, _, sub2, j2 in spans
              if j1 != j2 and j1.split()[0] == j2.split()[0] and sub2 < e1 <= s2]
    assert queued, f"no session submitted a job while its previous one ran: {spans}"

    # The results database all stored into is intact and holds every session.
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        stored = {row[0] for row in conn.execute("SELECT uuid FROM sessions")}
    assert {i["uuid"] for i in info} <= stored and len(info) == 3
    listed = run([str(REPO / ".venv" / "bin" / "reframe"), "-C", str(REPO / "config" / "settings.py"),
                  "--list-stored-sessions=now-1d:now"], env=dict(env, RFM_ENABLE_RESULTS_STORAGE="1"))
    assert listed.returncode == 0, listed.stdout + listed.stderr
    for i in info:
        assert i["uuid"] in listed.stdout, listed.stdout
    # The nightly's comparison read that database (exit 2 would be a broken one).
    assert procs["nightly"].returncode in (0, 1), outputs["nightly"][-4000:]
    assert "nightly: summary" in outputs["nightly"], outputs["nightly"][-4000:]


STORE_SESSIONS = """
import json, sys
from fsaccept.reporting import trends
from tests.unit.test_trends import DATA, nightly_session
store = trends.Store(sys.argv[1])
base = json.loads((DATA / "ior-pass.json").read_text())
print("\\n".join(store.store(nightly_session(base, day=-1.0 - i / 100)) for i in range(5)))
"""


def test_sessions_stored_at_the_same_time_all_land_in_an_intact_database(tmp_path):
    # Six writers start together on a database that does not exist yet: ReFrame's
    # lock file (.db.lock) and SQLite's locking must keep every session, none twice.
    db = tmp_path / "results.db"
    procs = [subprocess.Popen([str(REPO / ".venv" / "bin" / "python"), "-c", STORE_SESSIONS,
                               str(db)], cwd=REPO, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(6)]
    stored = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-3000:]
        stored += out.split()
    assert len(stored) == len(set(stored)) == 30
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert {r[0] for r in conn.execute("SELECT uuid FROM sessions")} == set(stored)
    from fsaccept.reporting import trends
    assert {u for u, _ in trends.Store(db).sessions("local")} == set(stored)
