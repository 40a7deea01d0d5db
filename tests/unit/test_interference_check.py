"""The noisy neighbour's ReFrame check (issue 39 §2) without a cluster: its job's lines run
by bash with Slurm and fio played by small scripts (the groups, the order of the steps,
srun's options, the markers), and its sanity stage on real fio 3.37 reports
(``tests/data/interference``) laid out as its job leaves them: overlapping steps give a
record the judges pass; a delayed step gives INVALID "did not overlap"."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from fsaccept.benchmarks.fio import command
from fsaccept.benchmarks.fio import interference_judge as interference
from fsaccept.rfm import interference as check
from fsaccept.rfm.benchmark import BenchmarkTest
from fsaccept.rfm.fio import NODE_DIR, NODE_SCRIPT, FioTest
from fsaccept.rfm.interference import AGGRESSOR, ALONE, LOADED, InterferenceTest

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data" / "interference"
ENTRY = {"node_fraction": 1.0, "victim_nodes": 2, "file_size": "64MiB", "runtime_s": 10,
         "aggressor_file_size": "256MiB", "lead_s": 2, "max_p99_ratio": 50}
#: Seconds a fake step waits for the other one at most (only when the steps do not run at
#: once: the test then fails, it never passes by waiting).
WAIT_S = 30


def params(**entry):
    return command.parameters("fio_interference", "interference", {**ENTRY, **entry})


# --------------------------------------------------------------------------- the job


def _fakes(bin_dir: Path) -> None:
    """Slurm and fio, played: ``scontrol show hostnames`` gives n1..n4; ``srun`` records
    its options and runs its command once on each node of ``--nodelist`` (at once, each
    with its SLURMD_NODENAME), failing when one does; ``fio`` records its arguments, writes
    its ``--output`` and an aggressor its bandwidth log, and an aggressor waits until a
    victim's run under load has begun (so the two steps must run at once);  ``sleep``
    records its seconds and does not sleep."""
    scripts = {
        "scontrol": '[ "$1 $2" = "show hostnames" ] && printf "%s\\n" n1 n2 n3 n4',
        "srun": r'''
opts=(); while [[ "$1" == --* ]]; do opts+=("$1"); shift; done
echo "srun ${opts[*]} $*" >> "$CALLS"
nodes=""; for o in "${opts[@]}"; do [[ "$o" == --nodelist=* ]] && nodes=${o#--nodelist=}; done
pids=(); for n in ${nodes//,/ }; do SLURMD_NODENAME=$n "$@" & pids+=($!); done
rc=0; for p in "${pids[@]}"; do wait "$p" || rc=$?; done; exit $rc''',
        "fio": r'''
echo "$SLURMD_NODENAME $*" >> "$FIO_CALLS"
out=""; log=""; for a in "$@"; do
  case "$a" in --output=*) out=${a#--output=} ;; --write_bw_log=*) log=${a#--write_bw_log=} ;; esac
done
if [ -n "$log" ]; then
  loaded() { ls fio-victim-loaded-*.json >/dev/null 2>&1; }
  for ((i = 0; i < 10 * WAIT_S; i++)); do loaded && break; /bin/sleep 0.1; done
  loaded || exit 1
  : > "${log}_bw.1.log"
fi
[[ "$out" == fio-victim-alone-* && "$out" == *"-$FAIL_NODE.json" ]] && exit 1
echo '{}' > "$out"''',
        "sleep": 'echo "$SLURMD_NODENAME $1" >> "$SLEEPS"',
    }
    bin_dir.mkdir()
    for name, body in scripts.items():
        path = bin_dir / name
        path.write_text("#!/bin/bash\n" + body.strip() + "\n")
        path.chmod(0o755)


def _job(tmp_path: Path, fail_node: str = "") -> tuple[subprocess.CompletedProcess, dict]:
    """The job's own lines (groups, the run alone as ReFrame's launch line puts it, the
    run under load) run by bash in a stage directory, with the fakes."""
    stage, target = tmp_path / "stage", tmp_path / "target"
    stage.mkdir()
    p = params()
    fake = SimpleNamespace(fio_binary="fio")
    waits = {ALONE: 0, AGGRESSOR: 0, LOADED: p.interference.lead_s}
    (stage / NODE_SCRIPT).write_text(check.node_script(
        FioTest.node_fio_line(fake, command.fio_options(p, NODE_DIR)),
        FioTest.node_fio_line(fake, command.aggressor_options(p, NODE_DIR)),
        str(target), waits))
    launch = " ".join(["srun", "--distribution=block", "--kill-on-bad-exit=1",
                       *check.step_options(2, check.VICTIMS_VAR), "bash", NODE_SCRIPT, ALONE])
    script = "\n".join([*check.split_cmds(2), launch, "fsaccept_rc=$?",
                        *check.under_load_cmds(2, 2), 'echo "ended $fsaccept_rc"'])
    _fakes(tmp_path / "bin")
    files = {k: tmp_path / f"{k}.txt" for k in ("CALLS", "FIO_CALLS", "SLEEPS")}
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}",
           "SLURM_JOB_NODELIST": "n[1-4]", "SLURM_JOB_NUM_NODES": "4",
           "SLURMD_NODENAME": "n1", "FAIL_NODE": fail_node, "WAIT_S": str(WAIT_S),
           **{k: str(v) for k, v in files.items()}}
    proc = subprocess.run(["bash", "-c", script], cwd=stage, env=env, capture_output=True,
                          text=True, timeout=3 * WAIT_S)
    said = {k: (v.read_text().splitlines() if v.exists() else []) for k, v in files.items()}
    return proc, said


def test_the_job_runs_the_victims_alone_then_both_groups_at_once(tmp_path):
    proc, said = _job(tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.splitlines()
    assert "fsaccept-info victims n1,n2" in out and "fsaccept-info aggressors n3,n4" in out
    assert out[-1] == "ended 0"
    # The run alone first, on the victims; then the aggressors' step and the victims' at
    # once (the fake aggressor waits for the victims' run under load: one after the other
    # would have timed out).
    step = "--exclusive --nodes=2 --ntasks=2 --ntasks-per-node=1"
    first, *under_load = said["CALLS"]
    assert first == (f"srun --distribution=block --kill-on-bad-exit=1 {step} "
                     f"--nodelist=n1,n2 bash {NODE_SCRIPT} {ALONE}")
    assert sorted(under_load) == [
        f"srun --kill-on-bad-exit=1 {step} --nodelist=n1,n2 bash {NODE_SCRIPT} {LOADED}",
        f"srun --kill-on-bad-exit=1 {step} --nodelist=n3,n4 bash {NODE_SCRIPT} {AGGRESSOR}"]
    # Each step's markers around its fio; every run alone ended before an aggressor began.
    steps = interference.parse_steps(proc.stdout)
    assert sorted(steps) == sorted([(ALONE, "n1"), (ALONE, "n2"), (LOADED, "n1"),
                                    (LOADED, "n2"), (AGGRESSOR, "n3"), (AGGRESSOR, "n4")])
    assert max(steps[(ALONE, n)].end_s for n in ("n1", "n2")) <= min(
        steps[(AGGRESSOR, n)].start_s for n in ("n3", "n4"))
    for role, node in steps:
        assert f"fsaccept-node {node} {role} exit 0" in out
        assert (tmp_path / "stage" / f"fio-{role}-{node}.json").exists()
    # Only the victims' run under load waits, lead_s.
    assert sorted(said["SLEEPS"]) == ["n1 0", "n1 2", "n2 0", "n2 2", "n3 0", "n4 0"]
    # Each node's fio in its own directory; the victims read, the aggressors write and log.
    fio = {(line.split()[0], "--rw=write" in line): line for line in said["FIO_CALLS"]}
    victim, aggressor = fio[("n2", False)].split()[1:], fio[("n4", True)].split()[1:]
    for want in ("--rw=randread", "--bs=4096", "--direct=1", "--ioengine=psync",
                 "--iodepth=1", "--runtime=10", f"--directory={tmp_path}/target/n2",
                 "--output=fio-victim-loaded-n2.json"):
        assert want in victim, want
    for want in ("--rw=write", "--bs=1048576", "--direct=1", "--runtime=16",
                 "--size=268435456", "--write_bw_log=aggressor-n4", "--log_unix_epoch=1",
                 f"--directory={tmp_path}/target/n4", "--output=fio-aggressor-n4.json"):
        assert want in aggressor, want
    assert (tmp_path / "stage" / "aggressor-n4_bw.1.log").exists()


def test_a_failed_run_alone_runs_nothing_under_load_and_says_why(tmp_path):
    proc, said = _job(tmp_path, fail_node="n2")
    assert proc.stdout.splitlines()[-1] == "ended 1"
    assert ("fsaccept-info under_load was not run: the victims' run alone ended with exit 1"
            in proc.stdout.splitlines())
    assert len(said["CALLS"]) == 1 and said["CALLS"][0].endswith(ALONE)
    assert "fsaccept-node n2 victim-alone exit 1" in proc.stdout
    assert "FSACCEPT_STEP victim-alone n2 end " in proc.stdout  # its end marker says so


def test_a_node_list_that_does_not_give_every_node_refuses_the_run(tmp_path):
    script = "\n".join([*check.split_cmds(1), "echo ran"])
    _fakes(tmp_path / "bin")
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env={
        **os.environ, "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}",
        "SLURM_JOB_NODELIST": "n[1-5]", "SLURM_JOB_NUM_NODES": "5", "SLURMD_NODENAME": "n1"},
        timeout=WAIT_S)
    assert proc.returncode == 3 and "ran" not in proc.stdout
    assert proc.stdout.startswith("fsaccept-abort node n1: the job's node list n[1-5] gave 4 "
                                  "names for its 5 nodes")


def test_the_node_script_waits_by_role_and_refuses_an_unknown_one(tmp_path):
    text = check.node_script("fio V", "fio A", "/t/x y", {LOADED: 7, AGGRESSOR: 40})
    assert f"  {LOADED}) wait_s=7 ;;" in text and f"  {AGGRESSOR}) wait_s=40 ;;" in text
    assert f"  {ALONE}) wait_s=0 ;;" in text and "dir='/t/x y'/\"$node\"" in text
    (tmp_path / "s.sh").write_text(text)
    proc = subprocess.run(["bash", str(tmp_path / "s.sh"), "victim"], capture_output=True,
                          text=True, cwd=tmp_path, env={**os.environ, "SLURMD_NODENAME": "n1"},
                          timeout=WAIT_S)
    assert proc.returncode == 2 and proc.stdout == "fsaccept-node n1 victim exit bad-role\n"


@pytest.mark.parametrize("text, want", [("", None), ("aggressor:40", (AGGRESSOR, 40)),
                                        ("victim-loaded:0", (LOADED, 0))])
def test_the_test_only_delay(text, want):
    assert check.parse_step_delay(text) == want


@pytest.mark.parametrize("text", ["aggressor", "victim:3", "aggressor:-1", "aggressor:4000",
                                  "aggressor:1.5", "aggressor:²"])
def test_a_delay_that_is_not_one_is_refused_naming_the_variable(text):
    with pytest.raises(ValueError, match=r"step_delay \(FSACCEPT_TEST_STEP_DELAY\)"):
        check.parse_step_delay(text)


# --------------------------------------------------------------------------- the sanity stage


class _Test:
    """InterferenceTest's results and sanity methods, on a stage directory and a job
    output of the test's making (no ReFrame session)."""

    fio_results = InterferenceTest.fio_results
    _first_run = InterferenceTest._first_run
    group_reasons = InterferenceTest.group_reasons
    missing_reasons = InterferenceTest.missing_reasons
    aggressor_logs = InterferenceTest.aggressor_logs
    interference_evidence = InterferenceTest.interference_evidence
    _interference_figure = InterferenceTest._interference_figure
    figure_kinds = InterferenceTest.figure_kinds
    _parse_node = FioTest._parse_node
    _read_stage = FioTest._read_stage
    job_info = BenchmarkTest.job_info
    record_rank_map = InterferenceTest.record_rank_map

    def __init__(self, stage: Path, output: str, nodelist=("n1", "n2"), **entry):
        self.stagedir, self.output = str(stage), output
        self.params = params(**{"victim_nodes": 1, **entry})
        self.job = SimpleNamespace(nodelist=list(nodelist))
        self.target_dir, self.display_name = "/t/fsaccept/FioInterference.x", "FioInterference"
        self.node_memory_bytes, self.version_note, self.fio_settings = 0, "", ""
        self.interference_record = self.interference_failures = ""
        self.victims = self.aggressors = self.rank_map = ""

    def _stdout_text(self) -> str:
        return self.output


