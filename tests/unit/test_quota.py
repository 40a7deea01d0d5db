"""The quota check's pure half: its entry and the site's declaration, the program's
lines parsed, its INVALID rules and failures, and the node program itself on a local
directory with commands that play the site's (no quota here: never refused)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from fsaccept.benchmarks import registry
from fsaccept.benchmarks.quota import command, parse, probe, validity
from fsaccept.core.units import MIB

REPO = Path(__file__).resolve().parents[2]
P = command.parameters("quota", {"limit_mib": 64, "slack_mib": 8, "usage_within_s": 10})

HEADER = (f"fsaccept-quota version 1 limit {64 * MIB} stop {P.stop} tolerance "
          f"{8 * MIB} poll_s 20 node n2 dir /mnt/x/fsaccept/run/quota")


def lines(*body: str, end: bool = True) -> str:
    return "\n".join([HEADER, *body, *(["fsaccept-quota end"] if end else [])]) + "\n"


REFUSED = lines("fsaccept-quota set ok",
                f"fsaccept-quota write written {65 * MIB} stopped EDQUOT seconds 1.5",
                f"fsaccept-quota usage 0.100 {40 * MIB}",
                f"fsaccept-quota usage 2.600 {65 * MIB}",
                "fsaccept-quota clear ok")


def test_a_quota_refused_at_its_limit_passes_its_figures():
    run = parse.parse_quota(REFUSED)
    assert run.valid and run.reasons == []
    assert run.figures() == {command.WRITTEN: 65.0, command.USAGE_DELAY: 2.6}
    assert validity.invalid_reasons(run, P) == [] and validity.failures(run, P) == []
    value, lower, upper, unit = command.references(P)[command.WRITTEN]
    assert (value, unit) == (64.0, "MiB") and value * (1 + lower) == 56 \
        and value * (1 + upper) == 72


def test_a_quota_never_enforced_fails_naming_the_node_and_what_was_written():
    run = parse.parse_quota(lines(
        "fsaccept-quota set ok",
        f"fsaccept-quota write written {P.stop} stopped stop seconds 2.0",
        f"fsaccept-quota usage 0.050 {P.stop}", "fsaccept-quota clear ok"))
    assert validity.invalid_reasons(run, P) == []
    assert run.figures()[command.WRITTEN] == 81.0  # 64 + 2 x 8 + 1: above 72
    [failure] = validity.failures(run, P)
    assert failure.startswith("quota not enforced: 81 MiB written into "
                              "/mnt/x/fsaccept/run/quota on n2 with no EDQUOT"), failure


def test_a_usage_that_never_follows_fails_with_the_time_it_was_polled():
    run = parse.parse_quota(lines(
        "fsaccept-quota set ok",
        f"fsaccept-quota write written {64 * MIB} stopped EDQUOT seconds 1",
        f"fsaccept-quota usage 0.1 0", f"fsaccept-quota usage 20.2 {MIB}",
        "fsaccept-quota clear ok"))
    assert run.usage_delay() is None and run.figures()[command.USAGE_DELAY] == 20.2
    assert validity.invalid_reasons(run, P) == []
    assert validity.failures(run, P) == [
        "the usage reported did not follow the data within 10 s: 1 MiB counted after "
        "20.2 s, 64 MiB written"]


@pytest.mark.parametrize("body, reason", [
    (("fsaccept-quota set failed 1 quota command failed : Quota is disabled",
      "fsaccept-quota clear ok"),
     "the site's quota set command failed (exit 1: quota command failed : Quota is "
     "disabled): no quota to test"),
    (("fsaccept-quota set ok", f"fsaccept-quota write written {MIB} stopped ENOSPC "
      "seconds 1", f"fsaccept-quota usage 0.1 {MIB}", "fsaccept-quota clear ok"),
     "the writes stopped on ENOSPC after 1 MiB, not on the quota (EDQUOT)"),
    (("fsaccept-quota set ok", f"fsaccept-quota write written {64 * MIB} stopped EDQUOT "
      "seconds 1", f"fsaccept-quota usage 0.1 {64 * MIB}",
      "fsaccept-quota clear failed 2 permission denied"),
     "the site's quota clear command failed (exit 2: permission denied): the quota on "
     "/mnt/x/fsaccept/run/quota is still set; an administrator must remove it"),
    (("fsaccept-quota set ok", f"fsaccept-quota write written {64 * MIB} stopped EDQUOT "
      "seconds 1", "fsaccept-quota usage-error 0.1 exit 127: nope: not found",
      "fsaccept-quota clear ok"),
     "the site's usage command never answered with a number (0.1 s: exit 127: nope: "
     "not found)"),
])
def test_what_makes_a_run_invalid_is_said(body, reason):
    run = parse.parse_quota(lines(*body))
    assert reason in validity.invalid_reasons(run, P)


@pytest.mark.parametrize("text, kind", [
    ("", "eof"), (HEADER + "\n", "eof"), (lines("fsaccept-quota set ok", end=False), "eof"),
    (lines("fsaccept-quota set maybe"), "malformed"),
    (lines("fsaccept-quota usage nan 5"), "malformed"),
    (lines("fsaccept-quota usage 2 5", "fsaccept-quota usage 1 5"), "malformed"),
    (lines("fsaccept-quota set ok", "fsaccept-quota set ok"), "duplicate"),
    (lines(f"fsaccept-quota usage 1 {'9' * 30}"), "malformed"),
    (lines("fsaccept-quota set ok\x00"), "malformed"),
    (lines() + "fsaccept-quota set ok\n", "after-end"),
    ("fsaccept-quota set ok\n" + lines(), "order"),
])
def test_hostile_output_is_invalid(text, kind):
    run = parse.parse_quota(text)
    assert not run.valid and kind in {f.kind for f in run.findings}, run.findings


def test_another_limit_than_the_entrys_is_invalid():
    other = command.parameters("quota", {"limit_mib": 32, "slack_mib": 8,
                                         "usage_within_s": 10})
    assert any("not the entry's" in r for r in validity.invalid_reasons(
        parse.parse_quota(REFUSED), other))


def test_entry_rules_and_the_declaration_name_the_key():
    assert command.entry_rules("tests.quota", {"limit_mib": 8, "slack_mib": 8}) == [
        "tests.quota.slack_mib: 8 is not below limit_mib 8: a quota that refuses the "
        "first byte would pass"]
    with pytest.raises(command.DeclarationError, match=r"^extras.quota: not declared"):
        command.declaration(None)
    with pytest.raises(command.DeclarationError, match=r"^extras.quota.usage: must be"):
        command.declaration({"set": "a", "clear": "b", "usage": ""})
    with pytest.raises(command.DeclarationError, match=r"^extras.quota.sett: unknown"):
        command.declaration({"sett": "a", "set": "a", "clear": "b", "usage": "c"})
    assert command.declaration({"set": "a", "clear": "b", "usage": "c"})["usage"] == "c"


def test_the_catalogue_declares_it_once():
    spec = registry.TESTS["QuotaEnforcement"]
    assert spec.key == "quota" and spec.figures == tuple(command.FIGURES)
    assert registry.BENCHMARKS["quota"].checks_dir == "quota"
    assert (REPO / "checks" / "quota" / "quota.py").is_file()


def _probe(tmp_path, env, *extra):
    d = tmp_path / "quota"
    d.mkdir()
    return subprocess.run(
        [sys.executable, "-m", probe.__name__, str(d), "--limit", str(2 * MIB), "--stop",
         str(3 * MIB), "--tolerance", str(MIB), "--poll-s", "1", *extra],
        env=dict(os.environ, PYTHONPATH=str(REPO), **env), capture_output=True, text=True,
        timeout=120), d


def test_the_node_program_writes_polls_and_clears_and_leaves_nothing(tmp_path):
    log = tmp_path / "calls"
    env = {"FSACCEPT_QUOTA_SET": f'echo "set $FSACCEPT_QUOTA_DIR $FSACCEPT_QUOTA_BYTES" >> {log}',
           "FSACCEPT_QUOTA_CLEAR": f'echo "clear $FSACCEPT_QUOTA_DIR" >> {log}',
           "FSACCEPT_QUOTA_USAGE": 'du -sb "$FSACCEPT_QUOTA_DIR" | cut -f1'}
    proc, d = _probe(tmp_path, env)
    assert proc.returncode == 0, proc.stderr
    run = parse.parse_quota(proc.stdout)
    assert run.valid and run.stopped == parse.STOP and run.written == 3 * MIB, proc.stdout
    assert run.usage_delay() is not None
    assert log.read_text().splitlines() == [f"set {d} {2 * MIB}", f"clear {d}"]
    assert list(d.iterdir()) == []


def test_the_node_program_clears_after_a_failed_set_and_refuses_without_commands(tmp_path):
    env = {"FSACCEPT_QUOTA_SET": "echo no >&2; exit 3", "FSACCEPT_QUOTA_CLEAR": "true",
           "FSACCEPT_QUOTA_USAGE": "echo 0"}
    proc, _ = _probe(tmp_path, env)
    run = parse.parse_quota(proc.stdout)
    assert run.set.describe() == "exit 3: no" and run.clear.ok and run.written is None
    bare = {k: v for k, v in os.environ.items() if not k.startswith("FSACCEPT_QUOTA_")}
    proc = subprocess.run([sys.executable, "-m", probe.__name__, str(tmp_path), "--limit",
                           "1", "--stop", "1", "--tolerance", "0", "--poll-s", "1"],
                          env=dict(bare, PYTHONPATH=str(REPO)), capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 2 and "FSACCEPT_QUOTA_SET" in proc.stderr


# -- the sign-off judges the recorded lines again --------------------------------------

def _quota_case(text: str, result: str = "pass", p: command.QuotaParameters = P,
                edit=None, root: Path | None = None, output: str | bytes | None = None):
    """A run report's case of the quota check; with ``root``, its job's output written
    there (``output``, default ``text``) for the sign-off to rebuild it from."""
    from fsaccept.reporting.case import case_of
    run = parse.parse_quota(text)
    perf = {}
    for name, value in run.figures().items():
        ref, lower, upper, unit = command.references(p)[name]
        perf[f"local-gluster:compute:{name}"] = [value, ref, lower, upper, unit, result]
    record = {"name": "QuotaEnforcement", "result": result, "perfvalues": perf,
              "quota_lines": parse.program_lines(text)}
    if root is not None:
        out = root / "output" / "QuotaEnforcement"
        out.mkdir(parents=True, exist_ok=True)
        body = text if output is None else output
        (out / "rfm_job.out").write_bytes(body if isinstance(body, bytes) else body.encode())
        (out / "rfm_job.err").write_text("")
        record["outputdir"] = str(out)
    if edit:
        edit(record)
    return case_of(record)


def _files(root: Path):
    from fsaccept.core import inputs
    from fsaccept.reporting.signoff.common import RunFiles
    return RunFiles(inputs.Reader(root))


class _Reference:
    def __init__(self, **entry):
        self.entries = {"quota": {"limit_mib": 64, "slack_mib": 8, "usage_within_s": 10,
                                  **entry}}


SPEC = registry.TESTS["QuotaEnforcement"]


def test_the_sign_off_rebuilds_the_run_from_the_jobs_output_and_judges_it(tmp_path):
    from fsaccept.reporting.signoff.quota import quota_reasons
    case = _quota_case(REFUSED, root=tmp_path)
    assert quota_reasons(case, SPEC, _Reference(), _files(tmp_path)) == []
    # A passed test whose output says the quota was never enforced.
    never = lines("fsaccept-quota set ok",
                  f"fsaccept-quota write written {P.stop} stopped stop seconds 2.0",
                  f"fsaccept-quota usage 0.050 {P.stop}", "fsaccept-quota clear ok")
    reasons = quota_reasons(_quota_case(never, root=tmp_path / "a"), SPEC, _Reference(),
                            _files(tmp_path / "a"))
    assert any("recorded as passed, but its lines fail: quota not enforced" in r
               for r in reasons), reasons
    # Judged against a looser slack than the verified reference's.
    loose = command.parameters("quota", {"limit_mib": 64, "slack_mib": 32,
                                         "usage_within_s": 10})
    reasons = quota_reasons(_quota_case(REFUSED, p=loose, root=tmp_path / "b"), SPEC,
                            _Reference(), _files(tmp_path / "b"))
    assert "quota_written_mib: the reference file says at most 72 MiB, but the test was " \
           "judged against 96.0" in reasons, reasons


def test_the_sign_off_refuses_an_output_edited_missing_truncated_or_binary(tmp_path):
    from fsaccept.reporting.signoff.quota import quota_reasons
    edited = REFUSED.replace(f"written {65 * MIB}", f"written {60 * MIB}")
    case = _quota_case(REFUSED, root=tmp_path / "e", output=edited)
    out = tmp_path / "e" / "output" / "QuotaEnforcement" / "rfm_job.out"
    assert quota_reasons(case, SPEC, _Reference(), _files(tmp_path / "e")) == [
        f"its quota_lines are not what its output {out} says"]
    gone = _quota_case(REFUSED, root=tmp_path / "g")
    (tmp_path / "g" / "output" / "QuotaEnforcement" / "rfm_job.out").unlink()
    assert quota_reasons(gone, SPEC, _Reference(), _files(tmp_path / "g"))[0].startswith(
        "evidence missing: ")
    assert quota_reasons(_quota_case(REFUSED), SPEC) == [
        "evidence missing: rfm_job.out: the run directory was not read"]
    cut = _quota_case(REFUSED[:150], root=tmp_path / "c", edit=lambda r: r.update(
        quota_lines=parse.program_lines(REFUSED[:150])))
    reasons = quota_reasons(cut, SPEC, _Reference(), _files(tmp_path / "c"))
    assert reasons and all(r.startswith("its output (") for r in reasons), reasons
    binary = _quota_case(REFUSED, root=tmp_path / "x", output=b"\x00\xff" * 64)
    assert quota_reasons(binary, SPEC, _Reference(), _files(tmp_path / "x")) == [
        "its quota_lines are not what its output "
        f"{tmp_path / 'x' / 'output' / 'QuotaEnforcement' / 'rfm_job.out'} says"]
    gone_field = _quota_case(REFUSED, edit=lambda r: r.update(quota_lines=""))
    assert quota_reasons(gone_field, SPEC) == [
        "evidence missing: no quota_lines, which the quota check records"]


def test_the_semantics_and_features_section_has_the_quotas_two_rows():
    from types import SimpleNamespace

    from fsaccept.reporting.quota import quota_rows
    ref = SimpleNamespace(for_target=lambda _t: _Reference())
    t = SimpleNamespace(name="QuotaEnforcement", case=_quota_case(REFUSED))
    rows = quota_rows(t, "quota", ref)
    assert [(r.case, r.pair, r.seen, r.promise, r.verdict) for r in rows] == [
        ("quota-enforced", "node n2", "EDQUOT after 65 MiB", "EDQUOT within 8 MiB of 64 MiB",
         "PASS"),
        ("quota-usage", "node n2", "followed after 2.6 s", "≤ 10 s", "PASS")]
    never = lines("fsaccept-quota set ok",
                  f"fsaccept-quota write written {P.stop} stopped stop seconds 2.0",
                  f"fsaccept-quota usage 0.050 {P.stop}", "fsaccept-quota clear ok")
    rows = quota_rows(SimpleNamespace(name="Q", case=_quota_case(never, "fail")), "quota",
                      ref)
    assert [(r.seen, r.verdict) for r in rows] == [("no EDQUOT up to 81 MiB", "FAIL"),
                                                   ("followed after 0.05 s", "PASS")]
    assert [r.promise for r in quota_rows(t, "quota", None)] == [
        "not verified (no verified reference)"] * 2


# -- lines that contradict each other (real captures, tests/data/quota/) ----------------

DATA = REPO / "tests" / "data" / "quota"
#: The captures' test directory and target (README).
TARGET = "/tmp/qcap"
TEST_DIR = f"{TARGET}/fsaccept/QuotaEnforcement.20261201T2125"


def _capture(name: str) -> str:
    return (DATA / f"{name}.txt").read_text()


def _refused(text: str) -> str:
    """The ``du`` capture edited as a hostile user would: refused at the limit, the
    usage following (a passing run, whose lines agree)."""
    out = text.replace(f"written {P.stop} stopped stop", f"written {64 * MIB} stopped "
                       "EDQUOT", 1)
    return out.replace("usage 0.020 84938752", f"usage 0.020 {64 * MIB + 4096}", 1)


def _moved(text: str, line: str, after: str) -> str:
    """``line`` moved to just after ``after``."""
    rest = [x for x in text.splitlines() if x != line]
    i = rest.index(after)
    return "\n".join(rest[:i + 1] + [line] + rest[i + 1:]) + "\n"


#: Each route: the edit of a passing run -> the INVALID reason that says what was seen.
QUOTA_CONTRADICTIONS = [
    (lambda t: _moved(t, "fsaccept-quota clear ok", "fsaccept-quota set ok"),
     "its write line (line 4) comes after its clear line (line 3): the program sets the "
     "quota, writes, polls the usage, clears the quota and ends, in that order"),
    (lambda t: t.replace(f"usage 0.020 {64 * MIB + 4096}\n",
                         f"usage 0.020 {64 * MIB + 4096}\nfsaccept-quota usage 0.531 0\n"),
     f"a usage line (line 5) after the usage had followed the data ({64 * MIB + 4096} "
     "bytes at 0.02 s): the program stops polling there"),
    (lambda t: t.replace(f"dir {TEST_DIR}/quota", "dir /home/alice/quota"),
     "the quota program ran in /home/alice/quota, which is not below the target /tmp/qcap"),
    (lambda t: t.replace(f"dir {TEST_DIR}/quota", f"dir {TARGET}/fsaccept/other/quota"),
     f"the quota program ran in {TARGET}/fsaccept/other/quota, not in the test's "
     f"directory {TEST_DIR}/quota"),
    (lambda t: t.replace(f"dir {TEST_DIR}/quota", f"dir {TEST_DIR}/../../../home/alice"),
     f"the quota program's directory {TEST_DIR}/../../../home/alice is not a path it "
     "prints (absolute, normalised)"),
]


def test_the_edited_capture_agrees_with_itself_and_passes():
    run = parse.parse_quota(_refused(_capture("du")))
    assert validity.invalid_reasons(run, P, f"{TEST_DIR}/quota", TARGET) == []
    assert validity.failures(run, P) == []


@pytest.mark.parametrize("edit, reason", QUOTA_CONTRADICTIONS)
def test_quota_lines_that_contradict_each_other_are_invalid_live(edit, reason):
    run = parse.parse_quota(edit(_refused(_capture("du"))))
    assert reason in validity.invalid_reasons(run, P, f"{TEST_DIR}/quota", TARGET), \
        validity.invalid_reasons(run, P, f"{TEST_DIR}/quota", TARGET)


@pytest.mark.parametrize("edit, reason", QUOTA_CONTRADICTIONS)
def test_the_sign_off_refuses_quota_lines_that_contradict_each_other(tmp_path, edit, reason):
    """The job's output and the run report edited alike, recorded as passed."""
    from types import SimpleNamespace

    from fsaccept.reporting.signoff.quota import quota_reasons
    text = edit(_refused(_capture("du")))
    case = _quota_case(text, root=tmp_path, edit=lambda r: r.update(target_dir=TEST_DIR))
    ref = _Reference()
    ref.target = SimpleNamespace(path=Path(TARGET))
    out = tmp_path / "output" / "QuotaEnforcement" / "rfm_job.out"
    assert f"its output ({out}): {reason}" in quota_reasons(case, SPEC, ref, _files(tmp_path))


