"""IOR's data patterns (``-l``/``--dataPacketType``): which are reducible, and which one
a command line wrote (its words: :func:`argv_of`, an option's value: :func:`last_option`).
Standard library only: ``fsaccept parse`` reads it from a log without loading
reference-file machinery."""

from __future__ import annotations

import shlex


#: IOR 4.0.0's data patterns (``-l``/``--dataPacketType``; it reads only the first
#: letter) -> whether a compressing or deduplicating file system can reduce them, as read
#: in its utilities.c and measured (zstd -19 on 1 MiB written with 64 KiB transfers):
#: - ``random``: every 8 bytes from a generator seeded per transfer (seed + rank + offset):
#:   1.00:1, every transfer different.  The default here.
#: - ``timestamp`` (IOR's default, no -l): counters (rank << 32 | seed + i), the same in
#:   every transfer: 123:1 and every transfer identical.
#: - ``offset``: timestamp with the offset in the first 8 bytes of each 4 KiB: 114:1.
#: - ``incompressible``: despite its name one 8-byte value repeated (IOR re-seeds
#:   rand_r at every word), the offset every 4 KiB: 1100:1.
#: IOR's own summary prints this setting with the wrong letter (its table is off by one:
#: "i" for random), so provenance is read from the command line, never that line.
DATA_PATTERNS: dict[str, bool] = {
    "random": False, "timestamp": True, "offset": True, "incompressible": True}
#: IOR's default pattern, as the probe and reports call it.
IOR_DEFAULT_PATTERN = "timestamp"


def argv_of(command_line: str) -> list[str]:
    """The words of an IOR command line as IOR printed or a run report recorded it."""
    try:
        return shlex.split(command_line)
    except ValueError:  # an unbalanced quote in a damaged log
        return command_line.split()


def last_option(argv: list[str], flag: str) -> str | None:
    """The value of the last ``flag`` given (IOR applies the last); None: not given."""
    value = None
    for i, arg in enumerate(argv[:-1]):
        if arg == flag:
            value = argv[i + 1]
    return value


def data_pattern_of(argv: list[str]) -> str:
    """The data pattern an IOR command line wrote, as IOR 4.0.0 reads it (``-l X``,
    ``--dataPacketType=X`` or ``-O dataPacketType=X``; the last wins; the first letter
    counts; none: IOR's default, ``timestamp``)."""
    value = None
    for i, arg in enumerate(argv):
        nxt = argv[i + 1] if i + 1 < len(argv) else ""
        if arg in ("-l", "--dataPacketType"):
            value = "" if nxt.startswith("-") else nxt
        elif arg.startswith("--dataPacketType="):
            value = arg.split("=", 1)[1]
        elif arg == "-O" and nxt.lower().startswith("datapackettype="):
            value = nxt.split("=", 1)[1]
    if not value:
        return IOR_DEFAULT_PATTERN
    for name in DATA_PATTERNS:
        if name[0] == value[0]:
            return name
    return f"unknown ({value}: IOR refuses it)"
