"""The built-in server probes' parsers (fsaccept/core/probes/), each on outputs written
from its tools' documented formats (tests/data/probes/, README there): healthy is OK,
degraded is DOWN naming what is down, and what cannot be read (empty, garbage, binary,
cut short, a failed or missing tool) is UNKNOWN, never OK, never a traceback; a command
that never answers is DOWN.  Then the runner on a node (the bash function the jobs run,
the site's declared probe) and which probe a target gets."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from fsaccept.core import probes, servers
from fsaccept.core.probes import DOWN, OK, UNKNOWN, Output, beegfs, cephfs, daos, gpfs, lustre

DATA = Path(__file__).resolve().parents[1] / "data" / "probes"
#: The CephFS probe's three outputs at each moment captured on the lab's CephFS
#: (tests/data/ceph/probe/), relative to DATA.
CEPH = {moment: tuple(f"../ceph/probe/{moment}.{cmd}" for cmd in
                      ("health-detail.json", "fs-status.json", "mds-answers.txt"))
        for moment in ("healthy", "mds-killed", "mds-takeover", "mds-failed-over",
                       "osd-killed", "no-conf")}


def outputs(probe, *files, status=0):
    """One Output per command of ``probe``, from the data files (``None``: empty)."""
    return [Output(c, status, (DATA / f).read_text() if f else "")
            for c, f in zip(probe.commands, files, strict=True)]


#: (case, probe, its files, state, what the answer must say)
CASES = [
    ("lustre healthy", lustre.PROBE,
     ("lustre/getname.txt", "lustre/healthy.check.txt", "lustre/healthy.import.txt"), OK,
     ["10 of 10 Lustre targets connected (scratch: 2 MDTs, 8 OSTs)"]),
    ("lustre OSS failover", lustre.PROBE,
     ("lustre/getname.txt", "lustre/oss-failover.check.txt", "lustre/oss-failover.import.txt"),
     DOWN, ["scratch-OST0002 (import DISCONN, lfs check: Resource temporarily unavailable "
            "(11))", "scratch-OST0003 (import CONNECTING, lfs check: Input/output error (5))"]),
    ("lustre MDT replaying", lustre.PROBE,
     ("lustre/getname.txt", "lustre/mdt-replay.check.txt", "lustre/mdt-replay.import.txt"),
     DOWN, ["Lustre client lost scratch-MDT0001 (import REPLAY_WAIT)"]),
    ("lustre OST inactive", lustre.PROBE,
     ("lustre/getname.txt", "lustre/ost-inactive.check.txt", "lustre/ost-inactive.import.txt"),
     DOWN, ["scratch-OST0006 (import DISCONN, inactive)"]),
    ("lustre another mount's OST down", lustre.PROBE,
     ("lustre/getname.txt", "lustre/other-mount-down.check.txt",
      "lustre/other-mount-down.import.txt"), OK, ["10 of 10 Lustre targets connected"]),
    ("lustre idle imports", lustre.PROBE,
     ("lustre/getname.txt", "lustre/healthy.check.txt", "lustre/idle.import.txt"), OK,
     ["10 of 10"]),
    ("lustre not root: imports alone", lustre.PROBE,
     ("lustre/getname.txt", "lustre/not-root.check.txt", "lustre/healthy.import.txt"), OK,
     ["judged by the import states (lfs check servers needs root here)"]),
    ("lustre not root, OSTs lost", lustre.PROBE,
     ("lustre/getname.txt", "lustre/not-root.check.txt", "lustre/oss-failover.import.txt"),
     DOWN, ["scratch-OST0002 (import DISCONN), scratch-OST0003 (import CONNECTING)"]),
    # Issue 49: a cut import list, the pings refused, is no "ok 1 of 1".
    ("lustre not root, the import list cut", lustre.PROBE,
     ("lustre/getname.txt", "lustre/not-root.check.txt", "lustre/cut.import.txt"), UNKNOWN,
     ["cannot read `lctl get_param` (nothing on scratch-MDT0000, scratch-MDT0001, "
      "scratch-OST0001"]),
    ("lustre not root, both cut to one OST", lustre.PROBE,
     ("lustre/getname.txt", "lustre/not-root-cut.check.txt", "lustre/one-ost.import.txt"),
     UNKNOWN, ["no MDT of scratch-ffff8803e1a4c000 named: what the client printed is not "
               "the whole file system"]),
    ("gpfs healthy", gpfs.PROBE, ("gpfs/healthy.mmgetstate.txt", "gpfs/healthy.mmlsdisk.txt"),
     OK, ["4 NSD servers active, 12 of 12 disks up and ready"]),
    ("gpfs NSD server down", gpfs.PROBE,
     ("gpfs/server-down.mmgetstate.txt", "gpfs/healthy.mmlsdisk.txt"), DOWN,
     ["GPFS: NSD server gpfs-io02 (down)"]),
    ("gpfs disk stopped", gpfs.PROBE,
     ("gpfs/healthy.mmgetstate.txt", "gpfs/disk-stopped.mmlsdisk.txt"), DOWN,
     ["GPFS: disk nsd012 (ready, down)"]),
    ("gpfs quorum lost, disk recovering", gpfs.PROBE,
     ("gpfs/arbitrating.mmgetstate.txt", "gpfs/disk-recovering.mmlsdisk.txt"), DOWN,
     ["NSD server gpfs-io01 (arbitrating)", "disk nsd012 (ready, recovering)"]),
    ("gpfs disk being emptied", gpfs.PROBE,
     ("gpfs/healthy.mmgetstate.txt", "gpfs/disk-emptied.mmlsdisk.txt"), DOWN,
     ["disk nsd007 (being emptied, up)"]),
    ("beegfs healthy", beegfs.PROBE, ("beegfs/healthy.txt",), OK,
     ["1 management, 2 metadata, 4 storage servers reachable"]),
    ("beegfs storage server down", beegfs.PROBE, ("beegfs/storage-down.txt",), DOWN,
     ["BeeGFS client cannot reach storage server stor03 [ID: 3]"]),
    ("beegfs metadata server down", beegfs.PROBE, ("beegfs/metadata-down.txt",), DOWN,
     ["metadata server meta02 [ID: 2]"]),
    # Real captures of the lab's CephFS (Ceph 16.2.15: tests/data/ceph/README.md).
    ("cephfs healthy", cephfs.PROBE, CEPH["healthy"], OK,
     ["HEALTH_OK, 1 MDS ranks active and answering (rank 0 on b, standby a)"]),
    ("cephfs active MDS killed, still in the map", cephfs.PROBE, CEPH["mds-killed"], DOWN,
     ["CephFS: MDS b (active) does not answer `ceph tell` within 10 s",
      "MDS map: rank 0 on b, standby a"]),
    ("cephfs the standby taking over", cephfs.PROBE, CEPH["mds-takeover"], DOWN,
     ["FS_DEGRADED: 1 filesystem is degraded (fs cephfs is degraded)",
      "MDS_INSUFFICIENT_STANDBY", "MDS rank 0 reconnect (a)", "standby none"]),
    ("cephfs MDS failed over", cephfs.PROBE, CEPH["mds-failed-over"], DOWN,
     ["MDS_INSUFFICIENT_STANDBY: insufficient standby MDS daemons available (have 0; want "
      "1 more)", "MDS map: rank 0 on a, standby none"]),
    ("cephfs OSD killed", cephfs.PROBE, CEPH["osd-killed"], DOWN,
     ["CephFS: OSD_DOWN: 1 osds down (osd.0 (root=default,host=vm) is down)"]),
    # Written from the documented formats (tests/data/probes/cephfs/README.md).
    ("cephfs warnings that are no server down", cephfs.PROBE,
     ("cephfs/warn-not-down.health.json", *CEPH["healthy"][1:]), OK,
     ["HEALTH_WARN (none a server down: POOL_NO_REDUNDANCY, RECENT_CRASH)"]),
    ("cephfs OSD host down", cephfs.PROBE,
     ("cephfs/osd-host-down.health.json", *CEPH["healthy"][1:]), DOWN,
     ["OSD_DOWN: 4 osds down (osd.8 (root=default,host=ceph-osd03) is down",
      "OSD_HOST_DOWN: 1 host (4 osds) down", "PG_DEGRADED: Degraded data redundancy"]),
    ("cephfs MDS rank failed", cephfs.PROBE,
     ("cephfs/mds-failed.health.json", "cephfs/mds-failed.fs-status.json",
      CEPH["healthy"][2]), DOWN,
     ["FS_WITH_FAILED_MDS", "MDS_ALL_DOWN", "MDS rank 1 failed"]),
    ("cephfs a muted OSD down is down", cephfs.PROBE,
     ("cephfs/osd-down-muted.health.json", *CEPH["healthy"][1:]), DOWN,
     ["OSD_DOWN (muted): 1 osds down"]),
    # Issue 49: the status HEALTH_ERR alone, and an MDS read-only, are down.
    ("cephfs HEALTH_ERR with no check listed", cephfs.PROBE,
     ("cephfs/err-no-check.health.json", *CEPH["healthy"][1:]), DOWN,
     ["CephFS: HEALTH_ERR: the cluster's status, with no check of its own listed"]),
    ("cephfs an MDS read-only", cephfs.PROBE,
     ("cephfs/mds-read-only.health.json", *CEPH["healthy"][1:]), DOWN,
     ["CephFS: MDS_READ_ONLY: 1 MDSs are read only (mds.cephfs.ceph-mds01.xkqzpa is read "
      "only)", "MDS map: rank 0 on b, standby a"]),
    ("daos healthy", daos.PROBE, ("daos/healthy.json",), OK, ["8 of 8 DAOS ranks joined"]),
    ("daos ranks excluded", daos.PROBE, ("daos/rank-excluded.json",), DOWN,
     ["rank 6 (excluded, 10.0.3.14:10001, SWIM marked rank as dead.)", "rank 7"]),
    ("daos rank stopped", daos.PROBE, ("daos/rank-stopped.json",), DOWN,
     ["rank 3 (stopped, 10.0.3.12:10001, system stop)"]),
    ("daos without the admin certificate", daos.PROBE, ("daos/no-certificate.json",),
     UNKNOWN, ["cannot read `dmg system query` (dmg: unable to load Certificate Data"]),
]


@pytest.mark.parametrize("case, probe, files, state, says", CASES, ids=[c[0] for c in CASES])
def test_a_parser_reads_its_tools_documented_output(case, probe, files, state, says):
    answer = probe.parse("/mnt/fs", outputs(probe, *files))
    assert answer.state == state, answer
    for text in says:
        assert text in answer.what, answer


def test_a_node_whose_ceph_cli_finds_no_cluster_cannot_tell():
    # Captured on the lab without CEPH_CONF: `ceph` exits 1, the MDS loop 2.
    said = [Output(c, status, (DATA / f).read_text()) for c, status, f
            in zip(cephfs.PROBE.commands, (1, 1, 2), CEPH["no-conf"], strict=True)]
    answer = cephfs.PROBE.parse("/mnt/fs", said)
    assert answer.state == UNKNOWN, answer
    assert "cannot read `ceph health detail` (exit 1: Error initializing cluster client" \
        in answer.what
    assert "cannot read `ceph mds stat` and `ceph tell` (exit 2: Error initializing" \
        in answer.what


def test_the_cephfs_probe_reads_the_labs_other_captures():
    # tests/data/ceph/: a laggy active MDS (both killed; HEALTH_OK), an OSD stopped.
    ceph = DATA.parent / "ceph"
    laggy = cephfs.ranks(cephfs.json_of(Output("", 0, (ceph / "mds-laggy.fs-status.json")
                                               .read_text())))
    assert laggy == ([], ["MDS rank 0 active(laggy) (a)"], ["b"])
    status, down, other = cephfs.health(cephfs.json_of(Output(
        "", 0, (ceph / "osd-down.health-detail.json").read_text())))
    assert status == "HEALTH_WARN" and other == []
    assert down[0] == "OSD_DOWN: 1 osds down (osd.0 (root=default,host=vm) is down)"
    assert down[1].startswith("PG_DEGRADED: Degraded data redundancy: 13/135 objects")


@pytest.mark.parametrize("text", ["mds a answers\nmds b", "mds a answers\n<html>",
                                  "mds a answers extra\n", "", "\x00\xff" * 40])
def test_an_mds_answer_list_that_is_not_whole_cannot_be_read(text):
    assert cephfs.silent(Output("", 0, text)) is None


def test_an_mds_that_may_not_be_asked_leaves_the_other_sources_to_judge():
    # A site's client key without the right to `ceph tell` an MDS: exit 13 at once.
    said = [Output(c, 0, (DATA / f).read_text()) for c, f
            in zip(cephfs.PROBE.commands, CEPH["healthy"], strict=True)]
    said[2] = Output(said[2].command, 0, "mds b refused 13\n")
    answer = cephfs.PROBE.parse("/mnt/fs", said)
    assert answer.state == OK and answer.what == (
        "HEALTH_OK, 1 MDS ranks active (rank 0 on b, standby a; `ceph tell` refused for "
        "b (refused 13))"), answer
    said[0] = Output(said[0].command, 0, (DATA / CEPH["osd-killed"][0]).read_text())
    assert cephfs.PROBE.parse("/mnt/fs", said).state == DOWN


def test_an_mds_answer_list_names_the_silent_ones():
    said = cephfs.silent(Output("", 0, "mds a answers\nmds b silent\nmds c;rm silent\n"))
    assert said == ["MDS b (active) does not answer `ceph tell` within 10 s (2 tries)",
                    "MDS c;rm (active) does not answer `ceph tell` within 10 s (2 tries)"]
    assert cephfs.silent(Output("", 1, "mds a answers\n")) is None


#: Each built-in probe's healthy outputs, which the cases below spoil one at a time.
HEALTHY = {
    "Lustre": ("lustre/getname.txt", "lustre/healthy.check.txt", "lustre/healthy.import.txt"),
    "GPFS": ("gpfs/healthy.mmgetstate.txt", "gpfs/healthy.mmlsdisk.txt"),
    "BeeGFS": ("beegfs/healthy.txt",),
    "CephFS": CEPH["healthy"],
    "DAOS": ("daos/healthy.json",),
}
GARBAGE = {
    "empty": lambda text: "",
    "binary": lambda text: bytes(range(256)).decode("utf-8", errors="replace") * 3,
    "cut short": lambda text: text[:len(text) // 2],
    "another tool's output": lambda text: "<html><body>502 Bad Gateway</body></html>\n",
}


def test_every_built_in_probe_but_glusterfs_has_its_outputs_here():
    # GlusterFS's is read from a client's own files (tests/unit/test_servers.py).
    assert set(HEALTHY) | {"GlusterFS"} == {p.name for p in servers.BUILT_IN}


@pytest.mark.parametrize("kind", GARBAGE)
@pytest.mark.parametrize("name", HEALTHY)
def test_an_output_that_cannot_be_read_is_never_healthy(name, kind):
    probe = servers.BY_NAME[name]
    healthy = outputs(probe, *HEALTHY[name])
    assert probe.parse("/mnt/fs", healthy).state == OK
    for i, out in enumerate(healthy):
        spoiled = list(healthy)
        spoiled[i] = Output(out.command, out.status, GARBAGE[kind](out.text))
        answer = probe.parse("/mnt/fs", spoiled)
        assert answer.state == UNKNOWN and "cannot" in answer.what, (i, answer)


@pytest.mark.parametrize("name", HEALTHY)
def test_a_tool_that_fails_or_is_missing_cannot_be_read(name):
    probe = servers.BY_NAME[name]
    for status, said in [(1, "mmgetstate: Permission denied\n"),
                         (127, "bash: line 1: tool: command not found\n")]:
        answer = probe.parse("/mnt/fs", [Output(c, status, said) for c in probe.commands])
        assert answer.state == UNKNOWN and "cannot" in answer.what, answer


@pytest.mark.parametrize("name", [p.name for p in servers.BUILT_IN])
def test_a_command_that_never_answers_is_down(name):
    probe = servers.BY_NAME[name]
    answer = probe.parse("/mnt/fs", [Output(c, None, "") for c in probe.commands])
    assert answer.state == DOWN and f"no answer within {probe_timeout()} s" in answer.what


def probe_timeout() -> int:
    return probes.COMMAND_TIMEOUT_S


@pytest.mark.parametrize("probe", servers.BUILT_IN, ids=lambda p: p.name)
def test_every_built_in_probes_commands_are_valid_shell(probe):
    for command in probe.commands:
        proc = subprocess.run(["bash", "-n", "-c", command], capture_output=True, text=True,
                              timeout=30)
        assert proc.returncode == 0, (command, proc.stderr)


def test_an_answer_is_one_line_the_run_report_can_group():
    line = probes.Answer(DOWN, "a; b\nc\x00d").line()
    assert line == "down a, b c d"
    said = servers.ungrouped("; ".join(servers.grouped({line: ["n1"], "ok x": ["n2"]})))
    assert said == {line: ["n1"], "ok x": ["n2"]}


# -- which probe a target gets --------------------------------------------------------


@pytest.mark.parametrize("probe", servers.BUILT_IN, ids=lambda p: p.name)
def test_each_type_gets_its_built_in_probe(probe):
    for fstype in probe.fstypes:
        assert servers.probe_for(fstype) is probe and servers.describe(probe) == probe.name


def test_a_declared_probe_takes_the_place_of_the_built_in_one():
    site = servers.declared("/opt/site/fs-health \"$1\"")
    assert servers.probe_for("lustre", site) is site
    assert servers.probe_for("nfs", site) is site and servers.probe_for("nfs") is None
    assert servers.describe(site) == 'site: /opt/site/fs-health "$1"'
    assert servers.declared(None) is None


@pytest.mark.parametrize("value, said", [
    ("", "extras.server_probe: '' is not a shell command"),
    (["lfs", "check"], "extras.server_probe: ['lfs', 'check'] is not a shell command"),
    ("a\nb", "extras.server_probe: one line"),
])
def test_a_declaration_that_cannot_be_used_is_named(value, said):
    with pytest.raises(servers.ProbeDeclarationError, match=said.replace("[", r"\[")
                       .replace("]", r"\]")):
        servers.declared(value)


# -- on a node: the bash function the jobs run ----------------------------------------


def on_node(script, mount, path=None):
    """``bash -c SCRIPT probe MOUNT`` as a job step runs it: only SLURMD_NODENAME and a
    PATH (with the fake tools' directory first)."""
    env = {"SLURMD_NODENAME": "n7", "PATH": ":".join(filter(None, [path, "/usr/bin:/bin"]))}
    proc = subprocess.run(["bash", "-c", script, "probe", str(mount)], capture_output=True,
                          text=True, timeout=120, env=env)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    return proc.stdout


@pytest.mark.parametrize("command, said", [
    ('echo "all 12 OSS reachable from $1"', "ok site probe: all 12 OSS reachable from {m}"),
    ("echo oss03: no route; echo oss04: no route; exit 1",
     "down site probe (exit 1): oss03: no route, oss04: no route"),
    ("exit 4", "down site probe (exit 4): named nothing that is down"),
    ("/opt/nowhere/fs-health", "unknown site probe cannot run (exit 127): "),
])
def test_a_sites_probe_says_healthy_by_its_exit_status(tmp_path, command, said):
    out = on_node(servers.after_script(servers.declared(command)), tmp_path)
    assert out.startswith("fsaccept-servers n7 " + said.format(m=tmp_path)), out
    assert out.count("\n") == 1


def fake_tool(bindir: Path, name: str, text: Path, status: int = 0) -> None:
    tool = bindir / name
    tool.write_text(f"#!/bin/sh\ncat '{text}'\nexit {status}\n")
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)


