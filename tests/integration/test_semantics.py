"""Cross-node semantics on the real volume (issue 38): each emulated node reads through a
GlusterFS client of its own, so each case's writer and reader are two clients.

- The lab's volume and clients (lab/gluster.py COHERENCE, CLIENT_OPTIONS): PASS, with
  the rename case listed as not promised (reference/local-gluster.yaml says why).
- One node's client mounted with attribute-timeout=60,entry-timeout=60 (a site's
  misconfigured client): FAIL, naming the case and the node pair.  Cache invalidation
  still shows content and size at once; the link count waits for the kernel's cache.
- Root squash promised where the lab has none: FAIL, naming the case; with
  server.root-squash on (this test only) and a directory of mode 1777: PASS.
- One node's client mounted without acl: the ACL case FAILs, naming the node pair (the
  kernel checks the mode bits only, so the ACL's grant is refused).
- A lock whose holder is stopped, never killed (a fixture): FAIL at the bound, naming
  the pair.
"""

import stat
import time

import pytest

from fsaccept.benchmarks.semantics import parse
from lab.gluster import Gluster
from tests.conftest import LOCAL_CLUSTER, gluster_reference, run, run_gluster_checks

pytestmark = [pytest.mark.integration, pytest.mark.volume_cluster]


def semantics(tmp_path, layout):
    return run_gluster_checks("semantics", tmp_path, "-n", "CrossNodeSemantics",
                              env=gluster_reference(tmp_path, layout))


def test_the_lab_volume_behaves_as_one_file_system(gluster_env, tmp_path):
    _, layout = gluster_env
    proc, cases = semantics(tmp_path, layout)
    case = cases["CrossNodeSemantics"]
    assert case["result"] == "pass", proc.stdout[-3000:]
    assert case["semantics_failures"] == ""
    assert case["not_promised"].startswith("rename: not promised (GlusterFS's distributed "
                                           "volume"), case["not_promised"]
    assert len(case["semantics_cases"].splitlines()) == len(parse.CASES), \
        case["semantics_cases"]


def with_n2_remounted(tmp_path, layout, client_options: str, mount_options: dict):
    """n2's client remounted with ``client_options``: the check run with the lab's
    reference (its case, failing), then with one whose target declares ``mount_options``
    (n2 refused before the job writes).  n2 gets the lab's client back afterwards."""
    for sub in ("case", "refused"):
        (tmp_path / sub).mkdir()
    remount = run([str(LOCAL_CLUSTER), "remount", "n2", "--mount-options", client_options],
                  timeout=120)
    assert remount.returncode == 0, remount.stderr
    try:
        proc, cases = semantics(tmp_path / "case", layout)
        declaring = gluster_reference(tmp_path, layout, lambda d: d["target"].update(
            mount_options=mount_options))
        refused, refused_cases = run_gluster_checks(
            "semantics", tmp_path / "refused", "-n", "CrossNodeSemantics", env=declaring)
    finally:
        back = run([str(LOCAL_CLUSTER), "remount", "n2"], timeout=120)
        assert back.returncode == 0, back.stderr
    case = cases["CrossNodeSemantics"]
    # A FAIL of the cases (performance), never an INVALID run that judged none of them:
    # its reason is said when it is not.
    assert (case["result"], case["fail_phase"]) == ("fail", "performance"), \
        (case["fail_reason"], proc.stdout[-3000:])
    out = refused.stdout + refused.stderr
    refused_case = refused_cases["CrossNodeSemantics"]
    assert (refused_case["result"], refused_case["fail_phase"]) == ("fail", "sanity"), \
        (refused_case["fail_reason"], out[-3000:])
    return proc, case["semantics_failures"], out


def test_a_node_that_caches_attributes_fails_naming_the_pair(gluster_env, tmp_path):
    """n2's client caches attributes for 60 s, six times the cases' 10 s bound: the
    hardlink case FAILs on n1 -> n2, its new link count never seen within the bound,
    however slow the host (a cache of 10 s, the bound itself, expired on a loaded host
    before n2 asked again, and the link was seen).  n2 keeps acl, so that only the
    cache differs.  With a reference that forbids that option (target.mount_options),
    the same node is refused before the job writes anything: INVALID, naming the node
    and the option."""
    _, layout = gluster_env
    proc, failures, refused = with_n2_remounted(
        tmp_path, layout, "attribute-timeout=60,entry-timeout=60,acl",
        {"forbidden": ["attribute-timeout=60"]})
    assert "hardlink: writer n1, reader n2: " in failures, failures
    assert "nlink_expected=2 nlink_seen=1 bound_s=10" in failures, failures
    assert "acl-deny" not in failures, failures
    assert "hardlink: writer n1, reader n2" in proc.stdout + proc.stderr
    assert (f"node n2: mount of {layout.mount_point} has forbidden option "
            "attribute-timeout=60") in refused, refused[-3000:]


def promise_root_squash(data):
    """The lab's reference, edited to promise root squash (uid 65534; the ACL's uid 4242,
    not the squashed root's)."""
    entry = data["tests"]["semantics"]
    entry.update(root_squash_uid=65534, acl_test_uid=4242)
    entry["not_promised"].pop("root-squash")


