"""The target survey on the lab's GlusterFS volume (docs/user/components.md): each of its
four bricks measured alone from the nodes' own clients, through Slurm.  One brick made
slow by the lab (`local-cluster limit --target b2`: its glusterfsd gets 2 % of one CPU)
is named, alone, with its server; with the limit cleared no brick is.  The rule is the
lab's own (`--max-spread 0.7`: a brick below 0.3 x the median is slow): the limited
brick wrote at about 0.06 x the median here, and unlimited bricks on one disk stay
within it however loaded the host is, so nothing depends on the machine's speed."""

import json
import re
import sys
from pathlib import Path

import pytest

from tests.conftest import LOCAL_CLUSTER, REPO, gluster_reference_file, run

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


def test_a_main_job_with_a_slow_brick_is_not_accepted_and_names_it(gluster_env, tmp_path,
                                                                    results_dirs):
    """The survey as a check of the main job (checks/components, loaded for a reference
    with tests.target_survey): with b2 slow, NOT ACCEPTED for that reason alone, b2
    named, its verdict re-judged by the sign-off from the fio reports the job kept, and
    the Components section's b2 row alone FAIL; with the limit cleared, ACCEPTED."""
    env, layout = gluster_env
    def survey_alone(data):
        data["tests"] = {"target_survey": data["tests"]["target_survey"]}
        data.pop("nightly", None)  # it names tests this copy has not
    ref = gluster_reference_file(tmp_path, layout, survey_alone)
    acceptance = [str(REPO / "scripts" / "acceptance"), "--system", "local-gluster",
                  "--no-ceilings", "--signed-by", "CI", "-n", "^TargetSurvey$"]
    env = dict(env, FSACCEPT_REFERENCE=str(ref))

    def session():
        proc = run(acceptance, env=env, timeout=1200)
        out = proc.stdout + proc.stderr
        found = re.findall(r"acceptance: results in (\S+)", out)
        results_dirs.extend(Path(p) for p in found)
        assert len(found) == 1, out[-3000:]
        return proc, out, Path(found[0])

    limited = run([str(LOCAL_CLUSTER), "limit", "--target", "b2"], env=env)
    assert limited.returncode == 0, limited.stderr
    try:
        proc, out, run_dir = session()
    finally:
        run([str(LOCAL_CLUSTER), "limit", "--clear"], env=env)
    assert proc.returncode == 1 and "overall verdict: NOT ACCEPTED" in out, out[-3000:]
    because = out[out.index("not accepted because:"):].splitlines()[1:-1]
    assert len(because) == 1 and because[0].strip().startswith("TargetSurvey: FAIL"), because
    brick = f"{layout.state_dir}/bricks/b2 on "
    assert brick in because[0], because
    assert not any(f"bricks/{b} on " in out for b in ("b1", "b3", "b4")), out[-3000:]
    [case] = [c for c in json.loads((run_dir / "run-report.json").read_text())["runs"][-1]
              ["testcases"] if c["name"].startswith("TargetSurvey")]
    assert case["result"] == "fail" and brick in case["slow_targets_named"]
    assert len(case["target_figures"]) == 4
    # The report's Components section: a row per brick, b2's alone FAIL.
    md = (run_dir / "report.md").read_text()
    section = md[md.index("## Components"):md.index("## Tests")]
    rows = [line for line in section.splitlines() if line.startswith("| TargetSurvey")]
    assert len(rows) == 4, section
    assert [r.endswith("| FAIL |") for r in rows] == ["bricks/b2 |" in r for r in rows], rows

    proc, out, run_dir = session()
    assert proc.returncode == 0 and "overall verdict: ACCEPTED" in out, out[-3000:]
    md = (run_dir / "report.md").read_text()
    section = md[md.index("## Components"):md.index("## Tests")]
    assert section.count("| PASS |") == 4 and "| FAIL |" not in section, section
