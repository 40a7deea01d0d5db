"""The network check: iperf3's JSON and the program's output parsed (real captures,
tests/data/network/), its plan, its INVALID rules, its figures and failing links, the
program with a stand-in launcher, the sign-off's rebuilding of it from the job's output
and each node's iperf3 report, and the report's Components rows."""

from __future__ import annotations

import json
import math
import re
import shutil
import stat
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from fsaccept.benchmarks import registry
from fsaccept.benchmarks.network import command, parse, validity
from fsaccept.core import components, inputs
from fsaccept.reporting.case import case_of
from fsaccept.reporting.components import network_rows
from fsaccept.reporting.signoff.common import RunFiles
from fsaccept.reporting.signoff.network import network_reasons

DATA = Path(__file__).resolve().parents[1] / "data" / "network"
SPEC = registry.TESTS["NetworkSurvey"]
ENTRY = {"port": 17136, "ports": 4, "runtime_s": 5, "max_spread": 0.8}
P = command.parameters("network_survey", ENTRY)


def _capture(name: str) -> str:
    return (DATA / name).read_text()


def _stdout(name: str) -> str:
    return (DATA / name / "stdout.txt").read_text()


def _reports(name: str):
    def read(file: str) -> str | None:
        path = DATA / name / file
        return path.read_text() if path.is_file() else None
    return read


def _links(name: str, kind: str = parse.ALONE) -> dict:
    return validity.measured(parse.parse_network(_stdout(name)), _reports(name), kind)[0]


# -- iperf3's JSON ----------------------------------------------------------------------

def test_a_real_iperf3_report_gives_what_the_server_received():
    link = parse.parse_iperf3(_capture("iperf3-3.12-n1-limited-50MiB.json"))
    assert link.mib_s == pytest.approx(50.112, abs=1e-3) and link.version == "3.12"
    assert (link.retransmits, link.rtt_ms) == (0, pytest.approx(5.002))
    free = parse.parse_iperf3(_capture("iperf3-3.12-n1-loopback.json"))
    assert free.mib_s == pytest.approx(1427.5, abs=0.1) and free.retransmits == 58


def test_all_at_once_the_steady_rates_add_up_to_the_limit():
    together = {f.name: parse.parse_iperf3(f.read_text())
                for f in DATA.glob("iperf3-3.12-together-*.json")}
    assert len(together) == 4
    # The middle second alone, where all four sent: 12.5 MiB/s each.
    assert validity.aggregate(together) == pytest.approx(50.0, rel=0.01)
    # Each one's mean over its whole test counts its edges, where it had the link alone.
    assert sum(x.mib_s for x in together.values()) > 51


