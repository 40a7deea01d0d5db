"""The noisy neighbour on the real volume (issue 39 §2): one job, n1 and n2 reading alone,
then beside n3 and n4 writing (reference/local-gluster.yaml's entry, as shipped).

- Left alone, it passes: its record, the victims' p99 ratio and the overlap are in the run
  report, and the sign-off's re-judgement of the record finds nothing.
- The aggressors' step delayed 40 s (``FSACCEPT_TEST_STEP_DELAY=aggressor:40``, the
  check's test-only delay): the victims' run under load is over before the aggressors
  begin, and the test is INVALID "did not overlap", its record kept.  No figure is
  compared with the machine's speed: the victims run 2 s after their step starts, for
  10 s; the aggressors begin 40 s after theirs.
"""

import json
import os

import pytest

from tests.conftest import gluster_reference, run_gluster_checks

pytestmark = [pytest.mark.integration, pytest.mark.volume_cluster]

DELAY_S = 40


def interference(tmp_path, layout, **env):
    return run_gluster_checks("interference", tmp_path, "-n", "FioInterference",
                              env={**gluster_reference(tmp_path, layout), **env})


def _rejudged(case, env_reference, tmp_path):
    """The sign-off's re-judgement of the recorded test (fsaccept.reporting.signoff),
    from the record file it kept (interference-record.json) below the run's prefix."""
    from fsaccept.benchmarks import registry
    from fsaccept.core import inputs
    from fsaccept.reporting.case import case_of
    from fsaccept.reporting.signoff.common import RunFiles
    from fsaccept.reporting.signoff.interference import interference_reasons
    from fsaccept.suite.reference import load_reference
    return interference_reasons(case_of(case), registry.TESTS["FioInterference"],
                                load_reference(env_reference),
                                RunFiles(inputs.Reader(tmp_path / "rfm")))


def test_the_labs_entry_passes_with_the_victims_p99_ratio(gluster_env, tmp_path):
    _, layout = gluster_env
    proc, cases = interference(tmp_path, layout)
    case = cases["FioInterference"]
    assert case["result"] == "pass", proc.stdout[-3000:]
    assert (case["victims"], case["aggressors"]) == ("n1,n2", "n3,n4")
    record = json.loads(case["interference_record"])
    assert [v["node"] for v in record["victims"]] == ["n1", "n2"]
    assert [a["node"] for a in record["aggressors"]] == ["n3", "n4"]
    perf = {k.rsplit(":", 1)[-1]: v for k, v in case["perfvalues"].items()}
    ratio = perf["victim_p99_ratio"]
    # [value, reference, lower, upper, unit, result]: at most max_p99_ratio.
    assert ratio[0] == pytest.approx(max(v["p99_loaded_us"] / v["p99_alone_us"]
                                         for v in record["victims"]))
    assert ratio[1] == 50 and ratio[3] == 0 and ratio[4] == "ratio"
    assert perf["interference_overlap_pct"][0] >= 90
    assert perf["aggressor_shared_bw"][0] > 0
    assert min(v["samples_loaded"] for v in record["victims"]) >= 100
    assert case["interference_failures"] == "" and case["step_delay"] == ""
    assert _rejudged(case, tmp_path / "local-gluster.yaml", tmp_path) == []
    assert not os.path.exists(case["target_dir"])


def test_a_delayed_step_is_invalid_did_not_overlap(gluster_env, tmp_path):
    _, layout = gluster_env
    proc, cases = interference(tmp_path, layout,
                               FSACCEPT_TEST_STEP_DELAY=f"aggressor:{DELAY_S}")
    case = cases["FioInterference"]
    assert case["result"] == "fail" and case["fail_phase"] == "sanity", proc.stdout[-3000:]
    assert case["fail_reason"].startswith("sanity error: INVALID: overlap: did not overlap")
    reasons = case["invalid_reasons"]
    for node in ("n1", "n2"):
        assert (f"overlap: did not overlap: every aggressor node ran through 0% of {node}'s"
                in reasons), reasons
    assert case["step_delay"] == f"aggressor:{DELAY_S}"
    record = json.loads(case["interference_record"])
    assert min(a["span"][0] for a in record["aggressors"]) > max(
        v["loaded"][1] for v in record["victims"])
    assert _rejudged(case, tmp_path / "local-gluster.yaml", tmp_path)[0].startswith(
        "its interference record: overlap: did not overlap")
    assert not os.path.exists(case["target_dir"])
