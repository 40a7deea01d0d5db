"""A quota on the real volume (issue 38): the lab's quota commands
(``scripts/local-cluster quota-set``, ``quota-clear``, ``quota-usage``: GlusterFS's
``gluster volume quota``) set a limit on the test's directory; one node writes past it.

- The lab's volume: EDQUOT within the slack of the limit, and the usage ``gluster volume
  quota list`` reports following the data: PASS.
- A volume without quota enforcement (``FSACCEPT_LAB_QUOTA=off``: the set command sets a
  limit of 1 PiB, as a volume that counts usage and enforces nothing a user reaches):
  FAIL, naming the node.
- Both times the quota is cleared: the volume's quota is off again, nothing is left.
"""

import os

import pytest

from lab import gluster as gfs
from tests.conftest import gluster_reference, run_gluster_checks

pytestmark = [pytest.mark.integration, pytest.mark.volume_cluster]


def quota_off(layout) -> bool:
    """The volume's quota is off (as the lab keeps it between tests)."""
    proc = gfs.Gluster(layout).cli("volume", "info", layout.volume)
    return "features.quota: on" not in proc.stdout


def quota(tmp_path, layout, **env):
    proc, cases = run_gluster_checks("quota", tmp_path, "-n", "QuotaEnforcement",
                                     env=dict(gluster_reference(tmp_path, layout), **env))
    return proc, cases["QuotaEnforcement"]


def test_the_lab_volume_enforces_its_quota_and_reports_the_usage(gluster_env, tmp_path):
    _, layout = gluster_env
    proc, case = quota(tmp_path, layout)
    print("quota_lines:", case["quota_lines"])
    assert case["result"] == "pass", (case["fail_reason"], proc.stdout[-3000:])
    assert "stopped EDQUOT" in case["quota_lines"], case["quota_lines"]
    assert case["quota_failures"] == ""
    assert quota_off(layout)
    assert not list((layout.mount_point / "fsaccept").iterdir())


def test_a_volume_without_quota_enforcement_fails_naming_the_node(gluster_env, tmp_path):
    _, layout = gluster_env
    proc, case = quota(tmp_path, layout, **{gfs.QUOTA_FIXTURE: "off"})
    reason = case["fail_reason"] or ""
    print("reported:", reason, case["quota_failures"])
    assert case["result"] == "fail", proc.stdout[-3000:]
    assert "INVALID" not in reason, reason
    assert "quota not enforced: 81 MiB written into " in case["quota_failures"]
    assert " on n1 with no EDQUOT, past a limit of 64 MiB" in case["quota_failures"]
    assert "quota_written_mib" in reason, reason
    assert quota_off(layout)
    assert not list((layout.mount_point / "fsaccept").iterdir())
