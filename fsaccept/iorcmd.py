"""IOR command lines for each acceptance phase, from a reference entry.

One table says how each phase runs, so that the checks never assemble
options themselves and a reviewer can read every phase's flags in one place.
"""

from __future__ import annotations

from dataclasses import dataclass

from fsaccept.reference import TestParameters, format_size

#: Options every phase shares: POSIX, file per process, fsync after write (-e),
#: barriers between open/IO/close (-g) so phase times are comparable, keep
#: files (-k: removal is the harness's job, after the last test that reads
#: them), and -v for the per-rank stonewall counts and "Max" lines.
COMMON = ["-a", "POSIX", "-F", "-e", "-g", "-k", "-v"]


@dataclass(frozen=True)
class Phase:
    """How one IOR phase runs."""

    access: str  #: "-w" or "-r"
    random: bool = False  #: -z: random offsets within each block
    reorder: bool = True  #: -C: read back data another node wrote
    wearout: bool = False  #: every rank moves as much as the fastest one
    uses_deadline: bool = True
    generation: bool = False  #: writes a dataset that a later phase reads


PHASES: dict[str, Phase] = {
    # Stonewalled write with wear-out: the published bandwidth procedure.
    "write_bandwidth": Phase("-w", wearout=True),
    # Dataset for the sustained read: stonewalled write, pair count kept in a status file.
    "read_generation": Phase("-w", wearout=True, generation=True),
    # Read exactly what was written (status file), stopping at the deadline.
    "read_bandwidth": Phase("-r"),
    "random_write_iops": Phase("-w", random=True),
    # Dataset for random reads: full blocks, written with large transfers, no deadline
    # (a stonewalled dataset would leave holes that random offsets hit).
    "random_read_generation": Phase("-w", uses_deadline=False, generation=True),
    "random_read_iops": Phase("-r", random=True),
}


def ior_options(phase_name: str, params: TestParameters, test_file: str,
                status_file: str | None = None) -> list[str]:
    """IOR's arguments for ``phase_name`` with the sizes and deadlines of ``params``."""
    phase = PHASES[phase_name]
    transfer = params.transfer_size
    if phase_name == "random_read_generation":
        transfer = params.generation_transfer_size or params.transfer_size
    deadline = params.deadline_s
    if phase_name == "read_generation":
        if params.generation_deadline_s is None:
            raise ValueError(f"{params.name}: generation_deadline_s is required")
        deadline = params.generation_deadline_s
    opts = [phase.access, *COMMON]
    if phase.random:
        opts.append("-z")
    if phase.reorder:
        opts.append("-C")
    opts += ["-t", ior_size(transfer), "-b", ior_size(params.block_size),
             "-s", str(params.segments)]
    if phase.uses_deadline:
        opts += ["-D", _seconds(deadline)]
    if phase.wearout:
        opts += ["-O", "stoneWallingWearOut=1"]
    if status_file and phase_name in ("read_generation", "read_bandwidth"):
        opts += ["-O", f"stoneWallingStatusFile={status_file}"]
    if params.direct_io:
        opts.append("--posix.odirect")
    opts += ["-o", test_file]
    return opts


def ior_size(nbytes: int) -> str:
    """IOR's size syntax (k/m/g/t are powers of 2): 1048576 → '1m'."""
    text = format_size(nbytes)
    for unit, suffix in (("TiB", "t"), ("GiB", "g"), ("MiB", "m"), ("KiB", "k")):
        if text.endswith(unit):
            return text[: -len(unit)] + suffix
    return text


def _seconds(value: float) -> str:
    # IOR's -D takes whole seconds.
    if value != int(value):
        raise ValueError(f"IOR deadlines are whole seconds, got {value}")
    return str(int(value))


def planned_bytes(params: TestParameters, ranks: int) -> int:
    """Upper bound of the data one phase moves: ranks × block × segments."""
    return ranks * params.block_size * params.segments