def test_the_sign_off_holds_the_directory_below_the_target_whatever_target_dir_says(tmp_path):
    from types import SimpleNamespace

    from fsaccept.reporting.signoff.quota import quota_reasons
    text = _refused(_capture("du")).replace(f"dir {TEST_DIR}/quota", "dir /home/alice/quota")
    case = _quota_case(text, root=tmp_path, edit=lambda r: r.update(target_dir="/home/alice"))
    ref = _Reference()
    ref.target = SimpleNamespace(path=Path(TARGET))
    out = tmp_path / "output" / "QuotaEnforcement" / "rfm_job.out"
    assert quota_reasons(case, SPEC, ref, _files(tmp_path)) == [
        f"its output ({out}): the quota program ran in /home/alice/quota, which is not "
        "below the target /tmp/qcap"]


def test_a_usage_command_that_prints_no_ascii_number_is_a_clear_error_line(tmp_path):
    """``²`` is a digit to ``str.isdigit`` and none to ``int``: the program says so on a
    usage-error line, never a traceback, and the check reads the run as INVALID."""
    env = {"FSACCEPT_QUOTA_SET": "true", "FSACCEPT_QUOTA_CLEAR": "true",
           "FSACCEPT_QUOTA_USAGE": "echo ²"}
    proc, d = _probe(tmp_path, env)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "usage-error 0.0" in proc.stdout and \
        "exit 0: printed '²', not a whole number of bytes" in proc.stdout, proc.stdout
    assert list(d.iterdir()) == []
    run = parse.parse_quota(_capture("usage-not-a-number"))
    assert run.valid and run.usage == []
    assert "the site's usage command never answered with a number (0.012 s: exit 0: " \
           "printed '²', not a whole number of bytes; 0.524 s: exit 0: printed '²', not " \
           "a whole number of bytes; 1.041 s: exit 0: printed '²', not a whole number of " \
           "bytes)" in validity.invalid_reasons(run, P)