#: Seconds the fixture's delay moves the aggressor: past the victim's run under load.
DELAY_S = 20


def _shifted(path: Path, seconds: int) -> str:
    report = json.loads(path.read_text())
    report["jobs"][0]["job_start"] += seconds * 1000
    return json.dumps(report)


def _stage(tmp_path: Path, delay_s: int = 0, markers_delay_s: int | None = None,
           exits: dict | None = None, under_load: str = "") -> tuple[Path, str]:
    """The real captures as the job leaves them, victim n1, aggressor n2 (the captures'
    one host, "vm"), the aggressor's step delayed by ``delay_s`` in its report, its log
    and (unless ``markers_delay_s`` says otherwise) its markers."""
    stage = tmp_path / "stage"
    stage.mkdir()
    (stage / f"fio-{ALONE}-n1.json").write_text((DATA / "victim-alone.json").read_text())
    (stage / f"fio-{LOADED}-n1.json").write_text((DATA / "victim-loaded.json").read_text())
    (stage / f"fio-{AGGRESSOR}-n2.json").write_text(_shifted(DATA / "aggressor.json",
                                                             delay_s))
    log = [line.split(", ", 1) for line in (DATA / "aggressor_bw.1.log").read_text()
           .splitlines()]
    (stage / "aggressor-n2_bw.1.log").write_text("".join(
        f"{int(t) + delay_s * 1000}, {rest}\n" for t, rest in log))
    shift = delay_s if markers_delay_s is None else markers_delay_s
    markers = []
    for line in (DATA / "steps.txt").read_text().splitlines():
        mark, role, _, what, t, *rest = line.split()
        node = "n2" if role == AGGRESSOR else "n1"
        t = f"{float(t) + (shift if role == AGGRESSOR else 0):.9f}"
        markers.append(" ".join([mark, role, node, what, t, *rest]))
    exits = exits or {(ALONE, "n1"): "0", (LOADED, "n1"): "0", (AGGRESSOR, "n2"): "0"}
    output = "\n".join([
        "fsaccept-info fio_version fio-3.37", "fsaccept-info victims n1",
        "fsaccept-info aggressors n2", "fsaccept-rank 0 n1",
        *([f"fsaccept-info under_load {under_load}"] if under_load else []),
        "fsaccept-node n1 memory_kib 4000000", "fsaccept-node n2 memory_kib 4000000",
        *markers, *(f"fsaccept-node {n} {r} exit {rc}" for (r, n), rc in exits.items()), ""])
    return stage, output


