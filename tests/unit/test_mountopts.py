"""Mount options (issue 38 §2): the reference's ``mount_options`` are refused when no
mount can meet them or when they are not options; each node's mount is judged before the
benchmark by :func:`fsaccept.core.mountopts.problems`, the login node's by the guard, and
the sign-off judges the recorded answers again by the same function.  The GlusterFS
client's command lines are the lab's own (``<mount>/.meta/cmdline`` of the login node's
client and of n1's, ``scripts/local-cluster up --fs gluster``, GlusterFS 10.3)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from fsaccept.core import guards, mountopts, servers
from fsaccept.rfm.jobscript import NODE_CHECK_MARKER, NODE_CHECK_SCRIPT
from fsaccept.suite.reference import REFERENCE_DIR, ReferenceError, load_reference

#: What findmnt -n -r -o OPTIONS prints for the lab's GlusterFS mount, on every node and
#: on the login node: the kernel's FUSE options, the same with or without the client's.
GLUSTER_KERNEL = "rw,relatime,user_id=0,group_id=0,default_permissions,allow_other,max_read=131072"
#: n1's client's ``.meta/cmdline``, as it printed it.
N1_CMDLINE = """{ 
  "Cmdlinestr": "glusterfs --volfile-server=127.0.0.2 --volfile-id=fsaccept --pid-file=/work/main/.state/gluster/run/client-n1.pid --log-file=/work/main/.state/gluster/log/client-n1.log --attribute-timeout=0 /mnt/fsaccept-gluster"
}"""
LOGIN_CMDLINE = N1_CMDLINE.replace("client-n1", "client-login").replace(
    " --attribute-timeout=0", "")


# -- the pure judge -----------------------------------------------------------------------


@pytest.mark.parametrize("text, options", [
    ("", []),
    (",,", []),
    ("rw", ["rw"]),
    ("rw,,noatime,", ["rw", "noatime"]),
    ('rw,context="system_u:object_r:nfs_t:s0:c1,c2",noatime',
     ["rw", 'context="system_u:object_r:nfs_t:s0:c1,c2"', "noatime"]),
    ('a="unterminated,b', ['a="unterminated,b']),
    ("x=1,x=2", ["x=1", "x=2"]),
    ("a=b=c", ["a=b=c"]),
])
def test_options_are_split_on_the_commas_outside_quotes(text, options):
    assert mountopts.split_options(text) == options


@pytest.mark.parametrize("kernel, client, required, forbidden, found", [
    (GLUSTER_KERNEL, None, ["rw"], ["ro"], []),
    (GLUSTER_KERNEL, None, ["acl"], [], ["lacks required option acl"]),
    (GLUSTER_KERNEL, None, [], ["default_permissions"],
     ["has forbidden option default_permissions"]),
    # name=value: that value; a bare name: any value.
    (GLUSTER_KERNEL, None, ["max_read=131072", "max_read"], [], []),
    (GLUSTER_KERNEL, None, ["max_read=4096"], [], ["lacks required option max_read=4096"]),
    (GLUSTER_KERNEL, None, [], ["max_read"], ["has forbidden option max_read"]),
    (GLUSTER_KERNEL, None, [], ["max_read=4096"], []),
    # A value is not a name, nor a prefix an option.
    ("rw,user_id=0", None, ["0", "user", "user_id=", "r"], [],
     ["lacks required option 0", "lacks required option user",
      "lacks required option user_id=", "lacks required option r"]),
    # Given twice: the last counts.
    ("rw,x=1,x=2", None, ["x=2"], ["x=1"], []),
    ("rw,x=1,x=2", None, ["x=1"], [], ["lacks required option x=1"]),
    # Nothing at all.
    ("", None, ["rw"], ["ro"], ["lacks required option rw"]),
    # The client's own options count as the mount's.
    (GLUSTER_KERNEL, "volfile-id=fsaccept,attribute-timeout=0", ["attribute-timeout=0"],
     ["entry-timeout"], []),
    (GLUSTER_KERNEL, "volfile-id=fsaccept", ["attribute-timeout=0", "acl"], [],
     ["lacks required option attribute-timeout=0", "lacks required option acl"]),
    (GLUSTER_KERNEL, "attribute-timeout=10,entry-timeout=10", ["attribute-timeout=0"],
     ["entry-timeout"], ["lacks required option attribute-timeout=0",
                         "has forbidden option entry-timeout"]),
    # A client whose options could not be read proves nothing it alone could show.
    (GLUSTER_KERNEL, "?", ["rw", "acl"], ["ro"],
     ["lacks required option acl (its client's own options could not be read)",
      "cannot show it lacks forbidden option ro (its client's own options could not be "
      "read)"]),
    (GLUSTER_KERNEL, "?", ["rw"], ["allow_other"], ["has forbidden option allow_other"]),
])
def test_the_judge(kernel, client, required, forbidden, found):
    assert mountopts.problems(kernel, client, required, forbidden) == found


def test_the_sentence_names_the_mount_and_each_option():
    found = mountopts.problems("ro,relatime", None, ["acl"], ["ro"])
    assert mountopts.sentence("/mnt/x", found) == \
        "mount of /mnt/x lacks required option acl, has forbidden option ro"


def test_the_glusterfs_clients_options_are_its_flags():
    assert mountopts.client_options(N1_CMDLINE) == [
        "volfile-server=127.0.0.2", "volfile-id=fsaccept", "attribute-timeout=0"]
    assert mountopts.client_options(LOGIN_CMDLINE) == [
        "volfile-server=127.0.0.2", "volfile-id=fsaccept"]


@pytest.mark.parametrize("text, options", [
    ('{"Cmdlinestr": "glusterfs --acl --xlator-option=a,b -- --=x /m"}',
     ["acl", "xlator-option=a\\x2cb", "=x"]),
    ('{"Cmdlinestr": ""}', []),
    ('{"Cmdlinestr": "glusterfs --log-file=/x,acl,y /m"}', []),
    ('{"Cmdlinestr": "glusterfs --a=\\"q\\" /m"}', ['a=\\"q\\"']),
])
def test_hostile_command_lines(text, options):
    assert mountopts.client_options(text) == options


@pytest.mark.parametrize("text", ["", "\x00\xff", "{}", '{"Cmdlinestr": 3}', "glusterfs --acl"])
def test_a_command_line_that_is_none_is_refused(text):
    with pytest.raises(ValueError):
        mountopts.client_options(text)


def test_the_record_reads_back():
    for kernel, client in [(GLUSTER_KERNEL, None), (GLUSTER_KERNEL, "a,b=1"),
                           (GLUSTER_KERNEL, "?"), ("", "")]:
        answer = f"fuse.glusterfs /mnt/x 127.0.0.2:v {mountopts.record(kernel, client)} " \
                 "(4 of 4 bricks connected) O_DIRECT honoured"
        assert mountopts.recorded(answer) == (kernel, client)
    assert mountopts.recorded("ext4 / /dev/vda (4 of 4 bricks connected)") is None
    assert mountopts.recorded("") is None
    # No source: the tokens are still found.
    assert mountopts.recorded("ext4 /  options=rw") == ("rw", None)


def test_the_sign_off_judges_the_recorded_answers_by_the_same_function():
    answers = servers.ungrouped(
        f"n1,n3: fuse.glusterfs /m s options={GLUSTER_KERNEL} client=attribute-timeout=0; "
        f"n2: fuse.glusterfs /m s options={GLUSTER_KERNEL} client=entry-timeout=10; "
        "n4: fuse.glusterfs /m s (4 of 4 bricks connected)")
    assert mountopts.node_reasons(answers, "/m", ["attribute-timeout=0"],
                                  ["entry-timeout"]) == [
        "node n2: mount of /m lacks required option attribute-timeout=0, has forbidden "
        "option entry-timeout",
        "node n4: node_mounts records no mount options, which the reference's "
        "mount_options judge"]
    assert mountopts.node_reasons(answers, "/m", [], []) == []


# -- the reference file ---------------------------------------------------------------------

LOCAL = (REFERENCE_DIR / "local.yaml").read_text()


def _reference(tmp_path, options: str) -> Path:
    assert LOCAL.count("\ntarget:\n") == 1
    path = tmp_path / "local.yaml"
    path.write_text(LOCAL.replace("\ntarget:\n", f"\ntarget:\n  mount_options: {options}\n"))
    return path


def _refused(tmp_path, options: str) -> str:
    with pytest.raises(ReferenceError) as err:
        load_reference(_reference(tmp_path, options))
    return str(err.value)


def test_the_reference_declares_them(tmp_path):
    target = load_reference(_reference(
        tmp_path, "{required: [rw, attribute-timeout=0, context=a:b/c], forbidden: [ro]}")).target
    assert target.required_options == ("rw", "attribute-timeout=0", "context=a:b/c")
    assert target.forbidden_options == ("ro",)
    assert load_reference(REFERENCE_DIR / "local.yaml").target.required_options == ()


@pytest.mark.parametrize("option", [
    "a;b", "$(reboot)", "`id`", "a b", "a,b", "x='1'", 'x="1"', "a|b", "a&b", "a>b", "*",
    "", "=x", "-o", "x=", "x=a,b", "x=\\1", "a\nb", "ac\u2028l", "é", "a=b=c"])
def test_an_option_that_is_not_one_is_refused_naming_its_key(tmp_path, option):
    message = _refused(tmp_path, "{required: [rw, %s]}" % json.dumps(option))
    assert f"target.mount_options.required[1]: {option!r} is not a mount option" in message


@pytest.mark.parametrize("options, message", [
    ("{required: [acl], forbidden: [acl]}",
     "target.mount_options.forbidden[0]: 'acl' forbids target.mount_options.required[0] "
     "'acl': no mount can have both"),
    ("{required: [rw, attribute-timeout=0], forbidden: [attribute-timeout]}",
     "target.mount_options.forbidden[0]: 'attribute-timeout' forbids "
     "target.mount_options.required[1] 'attribute-timeout=0'"),
    ("{required: [x=1, x=2]}",
     "target.mount_options.required[1]: 'x=2', but target.mount_options.required[0] "
     "requires x=1"),
    ("{required: [acl, acl]}", "target.mount_options.required: ['acl', 'acl'] has non-unique"),
    ("{}", "target.mount_options: {} should be non-empty"),
    ("{required: acl}", "target.mount_options.required: 'acl' is not of type 'array'"),
    ("{wanted: [acl]}", "target.mount_options: unknown key(s) 'wanted'"),
    ("[acl]", "target.mount_options: ['acl'] is not of type 'object'"),
])
def test_options_no_mount_can_meet_are_refused(tmp_path, options, message):
    assert message in _refused(tmp_path, options)


def test_compatible_entries_are_not_refused(tmp_path):
    # Forbidding one value of an option another entry requires by name alone is possible.
    load_reference(_reference(tmp_path, "{required: [x, y=1, y], forbidden: [x=1, z]}"))


def test_several_targets_each_declare_their_own(tmp_path):
    text = (REFERENCE_DIR / "local-gluster-cephfs.yaml").read_text()
    name = next(line.strip().rstrip(":") for line in text.split("targets:\n", 1)[1]
                .splitlines() if line.startswith("  ") and not line.startswith("   "))
    path = tmp_path / "two.yaml"
    path.write_text(text.replace(f"\n  {name}:\n",
                                 f"\n  {name}:\n    mount_options: {{forbidden: [ro, ro]}}\n", 1))
    with pytest.raises(ReferenceError, match=rf"targets\.{name}\.mount_options\.forbidden: "
                                             r"\['ro', 'ro'\] has non-unique"):
        load_reference(path)


# -- on a node, and on the login node -------------------------------------------------------


def _mount_of(path: Path) -> guards.Mount:
    return guards.mount_of(path)


def _kernel(path: Path) -> str:
    return subprocess.run(["findmnt", "-n", "-r", "-o", "OPTIONS", "-T", str(path)],
                          capture_output=True, text=True, check=True).stdout.splitlines()[0]


def test_the_options_are_read_as_findmnt_prints_them(tmp_path):
    mount = _mount_of(tmp_path)
    assert mountopts.read(str(tmp_path), mount.target, mount.fstype) == (_kernel(tmp_path), None)


def test_a_glusterfs_clients_options_are_read_from_its_meta_directory(tmp_path):
    # tmp_path plays the mount point: its .meta/cmdline is the lab's n1's.
    (tmp_path / ".meta").mkdir()
    (tmp_path / ".meta" / "cmdline").write_text(N1_CMDLINE)
    assert mountopts.read(str(tmp_path), str(tmp_path), "fuse.glusterfs") == (
        _kernel(tmp_path), "volfile-server=127.0.0.2,volfile-id=fsaccept,attribute-timeout=0")
    (tmp_path / ".meta" / "cmdline").write_text("garbage")
    assert mountopts.read(str(tmp_path), str(tmp_path), "fuse.glusterfs")[1] == "?"
    (tmp_path / ".meta" / "cmdline").unlink()
    assert mountopts.read(str(tmp_path), str(tmp_path), "fuse.glusterfs")[1] == "?"


def _node_check(tmp_path, required, forbidden, runner=None) -> str:
    """The per-node check as a job runs it, on this host (tmp_path's mount)."""
    mount = _mount_of(tmp_path)
    runner = runner or servers.node_python("fsaccept.core.mountopts")
    script = mountopts.function(required, forbidden, runner) + \
        NODE_CHECK_SCRIPT.replace("$NODE_CHECK_MARKER", NODE_CHECK_MARKER)
    proc = subprocess.run(["bash", "-c", script, "fsaccept-node", str(tmp_path), str(tmp_path),
                           mount.fstype, mount.target, "0"], capture_output=True, text=True,
                          env={**os.environ, "SLURMD_NODENAME": "n2"})
    return proc.stdout


def test_the_node_check_records_the_options_and_refuses_before_any_write(tmp_path):
    mount = _mount_of(tmp_path)
    first = mountopts.split_options(_kernel(tmp_path))[0]
    ok = _node_check(tmp_path, [first], ["fsaccept-no-such-option"])
    assert ok == (f"{NODE_CHECK_MARKER} n2 ok {mount.fstype} {mount.target} {mount.source} "
                  f"options={_kernel(tmp_path)}\n")
    assert mountopts.recorded(ok.split(" ok ", 1)[1]) == (_kernel(tmp_path), None)
    bad = _node_check(tmp_path, ["fsaccept-no-such-option"], [first])
    assert bad == (f"{NODE_CHECK_MARKER} n2 bad mount of {mount.target} lacks required option "
                   f"fsaccept-no-such-option, has forbidden option {first}\n")
    assert list(tmp_path.iterdir()) == []  # nothing written
    # Without mount_options: no Python run, nothing recorded, as before.
    assert "options=" not in _node_check(tmp_path, [], [])


@pytest.mark.parametrize("said, why", [
    ("", ""),
    ("Traceback (most recent call last):\nModuleNotFoundError: fsaccept",
     ": ModuleNotFoundError: fsaccept"),
    ("ok options=rw\nok options=rw", ": ok options=rw"),
    ("okay", ": okay"),
])
def test_the_node_check_refuses_when_its_runner_does_not_answer(tmp_path, said, why):
    # A node without the harness's Python, or a runner that says something else.
    out = _node_check(tmp_path, ["rw"], [], ["sh", "-c", 'printf "%s" "$0"', said])
    assert out == f"{NODE_CHECK_MARKER} n2 bad the mount-options check did not answer{why}\n"


def test_the_login_nodes_guard(tmp_path):
    mount = _mount_of(tmp_path)
    first = mountopts.split_options(_kernel(tmp_path))[0]
    guards.check_target(tmp_path, mount.fstype, Path("r.yaml"),
                        mount_options=([first], ["fsaccept-no-such-option"]))
    with pytest.raises(guards.GuardError) as err:
        guards.check_target(tmp_path, mount.fstype, Path("r.yaml"),
                            mount_options=(["acl-fsaccept"], [first]))
    assert str(err.value) == (
        f"target {tmp_path} (from r.yaml): here (the login node), the mount of {mount.target} "
        f"lacks required option acl-fsaccept, has forbidden option {first} "
        f"(options={_kernel(tmp_path)}), against the reference file's mount_options")


# -- the sign-off ---------------------------------------------------------------------------

DATA = Path(__file__).resolve().parent.parent / "data" / "reframe"


def test_the_sign_off_refuses_a_node_whose_recorded_options_break_the_reference(tmp_path,
                                                                                monkeypatch):
    from fsaccept.reporting import report as signoff
    for name in ("figure_plot", "check_plot", "per_node_plot"):
        monkeypatch.setattr(signoff, name, lambda *a, **k: b"")
    text = (DATA / "local-gluster-accepted.reference.yaml").read_text()
    assert text.count("  max_bandwidth_mib_s: 1024\n") == 1
    text = text.replace("  max_bandwidth_mib_s: 1024\n", "  max_bandwidth_mib_s: 1024\n"
                        "  mount_options: {required: [attribute-timeout=0], forbidden: [ro]}\n")
    ref = tmp_path / "reference.yaml"
    ref.write_text(text)
    data = json.loads((DATA / "local-gluster-accepted.json").read_text())
    cases = [c for r in data["runs"] for c in r["testcases"]]
    opts = f"options={GLUSTER_KERNEL} client=volfile-server=127.0.0.2,volfile-id=fsaccept"
    for case in cases:
        if case.get("reference_path"):
            case["reference_path"] = str(ref)
            case["reference_sha256"] = hashlib.sha256(text.encode()).hexdigest()
        mounts = case.get("node_mounts")
        if mounts:  # as a run with the reference's mount_options records them
            case["node_mounts"] = mounts.replace(
                "127.0.0.2:fsaccept ", f"127.0.0.2:fsaccept {opts},attribute-timeout=0 ")

    def signed() -> tuple[int, str]:
        src = tmp_path / "run-report.json"
        src.write_text(json.dumps(data))
        code = signoff.main([str(src), "--out", str(tmp_path / "out")])
        return code, (tmp_path / "out" / "report.md").read_text().replace("\\", "")

    code, md = signed()
    assert code == 0 and "**Overall verdict: ACCEPTED**" in md, md[:2000]
    md_easy = next(c for c in cases if c["name"] == "MdtestEasy")
    md_easy["node_mounts"] = (
        f"n1,n3,n4: fuse.glusterfs /mnt/fsaccept-gluster 127.0.0.2:fsaccept "
        f"{opts},attribute-timeout=0 (4 of 4 bricks connected); "
        f"n2: fuse.glusterfs /mnt/fsaccept-gluster 127.0.0.2:fsaccept "
        f"{opts},attribute-timeout=10 (4 of 4 bricks connected)")
    code, md = signed()
    assert code == 1
    assert ("MdtestEasy: INVALID (node n2: mount of /mnt/fsaccept-gluster lacks required "
            "option attribute-timeout=0)") in md, md[:3000]