def test_a_built_in_probe_runs_its_tools_on_the_node(tmp_path):
    """Lustre's three commands, run by the node's runner through the job's bash function,
    with stand-ins for lfs and lctl printing the documented outputs."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "lfs").write_text(
        "#!/bin/sh\n"
        f"case \"$1\" in getname) cat '{DATA / 'lustre/getname.txt'}';;\n"
        f"  check) cat '{DATA / 'lustre/oss-failover.check.txt'}';; esac\n")
    (bindir / "lfs").chmod(0o755)
    fake_tool(bindir, "lctl", DATA / "lustre/oss-failover.import.txt")
    out = on_node(servers.after_script("lustre"), "/lustre/scratch", str(bindir))
    assert out.startswith("fsaccept-servers n7 down Lustre client lost scratch-OST0002 "
                          "(import DISCONN, lfs check: Resource temporarily unavailable"), out


def test_a_node_without_the_tools_cannot_tell(tmp_path):
    out = on_node(servers.after_script("gpfs"), tmp_path)
    assert out.startswith("fsaccept-servers n7 unknown cannot run `mmgetstate`"), out


def test_a_node_where_the_runner_cannot_start_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(servers.sys, "executable", str(tmp_path / "no-python"))
    out = on_node(servers.after_script("beegfs"), tmp_path)
    assert out.startswith("fsaccept-servers n7 unknown the server probe did not answer: "), out


def test_a_command_still_running_at_its_limit_is_killed_and_down(tmp_path, monkeypatch):
    monkeypatch.setattr(probes, "COMMAND_TIMEOUT_S", 1)
    answer = servers.run(servers.declared("sleep 600"), str(tmp_path))
    assert answer == probes.Answer(DOWN, "site probe: no answer within 1 s")


def test_the_runner_names_an_unknown_probe(capsys):
    assert servers.main(["Lustre2", "/m"]) == 0
    assert capsys.readouterr().out.startswith("unknown no server probe named 'Lustre2'")


def test_a_parser_that_fails_is_an_unknown_answer_not_a_crash(tmp_path):
    def broken(mount, outs):
        raise KeyError("state")
    probe = probes.Probe("Broken", ("x",), ("true",), broken, "nothing")
    answer = servers.run(probe, str(tmp_path))
    assert answer.state == UNKNOWN and "KeyError" in answer.what


def test_the_runner_keeps_to_the_checkout_that_made_the_job(tmp_path):
    """The job's function imports this fsaccept, not one its environment may name."""
    script = servers.probe("beegfs")
    assert str(Path(servers.__file__).resolve().parents[2]) in script
    assert " -I -c " in script and os.path.basename(servers.sys.executable) in script


