"""`fsaccept reference FILE` refuses what the run refuses in the target's text: blanks or
control characters (every line break ``str.splitlines`` knows) in its type, mount point
and source, control characters in every path, a path outside its mount point, and an
unbounded ``max_bandwidth_mib_s``.  Built from the shipped reference/local-gluster.yaml
(it pins a mount point and a source), edited in tmp_path."""

import re
import sys
from pathlib import Path

import pytest

from fsaccept.core import guards
from fsaccept.suite.reference import REFERENCE_DIR, ReferenceError, load_reference

GLUSTER = (REFERENCE_DIR / "local-gluster.yaml").read_text()
TARGET = ("  path: /mnt/fsaccept-gluster\n  fstype: fuse.glusterfs\n"
          "  mount_point: /mnt/fsaccept-gluster\n  source: 127.0.0.2:fsaccept\n"
          "  max_bandwidth_mib_s: 1024\n")


def edited(tmp_path, old, new, name="local-gluster.yaml"):
    assert GLUSTER.count(old) == 1, old
    path = tmp_path / name
    path.write_text(GLUSTER.replace(old, new))
    return path


def refused(tmp_path, capsys, old, new):
    """The one error line of `fsaccept reference` on the edited file (exit 2)."""
    from fsaccept.cli import main
    path = edited(tmp_path, old, new)
    assert main(["reference", str(path)]) == 2
    cap = capsys.readouterr()
    assert cap.out == ""
    lines = cap.err.splitlines()  # splits on U+2028 too: the message must hold none
    assert len(lines) == 1 and lines[0].startswith(f"{path}: "), cap.err
    return lines[0].removeprefix(f"{path}: ")


@pytest.mark.parametrize("old, new, message", [
    # Blanks: the nodes' mount answers ("FSTYPE MOUNT SOURCE") are split on them.
    ("  fstype: fuse.glusterfs\n", '  fstype: "fuse.glusterfs "\n',
     r"target.fstype: 'fuse.glusterfs ' holds blanks or control characters \(' '\)"),
    ("  source: 127.0.0.2:fsaccept\n", '  source: "127.0.0.2:fs accept"\n',
     r"target.source: '127.0.0.2:fs accept' holds blanks or control characters \(' '\)"),
    ("  source: 127.0.0.2:fsaccept\n", '  source: "127.0.0.2:fsaccept\\t"\n',
     r"target.source: .* holds blanks or control characters \('\\t'\)"),
    ("  mount_point: /mnt/fsaccept-gluster\n", '  mount_point: "/mnt/fsaccept gluster"\n',
     r"target.mount_point: '/mnt/fsaccept gluster' holds blanks or control characters"),
    # The Unicode line breaks str.splitlines splits on, and the other C0/C1 controls.
    ("  fstype: fuse.glusterfs\n", '  fstype: "fuse.glusterfs\\u2028"\n',
     r"target.fstype: .* holds blanks or control characters \('\\u2028'\)"),
    ("  mount_point: /mnt/fsaccept-gluster\n", '  mount_point: "/mnt/fsaccept-gluster\\x85"\n',
     r"target.mount_point: .* holds blanks or control characters \('\\x85'\)"),
    ("  source: 127.0.0.2:fsaccept\n", '  source: "127.0.0.2:fsaccept\\u2029"\n',
     r"target.source: .* holds blanks or control characters \('\\u2029'\)"),
    ("  path: /mnt/fsaccept-gluster\n", '  path: "/mnt/fsaccept-gluster/a\\u2028b"\n',
     r"target.path: .* holds control characters \('\\u2028'\)"),
    ("  path: /mnt/fsaccept-gluster\n", '  path: "/mnt/fsaccept-gluster/a\\x1cb"\n',
     r"target.path: .* holds control characters \('\\x1c'\)"),
    ("  path: /mnt/fsaccept-gluster\n", '  path: "/mnt/fsaccept-gluster/a\\x0bb\\x0c"\n',
     r"target.path: .* holds control characters \('\\x0b', '\\x0c'\)"),
    # A path outside its mount point, by components (not a string prefix), `..` resolved.
    ("  path: /mnt/fsaccept-gluster\n", "  path: /mnt/fsaccept-gluster2/x\n",
     r"target.path: '/mnt/fsaccept-gluster2/x' is not below target.mount_point "
     r"'/mnt/fsaccept-gluster'"),
    ("  path: /mnt/fsaccept-gluster\n", "  path: /mnt/fsaccept-gluster/../../etc\n",
     r"target.path: '/mnt/fsaccept-gluster/../../etc' is not below target.mount_point"),
    ("  path: /mnt/fsaccept-gluster\n", "  path: /mnt\n",
     r"target.path: '/mnt' is not below target.mount_point"),
    # A mount point the guard's text comparison with findmnt's answer can never match.
    ("  mount_point: /mnt/fsaccept-gluster\n", "  mount_point: /mnt/fsaccept-gluster/\n",
     r"target.mount_point: '/mnt/fsaccept-gluster/' is not how findmnt prints a mount point: "
     r"write '/mnt/fsaccept-gluster'"),
    # An unbounded bandwidth cap: deadline x cap is no bound (1e308: not even a number
    # of bytes, the capacity guard's int() would raise).
    ("  max_bandwidth_mib_s: 1024\n", "  max_bandwidth_mib_s: 1.0e+308\n",
     r"target.max_bandwidth_mib_s: 1e\+308 is greater than the maximum of 100000000"),
    ("  max_bandwidth_mib_s: 1024\n", "  max_bandwidth_mib_s: 1000000000\n",
     r"target.max_bandwidth_mib_s: 1000000000 is greater than the maximum of 100000000"),
])
def test_reference_command_refuses_what_the_run_refuses(tmp_path, capsys, old, new, message):
    assert re.search(message, refused(tmp_path, capsys, old, new))


