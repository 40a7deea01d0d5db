"""md-workbench: parser on every real capture, command line, INVALID rules, schema, and
hostile inputs."""

import json
from pathlib import Path

import jsonschema
import pytest

from fsaccept.benchmarks.md_workbench.command import (MdWorkbenchParameters,
                                                      md_workbench_options, parameters,
                                                      planned_bytes)
from fsaccept.benchmarks.md_workbench.parse import (INVALID, STATISTICS, error_findings,
                                                    parse_md_workbench)
from fsaccept.benchmarks.md_workbench.validity import (MdWorkbenchExpectation,
                                                       expectation_from_output,
                                                       invalid_reasons)
from fsaccept.cli import main
from fsaccept.core.findings import figure_problem

DATA = Path(__file__).resolve().parents[1] / "data" / "md-workbench"
CAPTURES = sorted(p.stem for p in DATA.glob("*.txt"))
SCHEMA = Path(__file__).resolve().parents[2] / "fsaccept/benchmarks/md_workbench/schema.json"


def run(name):
    return parse_md_workbench((DATA / f"{name}.txt").read_text())


def exit_status(name):
    return int((DATA / f"{name}.cmd").read_text().splitlines()[1].removeprefix("exit="))


@pytest.mark.parametrize("name", CAPTURES)
def test_every_capture_parses_and_a_failed_run_is_never_valid(name):
    r = run(name)
    json.dumps(r.to_dict(), allow_nan=False)
    if exit_status(name) != 0:
        assert not r.valid
    if r.valid:
        assert r.version == "4.0.0" and r.benchmark() and r.total_runtime_s is not None


def test_figures_are_the_printed_numbers():
    r = run("basic")
    assert r.total_objects == 4800 and r.workingset_mib == 11.905
    assert [p.name for p in r.phases] == ["precreate", "benchmark", "benchmark", "cleanup"]
    b1, b2 = r.benchmark()
    assert (b1.rate_ops, b1.objects, b1.objects_per_s, b1.throughput_mib_s) == \
        (127775.3, 800, 31943.8, 237.7)
    assert b1.latency_s["read"] == dict(zip(STATISTICS, (4.7684e-06, 5.9605e-06, 5.9605e-06,
                                                         5.9605e-06, 6.9141e-06, 1.3113e-05,
                                                         2.8133e-05)))
    assert b1.errors == 0 and b1.time_max_s == 0.03 and b1.balance_pct == 66.6
    # The worst iteration: the lower rate, the higher latency of each statistic.
    figures = r.figures()
    assert figures["rate"] == 127109.8 == b2.rate_ops
    assert figures["read_latency_q99"] == 1.5974e-05 == b2.latency_s["read"]["q99"]
    assert figures["delete_latency_max"] == 2.0105e-02
    assert r.options["-R"] == "2" and r.command_line.endswith("-o /var/tmp/mdwcap/basic")


def test_stonewall_wear_out_is_read():
    r = run("stonewall")
    assert (r.wearout_s, r.wearout_iterations) == (1.012182, 1918)
    assert r.benchmark()[0].stonewall_iterations == 1918


def test_errors_counted_with_exit_0_are_invalid():
    r = run("verify-errors")
    assert exit_status("verify-errors") == 0 and not r.valid
    assert any("md-workbench counted 160 failed operations" in x for x in r.reasons)


def test_error_lines_aborts_and_a_missing_directory_are_invalid():
    kinds = {f.kind for f in run("missing-dir").findings if f.severity == INVALID}
    assert {"no-directory", "error", "mpi-abort", "launcher"} <= kinds
    assert "error" in {f.kind for f in run("restart-missing").findings}
    stderr = "srun: error: n2: task 3: Exited with exit code 255\n"
    assert [f.kind for f in error_findings(stderr)] == ["launcher"]


def test_a_fast_phase_printed_as_0_00s_is_not_a_bogus_figure():
    r = run("single-rank")
    assert r.valid and r.phases[-1].time_max_s == 0.0


