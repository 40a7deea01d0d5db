"""CephFS: the cluster's health checks and the state of every MDS rank, as the monitors
and managers report them to the client's keyring.

- ``ceph health detail --format json``: ``{"status": "HEALTH_OK|WARN|ERR", "checks":
  {CODE: {"severity", "summary": {"message"}, "detail": [{"message"}], "muted"}}}``.  A
  check that says a server is down or the data is not whole (:data:`DOWN_CHECKS`, any
  ``OSD_<crush type>_DOWN``) or any check of severity ``HEALTH_ERR`` is down, muted or
  not; other warnings (a recent crash, too few standbys) are named but not down;
- ``ceph fs status --format json``: ``{"mdsmap": [{"rank", "name", "state"}...]}``; a
  rank whose state is not ``active`` (``failed``, ``replay``, ``rejoin``...) is down.
  Every file system of the cluster is judged.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from fsaccept.core.probes import (Answer, Output, Probe, cannot_read, json_of, judged, named,
                                  not_run)

#: Health checks that mean a server is down or data is not whole (Ceph's documented
#: codes: rados/operations/health-checks, cephfs/health-messages).
DOWN_CHECKS = frozenset({
    "MON_DOWN", "OSD_DOWN", "PG_AVAILABILITY", "PG_DEGRADED", "OBJECT_UNFOUND",
    "MDS_ALL_DOWN", "FS_DEGRADED", "FS_WITH_FAILED_MDS", "MDS_DAMAGE"})
_CRUSH_DOWN = re.compile(r"^OSD_[A-Z]+_DOWN$")
#: Detail lines named per check (a degraded PG's check lists every PG).
DETAILS_AT_MOST = 3
#: MDS states of a daemon that serves no rank (``ceph fs status``).
STANDBY = frozenset({"standby", "standby-replay"})


def health(data: Any) -> tuple[str, list[str], list[str]] | None:
    """(status, what is down, the other checks' codes) from ``ceph health detail``'s
    JSON; None when it is not that."""
    if not isinstance(data, dict) or not isinstance(data.get("status"), str) \
            or not isinstance(data.get("checks", {}), dict):
        return None
    down, other = [], []
    for code, check in sorted(data.get("checks", {}).items()):
        if not isinstance(check, dict):
            return None
        if code in DOWN_CHECKS or _CRUSH_DOWN.match(code) \
                or check.get("severity") == "HEALTH_ERR":
            details = [str(d.get("message", "")) for d in check.get("detail") or []
                       if isinstance(d, dict)]
            summary = check.get("summary")
            summary = str(summary.get("message", "")) if isinstance(summary, dict) else ""
            muted = " (muted)" if check.get("muted") else ""
            down.append(f"{code}{muted}: {summary}"
                        + (f" ({named(details, DETAILS_AT_MOST)})" if details else ""))
        else:
            other.append(code)
    return data["status"], down, other


def ranks(data: Any) -> tuple[int, list[str]] | None:
    """(active ranks, ranks that are not active) from ``ceph fs status``'s JSON; None
    when it is not that."""
    if not isinstance(data, dict) or not isinstance(data.get("mdsmap"), list):
        return None
    active, down = 0, []
    for mds in data["mdsmap"]:
        if not isinstance(mds, dict) or not isinstance(mds.get("state"), str):
            return None
        if mds["state"] in STANDBY or "rank" not in mds:
            continue
        if mds["state"] == "active":
            active += 1
        else:
            down.append(f"MDS rank {mds['rank']} {mds['state']}"
                        + (f" ({mds['name']})" if mds.get("name") else ""))
    return active, down


def parse(mount: str, outputs: Sequence[Output]) -> Answer:
    """No down check and every MDS rank active: OK; otherwise DOWN, naming the checks
    (with their detail) and the ranks; an output that is not the JSON expected:
    UNKNOWN."""
    for out in outputs:
        answer = not_run(out)
        if answer:
            return answer
    detail, status = outputs
    said, mds = health(json_of(detail)), ranks(json_of(status))
    down = (said[1] if said else []) + (mds[1] if mds else [])
    unreadable = [cannot_read(out, "" if out.status else "not its JSON")
                  for out, read in ((detail, said), (status, mds)) if read is None]
    if mds == (0, []):
        unreadable.append(cannot_read(status, "no MDS rank"))
    ok = ""
    if said and mds:
        others = f" (none a server down: {named(said[2])})" if said[2] else ""
        ok = f"{said[0]}{others}, {mds[0]} MDS ranks active"
    return judged(down, unreadable, ok, lost="CephFS: ")


PROBE = Probe(
    name="CephFS", fstypes=("ceph", "fuse.ceph-fuse"),
    commands=("ceph health detail --format json", "ceph fs status --format json"),
    parse=parse,
    reads=f"`ceph health detail` (checks that mean a server down or data not whole: "
          f"{', '.join(sorted(DOWN_CHECKS))}, OSD_<crush type>_DOWN, any HEALTH_ERR) and "
          "`ceph fs status` (every MDS rank active), both as JSON",
    documented="Ceph documentation: Monitoring a Cluster (ceph health detail, muting), "
               "Health checks (rados/operations/health-checks), CephFS health messages "
               "(cephfs/health-messages); the JSON keys: src/mon/health_check.h and the "
               "mgr status module (fs status)")