@pytest.mark.parametrize("stat, said, status", [
    # Two file systems, three active MDS (one of them refused), a standby not asked.
    ("echo 'cephfs:2 {0=a=up:active,1=b=up:active} fs2:1 {0=c=up:active} 1 up:standby'",
     "mds a answers\nmds b refused 13\nmds c answers\n", 0),
    ("echo 'cephfs:1 {0=a=up:active(laggy or crashed)}'", "mds a answers\n", 0),
    ("echo 'cephfs:0/1 1 failed'", "", 0),
    ("echo 'Error initializing cluster client' >&2; exit 1",
     "Error initializing cluster client\n", 2),
])
def test_the_mds_loop_asks_each_active_mds_named_by_ceph_mds_stat(tmp_path, stat, said,
                                                                   status):
    fake = tmp_path / "ceph"
    fake.write_text(f'#!/bin/sh\ncase "$*" in\n  "mds stat") {stat} ;;\n'
                    '  "tell mds.b version") exit 13 ;;\n  "tell mds."*) exit 0 ;;\n'
                    '  *) exit 99 ;;\nesac\n')
    fake.chmod(0o755)
    proc = subprocess.run(["bash", "-c", cephfs.MDS_ANSWERS, "fsaccept-probe", "/mnt/fs"],
                          capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PATH=f"{tmp_path}:{os.environ['PATH']}"))
    assert (proc.stdout + proc.stderr, proc.returncode) == (said, status)


