"""A row of the sign-off's "Semantics and features" section (one case of one test), and
the verified reference's entry a test's rows are judged by."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from fsaccept.reporting.runreport import Test, target_of

#: What a case's row says when the sign-off has no verified reference to judge it by.
UNVERIFIED = "not verified (no verified reference)"


@dataclass(frozen=True)
class CaseRow:
    """One case of one test."""

    test: str
    case: str
    pair: str
    seen: str
    promise: str
    verdict: str


def selected(t: Test, reference: Any) -> Any:
    """The reference with the test's target selected (None: none, or no such target)."""
    try:
        return reference.for_target(target_of(t.case) or "") if reference is not None \
            else None
    except ValueError:
        return None


def entry_params(t: Test, key: str, reference: Any, of: Callable[[str, dict], Any]) -> Any:
    """The test's entry of the verified reference, typed by ``of`` (None: none, or it
    cannot be read)."""
    ref = selected(t, reference)
    if ref is None:
        return None
    try:
        entry = ref.entries.get(key)
        return of(key, entry) if isinstance(entry, dict) else None
    except (TypeError, ValueError, KeyError):
        return None
