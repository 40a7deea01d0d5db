"""The probe a site declares in its system configuration (``config/systems/<site>.py``,
the partition's ``extras``)::

    'server_probe': 'CMD'

``CMD`` is one shell line, run with ``bash -c`` on every node of a job, ``$1`` = the
target's mount point.  Its exit status says whether the file system is healthy (0) or
not, and what it prints names what is down.  A declared probe takes the place of
fsaccept's own for that partition, whatever the file-system type.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from fsaccept.core.probes import DOWN, OK, UNKNOWN, Answer, Output, Probe, no_answer

#: The partition's ``extras`` key of the declaration.
EXTRA = "server_probe"
#: The most of the command's output an answer keeps.
SAID_AT_MOST = 500


class ProbeDeclarationError(ValueError):
    """A declaration that cannot be used; the message names the key."""


def parse(mount: str, outputs: Sequence[Output]) -> Answer:
    """Exit 0: OK; any other exit: DOWN with what the command printed; not found or
    not executable (126, 127): UNKNOWN; killed at its time limit: DOWN."""
    out = outputs[0]
    said = ", ".join(line.strip() for line in out.text.splitlines() if line.strip())
    said = said[:SAID_AT_MOST]
    if out.status is None:
        return Answer(DOWN, f"site probe: {no_answer()}")
    if out.status == 0:
        return Answer(OK, f"site probe: {said or 'healthy (exit 0)'}")
    if out.status in (126, 127):
        return Answer(UNKNOWN, f"site probe cannot run (exit {out.status})"
                               + (f": {said}" if said else ""))
    return Answer(DOWN, f"site probe (exit {out.status}): "
                        + (said or "named nothing that is down"))


TEMPLATE = Probe(
    name="site", fstypes=(), commands=(), parse=parse,
    reads="the site's own command: exit 0 when healthy, else what it prints names what "
          "is down",
    documented="docs/user/site-setup.md (the server probe)")


def declared(value: Any, where: str = f"extras.{EXTRA}") -> Probe | None:
    """The probe a partition declares (None when it declares none); the error names
    ``where`` when the declaration is not one shell line."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ProbeDeclarationError(
            f"{where}: {value!r} is not a shell command (one line, run on every node of a "
            "job with $1 = the mount point; exit 0 when every server is reached)")
    if any(c in value for c in "\0\n\r"):
        raise ProbeDeclarationError(f"{where}: one line, no control characters")
    return dataclasses.replace(TEMPLATE, commands=(value,))
