"""Lustre: the client's own view of each target (MDT, OST) of the mounted file system.

- ``lfs getname MOUNT`` names the mount's instance (``scratch-ffff8803e1a4c000``): the
  client's devices for its targets end with it (``scratch-OST0002-osc-ffff8803e1a4c000``),
  which keeps another mounted Lustre file system out of the answer;
- ``lfs check servers`` pings every target: ``NAME active.``, ``NAME inactive.``, or
  ``lfs check: error: check 'NAME': STRERROR (ERRNO)``; the MGC's line is not judged;
- ``lctl get_param osc.*.import mdc.*.import``: each target's import, whose ``state:``
  is ``FULL`` when connected (``IDLE``: disconnected while unused, reconnected on demand)
  and ``DISCONN``, ``CONNECTING``, ``REPLAY``, ``RECOVER``, ``EVICTED``... otherwise.

A target either source finds not connected is down.  ``lfs check`` refused for lack of
privileges (EACCES, EPERM: older clients let only root ping) leaves the import states to
decide alone, and the answer says so; the refused pings still name every target, and
each must have its import's state.  A target whose import is named but has no state (a
list cut short), or an answer with no MDT or no OST (every Lustre file system has both),
cannot be read.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from fsaccept.core.probes import (UNKNOWN, Answer, Output, Probe, cannot_read, judged, named,
                                  not_run)

#: Every import state (``ptlrpc_import_state_name``), and those of a connected client.
STATES = frozenset({"CLOSED", "NEW", "DISCONN", "CONNECTING", "REPLAY", "REPLAY_LOCKS",
                    "REPLAY_WAIT", "RECOVER", "FULL", "EVICTED", "IDLE"})
CONNECTED = frozenset({"FULL", "IDLE"})
#: ``lfs check`` errors that say nothing of the server: the client may not ping.
NOT_PERMITTED = frozenset({1, 13})

_CHECKED = re.compile(r"^(\S+) (active|inactive)\.$")
_ERROR = re.compile(r"error: check '([^']+)': (.*) \((\d+)\)$")
_PARAM = re.compile(r"^(?:osc|mdc)\.(\S+)\.import=")
_FIELD = re.compile(r"^\s+(name|state):\s*(\S+)\s*$")
_TARGET = re.compile(r"^(.+)-(MDT|OST)([0-9a-fA-F]{4,})-(?:mdc|osc)-([0-9a-fA-F]+)$")


def instance(out: Output) -> str | None:
    """The mount's instance (``scratch-ffff8803e1a4c000``) from ``lfs getname MOUNT``."""
    if out.status != 0:
        return None
    words = (out.text.strip().splitlines() or [""])[0].split()
    return words[0] if words and re.fullmatch(r"\S+-[0-9a-fA-F]+", words[0]) else None


def target_of(device: str, inst: str) -> str | None:
    """``scratch-OST0002`` for the client device ``scratch-OST0002-osc-<instance>`` of
    this mount (None: another mount's device, or the MGC)."""
    m = _TARGET.match(device)
    if not m or f"{m.group(1)}-{m.group(4)}" != inst:
        return None
    return f"{m.group(1)}-{m.group(2)}{m.group(3)}"


def checked(text: str, inst: str) -> tuple[dict[str, str], bool, set[str]]:
    """{target: "" when active, else why not} from ``lfs check servers``, whether the
    client was refused the pings (then none is judged), and every target of the mount a
    line names (a refused ping still names its target: the imports must cover it)."""
    said: dict[str, str] = {}
    refused = False
    named_here: set[str] = set()
    for line in text.splitlines():
        line = line.strip()
        m = _CHECKED.match(line)
        if m:
            target = target_of(m.group(1), inst)
            if target:
                said[target] = "" if m.group(2) == "active" else "inactive"
                named_here.add(target)
            continue
        m = _ERROR.search(line)
        if m:
            target = target_of(m.group(1), inst)
            if target and int(m.group(3)) in NOT_PERMITTED:
                refused = True
            elif target:
                said[target] = f"lfs check: {m.group(2)} ({m.group(3)})"
            if target:
                named_here.add(target)
    return ({} if refused else said), refused, named_here


