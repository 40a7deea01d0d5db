"""Several file systems in one session (issues 40 and 42): the emulated cluster with both
of its real file systems (scripts/local-cluster up --fs gluster,cephfs: each node a
GlusterFS client and a ceph-fuse of its own) and this host's local disk.
reference/local-gluster-cephfs.yaml names the three under `targets:`.  One
`scripts/acceptance --system local-gluster-cephfs` run tests them all; the sign-off has a
section per file system and one verdict over all, and each job asked its own file
system's server probe.  The system is a site as local-gluster is: once set-up has written
the Lmod modules, every benchmark's binary is the one its module put on PATH.  The
GlusterFS target runs here the other two's three tests and one more of each program
(GLUSTER_TESTS), not the reference's whole catalogue: that took about 500 s of CI's
2 cores, and the whole catalogue runs in test_spack.py's main job.

The session runs on the default cluster, which it brings up with both file systems.
Afterwards the cluster is brought back to its GlusterFS volume alone (the other modules'
lab), and the CephFS's files are removed where this module made them."""

import json
import os
import re
import shutil
from pathlib import Path

import pytest
import yaml

from fsaccept.suite.provision import lmod_core, module_names
from lab.cluster import (DEFAULT_PORT_BASE, ClusterLayout, ceph_layout, default_state_dir,
                         gluster_layout, recorded_fs)
from tests.conftest import (LOCAL_CLUSTER, REPO, require_lab_tools, run,
                            why_not_accepted)
from tests.integration.test_lmod import assert_from_modules

pytestmark = [pytest.mark.integration, pytest.mark.volume_cluster]

SYSTEM = "local-gluster-cephfs"
#: The mount types each target's jobs ran on.
FSTYPES = {"gluster": "fuse.glusterfs", "cephfs": "fuse.ceph-fuse", "local_disk": "ext4"}
#: The server probe each target's jobs asked (fsaccept/core/probes; none for ext4).
PROBES = {"gluster": {"GlusterFS"}, "cephfs": {"CephFS"}}
#: The GlusterFS target's tests here (its reference has the whole catalogue): every
#: test the other targets have, fio's and mdtest-hard.  The checks outside them are
#: not selected (ReFrame's -n): a check no target has an entry for is an error.
GLUSTER_TESTS = {"ior_write_bandwidth": "IORWriteBandwidth",
                 "ior_read_bandwidth": "IORStonewalledRead", "mdtest_easy": "MdtestEasy",
                 "mdtest_hard": "MdtestHard", "fio_seq_write": "FioSequentialWrite"}


def layout() -> ClusterLayout:
    return ClusterLayout(default_state_dir(),
                         port_base=int(os.environ.get("FSACCEPT_PORT_BASE", DEFAULT_PORT_BASE)))


def reference(tmp_path) -> Path:
    """reference/local-gluster-cephfs.yaml with each file system where this cluster has
    it (the mount points follow the port base), the GlusterFS target's tests cut to
    GLUSTER_TESTS."""
    data = yaml.safe_load((REPO / "reference" / f"{SYSTEM}.yaml").read_text())
    tests = data["targets"]["gluster"]["tests"]
    data["targets"]["gluster"]["tests"] = {key: tests[key] for key in GLUSTER_TESTS}
    volume, ceph = gluster_layout(layout()), ceph_layout(layout())
    data["targets"]["gluster"].update(path=str(volume.mount_point),
                                      mount_point=str(volume.mount_point),
                                      source=volume.source)
    data["targets"]["cephfs"].update(path=str(ceph.mount_point),
                                     mount_point=str(ceph.mount_point))
    path = tmp_path / f"{SYSTEM}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.fixture(scope="module")
def both(cluster_env):
    """The default cluster's environment; restored to its GlusterFS volume alone after
    the module, the CephFS's files removed if this module made them."""
    require_lab_tools("ceph-mon", "ceph-fuse", "glusterd", "slurmd", "srun")
    state = default_state_dir()
    ceph_dir = ceph_layout(layout()).state_dir
    had_ceph = ceph_dir.exists()
    try:
        yield cluster_env
    finally:
        proc = run([str(LOCAL_CLUSTER), "up", "--fs", "gluster"], timeout=600)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert recorded_fs(state) == "gluster"
        if not had_ceph:
            shutil.rmtree(ceph_dir, ignore_errors=True)


def test_a_session_over_three_file_systems_has_a_section_each_and_one_verdict(
        both, tmp_path, results_dirs):
    env = dict(both, FSACCEPT_REFERENCE=str(reference(tmp_path)))
    checks = sorted(GLUSTER_TESTS.values())  # ReFrame's names: IORWriteBandwidth%fs_target=…
    proc = run([str(REPO / "scripts" / "acceptance"), "--system", SYSTEM,
                "--no-ceilings", "--signed-by", "CI", "-n", f"^({'|'.join(checks)})(%|$)"],
               env=env, timeout=2400)
    out = proc.stdout + proc.stderr
    results_dirs.extend(Path(p) for p in re.findall(r"acceptance: results in (\S+)", out))
    assert recorded_fs(default_state_dir()) == "gluster,cephfs", out[-3000:]
    assert proc.returncode == 0 and "overall verdict: ACCEPTED" in out, \
        why_not_accepted(proc)
    [run_dir] = results_dirs
    cases = json.loads((run_dir / "run-report.json").read_text())["runs"][-1]["testcases"]
    ran = {}
    for case in cases:
        if case.get("fs_target"):
            ran.setdefault(case["fs_target"], set()).add(case["name"].split()[0])
            assert case["result"] == "pass", (case["name"], case["fail_reason"])
    assert set(ran) == set(FSTYPES)
    if lmod_core(module_names()):
        benchmarks = [c for c in cases if c.get("fs_target") and c.get("binary_path")
                      and c["name"].startswith(("IOR", "Mdtest", "Fio"))]
        assert {c["fs_target"] for c in benchmarks} == set(FSTYPES), benchmarks
        for case in benchmarks:
            assert_from_modules(case)
    # ior_read_bandwidth is IORStonewalledRead, on its dataset of the same target.
    for target in ("cephfs", "local_disk"):
        assert ran[target] >= {"IORWriteBandwidth", "IORStonewalledRead", "MdtestEasy"}
        assert "MdtestHard" not in ran[target]
    assert {"IORWriteBandwidth", "MdtestHard", "FioSequentialWrite"} <= ran["gluster"]
    # Each job ran on its own target's file system, and asked that file system's probe.
    types = {c["fs_target"]: c.get("job_fstype") for c in cases
             if c.get("fs_target") and c.get("job_fstype")}
    assert types == FSTYPES, types
    probes = {}
    for c in cases:
        if c.get("fs_target") in PROBES and c.get("server_probe"):
            probes.setdefault(c["fs_target"], set()).add(c["server_probe"])
    assert probes == PROBES, probes
    report = (run_dir / "report.md").read_text()
    for name, path in (("gluster", gluster_layout(layout()).mount_point),
                       ("cephfs", ceph_layout(layout()).mount_point),
                       ("local_disk", "/var/tmp")):
        assert re.search(rf"^#+ .*{name}", report, re.MULTILINE), report[:3000]
        assert str(path) in report
    assert os.path.exists(run_dir / "report.html")
