"""The quota check's INVALID rules and its failures in words.  The live check and the
sign-off call the same functions, on the program's output parsed from the same bytes."""

from __future__ import annotations

import posixpath

from fsaccept.benchmarks.quota import command, parse
from fsaccept.benchmarks.quota.parse import QuotaRun
from fsaccept.core.units import MIB

#: The program's steps in the order it prints them (a poll: usage or usage-error).
STEPS = {"version": 0, "set": 1, "write": 2, "usage": 3, "usage-error": 3, "clear": 4,
         "end": 5}
POLLS = ("usage", "usage-error")


def invalid_reasons(run: QuotaRun, p: command.QuotaParameters | None,
                    directory: str | None = None, target: str | None = None) -> list[str]:
    """INVALID reasons; an empty list means the figures may be judged.  ``p``: what the
    check asked for (None for a re-read output: its own header is all there is);
    ``directory`` and ``target``: the test's quota directory and the target's path it
    must be below (None: not known)."""
    reasons = list(run.reasons)
    if run.version is None:
        return reasons
    reasons += consistency_reasons(run) + directory_reasons(run, directory, target)
    if p is not None and (run.limit, run.stop, run.tolerance) != (p.limit, p.stop, p.slack):
        reasons.append(f"the program ran with limit {run.limit}, stop {run.stop}, tolerance "
                       f"{run.tolerance} bytes, not the entry's {p.limit}, {p.stop}, "
                       f"{p.slack}")
    if run.set is None:
        reasons.append("no line for the site's quota set command")
    elif not run.set.ok:
        reasons.append(f"the site's quota set command failed ({run.set.describe()}): no "
                       "quota to test")
    if run.clear is None:
        reasons.append("no line for the site's quota clear command: the quota on "
                       f"{run.directory} may still be set")
    elif not run.clear.ok:
        reasons.append(f"the site's quota clear command failed ({run.clear.describe()}): "
                       f"the quota on {run.directory} is still set; an administrator "
                       "must remove it")
    if run.set is None or not run.set.ok:
        return reasons
    if run.written is None:
        reasons.append("no write line: the program did not write")
    elif run.stopped not in (parse.EDQUOT, parse.STOP):
        reasons.append(f"the writes stopped on {run.stopped} after {run.written / MIB:g} "
                       "MiB, not on the quota (EDQUOT)")
    elif run.stopped == parse.STOP and run.stop is not None and run.written < run.stop:
        reasons.append(f"the writes stopped at {run.written} bytes, before the program's "
                       f"own bound {run.stop}")
    if not run.usage:
        why = "; ".join(run.usage_errors[:3])
        reasons.append("the site's usage command never answered with a number"
                       + (f" ({why})" if why else ""))
    elif run.usage_delay() is None and run.poll_s is not None \
            and run.usage[-1][0] < run.poll_s:
        reasons.append(f"the usage was polled for {run.usage[-1][0]:g} s, not the "
                       f"{run.poll_s:g} s asked: its delay is unknown")
    return reasons


def consistency_reasons(run: QuotaRun) -> list[str]:
    """Lines that contradict each other: no run of the program prints them, so each is
    INVALID, saying what was seen.  A step out of the program's order (a clear before
    the writes), and a poll after the polling had ended: the program stops once the
    usage followed the data, or ``poll_s`` had passed (a usage that "falls back to 0"
    after it followed)."""
    out = []
    last = None
    for kind, lineno, _t in run.order:
        if last is not None and STEPS[kind] < STEPS[last[0]]:
            out.append(f"its {kind} line (line {lineno}) comes after its {last[0]} line "
                       f"(line {last[1]}): the program sets the quota, writes, polls the "
                       "usage, clears the quota and ends, in that order")
            break
        last = (kind, lineno)
    polls = [(kind, lineno, t) for kind, lineno, t in run.order if kind in POLLS]
    usages = iter(run.usage)
    for i, (kind, lineno, t) in enumerate(polls[:-1]):
        used = next(usages)[1] if kind == "usage" else None
        followed = used is not None and run.written is not None \
            and run.tolerance is not None and abs(used - run.written) <= run.tolerance
        ended = run.poll_s is not None and t is not None and t >= run.poll_s
        if followed or ended:
            after = polls[i + 1]
            why = (f"the usage had followed the data ({used} bytes at {t:g} s)" if followed
                   else f"{t:g} s, the poll_s {run.poll_s:g} asked, had passed")
            out.append(f"a {after[0]} line (line {after[1]}) after {why}: the program "
                       "stops polling there")
            break
    return out


def directory_reasons(run: QuotaRun, directory: str | None, target: str | None
                      ) -> list[str]:
    """The program's directory (its header's ``dir``): the path it prints (absolute and
    normal), below the target's path ``target``, the test's own ``directory``."""
    seen = run.directory
    if seen is None:
        return []
    if not seen.startswith("/") or posixpath.normpath(seen) != seen:
        return [f"the quota program's directory {seen} is not a path it prints (absolute, "
                "normalised)"]
    if target is not None:
        root = posixpath.normpath(target)
        if seen == root or posixpath.commonpath([seen, root]) != root:
            return [f"the quota program ran in {seen}, which is not below the target "
                    f"{root}"]
    if directory is not None and posixpath.normpath(directory) != seen:
        return [f"the quota program ran in {seen}, not in the test's directory "
                f"{posixpath.normpath(directory)}"]
    return []


def reread_reasons(run: QuotaRun) -> tuple[list[str], list[str]]:
    """The live check's rules a re-read output can be held to (its own header)."""
    findings = set(run.reasons)
    return ([r for r in invalid_reasons(run, None) if r not in findings],
            ["the limit, stop and tolerance asked: they need the reference entry"])


def failures(run: QuotaRun, p: command.QuotaParameters) -> list[str]:
    """What failed, in words (the console's and the report's line): a quota not
    enforced, refused far from its limit, or a usage that did not follow the data."""
    out = []
    if run.written is not None and run.set is not None and run.set.ok:
        mib = run.written / MIB
        if run.stopped == parse.STOP:
            out.append(f"quota not enforced: {mib:g} MiB written into {run.directory} on "
                       f"{run.node} with no EDQUOT, past a limit of {p.limit_mib} MiB")
        elif run.stopped == parse.EDQUOT and abs(run.written - p.limit) > p.slack:
            out.append(f"EDQUOT after {mib:g} MiB on {run.node}, not within {p.slack_mib} "
                       f"MiB of the limit of {p.limit_mib} MiB")
    delay = run.usage_delay()
    if run.usage and (delay is None or delay > p.usage_within_s):
        last = run.usage[-1]
        out.append(f"the usage reported did not follow the data within "
                   f"{p.usage_within_s:g} s: " + (
                       f"it did after {delay:g} s" if delay is not None else
                       f"{last[1] / MIB:g} MiB counted after {last[0]:g} s, "
                       f"{(run.written or 0) / MIB:g} MiB written"))
    return out
