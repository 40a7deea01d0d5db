"""CephFS: the cluster's health checks, the state of every MDS rank, and whether each
active MDS answers, as the monitors, managers and MDS daemons tell the client's keyring.

- ``ceph health detail --format json``: ``{"status": "HEALTH_OK|WARN|ERR", "checks":
  {CODE: {"severity", "summary": {"message"}, "detail": [{"message"}], "muted"}}}``.  A
  check that says a server is down, an MDS has failed over, or the data is not whole
  (:data:`DOWN_CHECKS`, any ``OSD_<crush type>_DOWN``) or any check of severity
  ``HEALTH_ERR`` is down, muted or not, and so is the status ``HEALTH_ERR`` with no check
  listed; other warnings (a recent crash, a pool of one copy) are named but not down;
- ``ceph fs status --format json``: ``{"mdsmap": [{"rank", "name", "state"}...]}``; a
  rank whose state is not ``active`` (``failed``, ``replay``, ``active(laggy)``...) is
  down.  Every file system of the cluster is judged;
- :data:`MDS_ANSWERS`: each MDS ``ceph mds stat`` lists as active, asked its version
  (``ceph tell``) for at most :data:`TELL_TIMEOUT_S`, up to :data:`TELL_TRIES` times: a
  killed active MDS stays in the map, and the cluster ``HEALTH_OK``, until the monitor
  has missed its beacons (mds_beacon_grace, 15 s; measured on the lab: 15-35 s), and
  only this sees it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from fsaccept.core.probes import (Answer, Output, Probe, cannot_read, json_of, judged,
                                  last_line, named, not_run)

#: Health checks that mean a server is down, an MDS has failed over (its standby taken:
#: MDS_INSUFFICIENT_STANDBY; a rank without its MDS: MDS_UP_LESS_THAN_MAX) or data is not
#: whole, or an MDS refuses every change (MDS_READ_ONLY: "will return EROFS error codes to
#: client operations that attempt to modify any metadata"; Ceph's documented codes:
#: rados/operations/health-checks, cephfs/health-messages).
DOWN_CHECKS = frozenset({
    "MON_DOWN", "OSD_DOWN", "PG_AVAILABILITY", "PG_DEGRADED", "OBJECT_UNFOUND",
    "MDS_ALL_DOWN", "FS_DEGRADED", "FS_WITH_FAILED_MDS", "MDS_DAMAGE",
    "MDS_INSUFFICIENT_STANDBY", "MDS_UP_LESS_THAN_MAX", "MDS_READ_ONLY"})
#: The statuses ``ceph health`` gives (``health_status_t``: src/include/health.h).
STATUSES = ("HEALTH_OK", "HEALTH_WARN", "HEALTH_ERR")
_CRUSH_DOWN = re.compile(r"^OSD_[A-Z]+_DOWN$")
#: Detail lines named per check (a degraded PG's check lists every PG).
DETAILS_AT_MOST = 3
#: MDS states of a daemon that serves no rank (``ceph fs status``).
STANDBY = frozenset({"standby", "standby-replay"})
#: Seconds an active MDS has to answer ``ceph tell``: it answers in ~0.3 s when it runs.
TELL_TIMEOUT_S = 10
#: Times a silent MDS is asked, each for :data:`TELL_TIMEOUT_S`: a loaded client (a CI
#: host beside other work: one of four nodes once waited more than 10 s for an MDS that
#: answered the others) gets a second chance; a killed one stays silent.  Every active
#: MDS is asked at once, so the loop takes at most twice the timeout, inside the probe's
#: own :data:`~fsaccept.core.probes.COMMAND_TIMEOUT_S`.
TELL_TRIES = 2
#: One line per MDS ``ceph mds stat`` lists as active (``{0=b=up:active}``), in name
#: order: ``mds NAME answers``, ``mds NAME silent`` (no answer in any try) or ``mds NAME
#: refused EXIT`` (``ceph tell`` failed at once: e.g. a client key without the right to
#: ask an MDS); exit 2 with what ``ceph mds stat`` said when it fails.
MDS_ANSWERS = rf"""s=$(ceph mds stat 2>&1) || {{ printf '%s\n' "$s"; exit 2; }}
fsaccept_ask() {{
  for _ in $(seq {TELL_TRIES}); do
    timeout {TELL_TIMEOUT_S} ceph tell "mds.$1" version > /dev/null 2>&1
    rc=$?
    [ "$rc" = 124 ] || break
  done
  case $rc in
    0) echo "mds $1 answers" ;;
    124) echo "mds $1 silent" ;;
    *) echo "mds $1 refused $rc" ;;
  esac
}}
for m in $(printf '%s\n' "$s" | grep -o '=[^ {{}}=]*=up:active' | cut -d= -f2); do
  fsaccept_ask "$m" &
