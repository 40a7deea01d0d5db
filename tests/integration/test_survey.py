"""The target survey on the lab's GlusterFS volume (docs/user/components.md): each of its
four bricks measured alone from the nodes' own clients, through Slurm.  One brick made
slow by the lab (`local-cluster limit --target b2`: its glusterfsd gets 2 % of one CPU)
is named, alone, with its server; with the limit cleared no brick is.  The rule is the
lab's own (`--max-spread 0.7`: a brick below 0.3 x the median is slow): the limited
brick wrote at about 0.06 x the median here, and unlimited bricks on one disk stay
within it however loaded the host is, so nothing depends on the machine's speed."""

import json
import sys

import pytest

from tests.conftest import LOCAL_CLUSTER, run

pytestmark = [pytest.mark.integration, pytest.mark.volume_cluster]


def _survey(env, layout, out):
    return run(["salloc", "-N4", "--quiet", sys.executable, "-m", "fsaccept", "survey", "--target",
                str(layout.mount_point), "--out", str(out), "--size", "256MiB",
                "--runtime", "5", "--max-spread", "0.7"], env=env, timeout=600)


def test_the_slow_brick_is_named_and_none_once_the_limit_is_cleared(gluster_env, tmp_path):
    env, layout = gluster_env
    limited = run([str(LOCAL_CLUSTER), "limit", "--target", "b2"], env=env)
    assert limited.returncode == 0, limited.stderr
    try:
        assert "limits: target b2 at 2 % of one CPU" in \
            run([str(LOCAL_CLUSTER), "status"], env=env).stdout
        slow = _survey(env, layout, tmp_path / "slow")
    finally:
        cleared = run([str(LOCAL_CLUSTER), "limit", "--clear"], env=env)
    assert cleared.returncode == 0 and "target b2 (1 pid(s) moved back)" in cleared.stdout, \
        cleared.stdout + cleared.stderr
    assert slow.returncode == 1, slow.stdout + slow.stderr
    fails = [line for line in slow.stdout.splitlines() if line.startswith("FAIL: ")]
    assert len(fails) == 1 and f"{layout.state_dir}/bricks/b2 on " in fails[0], slow.stdout
    rec = json.loads((tmp_path / "slow" / "survey.json").read_text())
    assert sorted(t["target"].rsplit("/", 1)[1] for t in rec["targets"]) == \
        ["b1", "b2", "b3", "b4"]
    assert rec["rounds"] == 4  # the four bricks share one server
    assert sorted(t["node"] for t in rec["targets"]) == ["n1", "n2", "n3", "n4"]

    again = _survey(env, layout, tmp_path / "cleared")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "4 of 4 targets measured in 4 rounds" in again.stdout
    assert "limits:" not in run([str(LOCAL_CLUSTER), "status"], env=env).stdout
    # The survey's own directory is gone from the volume.
    assert not list(layout.mount_point.glob("fsaccept-survey-*"))