def test_a_traceback_of_the_program_is_invalid_whatever_its_lines_say(tmp_path):
    from fsaccept.core import joboutput
    from fsaccept.reporting.signoff.quota import quota_reasons
    err = "Traceback (most recent call last):\n  File \"probe.py\"\nValueError: boom\n"
    run = joboutput.parsed(parse.parse_quota, parse.error_findings,
                           _refused(_capture("du")), err)
    assert "line 1: stderr: Traceback (most recent call last):" in \
        validity.invalid_reasons(run, P)
    case = _quota_case(_refused(_capture("du")), root=tmp_path)
    (tmp_path / "output" / "QuotaEnforcement" / "rfm_job.err").write_text(err)
    assert any(r.endswith("line 1: stderr: Traceback (most recent call last):")
               for r in quota_reasons(case, SPEC, _Reference(), _files(tmp_path)))


def test_the_report_rows_of_contradicted_lines_say_invalid():
    from types import SimpleNamespace

    from fsaccept.reporting.quota import quota_rows
    ref = _Reference()
    ref.target = SimpleNamespace(path=Path(TARGET))
    ref.for_target = lambda _t: ref
    for edit, _reason in QUOTA_CONTRADICTIONS:
        case = _quota_case(edit(_refused(_capture("du"))),
                           edit=lambda r: r.update(target_dir=TEST_DIR))
        rows = quota_rows(SimpleNamespace(name="Q", case=case), "quota", ref)
        assert [r.verdict for r in rows] == ["INVALID", "INVALID"], _reason
    case = _quota_case(_refused(_capture("du")), edit=lambda r: r.update(target_dir=TEST_DIR))
    assert [r.verdict for r in quota_rows(SimpleNamespace(name="Q", case=case), "quota",
                                          ref)] == ["PASS", "PASS"]
