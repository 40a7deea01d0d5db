"""BeeGFS: ``beegfs-check-servers -p MOUNT`` asks, from this client, whether every
management, metadata and storage server of the mount is reachable (``beegfs-ctl
--listnodes --reachable``).  Its output is one section per server type, a line of ``=``
under the type, then one line per server: ``NAME [ID: N]: reachable at HOST:PORT
(protocol: TCP|RDMA)`` or ``NAME [ID: N]: UNREACHABLE``.  (Not ``-e``: with it, an
unreachable server makes the script print beegfs-ctl's raw output instead.)"""

from __future__ import annotations

import re
from collections.abc import Sequence

from fsaccept.core.probes import Answer, Output, Probe, cannot_read, judged, not_run

#: The sections ``beegfs-check-servers`` prints, in its order.
SECTIONS = ("Management", "Metadata", "Storage")
_SERVER = re.compile(r"^(.+?) \[ID: (\d+)\]: (?:reachable at (\S+) \(protocol: \w+\)|"
                     r"(UNREACHABLE))$")


def servers(text: str) -> dict[str, dict[str, bool]] | None:
    """{section: {"NAME [ID: N]": reachable}}; None when a section is missing or empty,
    or a line in one cannot be read."""
    found: dict[str, dict[str, bool]] = {}
    section = None
    for line in (line.rstrip() for line in text.splitlines()):
        if line in SECTIONS:
            section = found.setdefault(line, {})
        elif not line or set(line) == {"="}:
            continue
        elif section is None:
            return None
        else:
            m = _SERVER.match(line)
            if not m:
                return None
            section[f"{m.group(1)} [ID: {m.group(2)}]"] = m.group(4) is None
    if any(not found.get(s) for s in SECTIONS):
        return None
    return found


def parse(mount: str, outputs: Sequence[Output]) -> Answer:
    """Every server reachable: OK; one that is not: DOWN, naming it and its type; an
    output that cannot be read (a section missing, a line cut short): UNKNOWN."""
    out = outputs[0]
    answer = not_run(out)
    if answer:
        return answer
    found = servers(out.text)
    down = [f"{kind.lower()} server {name}" for kind, listed in (found or {}).items()
            for name, reachable in listed.items() if not reachable]
    ok = ", ".join(f"{len(found[k])} {k.lower()}" for k in SECTIONS) if found else ""
    return judged(down, [] if found else [cannot_read(out)],
                  f"{ok} servers reachable", lost="BeeGFS client cannot reach ")


PROBE = Probe(
    name="BeeGFS", fstypes=("beegfs",), commands=('beegfs-check-servers -p "$1"',),
    parse=parse,
    reads="`beegfs-check-servers -p MOUNT`: each management, metadata and storage server "
          "reachable from the client, or UNREACHABLE",
    documented="beegfs-check-servers -h (BeeGFS 7 utils, scripts/beegfs-check-servers: "
               "\"Check if all BeeGFS servers are reachable from this host\"); BeeGFS "
               "documentation, beegfs-ctl --listnodes --reachable")
