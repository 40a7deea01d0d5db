"""A benchmark that reports a figure no file system can have (here fio's JSON
with ``iops: 1e400``, which JSON readers turn into infinity) gives INVALID in
the live check, never a PASS against its threshold."""

import re
import stat

import pytest

from tests.conftest import REPO, run_checks

pytestmark = pytest.mark.integration
CAPTURED = REPO / "tests" / "data" / "fio" / "randread-direct-n1.json"

FAKE_FIO = """#!/usr/bin/env python3
import re, sys
if "--version" in sys.argv:
    print("fio-3.33"); sys.exit(0)
out = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("--output="))
text = open({captured!r}).read()
open(out, "w").write(re.sub(r'"iops" : [0-9.]+', '"iops" : 1e400', text))
"""


def test_an_infinite_fio_figure_is_invalid_not_a_pass(cluster_env, tmp_path):
    fake = tmp_path / "bin" / "fio"
    fake.parent.mkdir()
    fake.write_text(FAKE_FIO.format(captured=str(CAPTURED)))
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    env = dict(cluster_env, PATH=f"{fake.parent}:{cluster_env['PATH']}")
    proc, cases = run_checks("fio_client.py", tmp_path, "-n", "^FioRandomReadDirect$", env=env)
    case = cases["FioRandomReadDirect"]
    assert case["result"] == "fail" and case["fail_phase"] == "sanity", proc.stdout[-3000:]
    # The parser refuses it first (fio's own numbers); the generic figure rule would too.
    assert re.search(r"INVALID: .*iops (is )?inf(:| is) not a (finite number|figure a file "
                     r"system can have)", case["fail_reason"]), case["fail_reason"]
