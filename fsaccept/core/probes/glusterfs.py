"""GlusterFS: its FUSE client shows its own state under ``<mount>/.meta`` (its meta
translator): one ``protocol/client`` translator per brick, whose ``private`` says
``connected = 1`` or ``0``, and whose options name the brick."""

from __future__ import annotations

import re
from collections.abc import Sequence

from fsaccept.core.probes import DOWN, OK, UNKNOWN, Answer, Output, Probe, no_answer

#: One line per brick: ``brick 1|0 HOST:SUBVOLUME``; exit 2 when the graph cannot be
#: listed (what ``ls`` said is the output).
LIST_BRICKS = r"""d="$1/.meta/graphs/active"
ls -- "$d" > /dev/null || exit 2
for x in "$d"/*/; do
  [ "$(cat -- "${x}type" 2>/dev/null)" = protocol/client ] || continue
  c=0; grep -qx "connected = 1" -- "${x}private" 2>/dev/null && c=1
  printf 'brick %s %s:%s\n' "$c" "$(cat -- "${x}options/remote-host" 2>/dev/null)" \
    "$(cat -- "${x}options/remote-subvolume" 2>/dev/null)"
done"""


def parse(mount: str, outputs: Sequence[Output]) -> Answer:
    """Every brick connected: OK; a brick not connected: DOWN, naming each; a client
    without its meta translator: UNKNOWN; one whose state cannot be listed: DOWN."""
    out = outputs[0]
    where = f"the GlusterFS client's state in {mount}/.meta"
    if out.status is None:
        return Answer(DOWN, f"cannot read {where}: {no_answer()}")
    if out.status != 0:
        err = (out.text.strip().splitlines() or [f"exit {out.status}"])[-1].rsplit(": ", 1)[-1]
        # A client without its meta translator cannot tell; one that cannot answer is down.
        state = UNKNOWN if err == "No such file or directory" else DOWN
        return Answer(state, f"cannot read {where}: {err}")
    bricks = [line.split(" ", 2)[1:] for line in out.text.splitlines()
              if line.startswith("brick ") and line.count(" ") >= 2]
    down = [name for connected, name in bricks if connected != "1"]
    if down:
        return Answer(DOWN, f"GlusterFS client not connected to brick {', '.join(down)}")
    if not bricks:
        return Answer(UNKNOWN, f"no brick in {mount}/.meta/graphs/active")
    return Answer(OK, f"{len(bricks)} of {len(bricks)} bricks connected")


PROBE = Probe(
    name="GlusterFS", fstypes=("fuse.glusterfs",), commands=(LIST_BRICKS,), parse=parse,
    reads="the FUSE client's own state: `<mount>/.meta/graphs/active/*/private` "
          "(`connected = 0|1`) of each brick's `protocol/client` translator",
    documented="GlusterFS's meta translator (xlators/meta): the client's graph as files")


#: The virtual extended attribute a GlusterFS client answers with the bricks that hold a
#: file (``getfattr -n trusted.glusterfs.pathinfo FILE``, GlusterFS's admin guide); the
#: name without ``trusted.`` is the one a user who is not root may read.
PATHINFO_XATTRS = ("trusted.glusterfs.pathinfo", "glusterfs.pathinfo")

_POSIX = re.compile(r"<POSIX\(([^)]*)\):([^:<>]+):([^<>]*)>")


def parse_pathinfo(text: str) -> tuple[tuple[str, str], ...]:
    """The bricks that hold a file, as ``(host, brick path)``, in the order the client
    lists them, from its ``pathinfo`` xattr: ``(<DISTRIBUTE:vol-dht>
    <POSIX(/bricks/b2):host:/bricks/b2/dir/file>)``; a replicated file lists each copy's
    brick.  Raises ValueError when the text names no brick."""
    bricks = tuple((host, brick) for brick, host, _ in _POSIX.findall(text))
    if not bricks:
        raise ValueError(f"no brick in GlusterFS pathinfo {text[:200]!r}")
    return bricks
