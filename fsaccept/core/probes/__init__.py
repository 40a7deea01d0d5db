"""The storage-server probe of a file system, declared once, the way IOR declares an I/O
backend (its ``aiori`` interface records): a :class:`Probe` names its file-system types,
the commands every node of a job runs (bash, ``$1`` = the mount point) and, as a direct
function reference, the pure parser that turns what those commands printed
(:class:`Output`) into an :class:`Answer`: ``ok``, ``down`` (naming what is down) or
``unknown`` (what could not be read: never healthy).

One module per file system holds its probe (``glusterfs``, ``lustre``, ``gpfs``,
``beegfs``, ``cephfs``, ``daos``), and ``site`` the probe a site declares in its system
configuration.  :mod:`fsaccept.core.servers` gathers them, runs them on the nodes and
reads their answers.  The parsers are tested on outputs written from each tool's
documented format (``tests/data/probes/``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

OK, DOWN, UNKNOWN = "ok", "down", "unknown"

#: Seconds a probe's commands may take (they run side by side); one still running then
#: is killed, and its parser is told so (``Output.status`` None).
COMMAND_TIMEOUT_S = 30

#: At most this many things are named in one answer (then "and N more").
NAMED_AT_MOST = 12


@dataclass(frozen=True)
class Output:
    """What one command of a probe said: its exit status (None: it did not end within
    :data:`COMMAND_TIMEOUT_S` and was killed) and what it printed, stdout and stderr
    together, decoded as UTF-8 with bad bytes replaced."""

    command: str
    status: int | None
    text: str


@dataclass(frozen=True)
class Answer:
    """A probe's answer on one node: ``state`` is OK, DOWN or UNKNOWN."""

    state: str
    what: str

    def line(self) -> str:
        """``STATE WHAT`` on one line: the job reads it, and the run report keeps the
        nodes' answers with "; " between them (:func:`fsaccept.core.servers.grouped`)."""
        what = re.sub(r"[\x00-\x1f\x7f]+", " ", self.what).replace("; ", ", ").strip()
        return f"{self.state} {what}"


@dataclass(frozen=True)
class Probe:
    """A file system's probe of its storage servers, asked of the client on every node."""

    #: How the answers and the docs call it ("Lustre").
    name: str
    #: The mount types it answers for (``findmnt -o FSTYPE``).
    fstypes: tuple[str, ...]
    #: Run in this order on every node with ``bash -c COMMAND fsaccept-probe MOUNT``.
    commands: tuple[str, ...]
    #: (mount point, one Output per command) -> Answer; pure, never raises.
    parse: Callable[[str, Sequence[Output]], Answer]
    #: What it reads, in words (the docs' table, the degraded-mode dry run).
    reads: str
    #: Where the format of what it reads is documented.
    documented: str = ""


# -- what every parser needs ----------------------------------------------------------


def last_line(text: str, limit: int = 200) -> str:
    """The last line that is not blank, at most ``limit`` characters (what a failed
    command said last)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:limit] if lines else ""


def named(things: Sequence[str], at_most: int = NAMED_AT_MOST) -> str:
    """"a, b, c", at most ``at_most`` of them, then "and N more"."""
    shown = ", ".join(things[:at_most])
    more = len(things) - at_most
    return f"{shown} and {more} more" if more > 0 else shown


def tool_of(command: str) -> str:
    """The tool a command runs, as answers name it: its first words up to the first
    option or shell syntax (``lfs check servers``, ``mmgetstate``)."""
    words = []
    for word in command.split()[:3]:
        if word.startswith("-") or any(c in word for c in "$|<>;&'\"=("):
            break
        words.append(word)
    return " ".join(words) or command[:40]


def json_of(out: Output) -> Any:
    """What a command printed, read as JSON (None when it is not JSON)."""
    try:
        return json.loads(out.text)
    except ValueError:
        return None


def no_answer() -> str:
    """What a command killed at its time limit is said to have done."""
    return f"no answer within {COMMAND_TIMEOUT_S} s"


def not_run(out: Output) -> Answer | None:
    """The answer when ``out``'s command did not run or did not end: killed at its time
    limit (a client that cannot answer has lost its servers: down), not found or not
    executable (unknown); None when it ran."""
    tool = tool_of(out.command)
    if out.status is None:
        return Answer(DOWN, f"`{tool}`: {no_answer()}")
    if out.status in (126, 127):
        return Answer(UNKNOWN, f"cannot run `{tool}`: {last_line(out.text) or 'not found'}")
    return None


def cannot_read(out: Output, why: str = "") -> str:
    """What an unreadable output was, for an UNKNOWN answer."""
    said = last_line(out.text)
    how = why or (f"exit {out.status}: {said}" if said else f"exit {out.status}, no output")
    return f"cannot read `{tool_of(out.command)}` ({how})"


def judged(down: Iterable[str], unreadable: Iterable[str], ok: str, lost: str = "") -> Answer:
    """The answer from what every source said: DOWN ("``lost`` a, b") when one names
    something down (whatever another could not read), else UNKNOWN when one could not
    be read, else OK with ``ok``."""
    down, unreadable = list(down), list(unreadable)
    if down:
        return Answer(DOWN, lost + named(down))
    if unreadable:
        return Answer(UNKNOWN, ", ".join(unreadable))
    return Answer(OK, ok)
