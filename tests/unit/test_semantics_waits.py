"""The semantics program's bounded waits, counted from its source: the alarm
(``command.alarm_s``) allows ``bound_s`` for each, so ``command.OTHER_WAITS`` must be
their number besides the visibility trials.

Each wait's test in ``checks/semantics/src/fsaccept_semantics.c`` carries a comment
``/* bounded-wait: CASE... */`` naming the cases that wait there, one wait each (a
site in a loop over cases, or in a function two cases call, names them all); the
visibility trials' says ``bounded-wait per trial``.  A loop, or a test, that compares a
time against ``bound_s`` without the comment fails here, so a new wait cannot go
uncounted."""

from __future__ import annotations

import re
from pathlib import Path

from fsaccept.benchmarks.semantics import command, parse

SOURCE = (Path(__file__).resolve().parents[2] / "checks" / "semantics" / "src"
          / command.SOURCE)
MARKER = re.compile(r"/\* bounded-wait(?P<per_trial> per trial)?: (?P<cases>[a-z -]+?) \*/")
#: A wait's test: a branch or a loop whose condition compares against the bound.
WAIT_TEST = re.compile(r"^\s*(?:\}\s*)?(?:if|while|for)\s*\(.*bound_s")


def _lines() -> list[str]:
    return SOURCE.read_text().splitlines()


def _waits() -> tuple[list[str], list[str]]:
    """(the cases of each bounded wait but the trials', the per-trial waits' cases)."""
    waits, per_trial = [], []
    for line in _lines():
        for m in MARKER.finditer(line):
            (per_trial if m["per_trial"] else waits).extend(m["cases"].split())
    return waits, per_trial


def test_every_test_against_the_bound_is_marked():
    unmarked = [f"{n}: {line.strip()}" for n, line in enumerate(_lines(), 1)
                if WAIT_TEST.match(line) and not MARKER.search(line)]
    assert not unmarked, "a bounded wait without its bounded-wait comment:\n" + "\n".join(
        unmarked)


def test_each_marker_names_cases_the_program_prints():
    waits, per_trial = _waits()
    assert per_trial == ["visibility"]
    assert set(waits) <= set(parse.CASES), set(waits) - set(parse.CASES)
    assert len(waits) == len(set(waits)), "a case named at two waits"


def test_the_alarm_counts_every_bounded_wait():
    waits, _ = _waits()
    assert command.OTHER_WAITS == len(waits), (
        f"the program has {len(waits)} bounded waits besides the visibility trials "
        f"({', '.join(waits)}); command.OTHER_WAITS says {command.OTHER_WAITS}")