def test_a_silent_mds_is_asked_again_and_only_one_silent_each_time_is_silent(tmp_path):
    """A loaded client once waited more than the timeout for an MDS that answered the
    other nodes: a second try answers.  One that never answers stays silent; every
    active MDS is asked at once (the timeout made 3 s here, the hang 60 s)."""
    fake = tmp_path / "ceph"
    first = tmp_path / "asked-a"
    fake.write_text(f'#!/bin/sh\ncase "$*" in\n'
                    '  "mds stat") echo "cephfs:2 {0=b=up:active,1=a=up:active}" ;;\n'
                    f'  "tell mds.a version") [ -e {first} ] && exit 0; : > {first}; '
                    'exec sleep 60 ;;\n'
                    '  "tell mds.b version") exec sleep 60 ;;\n  *) exit 99 ;;\nesac\n')
    fake.chmod(0o755)
    script = cephfs.MDS_ANSWERS.replace(f"timeout {cephfs.TELL_TIMEOUT_S} ", "timeout 3 ")
    assert "timeout 3 " in script
    proc = subprocess.run(["bash", "-c", script, "fsaccept-probe", "/mnt/fs"],
                          capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PATH=f"{tmp_path}:{os.environ['PATH']}"))
    assert (proc.stdout, proc.returncode) == ("mds a answers\nmds b silent\n", 0), proc
