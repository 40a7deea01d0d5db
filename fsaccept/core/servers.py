"""Whether each node's client reaches every storage server of the target, asked of the
client itself, on every node of a job: before the benchmark (a node whose client has
lost a server refuses, as a node without its mount does) and after it (a figure taken
while a server was unreachable measured a degraded file system, even when a replica
kept the run alive, and is INVALID).  Degraded mode proves its fault with the same probe.

The probes are records (:mod:`fsaccept.core.probes`): fsaccept's own, one per file system
(:data:`BUILT_IN`), and the one a site declares in its system configuration
(``extras.server_probe``: :func:`declared`), which takes precedence.  On a node, the bash
function ``fsaccept_servers MOUNT_POINT`` runs the probe (this module, with the
harness's Python: ``python -m fsaccept.core.servers NAME MOUNT COMMAND...``) and prints
one line: ``ok WHAT``, ``down WHAT`` (naming what is down) or ``unknown WHAT`` (what
could not be read).  A target with no probe is not asked.

The rest reads the nodes' answers back: from a job's output, and from the run report.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from fsaccept.core import probes as interface
from fsaccept.core.probes import (UNKNOWN, Answer, Output, Probe, beegfs, cephfs, daos,
                                  glusterfs, gpfs, lustre, site)

#: Starts each node's line of the probe run after the benchmark.
MARKER = "fsaccept-servers"

#: fsaccept's own probes, one per file system.
BUILT_IN: tuple[Probe, ...] = (glusterfs.PROBE, lustre.PROBE, gpfs.PROBE, beegfs.PROBE,
                               cephfs.PROBE, daos.PROBE)
#: The built-in probe of each file-system type.
BY_FSTYPE: dict[str, Probe] = {t: p for p in BUILT_IN for t in p.fstypes}
#: Every probe by its name (the node's runner is told which one to run).
BY_NAME: dict[str, Probe] = {p.name: p for p in (*BUILT_IN, site.TEMPLATE)}

#: The partition's ``extras`` key under which a site declares its own probe.
EXTRA = site.EXTRA
ProbeDeclarationError = site.ProbeDeclarationError


def declared(value: Any, where: str = f"extras.{EXTRA}") -> Probe | None:
    """The probe a system declares (None when it declares none); ProbeDeclarationError
    naming ``where`` when the declaration cannot be used."""
    return site.declared(value, where)


def probe_for(fstype: str, declared_probe: Probe | None = None) -> Probe | None:
    """The probe that asks the servers of a target of type ``fstype``: the site's when it
    declares one, else fsaccept's own (None: the target is not asked)."""
    return declared_probe or BY_FSTYPE.get(fstype)


def describe(chosen: Probe | None) -> str:
    """How the run report and the dry run name a probe: fsaccept's by its name
    ("Lustre"), the site's with its command ("site: CMD"); "" for none."""
    if chosen is None:
        return ""
    return f"site: {chosen.commands[0]}" if chosen.name == site.TEMPLATE.name else chosen.name


def reads(chosen: Probe) -> str:
    """What a probe reads, in words (a site's: its command)."""
    if chosen.name == site.TEMPLATE.name:
        return f"`{chosen.commands[0]}` (exit 0 when healthy)"
    return chosen.reads


def _chosen(probe: Probe | str | None) -> Probe | None:
    return probe_for(probe) if isinstance(probe, str) else probe


#: The root of the fsaccept package the nodes' runner imports (this checkout's).
_ROOT = str(Path(__file__).resolve().parents[2])


#: The bash function ``fsaccept_servers MOUNT``: the runner's answer when it is one line
#: that starts like an answer, else UNKNOWN with the last line it printed.
FUNCTION = r"""fsaccept_servers() {
  local said
  said=$(@RUN@ "$1" @COMMANDS@ 2>&1)
  case "$said" in (ok\ *|down\ *|unknown\ *)
    [[ "$said" == *$'\n'* ]] || { echo "$said"; return; };; esac
  echo "unknown the server probe did not answer${said:+: $(tail -n 1 <<< "$said")}"
}
"""


def node_python(module: str) -> list[str]:
    """The command that runs ``module``'s ``main(argv)`` on a node with this Python,
    isolated from the job's environment (``-I``), importing this checkout's fsaccept."""
    runner = ("import sys; sys.path.insert(0, sys.argv.pop(1)); "
              f"from {module} import main; main(sys.argv[1:])")
    return [sys.executable, "-I", "-c", runner, _ROOT]