def test_overlapping_steps_give_a_record_the_judges_pass(tmp_path):
    test = _Test(*_stage(tmp_path))
    assert test.fio_results().reasons == []
    evidence = test.interference_evidence()
    assert test._interference_reasons == [] and test.interference_failures == ""
    assert interference.verdict(interference.judge(evidence)) == interference.PASS
    record = json.loads(test.interference_record)
    assert [v["node"] for v in record["victims"]] == ["n1"]
    assert [a["node"] for a in record["aggressors"]] == ["n2"]
    assert record["settings"] == {"max_p99_ratio": 50.0, "min_overlap": 0.9}
    # The record kept as a file beside its outputs: what the sign-off judges.
    assert (Path(test.stagedir) / interference.RECORD_FILE).read_text() == \
        test.interference_record
    assert test._interference_figure("victim_p99_ratio") == pytest.approx(5210.112 / 1548.288)
    assert test._interference_figure("interference_overlap_pct") == 100.0
    assert (test.victims, test.aggressors, test.rank_map) == ("n1", "n2", "n1:0")
    assert test.fio_settings.startswith("victim: ") and "; aggressor: " in test.fio_settings


def test_a_slowdown_above_the_limit_fails_with_the_judges_reasons(tmp_path):
    test = _Test(*_stage(tmp_path), max_p99_ratio=2)
    test.interference_evidence()
    assert test._interference_reasons == []  # a FAIL, not INVALID: the performance stage's
    assert test.interference_failures == ("slowdown: n1: p99 1548 us alone, 5210 us beside "
                                          "the aggressor: x3.37 (more than x2)")
    assert command.interference_references(test.params.interference) == {
        "victim_p99_ratio": (2.0, None, 0, "ratio")}


