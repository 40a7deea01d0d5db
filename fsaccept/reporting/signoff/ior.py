"""IOR's checkpoint and verifying reads, judged again from their record:

- a checkpoint's bandwidth against its volume (``burst_bytes``) over its time:
  :class:`fsaccept.benchmarks.ior.figures.Burst`; that volume and the recorded command's
  shards against the verified reference's ``checkpoint_size``
  (:func:`fsaccept.benchmarks.ior.command.checkpoint_block`); its slowest and fastest
  rank against its figures (:func:`fsaccept.benchmarks.ior.figures.rank_text`);
- a read that verifies (a restore, the integrity check): its recorded IOR command's ``-R``.
"""

from __future__ import annotations

from typing import Any

from fsaccept.benchmarks.catalogue import ACCEPTANCE, TestSpec
from fsaccept.benchmarks.ior.command import (PHASES, checkpoint_block, checkpoint_volume,
                                             ior_size)
from fsaccept.benchmarks.ior.command import parameters as ior_parameters
from fsaccept.benchmarks.ior.figures import Burst, RANK_TEXT, rank_text
from fsaccept.benchmarks.ior.patterns import argv_of, last_option
from fsaccept.core import placement
from fsaccept.core.findings import figure_problem
from fsaccept.core.reference import ReferenceError
from fsaccept.core.units import format_size
from fsaccept.reporting.case import Case
from fsaccept.reporting.signoff.common import count_problem


def burst_reasons(case: Case, spec: TestSpec, reference: Any = None) -> list[str]:
    """A checkpoint's figures against its recorded volume (``burst_bytes``): its bandwidth
    is the volume over its time (:class:`fsaccept.benchmarks.ior.figures.Burst`, as live),
    no rank finished before the fastest, the volume is the verified reference's
    (:func:`_checkpoint_volume_reasons`), and its slowest and fastest rank are its time
    figures' (:func:`_rank_reasons`)."""
    phase = PHASES.get(str(spec.attrs.get("phase")))
    if phase is None or not phase.rank_times or spec.role != ACCEPTANCE:
        return []  # a checkpoint's fixture reports no figure
    time, rate, first = spec.figures[:3]
    by_name = {f.name: f.value for f in case.figures}
    if by_name.get(time) is None or figure_problem(by_name[time]):
        return []  # no figure, or none a benchmark measures: judged elsewhere
    volume = case.get("burst_bytes")
    why = count_problem(volume)
    if why:
        return [f"burst_bytes {str(volume)[:40]!r} ({why}): the checkpoint's volume is "
                "not recorded"]
    burst = Burst(by_name[time], by_name.get(first) or 0.0, 0, 0, volume)
    out = _checkpoint_volume_reasons(case, spec, reference, volume)
    if by_name.get(rate) is None or abs(by_name[rate] - burst.bandwidth_mib_s) > \
            1e-9 * burst.bandwidth_mib_s:
        out.append(f"figure {rate} {by_name.get(rate)!r} is not its volume ({volume} bytes) "
                   f"over its {time} ({by_name[time]!r} s): {burst.bandwidth_mib_s!r} MiB/s")
    if not 0 < burst.first_s <= burst.seconds:
        out.append(f"figure {first} {by_name.get(first)!r} is not between 0 and the slowest "
                   f"rank's {time} {burst.seconds!r}")
    out += _rank_reasons(case, "slowest_rank", time, burst.seconds)
    out += _rank_reasons(case, "fastest_rank", first, by_name.get(first))
    return out


def _checkpoint_volume_reasons(case: Case, spec: TestSpec, reference: Any,
                               volume: int) -> list[str]:
    """The volume a checkpoint moved and each rank's shard in its recorded IOR command
    (``-t``, ``-b``, ``-s``), against what the verified reference's entry of its class asks:
    its ``checkpoint_size`` split among the ranks the case recorded, in whole transfers
    (:func:`fsaccept.benchmarks.ior.command.checkpoint_block`, the live check's split).
    Without a verified reference there is nothing to compare with (the sign-off is not
    verified then)."""
    if reference is None:
        return []
    ranks = case.get("num_tasks")
    why = count_problem(ranks)
    if why:
        return [f"num_tasks {str(ranks)[:40]!r} ({why}): the checkpoint's volume cannot be "
                f"checked against tests.{spec.key}"]
    try:
        params = ior_parameters(reference, spec.key)
    except (ReferenceError, TypeError, ValueError) as err:
        return [f"burst_bytes cannot be checked: the reference file has no usable entry "
                f"tests.{spec.key}: {str(err)[:200]}"]
    want = checkpoint_volume(params, ranks)
    out = []
    if volume != want:
        out.append(f"burst_bytes {volume} is not the checkpoint tests.{spec.key} asks: its "
                   f"checkpoint_size {format_size(params.checkpoint_size)} split among {ranks} "
                   f"ranks in whole transfers of {format_size(params.transfer_size)} is "
                   f"{want} bytes")
    argv = argv_of(str(case.get("benchmark_command") or ""))
    for flag, shown in (("-t", ior_size(params.transfer_size)),
                        ("-b", ior_size(checkpoint_block(params, ranks))),
                        ("-s", str(params.segments))):
        got = last_option(argv, flag)
        if got != shown:
            out.append(f"the recorded IOR command (benchmark_command) gives "
                       + (f"{flag} {got[:40]}" if got is not None else f"no {flag}")
                       + f", tests.{spec.key} among {ranks} ranks is {flag} {shown}")
    return out


def _rank_reasons(case: Case, key: str, figure: str,
                  seconds: float | None) -> list[str]:
    """A burst's recorded slowest or fastest rank (``key``: 'rank 3 on n2: 4.21 s') as the
    live check writes it (:func:`fsaccept.benchmarks.ior.figures.rank_text`): a rank of
    the job, on the node its rank map places it, with the time of its ``figure``."""
    if seconds is None or figure_problem(seconds):
        return []  # no figure, or none a benchmark measures: said above
    text = case.get(key)
    match = RANK_TEXT.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        return [f"{key} {str(text)[:80]!r} is not a rank as the check records it "
                "('rank R on NODE: T s')"]
    rank, ranks = int(match.group(1)), case.get("num_tasks")
    rank_map = str(case.get("rank_map") or "")
    want = rank_text(rank, placement.node_of_rank(rank_map, rank) or "?", seconds)
    if count_problem(ranks) or rank >= ranks:
        return [f"{key} {text[:80]!r} is not one of its {str(ranks)[:40]} ranks"]
    if text != want:
        return [f"{key} {text[:80]!r} is not what its {figure} ({seconds!r} s) and its rank "
                f"map ({rank_map[:80]!r}) say: {want[:80]!r}"]
    return []


def verify_reasons(case: Case, spec: TestSpec) -> list[str]:
    """A read that verifies what it reads (a checkpoint's restore, the integrity check:
    ``Phase.verify``) proves the data only if its recorded IOR command did (``-R``)."""
    phase = PHASES.get(str(spec.attrs.get("phase")))
    if phase is None or not phase.verify or not case.figures:
        return []
    command = case.get("benchmark_command")
    if not isinstance(command, str) or not command:
        return ["evidence missing: no benchmark_command, the IOR command whose -R verifies "
                "what it read"]
    if "-R" not in argv_of(command):
        return ["the recorded IOR command (benchmark_command) does not verify what it read "
                "(no -R): its figures prove no data"]
    return []
