"""The target survey's pure parts (fsaccept/suite/survey.py): a file's bricks read from
real pathinfo captures (tests/data/glusterfs-pathinfo/), one file placed per brick, the
judgement and the record; and `fsaccept survey`'s bad input, refused with exit 2 before
anything is written."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from fsaccept import cli
from fsaccept.core.components import Step, Target
from fsaccept.core.probes.glusterfs import parse_pathinfo
from fsaccept.suite import steps, survey

DATA = Path(__file__).resolve().parents[1] / "data" / "glusterfs-pathinfo"
BRICKS = "/work/main/.state/gluster/bricks"


@pytest.mark.parametrize("name, brick", [("f1", "b3"), ("f3", "b2"), ("f4", "b4"),
                                         ("f6", "b1")])
def test_a_captured_pathinfo_names_the_files_brick_and_its_host(name, brick):
    text = (DATA / f"distribute-{name}.txt").read_text()
    assert parse_pathinfo(text) == (("vm", f"{BRICKS}/{brick}"),)
    assert survey.target_of(parse_pathinfo(text)) == Target(f"vm:{BRICKS}/{brick}", "vm")


def test_a_replicated_file_names_each_copys_brick():
    bricks = parse_pathinfo((DATA / "replicate.txt").read_text())
    assert bricks == (("server1", "/data/brick1"), ("server2", "/data/brick1"))
    assert survey.target_of(bricks) == Target(
        "server1:/data/brick1,server2:/data/brick1", "server1,server2")


@pytest.mark.parametrize("text", ["", "(<DISTRIBUTE:vol-dht>)", "\x00\xff garbage",
                                  "<POSIX(/b1):host"])
def test_a_pathinfo_that_names_no_brick_is_refused(text):
    with pytest.raises(ValueError, match="no brick"):
        parse_pathinfo(text)


def _hashing(bricks):
    """A volume that places the i-th file on brick ``order[i]``."""
    def make(order):
        it = iter(order)
        placed = {}

        def locate(path):
            placed[path] = bricks[next(it)]
            return (placed[path],)
        return locate
    return make


def test_one_file_is_kept_per_brick_and_the_others_removed(tmp_path):
    bricks = [("vm", f"/b{i}") for i in range(1, 5)]
    locate = _hashing(bricks)([2, 2, 0, 2, 3, 0, 1, 1])
    placement = survey.place(str(tmp_path), [("127.0.0.2", b) for _, b in bricks], locate)
    assert placement.created == 7  # every brick held one after the 7th
    assert sorted(t.name for t in placement.files) == ["vm:/b1", "vm:/b2", "vm:/b3", "vm:/b4"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t0", "t2", "t4", "t6"]
    assert placement.unplaced == []


def test_a_brick_no_file_reaches_is_named_by_its_path(tmp_path):
    bricks = [("127.0.0.2", "/b1"), ("127.0.0.2", "/b2")]
    placement = survey.place(str(tmp_path), bricks, lambda p: (("vm", "/b1"),))
    assert placement.created == survey.FILES_PER_BRICK * 2
    assert placement.unplaced == ["127.0.0.2:/b2"]
    assert [p.name for p in tmp_path.iterdir()] == ["t0"]


def test_the_judgement_names_the_slow_target_and_what_was_not_measured():
    fast = {Target(f"vm:/b{i}", "vm"): 150.0 + i for i in (1, 3, 4)}
    result = survey.Result([[]], {**fast, Target("vm:/b2", "vm"): 5.6},
                           failed={"vm:/b5": "fio on n1 exited 1: no space"})
    placement = survey.Placement(unplaced=["127.0.0.2:/b6"])
    assert survey.judged(result, placement, 0.2) == [
        "brick 127.0.0.2:/b6: no file could be placed on it",
        "target vm:/b5: not measured (fio on n1 exited 1: no space)",
        "slow target: vm:/b2 on vm (write 5.6 MiB/s, 0.04 x the median 152 MiB/s), "
        "below 0.80 x the median"]
    assert survey.table(result)[0] == "vm:/b2  5.6 MiB/s  (server vm)"


def test_the_record_keeps_each_targets_node_round_and_command():
    t1, t2 = Target("vm:/b1", "vm"), Target("vm:/b2", "vm")
    result = survey.Result([[Step(0, "n1", t1)], [Step(1, "n2", t2)]], {t1: 100.0},
                           commands={"vm:/b1": "srun ... fio", "vm:/b2": "srun ... fio"},
                           failed={"vm:/b2": "exit 1"}, seconds=1.23456)
    rec = survey.record(result, survey.Placement(created=3), ["r"], ["n1", "n2"], 1 << 20,
                        10, 0.2)
    assert json.loads(json.dumps(rec))["targets"] == [
        {"target": "vm:/b1", "server": "vm", "node": "n1", "round": 0,
         "command": "srun ... fio", "write_mib_s": 100.0, "failed": ""},
        {"target": "vm:/b2", "server": "vm", "node": "n2", "round": 1,
         "command": "srun ... fio", "write_mib_s": None, "failed": "exit 1"}]
    assert (rec["rounds"], rec["seconds"], rec["files_created"]) == (2, 1.235, 3)


def test_fios_command_says_everything_that_changes_the_figure():
    argv = survey.fio_argv("fio", Target("vm:/b1", "vm"), "/m/d/t0", 64 << 20, 10)
    assert argv[:5] == ["fio", "--name=vm:/b1", "--filename=/m/d/t0", "--size=67108864",
                        "--runtime=10"]
    assert {"--direct=1", "--refill_buffers", "--end_fsync=1", "--bs=1M"} <= set(argv)


@pytest.mark.parametrize("args, said", [
    (["--size", "1MB"], "not a binary size"),
    (["--size", "0"], "not a binary size"),
    (["--runtime", "0"], "--runtime 0"),
    (["--max-spread", "nan"], "--max-spread nan"),
    (["--max-spread", "1"], "--max-spread 1"),
    (["--nodes", "n1,n1"], "named twice"),
    (["--nodes", "n1,../x"], "not a node name"),
    (["--nodes", "n1,$(reboot)"], "not a node name"),
])
def test_bad_input_is_refused_with_exit_2_and_nothing_written(tmp_path, capsys, args, said,
                                                              monkeypatch):
    monkeypatch.setattr(survey, "mount_of", lambda p: survey_mount())
    monkeypatch.delenv("SLURM_JOB_NODELIST", raising=False)
    out = tmp_path / "out"
    code = cli.main(["survey", "--target", str(tmp_path), "--out", str(out), *args])
    assert code == 2
    assert said in capsys.readouterr().err
    assert not out.exists()


def survey_mount():
    from fsaccept.core.guards import Mount
    return Mount("/mnt/g", "h:vol", "fuse.glusterfs")


@pytest.mark.parametrize("target, said", [("missing", "not a directory"),
                                          ("file", "not a directory"),
                                          (".", "the survey places files on GlusterFS")])
def test_a_target_that_is_not_a_glusterfs_directory_is_refused(tmp_path, capsys, target,
                                                               said):
    (tmp_path / "file").write_text("x")
    code = cli.main(["survey", "--target", str(tmp_path / target), "--out",
                     str(tmp_path / "out"), "--nodes", "n1"])
    assert (code, said in capsys.readouterr().err) == (2, True)
    assert not (tmp_path / "out").exists()


def test_no_nodes_outside_an_allocation_is_refused(monkeypatch):
    monkeypatch.delenv("SLURM_JOB_NODELIST", raising=False)
    with pytest.raises(steps.ProgramError, match="no Slurm allocation"):
        steps.job_nodes(None)
    assert steps.job_nodes("n1,n2,") == ["n1", "n2"]
    with pytest.raises(steps.ProgramError, match="not a node name"):
        steps.job_nodes("n1,-w n2")


def test_its_help_runs_nothing(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["survey", "--help"])
    assert exit_.value.code == 0 and "slow one" in capsys.readouterr().out
    assert not list(itertools.islice(Path(".").glob("fsaccept-survey-*"), 1))