def test_a_delayed_step_is_invalid_did_not_overlap_and_its_record_kept(tmp_path):
    test = _Test(*_stage(tmp_path, delay_s=DELAY_S))
    assert test.fio_results().reasons == []
    test.interference_evidence()
    assert test._interference_reasons == [
        "overlap: did not overlap: every aggressor node ran through 0% of n1's 5.0 s under "
        "load (at least 90% required)"]
    assert json.loads(test.interference_record)["aggressors"][0]["span"][0] == \
        pytest.approx(1795768038.412 + DELAY_S)
    assert test._interference_figure("interference_overlap_pct") == 0.0


def test_fios_clock_outside_its_steps_markers_is_invalid(tmp_path):
    test = _Test(*_stage(tmp_path, delay_s=DELAY_S, markers_delay_s=0))
    test.interference_evidence()
    assert test._interference_reasons[0].startswith(
        "n2 (aggressor): fio's clock puts its run at 1795768058.412 to 1795768067.414 s, "
        "outside its step's markers (1795768038.037 to 1795768047.564 s): the node's clocks "
        "disagree")


def test_a_failed_run_alone_is_invalid_and_says_why_nothing_ran_under_load(tmp_path):
    stage, output = _stage(tmp_path, exits={(ALONE, "n1"): "1"},
                           under_load="was not run: the victims' run alone ended with exit 1")
    test = _Test(stage, output)
    assert test.fio_results().reasons == [
        "victim-alone: n1: fio exited with status 1",
        "the run under load was not run: the victims' run alone ended with exit 1"]
    assert test.interference_evidence() is None and test.interference_record == ""


