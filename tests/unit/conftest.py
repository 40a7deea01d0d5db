"""Unit tests read nothing of the user's environment that moves the lab: a user who
exported FSACCEPT_PORT_BASE for a second cluster (as docs/dev/emulated-cluster.md tells)
gets the same results as one who did not."""
import pytest


@pytest.fixture(autouse=True)
def _no_user_port_base(monkeypatch):
    monkeypatch.delenv("FSACCEPT_PORT_BASE", raising=False)
