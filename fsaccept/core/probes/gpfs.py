"""IBM Storage Scale (GPFS): the daemon state of the cluster's NSD servers and the state
of every disk of the mounted file system.

- ``mmgetstate -N nsdnodes``: one row per NSD server, ``Node number  Node name  GPFS
  state``; ``active`` is healthy, ``arbitrating``, ``down``, ``unknown`` and
  ``unresponsive`` are not.  Only the NSD servers: with ``-a`` a client node down
  anywhere in the cluster would refuse every job;
- ``mmlsdisk DEVICE`` (the mount's source): one row per disk; a disk is whole when its
  ``status`` is ``ready`` and its ``availability`` is ``up`` (what ``mmlsdisk -e`` leaves
  out).

Both need root (or the site's sudo wrapper); without it they cannot be read, and the
answer is UNKNOWN: declare the site's own probe then (docs/user/site-setup.md).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from fsaccept.core.probes import Answer, Output, Probe, cannot_read, judged, not_run

#: The daemon states ``mmgetstate`` documents (only ``active`` is healthy).
NODE_STATES = frozenset({"active", "arbitrating", "down", "unknown", "unresponsive"})
#: The disk status and availability values ``mmlsdisk`` documents.
DISK_STATUS = frozenset({"ready", "suspended", "to be emptied", "being emptied", "emptied",
                         "replacing", "replacement"})
DISK_AVAILABILITY = frozenset({"up", "down", "recovering", "unrecovered"})
_NODE = re.compile(r"^\s*(\d+)\s+(\S+)\s+(\S+)\s*$")
_DASHES = re.compile(r"-+")


def rows_after_dashes(text: str) -> tuple[list[str], list[str]] | None:
    """(header lines, row lines) of a table whose header ends with a line of dashes;
    None when there is no such line."""
    lines = text.splitlines()
    at = next((i for i, line in enumerate(lines)
               if line.strip() and set(line.strip()) <= {"-", " "}), None)
    if at is None:
        return None
    return lines[:at + 1], [line for line in lines[at + 1:] if line.strip()]


def nodes(text: str) -> dict[str, str] | None:
    """{node: GPFS state} from ``mmgetstate``; None when a row cannot be read (a state
    it does not document: a row cut short) or there is none."""
    table = rows_after_dashes(text)
    if table is None:
        return None
    found = [_NODE.match(row) for row in table[1]]
    if not found or not all(m and m.group(3) in NODE_STATES for m in found):
        return None
    return {m.group(2): m.group(3) for m in found}


def disks(text: str) -> list[dict[str, str]] | None:
    """One {column: value} per row of ``mmlsdisk``, the columns named by the header's
    words above each run of dashes ("disk name", "status", "availability"...); None when
    a row is cut short, says what ``mmlsdisk`` does not, or there is none."""
    table = rows_after_dashes(text)
    if table is None:
        return None
    header, rows = table
    spans = [m.span() for m in _DASHES.finditer(header[-1])]
    starts = [s for s, _ in spans] + [None]

    def cells(line: str) -> list[str]:
        return [line[a:b].strip() for a, b in zip(starts, starts[1:])]

    names = [" ".join(w for w in words if w)
             for words in zip(*(cells(line) for line in header[:-1]))]
    out = [dict(zip(names, cells(row))) for row in rows]
    if not out or any(not r.get("disk name") or not r.get(names[-1])
                      or r.get("status") not in DISK_STATUS
                      or r.get("availability") not in DISK_AVAILABILITY for r in out):
        return None
    return out


def parse(mount: str, outputs: Sequence[Output]) -> Answer:
    """Every NSD server active and every disk up and ready: OK; a server or disk that is
    not: DOWN, naming it and its state; a table that cannot be read: UNKNOWN."""
    for out in outputs:
        answer = not_run(out)
        if answer:
            return answer
    getstate, lsdisk = outputs
    servers, table = nodes(getstate.text), disks(lsdisk.text)
    down = [f"NSD server {name} ({state})" for name, state in (servers or {}).items()
            if state != "active"]
    down += [f"disk {d['disk name']} ({d['status']}, {d['availability']})"
             for d in table or [] if d["status"] != "ready" or d["availability"] != "up"]
    unreadable = [cannot_read(out) for out, read in ((getstate, servers), (lsdisk, table))
                  if not read]
    ok = (f"{len(servers or {})} NSD servers active, {len(table or [])} of "
          f"{len(table or [])} disks up and ready")
    return judged(down, unreadable, ok, lost="GPFS: ")


PROBE = Probe(
    name="GPFS", fstypes=("gpfs",),
    commands=("mmgetstate -N nsdnodes",
              'mmlsdisk "$(findmnt -n -o SOURCE --target "$1" | head -n 1)"'),
    parse=parse,
    reads="`mmgetstate -N nsdnodes` (each NSD server's daemon: active, or arbitrating, "
          "down, unknown, unresponsive) and `mmlsdisk` of the mounted device (each disk's "
          "status and availability: ready and up); both need root",
    documented="IBM Storage Scale Command and Programming Reference: mmgetstate command "
               "(states, examples), mmlsdisk command and Administration Guide, Displaying "
               "GPFS disk states (columns, status and availability values); Specifying "
               "nodes as input to GPFS commands (node class nsdnodes)")