def test_a_step_that_did_not_reach_its_node_or_ran_on_the_wrong_one_is_invalid(tmp_path):
    stage, output = _stage(tmp_path, exits={(ALONE, "n1"): "0", (LOADED, "n1"): "0",
                                            (AGGRESSOR, "n1"): "0"})
    reasons = _Test(stage, output).fio_results().reasons
    assert reasons == [
        "n2 (aggressor): no fio ran (the step did not reach the node, or it failed first)",
        "n1 (aggressor): a step ran on a node not of its group (victims n1, aggressors n2)"]


def test_groups_other_than_the_entrys_are_invalid(tmp_path):
    stage, output = _stage(tmp_path)
    reasons = _Test(stage, output, nodelist=("n2", "n1"), victim_nodes=2).fio_results().reasons
    assert reasons[:2] == [
        "1 victim node(s) (n1), but victim_nodes is 2",
        "the job's nodes are n2,n1, but it took n1 as its victims and n2 as its aggressors: "
        "the victims are the first victim_nodes nodes, the aggressors the others"]


def test_a_missing_bandwidth_log_is_invalid_naming_the_node(tmp_path):
    stage, output = _stage(tmp_path)
    (stage / "aggressor-n2_bw.1.log").unlink()
    test = _Test(stage, output)
    assert test.interference_evidence() is None
    assert test._interference_reasons[0].startswith(
        "n2 (aggressor): its bandwidth log cannot be read: ")


# --------------------------------------------------------------------------- the catalogue


def test_the_check_is_opt_in_and_the_labs_entry_runs_it():
    from fsaccept.benchmarks import registry
    from fsaccept.suite import listing
    from fsaccept.suite.reference import load_reference
    spec = registry.TESTS["FioInterference"]
    assert (spec.key, spec.checks_dir, spec.attrs["kind"]) == (
        "fio_interference", "interference", "interference")
    assert spec.figures == tuple(f"^{f}$" for f in command.INTERFERENCE_FIGURES)
    lab = load_reference(REPO / "reference" / "local-gluster.yaml")
    assert "checks/interference" in listing.main_session_dirs(lab)
    assert "checks/interference" not in listing.main_session_dirs(
        load_reference(REPO / "reference" / "local.yaml"))
    p = command.parameters("fio_interference", "interference",
                           lab.entries["fio_interference"])
    assert command.split_nodes(["n1", "n2", "n3", "n4"], p.interference.victim_nodes) == (
        ["n1", "n2"], ["n3", "n4"])
    assert p.interference.settings.max_p99_ratio == 50


def test_the_time_limit_and_the_volume_cover_both_groups():
    fake = SimpleNamespace(params=params(), step_delay="aggressor:40", num_nodes=4)
    fake.delay = lambda: check.parse_step_delay(fake.step_delay)
    fake.group_sizes = lambda: InterferenceTest.group_sizes(fake)
    # 10 s alone, then the aggressors' 2 + 10 + 4 s, and the test-only delay.
    assert InterferenceTest.deadlines_s(fake) == 10 + 16 + 40
    assert InterferenceTest.planned_volume(fake) == 2 * 64 * 2**20 + 2 * 256 * 2**20
    assert shlex.split(shlex.join(check.step_options(2, "x"))) == [
        "--exclusive", "--nodes=2", "--ntasks=2", "--ntasks-per-node=1", '--nodelist="$x"']


def test_a_record_that_cannot_be_kept_is_invalid(tmp_path):
    stage, output = _stage(tmp_path)
    test = _Test(stage, output)
    (stage / interference.RECORD_FILE).mkdir()  # where the file goes: a directory
    assert test.interference_evidence() is not None
    assert test._interference_reasons == [
        "the interference record cannot be kept as interference-record.json: Is a directory"]