@pytest.mark.parametrize("text, words", [
    ("", "not JSON"),
    ("\x00\xff" * 50, "not JSON"),
    ("[1, 2]", "not a JSON object"),
    ('{"start": {}, "end": {}, "error": "unable to connect"}', "iperf3: unable to connect"),
    ('{"start": {}}', "no start or end section"),
    ("TRUNCATED", "not JSON"),
    ("HUGE", "more than an iperf3 report"),
    ("UDP", "protocol 'UDP', not TCP"),
    ("REVERSE", "a reverse test"),
    ("NAN", "received nothing"),
    ("NEGATIVE", "received nothing"),
    ("BOOL", "not a count"),
    ("VERSION", "is not iperf3's"),
    ("INTERVAL", "intervals[1].sum: not bytes over seconds"),
])
def test_a_report_that_is_not_a_finished_tcp_test_is_refused_saying_why(text, words):
    good = _capture("iperf3-3.12-n1-limited-50MiB.json")
    data = json.loads(good)
    edits = {
        "TRUNCATED": lambda: good[:len(good) // 2],
        "HUGE": lambda: " " * (parse.MAX_REPORT + 1),
        "UDP": lambda: data["start"]["test_start"].update(protocol="UDP"),
        "REVERSE": lambda: data["start"]["test_start"].update(reverse=1),
        "NAN": lambda: data["end"]["sum_received"].update(bytes=math.nan),
        "NEGATIVE": lambda: data["end"]["sum_received"].update(bytes=-5),
        "BOOL": lambda: data["end"]["sum_sent"].update(retransmits=True),
        "VERSION": lambda: data["start"].update(version="iperf 3.12; rm -rf /"),
        "INTERVAL": lambda: data["intervals"][1]["sum"].update(seconds=0),
    }
    if text in edits:
        made = edits[text]()
        text = made if isinstance(made, str) else json.dumps(data)
    with pytest.raises(ValueError, match=re.escape(words)):
        parse.parse_iperf3(text)
    assert parse.link_figure(text, 0)[0] is None


def test_a_step_without_its_result_or_report_gives_no_figure():
    good = _capture("iperf3-3.12-n1-limited-50MiB.json")
    assert parse.link_figure(good, None) == (None, "its step has no result line")
    assert parse.link_figure(None, 0) == (None, "its iperf3 report is missing")
    assert parse.link_figure(good, 1) == (None, "iperf3 exited 1")
    refused = parse.link_figure(_capture("iperf3-3.12-refused.json"), 1)[1]
    assert refused == "iperf3 exited 1: iperf3: unable to connect to server: Connection refused"


# -- the plan ---------------------------------------------------------------------------

def test_each_server_takes_one_node_alone_then_all_send_at_once():
    nodes = ["n1", "n2", "n3", "n4", "n5"]
    endpoints = [("s1", 5201), ("s2", 5201), ("s1", 5202), ("s2", 5202), ("s1", 5203),
                 ("s2", 5203)]
    alone, together = components.network_plan(nodes, endpoints)
    assert alone == [[("n1", "s1", 5201), ("n2", "s2", 5201)],
                     [("n3", "s1", 5201), ("n4", "s2", 5201)], [("n5", "s1", 5201)]]
    assert together == [("n1", "s1", 5201), ("n2", "s2", 5201), ("n3", "s1", 5202),
                        ("n4", "s2", 5202), ("n5", "s1", 5203)]
    with pytest.raises(ValueError, match="2 endpoints for 3 nodes"):
        components.network_plan(["a", "b", "c"], [("s", 1), ("s", 2)])
    with pytest.raises(ValueError, match="twice"):
        components.network_plan(["a", "a"], [("s", 1), ("s", 2)])
    with pytest.raises(ValueError, match="at least one node"):
        components.network_plan([], [("s", 1)])


# -- the program's output ---------------------------------------------------------------

def test_a_real_run_is_read_step_by_step():
    run = parse.parse_network(_stdout("limited-30MiB"))
    assert run.valid and run.ended and run.version == "1" and run.runtime_s == 5
    assert run.nodes == ["n1", "n2", "n3", "n4"] and len(run.endpoints) == 4
    assert [(s.kind, s.round, s.node, s.endpoint, s.exit, s.report) for s in run.steps][4] \
        == ("together", 4, "n1", "127.0.0.2:17136", 0, "t-n1.json")


@pytest.mark.parametrize("edit, kind", [
    (lambda t: "", "eof"),
    (lambda t: t.split("fsaccept-network end")[0], "eof"),
    (lambda t: t + "fsaccept-network end\n", "after-end"),
    (lambda t: t.replace("step alone 1 n2", "step alone 0 n1"), "duplicate"),
    (lambda t: t.replace("result 0 n1 0 a0-n1.json", "result 0 n9 0 a0-n9.json"), "order"),
    (lambda t: t.replace("result 0 n1 0 a0-n1.json", "result 0 n1 0 ../../etc.json"),
     "malformed"),
    (lambda t: "fsaccept-network step alone 0 n1 h 1\n" + t, "order"),
    (lambda t: t.replace("nodes n1,", "nodes n1;rm,"), "malformed"),
    (lambda t: t + "fsaccept-network version 1 runtime_s 5 servers a:1 nodes n1\n",
     "after-end"),
])
def test_an_output_it_does_not_print_is_invalid(edit, kind):
    run = parse.parse_network(edit(_stdout("limited-30MiB")))
    assert not run.valid and kind in [f.kind for f in run.findings], run.findings


def test_a_line_of_a_million_nodes_is_refused_not_read():
    line = "fsaccept-network version 1 runtime_s 5 servers a:1 nodes " + "n," * (1 << 20)
    assert "malformed" in [f.kind for f in parse.parse_network(line).findings]


# -- the rules --------------------------------------------------------------------------

def test_the_limited_run_is_valid_and_judged_on_each_node_alone():
    run = parse.parse_network(_stdout("limited-30MiB"))
    assert validity.invalid_reasons(run, _reports("limited-30MiB"), P) == []
    figures = validity.figures(_links("limited-30MiB"), _links("limited-30MiB", "together"),
                               P)
    assert figures[command.NODE_MIN] == pytest.approx(30.02, abs=0.01)
    assert figures[command.AGGREGATE] == pytest.approx(30, rel=0.15)
    assert figures[command.SLOW] == 0


def test_a_node_below_the_entrys_bandwidth_or_above_its_round_trip_is_named():
    links = _links("limited-30MiB")
    servers = validity.servers_of(parse.parse_network(_stdout("limited-30MiB")))
    slow = command.parameters("network_survey", {**ENTRY, "min_node_mib_s": 40})
    named = validity.failures(links, servers, slow)
    assert len(named) == 4 and named[0].startswith(
        "slow link: n1 to 127.0.0.2: sent 30.028 MiB/s, below the entry's 40"), named
    far = command.parameters("network_survey", {**ENTRY, "max_rtt_ms": 1})
    assert all("above the entry's 1 ms" in n for n in validity.failures(links, servers, far))


def test_one_slow_node_is_named_against_the_median():
    links = _links("loopback")
    links["n2"] = _links("limited-30MiB")["n2"]
    named = validity.failures(links, {n: "srv" for n in links}, P)
    assert named == [f"slow link: n2 to srv: sent 30.023 MiB/s, 0.02 x the median "
                     f"1,537.7 MiB/s: below 0.20 x"], named


def test_what_could_not_be_measured_is_invalid_naming_the_node_and_endpoint():
    run = parse.parse_network(_stdout("refused"))
    reasons = validity.invalid_reasons(run, _reports("refused"), P)
    assert "n1 to 127.0.0.2:17180 (alone): not measured (iperf3: unable to connect to " \
           "server: Connection refused)" in reasons
    assert len([r for r in reasons if "not measured" in r]) == 8


@pytest.mark.parametrize("edit, words", [
    (lambda t: t.replace("runtime_s 5", "runtime_s 2"), "ran 2 s per step"),
    (lambda t: t.replace("step together 4 n4 127.0.0.2 17139",
                         "step together 4 n4 127.0.0.2 17136"), "one endpoint in the together round"),
    (lambda t: t.replace("step alone 3 n4", "step alone 2 n4"), "a server take two nodes"),
    (lambda t: t.replace("step together 4 n4", "step together 5 n4")
               .replace("result 4 n4", "result 5 n4"), "more than one round"),
    (lambda t: t.replace("step alone 3 n4 127.0.0.2 17136", "step alone 3 n4 10.0.0.1 5201"),
     "not an endpoint the check lists"),
    (lambda t: t.replace("nodes n1,n2,n3,n4", "nodes n1,n2,n3"), "not a node of the check"),
    (lambda t: t.replace("version 1 ", "version 9 "), "format 9, not one of 1, 2"),
])
def test_a_plan_no_network_check_makes_is_invalid(edit, words):
    run = parse.parse_network(edit(_stdout("limited-30MiB")))
    reasons = validity.invalid_reasons(run, _reports("limited-30MiB"), P)
    assert any(words in r for r in reasons), reasons


def test_declared_servers_must_be_the_ones_measured():
    run = parse.parse_network(_stdout("limited-30MiB"))
    other = command.parameters("network_survey", {**ENTRY, "servers": ["10.0.0.9"]})
    assert any("not the entry's servers and ports" in r
               for r in validity.invalid_reasons(run, _reports("limited-30MiB"), other))
    mine = command.parameters("network_survey", {**ENTRY, "servers": ["127.0.0.2"]})
    assert validity.invalid_reasons(run, _reports("limited-30MiB"), mine) == []


# -- the program, with a stand-in launcher and iperf3 -----------------------------------

def _script(path: Path, body: str) -> str:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def test_the_program_names_the_slow_node_from_the_reports_it_kept(tmp_path, capsys,
                                                                  monkeypatch):
    from fsaccept.suite import network
    # The launcher drops "-w NODE" and says which node ran; iperf3 prints a capture: n2's
    # link limited, the others the loopback.
    launcher = _script(tmp_path / "srun", 'shift 4; FSACCEPT_NODE="$1"; shift; '
                       'export FSACCEPT_NODE; exec "$@"\n')
    iperf3 = _script(tmp_path / "iperf3", f'''
case "$FSACCEPT_NODE $*" in
  *-R*) cat "{DATA}/read-loopback/r-n1.json" ;;
  n2*) cat "{DATA}/limited-30MiB/a1-n2.json" ;;
  *) cat "{DATA}/loopback/a0-n1.json" ;;
esac
''')
    monkeypatch.setattr(network, "LAUNCHER", (launcher, "-N1", "-n1", "--exact"))
    monkeypatch.setattr(network, "SAID", [])
    real = network.measure

    def measure(*args, **kw):
        return real(*args, launcher=(launcher, "-N1", "-n1", "--exact"), **kw)
    monkeypatch.setattr(network, "measure", measure)
    out = tmp_path / "out"
    code = network.main(["--in-dir", str(tmp_path), "--out", str(out), "--nodes",
                         "n1,n2,n3", "--servers", "srv", "--port", "5201", "--ports", "3",
                         "--runtime", "3", "--iperf3", iperf3])
    printed = capsys.readouterr().out
    assert code == 1, printed
    fails = [line for line in printed.splitlines() if line.startswith("FAIL: ")]
    assert fails == ["FAIL: slow link: n2 to srv: sent 30.023 MiB/s, 0.02 x the median "
                     "1,409.3 MiB/s: below 0.80 x"], printed
    assert sorted(p.name for p in out.iterdir()) == [
        "a0-n1.json", "a1-n2.json", "a2-n3.json", "r-n1.json", "r-n2.json", "r-n3.json",
        "t-n1.json", "t-n2.json", "t-n3.json"]
    assert "  receiving together: " in printed


@pytest.mark.parametrize("args, words", [
    (["--runtime", "2"], "not between 3 and 3600"),
    (["--ports", "1"], "1 server(s) x 1 port(s) for 3 nodes"),
    (["--servers", "srv;rm"], "'srv;rm' is not a host name"),
    (["--servers", "a,a"], "no server, or one named twice"),
    (["--nodes", "n1,../x"], "is not a node name"),
    (["--port", "65535", "--ports", "3"], "not ports of one host"),
])
def test_bad_input_is_refused_with_exit_2_naming_it(tmp_path, capsys, args, words):
    from fsaccept.suite import network
    base = {"--in-dir": str(tmp_path), "--out": str(tmp_path / "o"), "--nodes": "n1,n2,n3",
            "--servers": "srv", "--ports": "3", "--runtime": "5"}
    given = dict(zip(args[::2], args[1::2]))
    argv = [x for k, v in {**base, **given}.items() for x in (k, v)]
    assert network.main(argv) == 2
    assert words in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_the_program_answers_help_running_nothing(capsys):
    from fsaccept.suite import network
    with pytest.raises(SystemExit) as done:
        network.main(["--help"])
    assert done.value.code == 0 and "usage: fsaccept network" in capsys.readouterr().out


# -- the sign-off and the report ----------------------------------------------------------

def _case(name: str, root: Path, edit=None, entry=None):
    """A run report's case of NetworkSurvey over a capture, its job's output and reports
    copied to ``root`` as ReFrame keeps them."""
    p = command.parameters("network_survey", entry or ENTRY)
    alone, together = _links(name), _links(name, parse.TOGETHER)
    figures = validity.figures(alone, together, p, _links(name, parse.TOGETHER_READ))
    failed = bool(figures[command.SLOW])
    result = "fail" if failed else "pass"
    out = root / "output" / "NetworkSurvey"
    out.mkdir(parents=True, exist_ok=True)
    shutil.copy(DATA / name / "stdout.txt", out / "rfm_job.out")
    (out / "rfm_job.err").write_text("")
    for report in (DATA / name).glob("[atr]*-*.json"):
        shutil.copy(report, out / report.name)
    perf = {}
    for fig, unit in command.FIGURES.items():
        if fig not in figures:  # a capture of format 1 has no read round
            continue
        ref = command.references(p).get(fig, (0, None, None, unit))
        perf[f"local-gluster:compute:{fig}"] = [figures[fig], *ref[:3], unit, result]
    servers = validity.servers_of(parse.parse_network(_stdout(name)))
    record = {"name": "NetworkSurvey", "result": result, "perfvalues": perf,
              "fail_phase": "performance" if failed else None,
              "network_lines": parse.program_lines(_stdout(name)),
              "max_spread": p.max_spread,
              "link_figures": {n: x.mib_s for n, x in sorted(alone.items())},
              "link_servers": servers,
              "link_rtt_ms": {n: x.rtt_ms for n, x in sorted(alone.items())},
              "link_retransmits": {n: x.retransmits for n, x in sorted(alone.items())},
              "slow_links_named": "; ".join(validity.failures(alone, servers, p)),
              "outputdir": str(out)}
    if edit:
        edit(record)
    return case_of(record)


class _Reference:
    def __init__(self, **entry):
        self.entries = {"network_survey": {**ENTRY, **entry}}


def _files(root: Path) -> RunFiles:
    return RunFiles(inputs.Reader(root))


@pytest.mark.parametrize("name", ["limited-30MiB", "loopback", "read-limited-30MiB",
                                  "read-loopback"])
def test_the_sign_off_rebuilds_a_real_run_and_agrees(tmp_path, name):
    assert network_reasons(_case(name, tmp_path), SPEC, _Reference(), _files(tmp_path)) == []


def test_the_sign_off_rebuilds_the_slow_links_from_the_verified_entry(tmp_path):
    entry = {**ENTRY, "min_node_mib_s": 40}
    case = _case("limited-30MiB", tmp_path, entry=entry)
    assert network_reasons(case, SPEC, _Reference(min_node_mib_s=40), _files(tmp_path)) == []
    # The same record, the contract's KPI left out of the reference: the names disagree.
    reasons = network_reasons(case, SPEC, _Reference(), _files(tmp_path))
    assert any("slow links are recorded as" in r for r in reasons), reasons


@pytest.mark.parametrize("edit, words", [
    (lambda r: r.update(slow_links_named="slow link: n9 to srv: sent 1 MiB/s"),
     "slow links are recorded as"),
    (lambda r: r["link_figures"].update(n2=999.0), "link_figures are not"),
    (lambda r: r.update(link_servers={"n1": "elsewhere"}), "link_servers are not"),
    (lambda r: r["link_rtt_ms"].update(n1=0.001), "link_rtt_ms or link_retransmits"),
    (lambda r: r.update(max_spread=0.99), "max_spread is recorded as 0.99"),
    (lambda r: r["perfvalues"]["local-gluster:compute:network_aggregate"].__setitem__(
        0, 3000.0), "network_aggregate"),
])
def test_the_sign_off_refuses_a_record_the_reports_do_not_give(tmp_path, edit, words):
    reasons = network_reasons(_case("limited-30MiB", tmp_path, edit), SPEC, _Reference(),
                              _files(tmp_path))
    assert any(words in r for r in reasons), reasons


def test_the_sign_off_reads_each_report_it_judges(tmp_path):
    case = _case("limited-30MiB", tmp_path)
    out = tmp_path / "output" / "NetworkSurvey"
    (out / "t-n3.json").unlink()
    reasons = network_reasons(case, SPEC, _Reference(), _files(tmp_path))
    assert reasons[0] == f"evidence missing: {out / 't-n3.json'}", reasons
    (out / "t-n3.json").write_bytes(b"\x00\xff" * 100)
    assert network_reasons(case, SPEC, _Reference(), _files(tmp_path)) == [
        f"its output ({out / 'rfm_job.out'}): n3 to 127.0.0.2:17138 (together): not "
        "measured (not JSON (Expecting value: line 1 column 1 (char 0)))"]
    # The same plan prints the same lines: the output of another port's run differs.
    (out / "rfm_job.out").write_text(_stdout("refused"))
    assert network_reasons(case, SPEC, _Reference(), _files(tmp_path)) == [
        f"its network_lines are not what its output {out / 'rfm_job.out'} says"]


def test_the_components_section_has_a_row_per_node_and_one_all_at_once(tmp_path):
    case = _case("limited-30MiB", tmp_path, entry={**ENTRY, "min_node_mib_s": 40})
    rows = network_rows(SimpleNamespace(name="NetworkSurvey", case=case, verdict="FAIL"),
                        _Reference(min_node_mib_s=40, max_rtt_ms=50))
    limit = "≥ 0.20 x, ≥ 40 MiB/s, ≤ 50 ms"
    assert [(r.node, r.server, r.measured, r.of_median, r.retransmits, r.limit, r.verdict)
            for r in rows] == [
        ("n1", "127.0.0.2:17136", "30.028 MiB/s", "1.00 x", "0", limit, "FAIL"),
        ("n2", "127.0.0.2:17136", "30.023 MiB/s", "1.00 x", "0", limit, "FAIL"),
        ("n3", "127.0.0.2:17136", "30.022 MiB/s", "1.00 x", "0", limit, "FAIL"),
        ("n4", "127.0.0.2:17136", "30.028 MiB/s", "1.00 x", "0", limit, "FAIL"),
        ("all at once", "127.0.0.2:17136, 127.0.0.2:17137, 127.0.0.2:17138, "
         "127.0.0.2:17139", "29.583 MiB/s", "—", "—", "—", "PASS")]
    assert rows[0].rtt.endswith(" ms")
    invalid = network_rows(SimpleNamespace(name="T", case=case, verdict="INVALID"))
    assert {r.verdict for r in invalid} == {"INVALID"}


def test_an_entry_whose_ports_pass_65535_is_refused_by_the_reference_rules(tmp_path):
    import yaml

    from fsaccept.suite import reference
    assert registry.BENCHMARKS["network"].entry_rules is command.entry_rules
    assert command.entry_rules("tests.network_survey", {"port": 65534, "ports": 2}) == []
    data = yaml.safe_load((Path(__file__).resolve().parents[2] / "reference"
                           / "local-gluster.yaml").read_text())
    data["tests"]["network_survey"].update(port=65535, ports=4)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(Exception, match=r"tests.network_survey.ports: 4 ports from 65535 "
                                         r"pass 65535"):
        reference.load_reference(path)


# -- the read round (format 2) ------------------------------------------------------------

def test_the_read_round_gives_what_every_node_received_at_once():
    run = parse.parse_network(_stdout("read-limited-30MiB"))
    assert run.version == "2" and [s.report for s in run.of(parse.TOGETHER_READ)] == [
        f"r-n{i}.json" for i in range(1, 5)]
    assert validity.invalid_reasons(run, _reports("read-limited-30MiB"), P) == []
    read = _links("read-limited-30MiB", parse.TOGETHER_READ)
    figures = validity.figures(_links("read-limited-30MiB"),
                               _links("read-limited-30MiB", parse.TOGETHER), P, read)
    assert figures[command.READ_AGGREGATE] == pytest.approx(30.0, rel=0.02)
    # Format 1 has none: no figure, and valid.
    assert command.READ_AGGREGATE not in validity.figures(
        _links("limited-30MiB"), _links("limited-30MiB", parse.TOGETHER), P,
        _links("limited-30MiB", parse.TOGETHER_READ))


@pytest.mark.parametrize("edit, words", [
    (lambda t: "\n".join(x for x in t.splitlines() if "together_read" not in x
                         and " r-n" not in x), "the together_read steps measured 0 of"),
    (lambda t: t.replace("0 r-n2.json", "0 t-n2.json"), "not a reverse test"),
    (lambda t: t.replace("version 2 ", "version 1 "), "a read round in an output of format 1"),
    (lambda t: t.replace("step together_read 5 n4 127.0.82.8 21139",
                         "step together_read 5 n4 127.0.82.8 21138"),
     "one endpoint in the together_read round"),
])
def test_a_read_round_no_network_check_makes_is_invalid(edit, words):
    run = parse.parse_network(edit(_stdout("read-limited-30MiB")))
    reasons = validity.invalid_reasons(run, _reports("read-limited-30MiB"), P)
    assert any(words in r for r in reasons), reasons


def test_a_reverse_report_is_refused_where_the_client_sent_and_taken_where_it_received():
    text = _capture("iperf3-3.12-n2-limited-50MiB-reverse.json")
    with pytest.raises(ValueError, match="a reverse test"):
        parse.parse_iperf3(text)
    assert parse.parse_iperf3(text, reverse=True).mib_s == pytest.approx(50, rel=0.02)
    with pytest.raises(ValueError, match="not a reverse test"):
        parse.parse_iperf3(_capture("iperf3-3.12-n1-limited-50MiB.json"), reverse=True)


def test_the_sign_off_refuses_a_read_figure_left_out_or_changed(tmp_path):
    def drop(r):
        del r["perfvalues"]["local-gluster:compute:network_read_aggregate"]
    reasons = network_reasons(_case("read-limited-30MiB", tmp_path, drop), SPEC,
                              _Reference(), _files(tmp_path))
    assert any("network_read_aggregate is not recorded, but its iperf3 reports give"
               in r for r in reasons), reasons

    def change(r):
        r["perfvalues"]["local-gluster:compute:network_read_aggregate"][0] = 9000.0
    reasons = network_reasons(_case("read-limited-30MiB", tmp_path, change), SPEC,
                              _Reference(), _files(tmp_path))
    assert any("network_read_aggregate is recorded as 9000.0" in r for r in reasons), reasons


def test_the_components_section_has_a_row_of_all_nodes_receiving(tmp_path):
    case = _case("read-limited-30MiB", tmp_path)
    rows = network_rows(SimpleNamespace(name="NetworkSurvey", case=case, verdict="PASS"))
    assert [(r.node, r.verdict) for r in rows[-2:]] == [("all at once", "PASS"),
                                                        ("all at once, receiving", "PASS")]
    assert rows[-1].measured.endswith(" MiB/s") and rows[-1].value is None
