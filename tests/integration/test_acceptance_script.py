"""scripts/acceptance and scripts/nightly on the emulated cluster, end to end.

The fio client checks run here (fio is a Debian package; IOR and mdtest are not
in CI).  Each test keeps its results database in a temporary directory and
removes the run directories it made under results/.
"""

import json
import os
import re
import shutil
from pathlib import Path

import pytest
import yaml

from fsaccept.benchmarks import registry
from fsaccept.reporting import runreport, sections, verdicts
from fsaccept.reporting.case import typed
from lab import emulated
from tests.conftest import REPO, run

pytestmark = pytest.mark.integration

FIO_TESTS = re.findall(r"^class (\w+)\(FioTest\)", (REPO / "checks" / "fio_client.py").read_text(),
                       re.M)


def printed_dirs(output: str, pattern: str) -> list[Path]:
    return [Path(p) for p in re.findall(pattern, output)]


def test_acceptance_writes_the_signoff_report(cluster_env, tmp_path, results_dirs):
    assert FIO_TESTS, "no fio checks found in checks/fio_client.py"
    env = dict(cluster_env, RFM_SQLITE_DB_FILE=str(tmp_path / "results.db"))
    proc = run([str(REPO / "scripts" / "acceptance"), "--signed-by", "CI Tester", "-t", "client"],
               env=env, timeout=1500)
    out = proc.stdout + proc.stderr
    results_dirs.extend(printed_dirs(out, r"acceptance: results in (\S+)"))
    md_paths = printed_dirs(out, r"report: (\S+report\.md)")
    assert len(md_paths) == 1, out[-4000:]
    run_dir = md_paths[0].parent
    md = md_paths[0].read_text()
    html = (run_dir / "report.html").read_text()
    # One summary row per fio check, each with a verdict.
    for name in FIO_TESTS:
        row = re.search(rf"^\| \[{name}\]\(#[^)]*\) \| ([^|]*) \| ([^|]*) \| ([^|]*) \| ([^|]*) "
                        rf"\| ([^|]*) \| (PASS|FAIL|INVALID|ERROR|SKIPPED|NOT RUN|ABORTED) \|",
                        md, re.M)
        assert row, f"no summary row for {name} in {md_paths[0]}"
        assert f'href="#{sections.anchor_of(name)}"' in html
    assert "| Signed by | CI Tester |" in md
    assert re.search(r"SHA-256 `[0-9a-f]{64}`", md)
    assert re.search(r"git commit `?[0-9a-f]{40}", md)
    assert "benchmark_command" in md and "Node list" in md
    assert "## Per-node distribution" in md
    assert 'src="data:image/png;base64,' in html
    # The overall verdict matches ReFrame's exit status, and the session was stored.
    accepted = "**Overall verdict: ACCEPTED**" in md
    assert (proc.returncode == 0) == accepted, out[-3000:]
    assert (tmp_path / "results.db").is_file()
    # The report is ReFrame's own run report, turned into rows.
    tests = runreport.tests_of(runreport.load_run_report(run_dir / "run-report.json"))
    assert sorted(t.name for t in tests) == sorted(FIO_TESTS)


def without_the_kit(path: str) -> str:
    """PATH without any directory holding a benchmark Spack builds (IOR's: ior, mdtest,
    md-workbench), the Spack view among them: a fresh machine's."""
    built = {b.binary for b in registry.BENCHMARKS.values() if b.spack_package == "ior"}
    return os.pathsep.join(d for d in path.split(os.pathsep)
                           if d and not any((Path(d) / name).exists() for name in built))


def test_a_newcomer_without_the_spack_kit_gets_incomplete_with_every_missing_benchmark(
        cluster_env, tmp_path, results_dirs):
    """The README's first command on a machine without IOR (issue 41: NOT ACCEPTED, the
    skipped dataset fixtures judged for a job they never ran): no ior, mdtest or
    md-workbench on PATH, no Spack view, so the system such a host selects, `local`
    (this host built IOR with Spack, so its own default is local-spack: named here)."""
    env = dict(cluster_env, RFM_SQLITE_DB_FILE=str(tmp_path / "results.db"),
               PATH=without_the_kit(cluster_env["PATH"]))
    env.pop("FSACCEPT_REFERENCE", None)
    missing = sorted(b.binary for b in registry.BENCHMARKS.values()
                     if shutil.which(b.binary, path=env["PATH"]) is None)
    assert {"ior", "mdtest", "md-workbench"} <= set(missing), missing
    proc = run([str(REPO / "scripts" / "acceptance"), "--system", "local"], env=env,
               timeout=1500)
    out = proc.stdout + proc.stderr
    results_dirs.extend(printed_dirs(out, r"acceptance: results in (\S+)"))
    verdicts_printed = re.findall(r"^overall verdict: (.*)$", proc.stdout, re.M)
    assert verdicts_printed == ["INCOMPLETE"] and proc.returncode == 1, out[-6000:]
    assert proc.stdout.rstrip().endswith("overall verdict: INCOMPLETE")
    assert "findmnt" not in out, out[-6000:]
    (md,) = printed_dirs(out, r"report: (\S+report\.md)")
    tests = runreport.tests_of(runreport.load_run_report(md.parent / "run-report.json"))
    ran = {verdicts.spec_of_case(t.case).benchmark for t in tests
           if verdicts.spec_of_case(t.case)}
    for name in missing:
        bench = next(b for b in registry.BENCHMARKS.values() if b.binary == name)
        if bench.name not in ran:
            continue  # opt-in (IO500): not in the main job without tests.io500
        assert f"{name} not found on PATH" in out, (name, out[-6000:])
        for t in tests:
            spec = verdicts.spec_of_case(t.case)
            if spec and spec.benchmark == bench.name:
                assert t.verdict == verdicts.SKIPPED and f"{name} not found on PATH" in \
                    t.reason, (t.name, t.verdict, t.reason)
    # Nothing else kept it from ACCEPTED but what did not run (fio, the probes ran).
    assert all(t.verdict in (verdicts.PASS, verdicts.SKIPPED) for t in tests), \
        [(t.name, t.verdict, t.reason) for t in tests if t.verdict != verdicts.PASS]


