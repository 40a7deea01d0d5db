"""The network check on the lab (docs/user/components.md): iperf3 from each of the four
nodes to the lab's iperf3 servers on the GlusterFS address, through Slurm.  The lab's
network is limited to 30 MiB/s each way (`local-cluster limit --network 30MiB/s`: tc htb
on lo, for what goes to that address and what comes from it); iperf3 measures the limit
within 15 %, each node alone and all of them at once, sending and receiving.  With the entry asking at least
40 MiB/s per node, every link FAILs, named, and the main job is NOT ACCEPTED for that
reason alone; with the limit cleared it is ACCEPTED, and nothing of the limit is left.
No figure is compared with the machine's speed: the loopback moves ten times the limit
even beside a CPU and an I/O hog, so the limit, which the test sets, is what is met."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from lab.limits import Limits
from tests.conftest import LOCAL_CLUSTER, REPO, gluster_reference_file, run

pytestmark = [pytest.mark.integration, pytest.mark.volume_cluster]

RATE = 30.0  # MiB/s


def _tc_classes() -> str:
    return subprocess.run(["tc", "class", "show", "dev", "lo"], capture_output=True,
                          text=True).stdout


def test_a_limited_network_is_measured_and_a_slow_link_named(gluster_env, tmp_path,
                                                            results_dirs):
    env, layout = gluster_env

    def network_alone(kpi):
        def edit(data):
            entry = dict(data["tests"]["network_survey"], **kpi)
            data["tests"] = {"network_survey": entry}
            data.pop("nightly", None)  # it names tests this copy has not
        return edit
    acceptance = [str(REPO / "scripts" / "acceptance"), "--system", "local-gluster",
                  "--no-ceilings", "--signed-by", "CI", "-n", "^NetworkSurvey$"]

    def session(kpi, name):
        ref = gluster_reference_file(tmp_path / name, layout, network_alone(kpi))
        proc = run(acceptance, env=dict(env, FSACCEPT_REFERENCE=str(ref)), timeout=1200)
        out = proc.stdout + proc.stderr
        found = re.findall(r"acceptance: results in (\S+)", out)
        results_dirs.extend(Path(p) for p in found)
        assert len(found) == 1, out[-3000:]
        return proc, out, Path(found[0])

    (tmp_path / "slow").mkdir()
    (tmp_path / "cleared").mkdir()
    limited = run([str(LOCAL_CLUSTER), "limit", "--network", f"{RATE:g}MiB/s"], env=env)
    assert limited.returncode == 0, limited.stderr
    try:
        assert f"network to and from {layout.address} at 30 MiB/s each way" in \
            run([str(LOCAL_CLUSTER), "status"], env=env).stdout
        proc, out, run_dir = session({"min_node_mib_s": 40}, "slow")
    finally:
        cleared = run([str(LOCAL_CLUSTER), "limit", "--clear"], env=env)
    assert cleared.returncode == 0 and f"network to and from {layout.address}" in \
        cleared.stdout, cleared.stdout + cleared.stderr
    assert proc.returncode == 1 and "overall verdict: NOT ACCEPTED" in out, out[-3000:]
    because = out[out.index("not accepted because:"):].splitlines()[1:-1]
    assert len(because) == 1 and because[0].strip().startswith("NetworkSurvey: FAIL"), \
        because
    [case] = [c for c in json.loads((run_dir / "run-report.json").read_text())["runs"][-1]
              ["testcases"] if c["name"].startswith("NetworkSurvey")]
    named = case["slow_links_named"].split("; ")
    assert [n.split()[2] for n in named] == ["n1", "n2", "n3", "n4"], named
    assert all(f"to {layout.address}: sent " in n and "below the entry's 40" in n
               for n in named), named
    # iperf3 measures the limit the lab set: each node alone, and all at once.
    assert all(abs(v - RATE) <= 0.15 * RATE for v in case["link_figures"].values()), case
    figures = {k.split(":")[-1]: v[0] for k, v in case["perfvalues"].items()}
    assert abs(figures["network_aggregate"] - RATE) <= 0.15 * RATE, figures
    # What every node received at once (iperf3 -R): the limit each way.
    assert abs(figures["network_read_aggregate"] - RATE) <= 0.15 * RATE, figures
    md = (run_dir / "report.md").read_text()
    section = md[md.index("## Components"):md.index("## Tests")]
    rows = [line for line in section.splitlines() if line.startswith("| NetworkSurvey")]
    assert len(rows) == 6 and all(r.endswith("| FAIL |") for r in rows[:4]), section
    assert "| all at once |" in rows[4] and rows[4].endswith("| PASS |"), rows
    assert "| all at once, receiving |" in rows[5] and rows[5].endswith("| PASS |"), rows

    # Cleared: nothing of the limit left, the same entry's KPI met by the loopback.
    assert "limits:" not in run([str(LOCAL_CLUSTER), "status"], env=env).stdout
    assert not any(f"class htb {c} " in _tc_classes()
                   for c in Limits(tmp_path, layout.port_base).classes), _tc_classes()
    proc, out, run_dir = session({"min_node_mib_s": 40}, "cleared")
    assert proc.returncode == 0 and "overall verdict: ACCEPTED" in out, out[-3000:]
    md = (run_dir / "report.md").read_text()
    section = md[md.index("## Components"):md.index("## Tests")]
    assert section.count("| PASS |") == 6 and "| FAIL |" not in section, section


def test_the_program_measures_each_node_against_the_limit(gluster_env, tmp_path):
    """fsaccept network itself, in an allocation: its table and its files."""
    env, layout = gluster_env
    limited = run([str(LOCAL_CLUSTER), "limit", "--network", f"{RATE:g}MiB/s"], env=env)
    assert limited.returncode == 0, limited.stderr
    try:
        proc = run(["salloc", "-N4", "--quiet", sys.executable, "-m", "fsaccept", "network",
                    "--in-dir", str(layout.mount_point), "--out", str(tmp_path / "out"),
                    "--port", str(layout.port_base + 136), "--ports", "4", "--runtime",
                    "3"], env=env, timeout=600)
    finally:
        run([str(LOCAL_CLUSTER), "limit", "--clear"], env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    figures = [float(m) for m in re.findall(r"to \S+  ([0-9.]+) MiB/s", proc.stdout)]
    assert len(figures) == 4 and all(abs(v - RATE) <= 0.15 * RATE for v in figures), \
        proc.stdout
    assert len(list((tmp_path / "out").glob("[atr]*-n*.json"))) == 12
    assert re.search(r"receiving together: [0-9.]+ MiB/s", proc.stdout), proc.stdout


def test_a_figure_above_the_bound_the_network_set_is_invalid(gluster_env, tmp_path,
                                                             results_dirs):
    """The fixture of a cache: only the lab's iperf3 ports limited, to 1 MiB/s
    (``limit --network 1MiB/s --endpoints-only``), so the network check measures a
    network far slower than the one IOR's writes then cross (unshaped).  IOR's write
    bandwidth exceeds 1.25 x the bound: INVALID, the verdict says why, and nothing of
    the limit is left once cleared.  No figure is compared with the machine's speed:
    only the write's exceeding 1.25 MiB/s over the unshaped loopback, which even a loaded
    host's GlusterFS moves many times over."""
    env, layout = gluster_env

    def edit(data):
        data["tests"] = {k: data["tests"][k] for k in ("network_survey",
                                                       "ior_write_bandwidth")}
        data.pop("nightly", None)
    (tmp_path / "above").mkdir()
    ref = gluster_reference_file(tmp_path / "above", layout, edit)
    limited = run([str(LOCAL_CLUSTER), "limit", "--network", "1MiB/s", "--endpoints-only"],
                  env=env)
    assert limited.returncode == 0, limited.stderr
    try:
        assert f"{layout.address} ports {layout.port_base + 136}-" in limited.stdout, \
            limited.stdout
        proc = run([str(REPO / "scripts" / "acceptance"), "--system", "local-gluster",
                    "--no-ceilings", "--signed-by", "CI", "-n",
                    "^(NetworkSurvey|IORWriteBandwidth)$"],
                   env=dict(env, FSACCEPT_REFERENCE=str(ref)), timeout=1200)
    finally:
        cleared = run([str(LOCAL_CLUSTER), "limit", "--clear"], env=env)
    out = proc.stdout + proc.stderr
    results_dirs.extend(Path(p) for p in re.findall(r"acceptance: results in (\S+)", out))
    assert cleared.returncode == 0 and "limits:" not in run(
        [str(LOCAL_CLUSTER), "status"], env=env).stdout
    assert proc.returncode == 1 and "overall verdict: NOT ACCEPTED" in out, out[-3000:]
    because = out[out.index("not accepted because:"):].splitlines()[1:-1]
    assert len(because) == 1, because
    assert because[0].strip().startswith(
        "IORWriteBandwidth: write_bandwidth INVALID against the components' bound"), because
    assert "set by the network" in because[0] and "served from a cache" in because[0]
