"""The quota check's INVALID rules and its failures in words.  The live check and the
sign-off call the same functions, on the program's output parsed from the same bytes."""

from __future__ import annotations

from fsaccept.benchmarks.quota import command, parse
from fsaccept.benchmarks.quota.parse import QuotaRun
from fsaccept.core.units import MIB


def invalid_reasons(run: QuotaRun, p: command.QuotaParameters | None) -> list[str]:
    """INVALID reasons; an empty list means the figures may be judged.  ``p``: what the
    check asked for (None for a re-read output: its own header is all there is)."""
    reasons = list(run.reasons)
    if run.version is None:
        return reasons
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