def test_command_line_and_planned_bytes():
    p = parameters("md_workbench", {"node_fraction": 0.9, "ranks_per_node": 2, "datasets": 2,
                                    "precreate_per_set": 400, "objects_per_set": 100,
                                    "iterations": 2, "object_size": "4KiB",
                                    "stonewall_s": 30, "thresholds": {}})
    opts = md_workbench_options(p, "/t/dir with space/md-workbench")
    assert opts == ["-D", "2", "-P", "400", "-I", "100", "-S", "4096", "-R", "2", "-O", "2",
                    "-w", "30", "-W", "-X", "-o", "/t/dir with space/md-workbench",
                    "--run-info-file=/t/dir with space/md-workbench.status"]
    assert planned_bytes(p, 8) == 8 * 2 * (400 + 100) * 4096


def test_the_live_rules_and_the_re_read_ones_agree():
    r = run("basic")
    assert expectation_from_output(r) == MdWorkbenchExpectation(
        tasks=8, datasets=2, precreate_per_set=200, objects_per_set=50, iterations=2)
    asked = MdWorkbenchExpectation(tasks=16, datasets=2, precreate_per_set=200,
                                   objects_per_set=50, iterations=3, judged=("rate",))
    reasons = invalid_reasons(r, asked)
    assert "md-workbench counted 4800 objects, 11200 expected of 16 ranks: it did not run " \
        "with the ranks requested" in reasons
    assert "2 benchmark iterations printed, 3 asked (-R)" in reasons
    early = invalid_reasons(r, MdWorkbenchExpectation(8, 2, 200, 50, 2, stonewall_s=30))
    assert early[0].startswith("benchmark iteration 0 ended before the 30 s stonewall")
    assert invalid_reasons(run("stonewall"), expectation_from_output(run("stonewall"))) == []