def imports(text: str, inst: str, named_here: set[str] | None = None) -> dict[str, str]:
    """{target: its import's state} from ``lctl get_param osc.*.import mdc.*.import``
    (a state Lustre does not have, a line cut short, leaves its target out); each target
    of the mount a parameter line names is added to ``named_here`` (its import begun,
    maybe cut before its state)."""
    states: dict[str, str] = {}
    device = None
    for line in text.splitlines():
        m = _PARAM.match(line)
        if m:
            device = m.group(1)
            target = target_of(device, inst)
            if target and named_here is not None:
                named_here.add(target)
            continue
        m = _FIELD.match(line)
        if m and m.group(1) == "name":
            device = m.group(2)
        elif m and device and m.group(2) in STATES:
            target = target_of(device, inst)
            if target:
                states[target] = m.group(2)
    return states


def parse(mount: str, outputs: Sequence[Output]) -> Answer:
    """Every target of the mount connected and active: OK; one that is not: DOWN,
    naming it and what each source said; a source that cannot be read, or that leaves
    out a target the other names: UNKNOWN."""
    getname, check, lctl = outputs
    for out in outputs:
        answer = not_run(out)
        if answer:
            return answer
    inst = instance(getname)
    if inst is None:
        return Answer(UNKNOWN, f"cannot tell which Lustre targets serve {mount}: "
                               + cannot_read(getname))
    pinged, refused, named_here = checked(check.text, inst)
    states = imports(lctl.text, inst, named_here)
    targets = sorted(set(pinged) | set(states) | named_here)
    unreadable = _missing(lctl, states, targets, inst)
    if not refused:
        unreadable += _missing(check, pinged, targets, inst)
    kinds = [k for k in ("MDT", "OST") if not any(f"-{k}" in t for t in targets)]
    if targets and kinds:
        # Every Lustre file system has an MDT and an OST: an answer without one is cut.
        unreadable.append(f"no {' and no '.join(kinds)} of {inst} named: what the "
                          "client printed is not the whole file system")
    down = []
    for target in targets:
        why = [f"import {states[target]}"] if states.get(target, "FULL") not in CONNECTED \
            else []
        why += [pinged[target]] if pinged.get(target) else []
        if why:
            down.append(f"{target} ({', '.join(why)})")
    return judged(down, unreadable, _connected(targets, inst, refused),
                  lost="Lustre client lost ")


def _missing(out: Output, found: dict[str, str], targets: list[str], inst: str) -> list[str]:
    """Why a source cannot be read: it names no target of the mount, or not every one
    the other source names (cut short)."""
    if not found:
        return [cannot_read(out, f"no target of {inst}" if out.status == 0 else "")]
    left_out = [t for t in targets if t not in found]
    return [cannot_read(out, f"nothing on {named(left_out)}")] if left_out else []


def _connected(targets: list[str], inst: str, refused: bool) -> str:
    mdts = sum("-MDT" in t for t in targets)
    how = ", judged by the import states (lfs check servers needs root here)" if refused \
        else ""
    return (f"{len(targets)} of {len(targets)} Lustre targets connected "
            f"({inst.rsplit('-', 1)[0]}: {mdts} MDTs, {len(targets) - mdts} OSTs){how}")


PROBE = Probe(
    name="Lustre", fstypes=("lustre",),
    commands=('lfs getname "$1"', "lfs check servers",
              "lctl get_param 'osc.*.import' 'mdc.*.import'"),
    parse=parse,
    reads="`lfs check servers` (each MDT and OST pinged: active, inactive or an error) and "
          "the `state:` of each target's import (`lctl get_param osc.*.import "
          f"mdc.*.import`: {' or '.join(sorted(CONNECTED))} when connected), for the targets "
          "of the mount's instance (`lfs getname`)",
    documented="lfs(1) `check`, lfs-getname(1), lctl-get_param(8); Lustre Operations "
               "Manual, Lustre File System Recovery: Imperative Recovery (the import's "
               "fields)")
