"""Lmod modules, as sites provide software: ``scripts/setup --spack ...`` has Spack
write the benchmarks' modules (``ior/4.0.0``, ``fio/3.37``) into ``.state/spack/modules``,
and the system ``local-gluster`` loads them with ReFrame's ``modules`` (Debian's Lmod),
through the emulated Slurm, on the cluster's GlusterFS volume.  One benchmark of each
program (IOR, mdtest, fio) runs here, through ``scripts/acceptance -n``: the whole
catalogue runs from the same modules in test_two_file_systems.py (local-gluster-cephfs
is a site as local-gluster is), and from Spack's build in test_spack.py (the README's
main job).

Also here: a module that does not exist skips every check, naming the module and the
fix, and ends the run INCOMPLETE (never a traceback, never a failure).  Without the
modules (no Spack set-up) these tests skip saying how to get them; under CI with the
offline kit they fail instead.
"""

import json
import os
import re
from pathlib import Path

import pytest

from fsaccept.suite.provision import MODULES_ROOT, lmod_core, module_names
from lab.cluster import ClusterLayout, default_state_dir, gluster_layout
from lab.gluster import mount_of
from tests.conftest import (LOCAL_CLUSTER, REPO, gluster_reference_file, reframe_command,
                            require_gluster_tools, run)

pytestmark = [pytest.mark.integration, pytest.mark.main_cluster]
SYSTEM = "local-gluster"


@pytest.fixture(scope="module")
def modules_core():
    """The directory for MODULEPATH where set-up had Spack write the modules."""
    core = lmod_core(module_names())
    if core is None:
        reason = (f"no Lmod modules of {', '.join(module_names())} below {MODULES_ROOT}: run "
                  "`scripts/setup --spack <Spack tarball or checkout> [--spack-mirror DIR]` "
                  "(or FSACCEPT_SPACK=...) first")
        if os.environ.get("CI") and os.environ.get("FSACCEPT_SPACK"):
            pytest.fail(reason)
        pytest.skip(reason)
    return core


def volume_layout():
    """The distributed volume on bricks that are directories; its address and mount point
    follow FSACCEPT_PORT_BASE."""
    return gluster_layout(ClusterLayout(default_state_dir(), fs="gluster",
                                        gluster_volume_type="distribute"))


@pytest.fixture(scope="module")
def gluster_env(modules_core):
    """The cluster with its distributed volume, brought up (what an earlier module left
    down or changed is revived: ``up`` restarts what died) and verified: the login node's
    client mounted at the volume's mount point."""
    require_gluster_tools()
    proc = run([str(LOCAL_CLUSTER), "up", "--fs", "gluster", "--gluster-volume-type",
                "distribute", "--gluster-brick-size", ""], timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    layout = volume_layout()
    found = mount_of(layout.mount_point)
    assert found and found[1:] == ("fuse.glusterfs", layout.source), (layout.mount_point, found)
    return dict(os.environ)


def test_spack_wrote_only_the_benchmarks_modules_and_lmod_loads_them(modules_core):
    assert sorted(str(p.relative_to(modules_core)) for p in modules_core.rglob("*.lua")) == \
        sorted(f"{name}.lua" for name in module_names())
    # A non-login shell, as a job's: Lmod's init, MODULEPATH, module load.
    proc = run(["bash", "-c", f". /usr/share/lmod/lmod/init/bash; module use {modules_core}; "
                f"module load {' '.join(module_names())} && command -v ior mdtest fio"],
               env={"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root")})
    assert proc.returncode == 0, proc.stderr
    assert all(str(MODULES_ROOT.resolve().parent / "opt") in line for line in proc.stdout.split()), \
        proc.stdout


#: One benchmark of each program the modules provide.
FROM_MODULES = ("IORWriteBandwidth", "MdtestEasy", "FioSequentialWrite")


def assert_from_modules(case: dict) -> None:
    """The binary ``case``'s job ran is Spack's install, put on PATH by the module the
    job script loaded."""
    assert case["binary_path"].startswith(str(MODULES_ROOT.resolve().parent / "opt")), \
        (case["name"], case["binary_path"])
    assert "module:" in case["benchmark_provenance"], case["name"]
    script = (Path(case["outputdir"]) / "rfm_job.sh").read_text()
    assert ". /usr/share/lmod/lmod/init/bash\nmodule load ior/4.0.0\n" \
           "module load fio/3.37\n" in script, case["name"]


def test_the_benchmarks_run_on_local_gluster_from_modules(gluster_env, results_dirs, tmp_path):
    # As the README's command: scripts/acceptance brings the volume up itself.  The
    # reference is the system's own, its target where the volume is mounted (another
    # port base mounts it elsewhere than reference/local-gluster.yaml's path).  A part
    # of the catalogue: the session is INCOMPLETE, each test it ran passed.
    env = dict(gluster_env, FSACCEPT_REFERENCE=str(gluster_reference_file(tmp_path,
                                                                         volume_layout())))
    proc = run([str(REPO / "scripts" / "acceptance"), "--system", SYSTEM, "--no-ceilings",
                "-n", f"^({'|'.join(FROM_MODULES)})$"], env=env, timeout=900)
    out = proc.stdout + proc.stderr
    results_dirs.extend(Path(p) for p in re.findall(r"acceptance: results in (\S+)", out))
    assert "Traceback" not in out, out[-5000:]
    [run_dir] = results_dirs
    cases = {c["name"].split()[0]: c for c in
             json.loads((run_dir / "run-report.json").read_text())["runs"][-1]["testcases"]}
    for name in FROM_MODULES:
        assert cases[name]["result"] == "pass", (name, cases[name]["fail_reason"])
        assert_from_modules(cases[name])


def test_a_module_that_does_not_exist_skips_every_check_naming_it_and_the_fix(
        gluster_env, tmp_path):
    """A copy of the configuration whose local-gluster lists one module more."""
    config = tmp_path / "settings.py"
    config.write_text(
        "import importlib.util\n"
        f"spec = importlib.util.spec_from_file_location('s', {str(REPO / 'config' / 'settings.py')!r})\n"
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
        "site_configuration = m.site_configuration\n"
        "for s in site_configuration['systems']:\n"
        f"    if s['name'] == {SYSTEM!r}:\n"
        "        s['partitions'][0]['modules'].append('nosuch/1.0')\n")
    layout = volume_layout()
    prefix = tmp_path / "rfm"
    cmd = reframe_command("-c", str(REPO / "checks" / "ior_acceptance.py"), "--system", SYSTEM,
                          "-n", "^IORWriteBandwidth$", "-r", prefix=prefix)
    cmd[cmd.index("-C") + 1] = str(config)
    reference = gluster_reference_file(tmp_path, layout)
    proc = run(cmd, env=dict(gluster_env, FSACCEPT_REFERENCE=str(reference)), timeout=600)
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out, out[-4000:]
    cases = {c["name"].split()[0]: c for c in
             json.loads((prefix / "report.json").read_text())["runs"][-1]["testcases"]}
    case = cases["IORWriteBandwidth"]
    assert case["result"] == "skip", case
    assert "module nosuch/1.0 cannot be loaded" in case["skip_reason"], case["skip_reason"]
    assert "scripts/setup --spack" in case["skip_reason"], case["skip_reason"]
    assert not any(c["result"] == "fail" for c in cases.values()), cases
