"""Units and sizes: binary multiples (KiB, MiB, ...) as constants, and the sizes
people write in reference files (``64MiB``, a byte count)."""

from __future__ import annotations

import re

KIB = 2**10
MIB = 2**20
GIB = 2**30
TIB = 2**40

_UNITS = {"": 1, "KiB": KIB, "MiB": MIB, "GiB": GIB, "TiB": TIB}
_SIZE = re.compile(r"^([1-9][0-9]*)(KiB|MiB|GiB|TiB)?$")

MAX_SIZE = 2**50  # 1 PiB

#: Units of times: smaller is better, so their thresholds are ceilings (and a filled or
#: degraded time is compared the other way round).
TIME_UNITS = frozenset({"s", "ms", "us"})


def parse_size(text: str | int) -> int:
    """Bytes in a binary size such as ``4KiB``, ``1MiB``, ``16GiB`` or ``4096``."""
    if isinstance(text, int) and not isinstance(text, bool) and 0 < text <= MAX_SIZE:
        return text
    match = _SIZE.match(str(text))
    if not match:
        raise ValueError(f"{text!r} is not a binary size; use bytes or KiB, MiB, GiB, TiB "
                         "(IOR sizes are powers of 2: 1MB would be ambiguous)")
    nbytes = int(match.group(1)) * _UNITS[match.group(2) or ""]
    if not 0 < nbytes <= MAX_SIZE:
        raise ValueError(f"{text!r} is not a sensible size for one transfer, block or file "
                         f"(1 byte to {format_size(MAX_SIZE)})")
    return nbytes


def format_size(nbytes: int) -> str:
    """The largest exact binary unit: 1048576 → '1MiB'."""
    for unit in ("TiB", "GiB", "MiB", "KiB"):
        if nbytes % _UNITS[unit] == 0:
            return f"{nbytes // _UNITS[unit]}{unit}"
    return str(nbytes)