def test_root_squash_promised_where_the_lab_has_none_fails(gluster_env, tmp_path):
    """The lab's volume squashes no root: a reference that promises it FAILs, naming the
    case and its node pair (root's file owned by 0), never a PASS.  The ACL case, promised
    by the lab's reference, passes beside it."""
    _, layout = gluster_env
    proc, cases = run_gluster_checks("semantics", tmp_path, "-n", "CrossNodeSemantics",
                                     env=gluster_reference(tmp_path, layout,
                                                           promise_root_squash))
    case = cases["CrossNodeSemantics"]
    assert case["result"] == "fail", proc.stdout[-3000:]
    failures = case["semantics_failures"]
    assert "root-squash: writer n1, reader n2: 1 violations" in failures, failures
    assert "owner=0 expected=65534" in failures
    assert "acl-deny" not in failures, failures


def until(condition, timeout=120):
    """Wait until ``condition()`` is true: it is asked again every 0.2 s, up to
    ``timeout`` seconds (generous: the wait ends as soon as it holds)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{condition.__name__}: not within {timeout} s"
        time.sleep(0.2)


def test_root_squash_on_the_volume_passes_where_promised(gluster_env, tmp_path):
    """server.root-squash on, for this test only, and the volume's fsaccept directory of
    mode 1777 (a site that squashes root gives its users a directory they may write):
    root's file is owned by 65534 seen from another node, so root-squash PASSes where
    promised, and the ACL case with it (its uid 4242, not the squashed root's)."""
    _, layout = gluster_env
    gluster = Gluster(layout)
    top = layout.mount_point / "fsaccept"
    mode = stat.S_IMODE(top.stat().st_mode)

    def squashed() -> bool:
        """Whether root's new file in ``top`` is owned by the anonymous uid: the bricks
        take a volume option a moment after ``volume set`` returns."""
        probe = top / ".squash-probe"
        probe.write_text("")
        try:
            return probe.stat().st_uid == 65534
        finally:
            probe.unlink()

    def unsquashed() -> bool:
        return not squashed()

    before = set(top.iterdir())
    top.chmod(0o1777)
    gluster.cli("volume", "set", layout.volume, "server.root-squash", "on")
    try:
        until(squashed)
        proc, cases = run_gluster_checks("semantics", tmp_path, "-n", "CrossNodeSemantics",
                                         env=gluster_reference(tmp_path, layout,
                                                               promise_root_squash))
    finally:
        gluster.cli("volume", "set", layout.volume, "server.root-squash", "off")
        until(unsquashed)
        top.chmod(mode)
    case = cases["CrossNodeSemantics"]
    lines = case["semantics_cases"]
    assert "root-squash writer=n1 reader=n2 value=0" in lines, proc.stdout[-3000:]
    assert "owner=65534 expected=65534 writer_euid=0" in lines, lines
    assert "granted_open=granted" in lines, lines
    assert case["result"] == "pass", (case["semantics_failures"], proc.stdout[-3000:])
    assert set(top.iterdir()) == before  # the squashed root removed what it wrote


def test_a_node_mounted_without_acl_fails_the_acl_case_naming_the_pair(gluster_env, tmp_path):
    """n2's client mounted without acl: GlusterFS still enforces the denying entry (on
    its bricks), but n2's kernel checks the mode bits only (FUSE's default_permissions),
    so the file of mode 0600 that the ACL grants to the uid is refused: acl-deny FAILs on
    n1 -> n2.  With a reference that requires acl (target.mount_options, read from the
    client's own command line), the same node is refused before the job writes."""
    _, layout = gluster_env
    _, failures, refused = with_n2_remounted(tmp_path, layout, "attribute-timeout=0",
                                             {"required": ["acl"]})
    assert "acl-deny: writer n1, reader n2: 1 violations" in failures, failures
    assert "denied_open=EACCES control_open=granted granted_open=EACCES" in failures, failures
    assert f"node n2: mount of {layout.mount_point} lacks required option acl" in refused, \
        refused[-3000:]


def test_a_lock_whose_holder_never_goes_away_fails_naming_the_pair(gluster_env, tmp_path):
    """The fixture FSACCEPT_TEST_LOCK_HOLDER=stop: the process holding n1's flock is
    stopped (SIGSTOP), never killed, as a hung process; GlusterFS rightly keeps the lock,
    so lock-killed waits its bound and FAILs on n1 -> n2.  Without the fixture the holder
    is killed and the lock is released at once (the test above)."""
    _, layout = gluster_env
    proc, cases = run_gluster_checks(
        "semantics", tmp_path, "-n", "CrossNodeSemantics",
        env=dict(gluster_reference(tmp_path, layout), FSACCEPT_TEST_LOCK_HOLDER="stop"))
    case = cases["CrossNodeSemantics"]
    print("failures:", case["semantics_failures"])
    assert case["result"] == "fail", proc.stdout[-3000:]
    assert "lock-killed: writer n1, reader n2: 10s (at most 1s; second_holder_before=" \
           "refused" in case["semantics_failures"], case["semantics_failures"]
    assert "INVALID" not in (case["fail_reason"] or ""), case["fail_reason"]
