"""The mount options of the target on each node, against the reference's
``mount_options: {required: [...], forbidden: [...]}``: read on each node before the
benchmark (a node whose mount lacks a required option or has a forbidden one is refused
before anything is written, as a node without the mount is), and on the login node by
the guard before any job; recorded in ``node_mounts``; judged again by the sign-off from
that record.  One pure judge (:func:`problems`) for all three.

What is read, per mount:

- the kernel's options, as ``findmnt -n -r -o OPTIONS -T PATH`` prints them (what
  ``findmnt -O`` filters on: ``rw,relatime,user_id=0,...``);
- for a GlusterFS FUSE mount, also its client's own options: ``attribute-timeout``,
  ``entry-timeout``, ``acl``... are options of the client process, given to it as
  ``--name[=value]`` flags, and the kernel never sees them (findmnt shows
  ``rw,relatime,user_id=0,group_id=0,default_permissions,allow_other,max_read=131072``
  with or without them).  The client that serves the mount says its own command line in
  ``<mount>/.meta/cmdline`` (its meta translator, as the server probe reads its bricks
  there), tied to that very mount: no process has to be matched to it.  Each
  ``--name[=value]`` flag is an option ``name[=value]``; flags whose value is an absolute
  path (``--log-file``, ``--pid-file``: the client's own files, different on each node)
  are left out.  A client whose command line cannot be read is recorded as ``client=?``.

The record (one token each, no blanks: findmnt's raw output escapes them):
``options=KERNEL`` and, for GlusterFS, ``client=CLIENT`` or ``client=?``.

Matching: an entry ``name=value`` is that option with that value; an entry ``name`` is
the option with any value or none.  Within one source the last of an option given twice
counts (as mount and the GlusterFS client take it).
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys

#: File-system types whose client keeps options the kernel does not show, and where it
#: says them.
CLIENT_CMDLINE = {"fuse.glusterfs": ".meta/cmdline"}
#: The token of the recorded kernel options and of the client's.
KERNEL_TOKEN, CLIENT_TOKEN = "options=", "client="
#: What the record says of a client whose options could not be read.
UNREADABLE = "?"
#: Bytes read at most of what findmnt or the client's command line says.
CAP = 64 * 1024
#: Seconds a read may take (a hung FUSE client must not hold the node check).
TIMEOUT_S = 20


def split_options(text: str) -> list[str]:
    """``rw,relatime,context="a,b"`` -> ``['rw', 'relatime', 'context="a,b"']``: split on
    the commas outside double quotes; empty items dropped."""
    out, item, quoted = [], [], False
    for char in text:
        if char == '"':
            quoted = not quoted
        if char == "," and not quoted:
            out.append("".join(item))
            item = []
        else:
            item.append(char)
    out.append("".join(item))
    return [o.strip() for o in out if o.strip()]


def _effective(options: list[str]) -> dict[str, str | None]:
    """name -> value (None: given without one) of the last occurrence of each option."""
    out: dict[str, str | None] = {}
    for option in options:
        name, sep, value = option.partition("=")
        out.pop(name, None)
        out[name] = value if sep else None
    return out


def _has(sources: list[dict[str, str | None]], entry: str) -> bool:
    """Whether an option of ``sources`` matches ``entry`` (``name`` or ``name=value``)."""
    name, sep, value = entry.partition("=")
    return any(name in s and (not sep or s[name] == value) for s in sources)


def client_options(cmdline: str) -> list[str]:
    """The options of a GlusterFS client from its ``.meta/cmdline``
    (``{"Cmdlinestr": "glusterfs --volfile-server=h --attribute-timeout=0 /mnt/x"}``):
    each ``--name[=value]`` flag as ``name[=value]``, but those whose value is an
    absolute path; a comma within one written ``\\x2c`` (the record splits on commas).
    ValueError when the text holds no command line."""
    match = re.search(r'"Cmdlinestr"\s*:\s*"((?:[^"\\]|\\.)*)"', cmdline)
    if not match:
        raise ValueError("no Cmdlinestr in it")
    out = []
    for word in match.group(1).split():
        if not word.startswith("--") or len(word) == 2:
            continue
        _, sep, value = word.partition("=")
        if sep and value.startswith("/"):
            continue
        out.append(word[2:].replace(",", "\\x2c"))
    return out


def record(kernel: str, client: str | None) -> str:
    """The recorded tokens: ``options=KERNEL`` and, for a file system whose client has
    options of its own, ``client=CLIENT`` (``client=?``: unreadable)."""
    return KERNEL_TOKEN + kernel + ("" if client is None else f" {CLIENT_TOKEN}{client}")


def recorded(answer: str) -> tuple[str, str | None] | None:
    """(kernel options, client options: None for none, "?" unreadable) of a node's
    recorded answer (``FSTYPE MOUNT SOURCE options=... [client=...] ...``); None when it
    records no options."""
    words = answer.split()[2:]
    kernel = next((i for i, w in enumerate(words) if w.startswith(KERNEL_TOKEN)), None)
    if kernel is None:
        return None
    after = words[kernel + 1:kernel + 2]
    client = after[0][len(CLIENT_TOKEN):] if after and after[0].startswith(CLIENT_TOKEN) \
        else None
    return words[kernel][len(KERNEL_TOKEN):], client


def problems(kernel: str, client: str | None, required: list[str],
             forbidden: list[str]) -> list[str]:
    """What is wrong with a mount whose kernel options are ``kernel`` (findmnt's text)
    and whose client's are ``client`` (None: it has none of its own; "?": they could
    not be read), against the reference's ``required`` and ``forbidden`` options:
    ``lacks required option acl``, ``has forbidden option ro``, one phrase each.  A
    client whose options could not be read cannot show a required option the kernel
    lacks, nor prove a forbidden one absent."""
    sources = [_effective(split_options(kernel))]
    unread = client == UNREADABLE
    if client is not None and not unread:
        sources.append(_effective(split_options(client)))
    why = " (its client's own options could not be read)" if unread else ""
    out = [f"lacks required option {o}{why}" for o in required if not _has(sources, o)]
    out += [f"has forbidden option {o}" for o in forbidden if _has(sources, o)]
    if unread:
        out += [f"cannot show it lacks forbidden option {o}{why}" for o in forbidden
                if not _has(sources, o)]
    return out


def sentence(mount: str, found: list[str]) -> str:
    """``mount of /mnt/x lacks required option acl, has forbidden option ro``."""
    return f"mount of {mount} " + ", ".join(found)


def spec_errors(where: str, required: list[str], forbidden: list[str]) -> list[str]:
    """A reference's ``mount_options`` that no mount can meet (``where``: its key, e.g.
    ``target.mount_options``): an option both required and forbidden, or required with
    two values."""
    errors = []
    for i, f in enumerate(forbidden):
        for j, r in enumerate(required):
            if _has([_effective([r])], f):
                errors.append(f"{where}.forbidden[{i}]: {f!r} forbids {where}.required[{j}] "
                              f"{r!r}: no mount can have both")
    values: dict[str, tuple[int, str]] = {}
    for j, r in enumerate(required):
        name, sep, value = r.partition("=")
        if not sep:
            continue
        if name in values and values[name][1] != value:
            errors.append(f"{where}.required[{j}]: {r!r}, but {where}.required"
                          f"[{values[name][0]}] requires {name}={values[name][1]}")
        values.setdefault(name, (j, value))
    return errors


def node_reasons(answers: dict[str, list[str]], mount: str, required: list[str],
                 forbidden: list[str]) -> list[str]:
    """What the per-node check's recorded answers (``{"FSTYPE MOUNT SOURCE options=...":
    nodes}``) say against the reference's mount options: the sign-off's judgement, by
    the same :func:`problems` the node applied before the benchmark."""
    if not (required or forbidden):
        return []
    out = []
    for answer, who in answers.items():
        group = ",".join(sorted(who))
        seen = recorded(answer)
        if seen is None:
            out.append(f"node {group}: node_mounts records no mount options, which the "
                       "reference's mount_options judge")
            continue
        found = problems(*seen, required, forbidden)
        if found:
            out.append(f"node {group}: {sentence(mount, found)}")
    return out


# -- reading them, on a node or the login node ------------------------------------------


def _run(argv: list[str]) -> tuple[int | None, str]:
    try:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None, f"no answer within {TIMEOUT_S} s"
    except OSError as err:
        return 127, str(err)
    text = (proc.stdout if proc.returncode == 0 else proc.stderr)[:CAP]
    return proc.returncode, text.decode("utf-8", errors="replace")


def read(path: str, mount: str, fstype: str) -> tuple[str, str | None]:
    """(kernel options, client options) of the mount holding ``path`` (its mount point
    ``mount``, its type ``fstype``), as :func:`record` writes them.  RuntimeError when
    findmnt does not answer."""
    status, text = _run(["findmnt", "-n", "-r", "-o", "OPTIONS", "-T", path])
    kernel = (text.splitlines() or [""])[0].strip()
    if status != 0 or not kernel:
        raise RuntimeError(f"cannot read the mount options of {path} (findmnt: "
                           f"{text.strip()[-200:] or f'exit {status}'})")
    if fstype not in CLIENT_CMDLINE:
        return kernel, None
    status, text = _run(["cat", "--", f"{mount.rstrip('/')}/{CLIENT_CMDLINE[fstype]}"])
    try:
        return kernel, (",".join(client_options(text)) if status == 0 else UNREADABLE)
    except ValueError:
        return kernel, UNREADABLE


def main(argv: list[str]) -> int:
    """``python -m fsaccept.core.mountopts PATH MOUNT FSTYPE SPEC``, on a node (``SPEC``:
    JSON ``{"required": [...], "forbidden": [...]}``): one line, ``ok RECORD`` or ``bad
    WHY``."""
    try:
        path, mount, fstype, spec = argv
        spec = json.loads(spec)
        kernel, client = read(path, mount, fstype)
    except (ValueError, RuntimeError) as err:
        print(f"bad cannot judge the mount options of {argv[0] if argv else '?'}: {err}")
        return 0
    found = problems(kernel, client, spec.get("required", []), spec.get("forbidden", []))
    print(f"bad {sentence(mount, found)}" if found else f"ok {record(kernel, client)}",
          flush=True)
    return 0


#: The bash function ``fsaccept_mount_options PATH MOUNT FSTYPE``: the runner's answer
#: when it is one line that starts like one, else a refusal saying what it printed.
FUNCTION = r"""fsaccept_mount_options() {
  local said
  said=$(@RUN@ "$1" "$2" "$3" @SPEC@ 2>&1)
  case "$said" in (ok\ *|bad\ *)
    [[ "$said" == *$'\n'* ]] || { echo "$said"; return; };; esac
  echo "bad the mount-options check did not answer${said:+: $(tail -n 1 <<< "$said")}"
}
"""


def function(required: list[str], forbidden: list[str], runner: list[str]) -> str:
    """The bash function the per-node check calls when the reference declares mount
    options ("" when it declares none); ``runner``: the command that runs this module's
    :func:`main` with the harness's Python (``fsaccept.core.servers.node_python``)."""
    if not (required or forbidden):
        return ""
    spec = json.dumps({"required": list(required), "forbidden": list(forbidden)})
    return FUNCTION.replace("@RUN@", shlex.join(runner), 1).replace(
        "@SPEC@", shlex.quote(spec), 1)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