def test_fsaccept_parse_md_workbench(capsys):
    assert main(["parse", "md-workbench", str(DATA / "basic.txt")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["valid"] and out["figures"]["rate"] == 127109.8
    assert main(["parse", "md-workbench", str(DATA / "verify-errors.txt")]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "INVALID"


@pytest.mark.parametrize("text, reason", [
    ("", "md-workbench output is empty"),
    (" \n", "md-workbench output is empty"),
    ("hello\n", "not md-workbench output"),
    ("\x00\x01\x02" * 1000, "not md-workbench output"),
])
def test_empty_or_foreign_output_is_invalid_not_an_exception(text, reason):
    # A run killed before it printed must be INVALID in the live check, as for IOR and
    # mdtest, never an exception in sanity (which would not read as INVALID).
    run = parse_md_workbench(text)
    assert not run.valid and any(reason in r for r in run.reasons)


def test_fsaccept_parse_md_workbench_empty_file_is_invalid(tmp_path, capsys):
    empty = tmp_path / "empty log.txt"
    empty.write_text("")
    assert main(["parse", "md-workbench", str(empty)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "INVALID" and out["reasons"] == ["md-workbench output is empty"]


@pytest.mark.parametrize("cut", [100, 400, 900, 1500])
def test_truncated_output_is_invalid(cut):
    text = (DATA / "basic.txt").read_text()[:cut]
    assert not parse_md_workbench(text).valid


def test_a_huge_error_file_gives_bounded_output():
    """200,000 error lines: INVALID, and what it says stays small (its speed is no test's
    to time: it depends on the machine)."""
    text = (DATA / "basic.txt").read_text().splitlines()[0] + "\n" + \
        "ERROR: 3: Error while creating the dset: /x, (md-workbench.c:554)\n" * 200_000
    r = parse_md_workbench(text)
    assert len(json.dumps(r.to_dict())) < 100_000 and not r.valid


def test_the_schema_is_valid_and_names_what_it_refuses():
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    ok = {"node_fraction": 0.5, "ranks_per_node": 2,
          "thresholds": {"rate": {"value": 1000, "unit": "ops/s"},
                         "read_latency_q99": {"value": 0.01, "unit": "s"}}}
    from fsaccept.suite.reference import validation_errors
    base = {"system": "x", "target": {"path": "/t", "fstype": "ext4"}}
    assert validation_errors({**base, "tests": {"md_workbench": ok}}) == []
    bad = dict(ok, thresholds={"read_latency_p42": {"value": 1, "unit": "s"}})
    errors = validation_errors({**base, "tests": {"md_workbench_small": bad}})
    assert errors and errors[0].startswith("tests.md_workbench_small.thresholds: unknown key")


def test_latency_thresholds_are_ceilings():
    from fsaccept.suite.reference import Threshold
    assert Threshold(0.01, "s", 0.1).as_reframe_reference() == (0.01, None, 0.1, "s")
    assert Threshold(1000, "ops/s", 0.1).as_reframe_reference() == (1000, -0.1, None, "ops/s")
    assert MdWorkbenchParameters("x", 0.5, 2).offset is None


def _with_read(stats, iteration=1):
    """basic.txt with one benchmark iteration's read statistics replaced."""
    lines = (DATA / "basic.txt").read_text().splitlines()
    at = [n for n, line in enumerate(lines) if line.startswith("benchmark")][iteration]
    start = lines[at].index(" read(") + len(" read(")
    end = lines[at].index(")", start)
    lines[at] = lines[at][:start] + stats + lines[at][end:]
    return parse_md_workbench("\n".join(lines) + "\n")


READ = "4.7684e-06s, 5.9605e-06s, 5.9605e-06s, 5.9605e-06s, 6.9141e-06s, {q99}, {max}"


@pytest.mark.parametrize("iteration", [0, 1])
@pytest.mark.parametrize("q99, why", [("nans", "nan is not a finite number"),
                                      ("infs", "inf is not a finite number"),
                                      ("-1.3113e-05s", "-1.3113e-05 is negative"),
                                      ("1.3x13e-05s", "'1.3x13e-05' is not a number")])
def test_a_bogus_latency_in_either_iteration_is_invalid_not_hidden_by_max(iteration, q99, why):
    r = _with_read(READ.format(q99=q99, max="2.8133e-05s"), iteration)
    assert not r.valid
    assert any(x.endswith(f"benchmark read latency q99: {why}") for x in r.reasons)
    q = r.figures().get("read_latency_q99")
    # The bogus value itself (or none), never the other iteration's number.
    assert q is None or figure_problem(q, io_done=False)
    json.dumps(r.to_dict(), allow_nan=False)


def test_a_negative_max_in_a_single_iteration_is_invalid():
    text = (DATA / "single-rank.txt").read_text().replace("2.5034e-05s, 2.5034e-05s)",
                                                          "2.5034e-05s, -2.5034e-05s)", 1)
    r = parse_md_workbench(text)
    assert not r.valid and r.figures()["read_latency_max"] == -2.5034e-05
    assert any("benchmark read latency max: -2.5034e-05 is negative" in x for x in r.reasons)


def test_a_latency_of_0_is_a_figure():
    # md-workbench prints "%.4es", and an operation's statistics only when its max
    # exceeds 1e-9 s: 0.0000e+00s is an operation under the timer's resolution.
    r = _with_read("0.0000e+00s, 0.000000s, " + READ.split(", ", 2)[2].format(
        q99="1.3113e-05s", max="2.8133e-05s"))
    assert r.valid and r.benchmark()[1].latency_s["read"]["min"] == 0.0


@pytest.mark.parametrize("count", [6, 8])
def test_a_latency_list_of_other_than_seven_statistics_is_invalid(count):
    stats = ", ".join(["1.0000e-05s"] * count)
    r = _with_read(stats)
    assert not r.valid
    assert any(x.endswith(f"benchmark read: {count} statistics, md-workbench prints 7")
               for x in r.reasons)


def test_parsing_cost_is_linear_in_a_lines_length():
    """A real benchmark line grown (in code) by n and 8n " read(" without a ")": the
    work over that of the real capture grows about 8x, not 64x (the latency pattern
    scanned to the line's end from every start). Counted deterministically, no clock
    (tests/unit/stepcount.py: pattern steps replayed, plus Python lines)."""
    from fsaccept.benchmarks.md_workbench import parse as mdw_parse

    from . import stepcount
    real = (DATA / "basic.txt").read_text()
    line = next(x for x in real.splitlines() if x.startswith("benchmark process"))
    stepcount.assert_linear(lambda n: real.replace(line, line + " read(" * n, 1),
                            parse_md_workbench, [mdw_parse], n=100)