def probe(chosen: Probe | str | None) -> str:
    """The bash function ``fsaccept_servers`` of a probe (a file-system type: its
    built-in one; "" when there is none).  It runs the probe with this Python, isolated
    from the job's environment (``-I``), and prints the answer line, or UNKNOWN when
    the runner itself did not answer (a node without this Python)."""
    chosen = _chosen(chosen)
    if chosen is None:
        return ""
    run_it = shlex.join([*node_python("fsaccept.core.servers"), chosen.name])
    return FUNCTION.replace("@RUN@", run_it, 1).replace(
        "@COMMANDS@", shlex.join(chosen.commands), 1)


def after_script(chosen: Probe | str | None) -> str:
    """``bash -c`` script (``$1`` = mount point) printing ``MARKER NODE STATUS WHAT``."""
    return (probe(chosen) + f'echo "{MARKER} ${{SLURMD_NODENAME:-$(hostname -s)}} '
            '$(fsaccept_servers "$1")"\n')


# -- the runner, on a node -------------------------------------------------------------


def _start(command: str, mount: str) -> subprocess.Popen | Output:
    try:
        return subprocess.Popen(["bash", "-c", command, "fsaccept-probe", mount],
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, start_new_session=True)
    except OSError as err:
        return Output(command, 127, str(err))


def _finish(command: str, proc: subprocess.Popen | Output, deadline: float) -> Output:
    """What a started command said by ``deadline``; killed (its whole session) then."""
    if isinstance(proc, Output):
        return proc
    try:
        data, _ = proc.communicate(timeout=max(deadline - time.monotonic(), 0.0))
        return Output(command, proc.returncode, data.decode("utf-8", errors="replace"))
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        try:  # a process stuck on a dead mount may keep the pipe open: do not wait on it
            data, _ = proc.communicate(timeout=1)
        except subprocess.TimeoutExpired:
            data = b""
        return Output(command, None, (data or b"").decode("utf-8", errors="replace"))


def run(chosen: Probe, mount: str) -> Answer:
    """Run a probe's commands side by side on this node, for at most
    :data:`fsaccept.core.probes.COMMAND_TIMEOUT_S` in all, and read what they printed
    with its parser."""
    started = [(c, _start(c, mount)) for c in chosen.commands]
    deadline = time.monotonic() + interface.COMMAND_TIMEOUT_S
    outputs = tuple(_finish(c, proc, deadline) for c, proc in started)
    try:
        return chosen.parse(mount, outputs)
    except Exception as err:  # noqa: BLE001 - a parser's defect is an answer, not a crash
        return Answer(UNKNOWN, f"the {chosen.name} probe cannot read what its commands "
                               f"printed ({type(err).__name__}: {err})")


def main(argv: list[str]) -> int:
    """``python -m fsaccept.core.servers NAME MOUNT [COMMAND...]``: one answer line."""
    if len(argv) < 2 or argv[0] not in BY_NAME:
        print(f"{UNKNOWN} no server probe named {argv[0] if argv else '?'!r} "
              f"(known: {', '.join(BY_NAME)})")
        return 0
    name, mount, *commands = argv
    chosen = BY_NAME[name]
    if commands:
        chosen = dataclasses.replace(chosen, commands=tuple(commands))
    print(run(chosen, mount).line(), flush=True)
    return 0


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


def after_reasons(answers: dict[str, list[str]], nodes: list[str]) -> list[str]:
    """INVALID reasons the nodes' answers after the benchmark give (``nodes``: the job's
    node list): a server lost (:func:`degraded_reasons`), and missing evidence: a node
    of the job that gave no answer, or one that answered ``unknown`` (the probe could
    not tell: never healthy).  The live check and the sign-off both judge by this."""
    out = degraded_reasons(answers)
    unknown = {a: who for a, who in answers.items()
               if a.split(" ", 1)[0] not in (interface.OK, interface.DOWN)}
    out += [f"evidence missing: the server probe could not tell whether every storage "
            f"server was reached after the benchmark: node {g}" for g in grouped(unknown)]
    heard = {n for who in answers.values() for n in who}
    unheard = sorted(set(nodes) - heard)
    if unheard:
        out.append(f"evidence missing: node {','.join(unheard)} of the job gave no answer of "
                   "the server probe after the benchmark")
    return out


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
