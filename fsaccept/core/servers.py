"""Whether each node's client reaches every storage server of the target, asked of the
client itself, on every node of a job: before the benchmark (a node whose client has
lost a server refuses, as a node without its mount does) and after it (a figure taken
while a server was unreachable measured a degraded file system, even when a replica
kept the run alive, and is INVALID).

One probe per file-system type, a bash function ``fsaccept_servers MOUNT_POINT`` that
prints one line: ``ok WHAT``, ``down WHAT`` (naming each server it does not reach, or
why it cannot read the client's state) or ``unknown WHAT``.  A type without a probe is
not asked.  To add one (Lustre: the OSC/MDC import states of ``lctl get_param``),
add its function here and a test on the real thing.
"""

from __future__ import annotations

#: Starts each node's line of the probe run after the benchmark.
MARKER = "fsaccept-servers"

#: GlusterFS's FUSE client shows its own state under ``<mount>/.meta`` (its meta
#: translator): one ``protocol/client`` translator per brick, whose ``private`` says
#: ``connected = 1`` or ``0``, and whose options name the brick.
GLUSTERFS = r"""
fsaccept_servers() {
  local x err s n=0 down=""
  if ! err=$(ls -- "$1/.meta/graphs/active" 2>&1 >/dev/null); then
    # A client without its meta translator cannot tell; one that cannot answer is down.
    case "$err" in *"No such file or directory"*) s=unknown;; *) s=down;; esac
    echo "$s cannot read the GlusterFS client's state in $1/.meta: ${err##*: }"; return; fi
  for x in "$1"/.meta/graphs/active/*/; do
    [ "$(cat -- "${x}type" 2>/dev/null)" = protocol/client ] || continue
    n=$((n + 1))
    grep -qx "connected = 1" -- "${x}private" 2>/dev/null && continue
    down="${down:+$down, }$(cat -- "${x}options/remote-host" 2>/dev/null):$(cat -- \
"${x}options/remote-subvolume" 2>/dev/null)"
  done
  if [ -n "$down" ]; then echo "down GlusterFS client not connected to brick $down"
  elif [ "$n" = 0 ]; then echo "unknown no brick in $1/.meta/graphs/active"
  else echo "ok $n of $n bricks connected"; fi
}
"""

PROBES = {"fuse.glusterfs": GLUSTERFS}


def probe(fstype: str) -> str:
    """The bash function ``fsaccept_servers`` for ``fstype`` ("" if it has none)."""
    return PROBES.get(fstype, "")


def after_script(fstype: str) -> str:
    """``bash -c`` script (``$1`` = mount point) printing ``MARKER NODE STATUS WHAT``."""
    return (probe(fstype) + f'echo "{MARKER} ${{SLURMD_NODENAME:-$(hostname -s)}} '
            '$(fsaccept_servers "$1")"\n')


def node_answers(output: str, marker: str = MARKER) -> dict[str, list[str]]:
    """{answer: its nodes} from a job's ``MARKER NODE ANSWER`` lines (the per-node steps
    print them, one task per node; a node that answered again, in a relaunched step,
    counts with its last answer)."""
    last: dict[str, str] = {}
    for line in output.splitlines():
        if line.startswith(marker + " "):
            _, node, answer = (line.split(" ", 2) + [""])[:3]
            last.pop(node, None)
            last[node] = answer.strip()
    said: dict[str, list[str]] = {}
    for node, answer in last.items():
        said.setdefault(answer, []).append(node)
    return said


def grouped(answers: dict[str, list[str]]) -> list[str]:
    """"n1,n2: ANSWER" for each answer, its nodes together."""
    return [f"{','.join(sorted(nodes))}: {answer}" for answer, nodes in answers.items()]


def ungrouped(text: str) -> dict[str, list[str]] | None:
    """{answer: its nodes} from what :func:`grouped` wrote, "; " between the groups (the
    recorded ``servers_after`` or ``node_mounts`` of a run report); None when it is not
    that."""
    out: dict[str, list[str]] = {}
    for group in filter(None, (g.strip() for g in text.split("; "))):
        nodes, sep, answer = group.partition(": ")
        if not sep or not nodes or " " in nodes:
            return None
        out.setdefault(answer, []).extend(nodes.split(","))
    return out


def degraded(answers: dict[str, list[str]]) -> list[str]:
    """The nodes whose client did not reach every server after the benchmark, with what
    each said ("n1,n2: GlusterFS client not connected to brick ..."): the live check
    reads the answers from the job's output, the sign-off from the run report."""
    return grouped({answer.removeprefix("down "): nodes for answer, nodes in answers.items()
                    if answer.startswith("down ")})


def degraded_reasons(answers: dict[str, list[str]]) -> list[str]:
    """INVALID reasons of a figure measured while a node's client had lost a server."""
    return [f"the file system was degraded when the benchmark ended: node {d}"
            for d in degraded(answers)]
