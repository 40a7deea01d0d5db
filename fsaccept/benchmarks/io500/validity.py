"""IO500's run judged by fsaccept: IO500's own INVALID flags, and the gaps they leave.

IO500 exits 0 for an INVALID run, writes no INVALID when a rank dies (the run stops
instead), says nothing of its reducible default data, and its hash verifier rejects
untouched results in the isc26 releases (IO500/io500#84, #103), so it is never used:
the score is recomputed instead (:mod:`.score`).  Every reason says what was seen.

A run IO500 called INVALID is INVALID here too, with IO500's own messages as its
reason; a run IO500 called valid and fsaccept does not has fsaccept's reasons.
"""

from __future__ import annotations

from fsaccept.benchmarks.io500 import score
from fsaccept.benchmarks.io500.parse import (RULES_STONEWALL_S, SCC_STONEWALL_S, WRITE_PHASES,
                                             Io500Run, stonewall_of)
from fsaccept.benchmarks.ior import command as iorcmd
from fsaccept.benchmarks.ior.patterns import DATA_PATTERNS, IOR_DEFAULT_PATTERN
from fsaccept.core import reduction
from fsaccept.core.findings import clip


def invalid_reasons(run: Io500Run, probe: reduction.ProbeResult | None = None,
                    procs: int | None = None) -> list[str]:
    """INVALID reasons of a run (empty: its score may be judged).  ``probe``: this
    session's data-reduction probe on the target; ``procs``: the ranks asked for."""
    reasons = died_reasons(run)
    reasons += io500_reasons(run)
    reasons += _stonewall_reasons(run)
    if run.dry_run:
        reasons.append("io500 ran with --dry-run: no I/O was done, every score is 0")
    if run.leftover_stonewall_files:
        reasons.append("stonewall files left in the result directory ("
                       + ", ".join(run.leftover_stonewall_files)
                       + "): io500 did not reach its clean-up; the run was cut short")
    for ph in run.phases:
        if ph.tool_errors:
            reasons.append(f"{ph.name}: error lines in its output ({ph.name}.txt): "
                           + "; ".join(clip(e, 160) for e in ph.tool_errors[:3])
                           + (f" (and {len(ph.tool_errors) - 3} more)"
                              if len(ph.tool_errors) > 3 else ""))
    if not run.dry_run:
        reasons += _zero_reasons(run)
    reasons += score.mismatches(run)
    if procs is not None and run.procs is not None and run.procs != procs:
        reasons.append(f"io500 ran {run.procs} ranks, {procs} were requested")
    if probe is not None:
        reasons += reduction_reasons(run, probe)
    return list(dict.fromkeys(reasons))


def reread_reasons(run: Io500Run) -> tuple[list[str], list[str]]:
    """``Benchmark.reread_rules``: (reasons, rules not applied) from the files alone."""
    not_applied = ["data reduction: needs this session's data-reduction probe on the "
                   f"target (IO500's IOR phases wrote {data_pattern(run)!r}, "
                   f"{'reducible' if _reducible(data_pattern(run)) else 'irreducible'})",
                   "thresholds on TOTAL, BW and MD: the live check's reference entry"]
    if run.exit_status is None:
        not_applied.append("io500's exit status: not in its result files")
    return invalid_reasons(run), not_applied


def first_unfinished(run: Io500Run) -> str | None:
    """The first phase the run's mode runs that has no score or no end."""
    for name in run.expected_phases():
        ph = run.phase(name)
        if ph is None or not ph.ended or (ph.score is None and name != "timestamp"):
            return name
    return None


def died_reasons(run: Io500Run) -> list[str]:
    """One reason when the run stopped before its end: where, and the evidence."""
    evidence = list(run.died_lines)
    if run.exit_status not in (None, 0):
        evidence.append(f"io500 exited with status {run.exit_status}")
    phase = first_unfinished(run)
    if phase is not None:
        ph = run.phase(phase)
        if ph is None:
            evidence.append(f"no {phase} phase in the results")
        elif not ph.ended:
            evidence.append(f"{phase} started and has no end (result.txt stops at its "
                            f"{'exe' if ph.exe else 't_start'} line)")
        else:
            evidence.append(f"{phase} has no score")
    if "SCORE" not in run.scores and "SCORE" not in run.printed_scores:
        evidence.append("no [SCORE]")
    elif run.source != "stdout" and not run.ended:
        evidence.append("result.txt has no '; END' line")
    if not evidence:
        return []
    where = phase or "its last step"
    if phase is not None and run.phase(phase) is None and not any(
            run.phase(n) for n in run.expected_phases()):
        where = f"{phase} (before its first phase)"
    return [f"the run died in phase {where}: " + "; ".join(evidence)]


def io500_reasons(run: Io500Run) -> list[str]:
    """IO500's own verdict, with its messages, when it called a score INVALID."""
    out = []
    for name in ("SCORE", "SCOREX"):
        s = run.scores.get(name) or run.printed_scores.get(name)
        if s is None or not s.io500_invalid:
            continue
        said = [f"run: {m}" for m in run.run_messages]
        for ph in run.phases:
            if ph.io500_invalid or ph.messages:
                msgs = "; ".join(dict.fromkeys(ph.messages)) or "[INVALID]"
                said.append(f"{ph.name}: {msgs}")
        out.append(f"IO500 marked [{name}] INVALID: " + " | ".join(said))
    return out


def _stonewall_reasons(run: Io500Run) -> list[str]:
    stonewall, source = stonewall_of(run)
    rules = SCC_STONEWALL_S if run.scc else RULES_STONEWALL_S
    out = []
    if stonewall is not None and stonewall != rules:
        out.append(f"stonewall time {stonewall} s (from {source}), IO500's rules ask for "
                   f"{rules} s: set [debug] stonewall-time = {rules}")
    for ph in run.phases:
        if (ph.name in WRITE_PHASES and stonewall and ph.time_s is not None
                and ph.time_s < stonewall and not run.dry_run):
            out.append(f"{ph.name} ran {ph.time_s:g} s, less than the {stonewall} s "
                       "stonewall: it wrote everything before the stonewall, so its rate "
                       "is of a short burst; raise its size")
    return out


def _zero_reasons(run: Io500Run) -> list[str]:
    """A scored phase at 0 is left out of its group's mean, which raises the score."""
    return [f"{ph.name}: score {ph.score:.6f}: the phase measured nothing, and IO500 "
            "leaves it out of the mean (a higher score)"
            for ph in run.phases if ph.group != "none" and ph.score is not None
            and ph.score <= 0 and ph.ended]


def data_pattern(run: Io500Run) -> str:
    """The data IO500's IOR phases wrote: their command lines, else its config, else
    IOR's default."""
    seen = [ph.data_pattern for ph in run.phases if ph.data_pattern]
    return seen[0] if seen else (run.data_pattern or IOR_DEFAULT_PATTERN)


def _reducible(pattern: str) -> bool:
    return pattern not in DATA_PATTERNS or iorcmd.pattern_reducible(pattern)


def pattern_reducible(pattern: str) -> bool:
    """``Benchmark.pattern_reducible``: IO500 passes IOR's own patterns (IOR's rule)."""
    return _reducible(pattern)


def reduction_reasons(run: Io500Run, probe: reduction.ProbeResult | None) -> list[str]:
    """fsaccept's rule for its own IOR checks, on IO500's IOR phases."""
    pattern = data_pattern(run)
    return reduction.reducible_data_reasons(f"IO500's IOR {pattern} pattern",
                                            _reducible(pattern), probe)
