"""Said once when ReFrame loads the checks: which system it selected, if none of
fsaccept's (see ``fsaccept.suite.sites``)."""

from __future__ import annotations

from reframe.core import runtime
from reframe.core.exceptions import ReframeError, ReframeFatalError
from reframe.core.logging import getlogger

from fsaccept.suite import sites

_warned = False


def warn_when_no_system() -> None:
    """A warning on ReFrame's console when ReFrame runs without fsaccept's configuration
    or no system of it matches this host (ReFrame's ``generic``: no check runs there).
    Nothing outside a ReFrame run (unit tests import the checks' modules too)."""
    global _warned
    if _warned:
        return
    try:
        rt = runtime.runtime()
        system = rt.system.name
        sources = list(rt.site_config.sources)
    except (ReframeError, ReframeFatalError, AttributeError):
        return
    try:
        names = [s["name"] for s in sites.known_systems()]
    except Exception:  # a broken config/ is reported by ReFrame itself
        names = []
    message = sites.no_system_message(sources, system, sites.this_host(), names)
    if message:
        _warned = True
        getlogger().warning(message)
