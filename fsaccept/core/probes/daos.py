"""DAOS: the system membership of its engines (ranks), from the management service.

``dmg system query --json`` prints ``{"response": {"members": [{"rank", "state", "addr",
"fault_domain", "info"...}]}, "error": null, "status": 0}``; a rank is serving when its
state is ``joined``.  ``stopped``, ``excluded``, ``adminexcluded``, ``errored``,
``unresponsive`` or any other state is down.  ``dmg`` needs the admin certificate of the
system; without it (or without a management service) ``error`` says why, and the answer
is UNKNOWN.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fsaccept.core.probes import Answer, Output, Probe, cannot_read, json_of, judged, not_run

JOINED = "joined"
#: The member states dmg documents (``system.MemberState``), in its JSON's lower case.
STATES = frozenset({"awaitformat", "starting", "ready", "joined", "stopping", "stopped",
                    "excluded", "adminexcluded", "errored", "unresponsive", "checkerstarted",
                    "unknown"})


def members(data: Any) -> list[dict[str, Any]] | str | None:
    """The members of the JSON answer; the ``error`` it reports instead; None when it is
    not that answer."""
    if not isinstance(data, dict):
        return None
    if isinstance(data.get("error"), str) and data["error"]:
        return data["error"]
    found = (data.get("response") or {}).get("members") \
        if isinstance(data.get("response"), dict) else None
    if not isinstance(found, list) or not found or not all(
            isinstance(m, dict) and str(m.get("state")).lower() in STATES and "rank" in m
            for m in found):
        return None
    return found


def parse(mount: str, outputs: Sequence[Output]) -> Answer:
    """Every rank joined: OK; a rank in any other state: DOWN, naming it, its state, its
    address and why; an answer that is not the JSON expected, or reports an error:
    UNKNOWN."""
    out = outputs[0]
    answer = not_run(out)
    if answer:
        return answer
    found = members(json_of(out))
    if not isinstance(found, list):
        why = f"dmg: {found[:200]}" if isinstance(found, str) else \
            ("" if out.status else "not its JSON")
        return judged([], [cannot_read(out, why)], "")
    down = [f"rank {m['rank']} ({m['state']}"
            + "".join(f", {m[k]}" for k in ("addr", "info") if m.get(k)) + ")"
            for m in found if m["state"].lower() != JOINED]
    return judged(down, [], f"{len(found)} of {len(found)} DAOS ranks joined",
                  lost="DAOS engines not serving: ")


PROBE = Probe(
    name="DAOS", fstypes=("fuse.daos",), commands=("dmg system query --json",),
    parse=parse,
    reads="`dmg system query --json`: every engine rank `joined` (the admin certificate "
          "is needed)",
    documented="DAOS Administration Guide: System Operations, Membership (dmg system query, "
               "its states); dmg's --json output: src/control/common/cmdutil/json.go, "
               "src/control/system/member.go")