def assert_junit_lists_every_check(junit: Path, report: dict) -> None:
    """One testcase per test case of the run report; a failure element exactly for
    those that did not pass, naming the phase (an INVALID one says INVALID)."""
    import xml.etree.ElementTree as ET
    cases = {c.get("name").split()[0]: c for c in ET.parse(junit).getroot().iter("testcase")}
    ran = typed(report).cases
    assert sorted(cases) == sorted(tc["name"].split()[0] for tc in ran)
    for tc in ran:
        failure = cases[tc["name"].split()[0]].find("failure")
        verdict = verdicts.verdict_of(tc).verdict
        assert (failure is None) == (verdict == verdicts.PASS), (tc["name"], verdict)
        if verdict == verdicts.INVALID:
            assert failure.text.startswith("sanity: INVALID:")


def nightly_reference(tmp_path: Path, name: str, overrides: dict) -> Path:
    raw = yaml.safe_load((REPO / "reference" / "local.yaml").read_text())
    raw["nightly"] = {"sessions": 3, "tolerance": 0.2,
                      "tests": {"fio_randread_direct": {"runtime_s": 2, **overrides}}}
    path = tmp_path / name
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


def test_nightly_twice_detects_an_injected_regression(cluster_env, tmp_path, results_dirs):
    env = dict(cluster_env, RFM_SQLITE_DB_FILE=str(tmp_path / "results.db"))
    env.pop("FSACCEPT_REFERENCE", None)
    nightly = str(REPO / "scripts" / "nightly")
    first = run([nightly, "--reference", str(nightly_reference(tmp_path, "n1.yaml", {}))],
                env=env, timeout=900)
    out1 = first.stdout + first.stderr
    results_dirs.extend(p.parent for p in printed_dirs(out1, r"nightly: summary (\S+)"))
    assert "nightly: summary" in out1, out1[-4000:]
    assert "REGRESSION" not in out1
    assert first.returncode == 0 or "NOT PASS" in out1, out1[-4000:]
    assert "FioRandomReadDirect randread_4k_direct_iops" in out1 and "no history" in out1
    # JUnit for CI dashboards: every check of the session, with its verdict.
    (junit,) = printed_dirs(out1, r"nightly: JUnit report (\S+)")
    report = json.loads((junit.parent / "run-report.json").read_text())
    assert_junit_lists_every_check(junit, report)
    # The regression: one node instead of four, queue depth 1 instead of 16.
    slower = nightly_reference(tmp_path, "n2.yaml", {"node_fraction": 0.25, "iodepth": 1,
                                                      "ioengine": "psync"})
    second = run([nightly, "--reference", str(slower)], env=env, timeout=900)
    out2 = second.stdout + second.stderr
    summaries = printed_dirs(out2, r"nightly: summary (\S+)")
    results_dirs.extend(p.parent for p in summaries)
    assert second.returncode == 1, out2[-4000:]
    assert "REGRESSION in FioRandomReadDirect randread_4k_direct_iops" in out2
    assert re.search(r"nightly: REGRESSION: FioRandomReadDirect randread_4k_direct_iops: "
                     r"[\d,.]+ IOPS is [\d.]+ % below the median [\d,.]+ IOPS of the last 1 "
                     r"session", out2), out2
    summary = summaries[0].read_text()
    # Without --system: the emulated cluster's default on this host (local-spack once
    # set-up built IOR with Spack).
    assert summary.startswith(f"# Nightly {emulated.default_emulated()}: REGRESSION")
    assert (summaries[0].parent / "trends" / "FioRandomReadDirect-randread_4k_direct_iops.png"
            ).is_file()


def test_measure_prints_a_ceilings_block(tmp_path):
    if shutil.which("fio") is None:
        if os.environ.get("CI"):
            pytest.fail("fio not installed: run scripts/setup")
        pytest.skip("fio not installed: run scripts/setup")
    from fsaccept.reporting import assessment
    measured = assessment.measure(tmp_path, size="16m", runtime_s=1)
    assert set(measured) == {"write", "read", "randwrite", "randread"}
    assert all(v > 0 for v in measured.values())
    assert len(assessment.parse_ceilings(assessment.ceilings_block(measured))) == 2