@pytest.mark.parametrize("old, new", [
    # The run quotes the target path in every job line: a blank there is accepted.
    ("  path: /mnt/fsaccept-gluster\n", '  path: "/mnt/fsaccept-gluster/with blank"\n'),
    ("  path: /mnt/fsaccept-gluster\n", "  path: /mnt/fsaccept-gluster/a/../b\n"),
    ("  max_bandwidth_mib_s: 1024\n", "  max_bandwidth_mib_s: 100000000\n"),
])
def test_what_the_run_accepts_stays_valid(tmp_path, old, new):
    load_reference(edited(tmp_path, old, new))


def test_every_line_break_of_splitlines_is_a_control_character():
    breaks = [chr(i) for i in range(sys.maxunicode + 1) if len(f"a{chr(i)}b".splitlines()) > 1]
    assert {"\x85", "\u2028", "\u2029", "\x1c", "\x1d", "\x1e", "\x0b", "\x0c"} <= set(breaks)
    assert [c for c in breaks if not guards.unsafe_characters(c)] == []
    assert guards.unsafe_characters("a b\u00a0c") == []
    assert guards.unsafe_characters("a b\u00a0c", blanks=True) == ["' '", "'\\xa0'"]


@pytest.mark.parametrize("path, mount_point, inside", [
    ("/mnt/fs", "/mnt/fs", True), ("/mnt/fs/x", "/mnt/fs", True),
    ("/mnt/fs2", "/mnt/fs", False), ("/mnt/fs/../fs2/x", "/mnt/fs", False),
    ("/mnt/fs/./a/../b", "/mnt/fs", True), ("/x", "/", True), ("/mnt", "/mnt/fs", False),
])
def test_path_within_compares_components(path, mount_point, inside):
    assert guards.path_within(path, mount_point) is inside


@pytest.mark.parametrize("field, value, key", [
    ("expected_fstype", "ext4\u2028x", "expected file-system type"),
    ("expected_fstype", "ext 4", "expected file-system type"),
    ("mount_point", "/mnt/a b", "target.mount_point"),
    ("source", "srv:/x\x85", "target.source"),
])
def test_the_guard_before_any_job_applies_the_same_rule(tmp_path, field, value, key):
    # The run's guard (an override such as FSACCEPT_TARGET_FSTYPE reaches it, not the
    # reference check) refuses by the same predicate, before asking findmnt.
    kwargs = {"expected_fstype": "ext4", field: value}
    with pytest.raises(guards.GuardError, match=f"{key}: .* holds blanks or control"):
        guards.check_target(tmp_path, reference=Path("r.yaml"), **kwargs)


def test_the_loader_the_run_calls_refuses_them(tmp_path):
    # AcceptanceTest.load_reference (the check's set-up) calls this very loader.
    path = edited(tmp_path, "  fstype: fuse.glusterfs\n", '  fstype: "fuse.glusterfs\\x85"\n')
    with pytest.raises(ReferenceError, match=r"target.fstype: .*'\\x85'"):
        load_reference(path)
    from fsaccept.rfm import acceptance
    import inspect
    assert "reference.load_reference(path)" in inspect.getsource(
        acceptance.AcceptanceTest.load_reference)


def test_any_other_path_or_directory_key_is_held_to_the_path_rule():
    # No schema key but target.path names a path today; one added later (a dataset's
    # path, a directory) is held to the same rule without another line of code.
    from fsaccept.suite.reference import _path_errors
    data = {"target": {"path": "/ok"}, "tests": {"t": {
        "dataset_path": "/d/a\u2028b", "data_dirs": ["/ok", "/e\x85"], "direct_io": "x\ny"}}}
    assert _path_errors(data) == [
        r"tests.t.dataset_path: '/d/a\u2028b' holds control characters ('\u2028')",
        r"tests.t.data_dirs[1]: '/e\x85' holds control characters ('\x85')"]
