"""The quota check's entry (``tests.quota``) typed, and the site's declaration of its
quota commands (``extras.quota`` in the ReFrame system configuration).

**The declaration** is code the site trusts, as degraded mode's (never the reference
file, which is data)::

    'quota': {'set': 'CMD', 'clear': 'CMD', 'usage': 'CMD'}

Each CMD runs with ``bash -c`` on the test's node, with the job's rights, and is given
``FSACCEPT_QUOTA_DIR`` (the directory the quota is on, below the target) and
``FSACCEPT_QUOTA_BYTES`` (the limit, in bytes).  ``set`` puts the limit on that
directory, ``clear`` takes it away again, and ``usage`` prints the bytes the file system
counts against it, as a whole number (its first word).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Any

from fsaccept.core.units import MIB

#: The partition's ``extras`` key of the declaration, and its commands.
EXTRA = "quota"
COMMANDS = ("set", "clear", "usage")
#: The environment variables each command is given.
DIR_VARIABLE = "FSACCEPT_QUOTA_DIR"
BYTES_VARIABLE = "FSACCEPT_QUOTA_BYTES"
#: The quota's directory, below the test's own directory (``target_dir``).
SUBDIR = "quota"
#: Bytes per write.
CHUNK = MIB
#: Seconds the node program allows each of the site's commands.
COMMAND_TIMEOUT_S = 120
#: The usage is polled this often, and at least this long after the writes (or twice
#: ``usage_within_s``): a usage that never follows is seen failing its limit.
POLL_S = 0.5
MIN_POLL_S = 10.0
#: The figures: the data written when the quota refused (MiB), and the seconds until the
#: usage the file system reported followed the data.
WRITTEN = "quota_written_mib"
USAGE_DELAY = "quota_usage_delay_s"
FIGURES = {WRITTEN: "MiB", USAGE_DELAY: "s"}


class DeclarationError(ValueError):
    """A declaration that cannot be used; the message names the key."""


@dataclass(frozen=True)
class QuotaParameters:
    """The quota entry of a reference file, typed."""

    name: str
    #: The quota the check sets on its directory.
    limit_mib: int
    #: How far from the limit the refusal (EDQUOT) may come, and the usage reported
    #: may be from the data written.
    slack_mib: int
    #: Seconds within which the usage the file system reports follows the data.
    usage_within_s: float

    @property
    def limit(self) -> int:
        return self.limit_mib * MIB

    @property
    def slack(self) -> int:
        return self.slack_mib * MIB

    @property
    def stop(self) -> int:
        """Where the writes stop if no refusal comes: past the slack, bounded."""
        return self.limit + 2 * self.slack + CHUNK

    @property
    def poll_s(self) -> float:
        """How long the usage is polled at most."""
        return max(2 * self.usage_within_s, MIN_POLL_S)



def placement(entry: dict[str, Any]) -> tuple[float | None, int]:
    """One task on one node, whatever the entry (its record's ``placement``, the live
    check's and the sign-off's): a quota is the file system's, not a node's."""
    return None, 1

def parameters(name: str, entry: dict[str, Any]) -> QuotaParameters:
    return QuotaParameters(name=name, limit_mib=int(entry["limit_mib"]),
                           slack_mib=int(entry["slack_mib"]),
                           usage_within_s=float(entry["usage_within_s"]))


def entry_rules(where: str, entry: dict[str, Any]) -> list[str]:
    """What the schema cannot say: a slack below the limit (a refusal at 0 bytes must
    not pass)."""
    limit, slack = entry.get("limit_mib"), entry.get("slack_mib")
    if isinstance(limit, int) and isinstance(slack, int) and slack >= limit:
        return [f"{where}.slack_mib: {slack} is not below limit_mib {limit}: a quota "
                "that refuses the first byte would pass"]
    return []


def declaration(declared: Any, where: str = f"extras.{EXTRA}") -> dict[str, str]:
    """The site's commands, checked: each of :data:`COMMANDS`, a command line."""
    if not isinstance(declared, dict):
        raise DeclarationError(f"{where}: not declared: a dict with {', '.join(COMMANDS)} "
                               "(docs/user/quota.md)")
    unknown = sorted(set(map(str, declared)) - set(COMMANDS))
    if unknown:
        raise DeclarationError(f"{where}.{unknown[0]}: unknown key; the keys are "
                               f"{', '.join(COMMANDS)}")
    out = {}
    for key in COMMANDS:
        cmd = declared.get(key)
        if not isinstance(cmd, str) or not cmd.strip() or "\x00" in cmd:
            raise DeclarationError(f"{where}.{key}: must be a command line (a non-empty "
                                   "string)")
        out[key] = cmd
    return out


def references(p: QuotaParameters) -> dict[str, tuple[float, float | None, float | None,
                                                      str]]:
    """The judged figures as ReFrame references: the data written when refused within
    the slack of the limit, each side; the usage's delay at most ``usage_within_s``."""
    frac = p.slack_mib / p.limit_mib
    return {WRITTEN: (float(p.limit_mib), -frac, frac, "MiB"),
            USAGE_DELAY: (p.usage_within_s, None, 0, "s")}


def quota_directory(target_dir: str) -> str:
    """The directory the quota is set on: ``SUBDIR`` of the test's own directory."""
    return posixpath.join(target_dir, SUBDIR)


def probe_options(p: QuotaParameters, directory: str) -> list[str]:
    """The node program's arguments (``python -m fsaccept.benchmarks.quota.probe``)."""
    return [directory, "--limit", str(p.limit), "--stop", str(p.stop),
            "--tolerance", str(p.slack), "--poll-s", f"{p.poll_s:g}"]


def deadline_s(p: QuotaParameters) -> int:
    """Seconds the job may run: the site's three commands, the writes at 1 MiB/s, the
    polls, and the polls' commands."""
    return int(3 * COMMAND_TIMEOUT_S + p.stop / MIB + p.poll_s + COMMAND_TIMEOUT_S) + 60