done | sort"""
_ANSWER_LINE = re.compile(r"mds (\S+) (answers|silent|refused [0-9]+)")


def health(data: Any) -> tuple[str, list[str], list[str]] | None:
    """(status, what is down, the other checks' codes) from ``ceph health detail``'s
    JSON; None when it is not that (a status none of :data:`STATUSES`).  A ``HEALTH_ERR``
    whose checks name nothing down is down all the same: the cluster says so."""
    if not isinstance(data, dict) or data.get("status") not in STATUSES \
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
    if data["status"] == "HEALTH_ERR" and not down:
        down.append("HEALTH_ERR: the cluster's status, with no check of its own listed")
    return data["status"], down, other


def ranks(data: Any) -> tuple[list[tuple[int, str]], list[str], list[str]] | None:
    """(each active rank and its MDS, ranks that are not active, standby MDS names) from
    ``ceph fs status``'s JSON; None when it is not that."""
    if not isinstance(data, dict) or not isinstance(data.get("mdsmap"), list):
        return None
    active: list[tuple[int, str]] = []
    down, standby = [], []
    for mds in data["mdsmap"]:
        if not isinstance(mds, dict) or not isinstance(mds.get("state"), str):
            return None
        if mds["state"] in STANDBY or "rank" not in mds:
            standby.append(str(mds.get("name", "?")))
            continue
        if mds["state"] == "active":
            active.append((mds["rank"], str(mds.get("name", "?"))))
        else:
            down.append(f"MDS rank {mds['rank']} {mds['state']}"
                        + (f" ({mds['name']})" if mds.get("name") else ""))
    return active, down, sorted(standby)


def silent(out: Output) -> list[str] | None:
    """The active MDS daemons that did not answer :data:`MDS_ANSWERS` in time; None when
    its output is not that (or names none: ``ceph mds stat`` then listed no active MDS).
    One whose ``ceph tell`` was refused at once is not silent (:func:`refused`)."""
    if out.status != 0:
        return None
    lines = [line.strip() for line in out.text.splitlines() if line.strip()]
    found = [_ANSWER_LINE.fullmatch(line) for line in lines]
    if not found or not all(found):
        return None
    return [f"MDS {m[1]} (active) does not answer `ceph tell` within {TELL_TIMEOUT_S} s "
            f"({TELL_TRIES} tries)" for m in found if m[2] == "silent"]


def refused(out: Output) -> list[str]:
    """The active MDS daemons :data:`MDS_ANSWERS` could not ask (``ceph tell`` failed at
    once), with its exit status: the OK answer says so."""
    return [f"{m[1]} ({m[2]})" for line in out.text.splitlines()
            if (m := _ANSWER_LINE.fullmatch(line.strip())) and m[2].startswith("refused")]


def holders(mds: tuple[list[tuple[int, str]], list[str], list[str]]) -> str:
    """Which MDS holds each active rank, and the standbys: "rank 0 on b, standby a"."""
    active, _, standby = mds
    held = ", ".join(f"rank {r} on {n}" for r, n in active) or "no rank held"
    return f"{held}, standby {', '.join(standby) or 'none'}"


def parse(mount: str, outputs: Sequence[Output]) -> Answer:
    """No down check, every MDS rank active and every active MDS answering: OK, saying
    which MDS holds each rank; otherwise DOWN, naming the checks (with their detail), the
    ranks and the MDS daemons; an output that is not the one expected: UNKNOWN."""
    for out in outputs:
        answer = not_run(out)
        if answer:
            return answer
    detail, status, tell = outputs
    said, mds, quiet = health(json_of(detail)), ranks(json_of(status)), silent(tell)
    down = (said[1] if said else []) + (mds[1] if mds else []) + (quiet or [])
    if down and mds and any("MDS" in d or d.startswith("FS_") for d in down):
        down.append(f"MDS map: {holders(mds)}")
    unreadable = [cannot_read(out, "" if out.status else "not its JSON")
                  for out, read in ((detail, said), (status, mds)) if read is None]
    if quiet is None:
        said_last = last_line(tell.text)
        how = ("no active MDS named" if tell.status == 0 else f"exit {tell.status}"
               + (f": {said_last}" if said_last else ", no output"))
        unreadable.append(f"cannot read `ceph mds stat` and `ceph tell` ({how})")
    if mds and not mds[0] and not mds[1]:
        unreadable.append(cannot_read(status, "no MDS rank"))
    ok = ""
    if said and mds:
        others = f" (none a server down: {named(said[2])})" if said[2] else ""
        not_asked = refused(tell)
        ok = (f"{said[0]}{others}, {len(mds[0])} MDS ranks active and answering "
              f"({holders(mds)})")
        if not_asked:
            # A client key without the right to ask an MDS: a killed active MDS is then
            # seen only once the monitor has missed its beacons.
            ok = (f"{said[0]}{others}, {len(mds[0])} MDS ranks active ({holders(mds)}; "
                  f"`ceph tell` refused for {named(not_asked)})")
    return judged(down, unreadable, ok, lost="CephFS: ")


PROBE = Probe(
    name="CephFS", fstypes=("ceph", "fuse.ceph-fuse"),
    commands=("ceph health detail --format json", "ceph fs status --format json",
              MDS_ANSWERS),
    parse=parse,
    reads=f"`ceph health detail` (checks that mean a server down, an MDS failed over or "
          f"data not whole, or an MDS read-only: {', '.join(sorted(DOWN_CHECKS))}, "
          "OSD_<crush type>_DOWN, any HEALTH_ERR, the status HEALTH_ERR) and `ceph fs status` (every MDS rank active), both as JSON, and "
          f"`ceph tell mds.NAME version` of each active MDS of `ceph mds stat` (an answer "
          f"within {TELL_TIMEOUT_S} s, in {TELL_TRIES} tries)",
    documented="Ceph documentation: Monitoring a Cluster (ceph health detail, muting), "
               "Health checks (rados/operations/health-checks), CephFS health messages "
               "(cephfs/health-messages), ceph tell (rados/operations/control); the JSON "
               "keys: src/mon/health_check.h and the mgr status module (fs status); "
               "`ceph mds stat`: src/mds/FSMap.cc (print_summary)")
