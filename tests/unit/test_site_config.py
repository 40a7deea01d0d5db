"""The ReFrame site configuration (config/settings.py) as ReFrame itself loads and
validates it: the example site's perflog handlers, the local systems' poll rate."""

from pathlib import Path

import pytest
from reframe.core import config

SETTINGS = Path(__file__).resolve().parents[2] / "config" / "settings.py"


def site(system: str):
    conf = config.load_config(str(SETTINGS))
    conf.select_subconfig(system)
    conf.validate()  # ReFrame's JSON schema: raises on a handler it does not accept
    return conf


def test_example_site_streams_every_figure_to_its_monitoring_and_keeps_perflog_files():
    conf = site("example-lustre")
    handlers = conf.get("logging/0/handlers_perflog")
    assert [h["type"] for h in handlers] == ["filelog", "httpjson"]
    http = handlers[1]
    assert http["url"].startswith("https://") and http["level"] == "info"
    assert http["retry_timeout"] > 0 and http["extras"]["facility"] == "fsaccept"
    # Provenance is not filtered out: the figures and every logged variable go.
    assert not conf.get("logging/0/handlers_perflog/1/ignore_keys")
    # ReFrame's console and debug-log handlers are kept.
    assert conf.get("logging/0/handlers$")[0]["type"] == "stream"
    assert "check_#ALL" in handlers[0]["format"]


@pytest.mark.parametrize("system", ["local", "local-spack", "workstation"])
def test_other_systems_keep_reframes_logging_and_poll_quickly(system):
    conf = site(system)
    assert [h["type"] for h in conf.get("logging/0/handlers_perflog")] == ["filelog"]
    assert conf.get("general/0/poll_rate_min") >= 1


def test_example_site_keeps_reframes_default_poll_rate():
    assert site("example-lustre").get("general/0/poll_rate_min") == 0.1
