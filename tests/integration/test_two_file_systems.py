"""Two file systems in one session (issue 40): reference/local-gluster-two.yaml names the
GlusterFS volume and this host's local disk under `targets:`.  One `scripts/acceptance`
run tests both; the sign-off has a section per file system and one verdict over all."""

import json
import os
import re
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO, run

pytestmark = pytest.mark.integration


def two_targets(tmp_path, layout) -> Path:
    """reference/local-gluster-two.yaml with the volume where this cluster has it."""
    data = yaml.safe_load((REPO / "reference" / "local-gluster-two.yaml").read_text())
    volume = data["targets"]["distributed"]
    volume.update(path=str(layout.mount_point), mount_point=str(layout.mount_point),
                  source=layout.source)
    path = tmp_path / "local-gluster-two.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_a_session_over_two_file_systems_has_a_section_each_and_one_verdict(
        gluster_env, tmp_path, results_dirs):
    env, layout = gluster_env
    reference = two_targets(tmp_path, layout)
    proc = run([str(REPO / "scripts" / "acceptance"), "--system", "local-gluster",
                "--no-ceilings", "--signed-by", "CI"],
               env=dict(env, FSACCEPT_REFERENCE=str(reference)), timeout=1800)
    out = proc.stdout + proc.stderr
    results_dirs.extend(Path(p) for p in re.findall(r"acceptance: results in (\S+)", out))
    assert proc.returncode == 0 and "overall verdict: ACCEPTED" in out, out[-5000:]
    [run_dir] = results_dirs
    cases = json.loads((run_dir / "run-report.json").read_text())["runs"][-1]["testcases"]
    ran = {}
    for case in cases:
        if case.get("fs_target"):
            ran.setdefault(case["fs_target"], set()).add(case["name"].split()[0])
            assert case["result"] == "pass", (case["name"], case["fail_reason"])
    assert set(ran) == {"distributed", "local_disk"}
    # ior_read_bandwidth is IORStonewalledRead, on its dataset of the same target.
    assert ran["local_disk"] >= {"IORWriteBandwidth", "IORStonewalledRead", "MdtestEasy"}
    assert "MdtestHard" not in ran["local_disk"]
    assert {"IORWriteBandwidth", "MdtestHard", "FioSequentialWrite"} <= ran["distributed"]
    # Each job ran on its own target's file system.
    types = {c["fs_target"]: c.get("job_fstype") for c in cases
             if c.get("fs_target") and c.get("job_fstype")}
    assert types == {"distributed": "fuse.glusterfs", "local_disk": "ext4"}, types
    report = (run_dir / "report.md").read_text()
    for name, path in (("distributed", layout.mount_point), ("local_disk", "/var/tmp")):
        assert re.search(rf"^#+ .*{name}", report, re.MULTILINE), report[:3000]
        assert str(path) in report
    assert os.path.exists(run_dir / "report.html")
