"""The sign-off holds a run to what the verified reference's entry asks, as the live check
derived the job from it (one function, two callers): its nodes and ranks
(``registry.placement_of``, ``placement.nodes_asked`` of the recorded partition), its
recorded command (IOR's ``ior_options``), and the job's own output (its rank lines, IOR's
header).  A lighter run relabelled with the contract's digest is never ACCEPTED.

The run directory is ``test_manifest``'s: the real ``local-spack-accepted`` run report
with each test's output beside it, edited as a hostile reviewer would."""

from __future__ import annotations

import json
from pathlib import Path

from tests.unit.test_manifest import DATA, _case, _outdir, _signoff, run  # noqa: F401


def _edit(run: Path, name: str, edit) -> dict:  # noqa: F811
    path = run / "run-report.json"
    data = json.loads(path.read_text())
    tc = _case(data, name)
    edit(tc)
    path.write_text(json.dumps(data))
    return tc


def _swap(words, old: str, new: str):
    """An IOR option's value changed in a command (a string or a list of words)."""
    if isinstance(words, str):
        return words.replace(old, new)
    at = next(i for i in range(len(words) - 1) if f"{words[i]} {words[i + 1]}" == old)
    return words[:at] + new.split() + words[at + 2:]


def _not_accepted(run: Path, capsys) -> str:  # noqa: F811
    code, md, _ = _signoff(run, capsys)
    assert code == 1 and "**Overall verdict: NOT ACCEPTED**" in md, md[:2000]
    return md


def test_two_of_four_nodes_where_the_entry_asks_all_is_invalid(run, capsys):  # noqa: F811
    def half(tc):
        tc.update(num_nodes=2, num_tasks=4, job_nodelist=["n1", "n2"])
    _edit(run, "MdtestEasy", half)
    md = _not_accepted(run, capsys)
    assert ("- MdtestEasy: INVALID (lighter than the contract: ran on 2 nodes, the verified "
            "entry tests.mdtest_easy asks 4 (node_fraction 1 of 4, rounded up)") in md, md[:2000]
    assert ("lighter than the contract: num_tasks is 4, the verified entry tests.mdtest_easy "
            "asks 8 (4 nodes x 2)") in md
    assert ("the job's node list (job_nodelist) has 2 nodes (n1, n2), the verified entry "
            "tests.mdtest_easy asks 4") in md


def test_one_rank_per_node_where_four_are_asked_is_invalid(run, capsys):  # noqa: F811
    def one_rank(tc):
        tc.update(ranks_per_node=1, num_tasks_per_node=1, num_tasks=1)
    _edit(run, "IORRandomWriteIOPS", one_rank)
    md = _not_accepted(run, capsys)
    assert ("- IORRandomWriteIOPS: INVALID (lighter than the contract: ranks_per_node is 1, "
            "the verified entry tests.ior_random_write_iops asks 4 per node") in md, md[:2000]
    assert "num_tasks is 1, the verified entry tests.ior_random_write_iops asks 4" in md


def test_a_dataset_written_for_2_s_where_the_entry_asks_60_is_invalid(run, capsys):  # noqa: F811
    """The read's dataset (a fixture): its generation_deadline_s is 60."""
    name = "IORReadDatasetGeneration ~local-spack:compute+openmpi"

    def shorter(tc):
        for key in ("benchmark_command", "executable_opts"):
            tc[key] = _swap(tc[key], "-D 60", "-D 2")
    _edit(run, name, shorter)
    md = _not_accepted(run, capsys)
    assert (f"fixture {name}: not the run the contract asks: the recorded command "
            "(benchmark_command) gives -D 2 where it asks -D 60 (tests.ior_read_bandwidth "
            "among 4 ranks); not the run the contract asks: the job's command "
            "(executable_opts) gives -D 2 where it asks -D 60") in md, md[:3000]


def test_another_transfer_size_is_invalid_in_the_record_and_in_the_output(run, capsys):  # noqa: F811
    def bigger(tc):
        for key in ("benchmark_command", "executable_opts"):
            tc[key] = _swap(tc[key], "-t 1m", "-t 4m")
    tc = _edit(run, "IORWriteBandwidth", bigger)
    out = _outdir(run, "IORWriteBandwidth") / "rfm_job.out"
    out.write_text(out.read_text().replace(" -t 1m ", " -t 4m ", 1))  # its Command line
    assert " -t 4m " in tc["benchmark_command"]
    md = _not_accepted(run, capsys)
    assert ("- IORWriteBandwidth: INVALID (not the run the contract asks: the recorded "
            "command (benchmark_command) gives -t 4m where it asks -t 1m "
            "(tests.ior_write_bandwidth among 4 ranks)") in md, md[:2000]
    assert (f"not the run the contract asks: its output's own header ({out}) prints -t 4m; "
            "the verified entry tests.ior_write_bandwidth asks -t 1m") in md


def test_an_output_of_fewer_tasks_and_nodes_than_the_record_is_invalid(run, capsys):  # noqa: F811
    """The record left as the contract asks; the job's own output shows a lighter run:
    IOR's header and the job's rank lines."""
    out = _outdir(run, "IORWriteBandwidth") / "rfm_job.out"
    text = out.read_text()
    text = text.replace("tasks               : 4", "tasks               : 2").replace(
        "nodes               : 4", "nodes               : 2")
    text = "".join(line for line in text.splitlines(True)
                   if not line.startswith("fsaccept-rank "))  # the job's own rank lines
    out.write_text("fsaccept-rank 0 n1\nfsaccept-rank 1 n2\n" + text)
    md = _not_accepted(run, capsys)
    assert (f"lighter than the contract: its output ({out}) shows 2 ranks on 2 nodes (n1, "
            "n2), the verified entry tests.ior_write_bandwidth asks 4 on 4") in md, md[:2000]
    assert (f"lighter than the contract: its output's own header ({out}) prints 2 tasks, 2 "
            "nodes; the verified entry tests.ior_write_bandwidth asks 4 tasks, 4 nodes") in md


def test_a_run_with_its_own_outputs_stays_accepted(run, capsys):  # noqa: F811
    code, md, _ = _signoff(run, capsys)
    assert code == 0 and "**Overall verdict: ACCEPTED**" in md, md[:2000]
    assert "the contract" not in md


def test_a_two_node_semantics_run_where_the_entry_asks_four_is_invalid(tmp_path):
    """A real run of the semantics program on 2 nodes (``tests/data/semantics/two-names``),
    its record made that of a 4-node partition whose verified reference
    (``reference/local-gluster.yaml``) asks node_fraction 1.0: one rank per node, as its
    record's placement says."""
    from fsaccept.core.paths import REPO_ROOT
    from fsaccept.reporting.signoff.common import SessionEvidence
    from fsaccept.reporting.runreport import record_problems
    from fsaccept.suite.reference import load_reference
    from tests.unit.test_semantics import _Run, _text

    job = _Run(tmp_path)
    text = _text("two-names")
    job.case(text)  # its run directory: the job's own output
    path = REPO_ROOT / "reference" / "local-gluster.yaml"
    reference = load_reference(str(path), path.read_bytes())
    placed = dict(num_nodes=2, num_tasks=2, num_tasks_per_node=1, ranks_per_node=1,
                  partition_nodes=4, node_fraction=1.0, job_nodelist=["n1", "n2"])
    case = _Run.record(text, "pass", 1.0, 100, None, outputdir=str(job.outputdir), **placed)
    reasons = record_problems(case, reference, SessionEvidence(files=job.files()))
    assert ("lighter than the contract: ran on 2 nodes, the verified entry tests.semantics "
            "asks 4 (node_fraction 1 of 4, rounded up)") in reasons, reasons
    assert ("lighter than the contract: num_tasks is 2, the verified entry tests.semantics "
            "asks 4 (4 nodes x 1)") in reasons
    # Recorded as the contract asks, the program's own header still says 2 ranks (its
    # rule, semantics_reasons, holds the header to num_tasks).
    honest = _Run.record(text, "pass", 1.0, 100, None, outputdir=str(job.outputdir),
                         **{**placed, "num_nodes": 4, "num_tasks": 4,
                            "job_nodelist": ["n1", "n2", "n3", "n4"]})
    reasons = record_problems(honest, reference, SessionEvidence(files=job.files()))
    assert not any("lighter than the contract" in r for r in reasons), reasons
    assert any(r.startswith("the program ran ranks, ") and "(2, 20, " in r
               and "(4, 20, " in r for r in reasons), reasons


def test_the_semantics_programs_build_is_held_to_no_target_and_no_placement():
    """The build fixture (SemanticsProgram) runs no job: no target_dir, no partition.  The
    lab's local-gluster main job was NOT ACCEPTED for it ("evidence missing: no
    target_dir ...; partition_nodes 'None' ...") until the catalogue said it runs none."""
    from fsaccept.benchmarks import registry
    from fsaccept.core.paths import REPO_ROOT
    from fsaccept.reporting.case import case_of
    from fsaccept.reporting.evidence import evidence_reasons
    from fsaccept.reporting.signoff.common import SessionEvidence
    from fsaccept.suite.reference import load_reference

    path = REPO_ROOT / "reference" / "local-gluster.yaml"
    reference = load_reference(str(path), path.read_bytes())
    spec = registry.TESTS["SemanticsProgram"]
    assert not spec.runs_job
    case = case_of({"name": "SemanticsProgram ~local-gluster:compute+openmpi",
                    "result": "pass", "perfvalues": {}})
    assert evidence_reasons(case, spec, reference.target.fstype, SessionEvidence(),
                            reference) == []


# ------------------------------------------------- mdtest, md-workbench, fio (issue 49, 3)


def _header(run: Path, name: str, old: str, new: str) -> Path:  # noqa: F811
    """The job's own output of test ``name`` with ``old`` made ``new`` once (its header)."""
    out = _outdir(run, name) / "rfm_job.out"
    text = out.read_text()
    assert old in text, old
    out.write_text(text.replace(old, new, 1))
    return out


def _both(tc: dict, old: str, new: str) -> None:
    for key in ("benchmark_command", "executable_opts"):
        tc[key] = _swap(tc[key], old, new)


def test_mdtest_with_fewer_items_recorded_is_invalid(run, capsys):  # noqa: F811
    """mdtest_easy asks 1000 items per rank (-n 1000); the record says -n 200."""
    _edit(run, "MdtestEasy", lambda tc: _both(tc, "-n 1000", "-n 200"))
    md = _not_accepted(run, capsys)
    assert ("- MdtestEasy: INVALID (not the run the contract asks: the recorded command "
            "(benchmark_command) gives -n 200 where it asks -n 1000 (tests.mdtest_easy "
            "among 8 ranks); not the run the contract asks: the job's command "
            "(executable_opts) gives -n 200 where it asks -n 1000") in md, md[:3000]


def test_mdtest_with_a_tree_and_a_shorter_stonewall_recorded_is_invalid(run, capsys):  # noqa: F811
    def tree(tc):
        _both(tc, "-W 3", "-W 1")
        tc["benchmark_command"] = tc["benchmark_command"].replace(" -d ", " -z 2 -d ")
    _edit(run, "MdtestHard", tree)
    md = _not_accepted(run, capsys)
    assert ("- MdtestHard: INVALID (not the run the contract asks: the recorded command "
            "(benchmark_command) gives -W 1 where it asks -W 3; adds -z 2 "
            "(tests.mdtest_hard among 4 ranks)") in md, md[:3000]


def test_an_mdtest_output_lighter_than_its_record_is_invalid(run, capsys):  # noqa: F811
    """The record left as the contract asks; mdtest's own header says 4 tasks on 2 nodes
    and 200 items per rank."""
    out = _header(run, "MdtestEasy", "launched with 8 total task(s) on 4 node(s)",
                  "launched with 4 total task(s) on 2 node(s)")
    _header(run, "MdtestEasy", "'-n' '1000'", "'-n' '200'")
    md = _not_accepted(run, capsys)
    assert (f"- MdtestEasy: INVALID (lighter than the contract: its output's own header "
            f"({out}) prints 4 tasks, 2 nodes, -n 200; the verified entry tests.mdtest_easy "
            "asks 8 tasks, 4 nodes, -n 1000") in md, md[:3000]


def test_a_shorter_md_workbench_is_invalid_in_the_record_and_in_the_output(run, capsys):  # noqa: F811
    """md_workbench asks 100 objects per set (-I 100) and 2 iterations (-R 2)."""
    def shorter(tc):
        _both(tc, "-I 100", "-I 10")
        _both(tc, "-R 2", "-R 1")
    _edit(run, "MdWorkbench", shorter)
    out = _header(run, "MdWorkbench", '"-I" "100"', '"-I" "10"')
    md = _not_accepted(run, capsys)
    assert ("- MdWorkbench: INVALID (not the run the contract asks: the recorded command "
            "(benchmark_command) gives -I 10 where it asks -I 100; gives -R 1 where it asks "
            "-R 2 (tests.md_workbench among 8 ranks)") in md, md[:3000]
    assert (f"not the run the contract asks: its output's own header ({out}) prints -I 10; "
            "the verified entry tests.md_workbench asks -I 100") in md


def test_a_fio_command_recorded_shorter_is_invalid(run, capsys):  # noqa: F811
    """fio_fsync asks runtime_s 3 and 64 MiB per node."""
    def shorter(tc):
        tc["benchmark_command"] = tc["benchmark_command"].replace(
            "--runtime=3", "--runtime=1").replace("--size=67108864", "--size=4194304")
    _edit(run, "FioFsync", shorter)
    md = _not_accepted(run, capsys)
    assert ("- FioFsync: INVALID (not the run the contract asks: the recorded command "
            "(benchmark_command) gives --size=4194304 where it asks --size=67108864; gives "
            "--runtime=1 where it asks --runtime=3 (tests.fio_fsync among 4 ranks)") in md, \
        md[:3000]


def _report(run: Path, name: str, node: str, edit) -> Path:  # noqa: F811
    path = _outdir(run, name) / f"fio-{node}.json"
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data, indent=2))
    return path


def test_fio_reports_of_a_lighter_run_are_invalid(run, capsys):  # noqa: F811
    """The record left as the contract asks; the nodes' own fio reports (real captures)
    say another runtime, block size, file size, queue depth and direct."""
    def shorter(data):
        data["jobs"][0]["job options"].update(runtime="1", size="16777216")
    paths = [_report(run, "FioRandomReadDirect", node, shorter) for node in ("n1", "n2")]
    one = _report(run, "FioRandomReadDirect", "n3", lambda d: d["jobs"][0]["job options"]
                  .update(bs="65536", iodepth="1", direct="0"))
    md = _not_accepted(run, capsys)
    assert ("- FioRandomReadDirect: INVALID (not the run the contract asks: the report of "
            f"n1, n2 (2 node reports in {paths[0].parent}) gives --size=16777216 where it "
            "asks --size=134217728; gives --runtime=1 where it asks --runtime=3 "
            "(tests.fio_randread_direct); not the run the contract asks: the report of n3 "
            f"({one}) gives --bs=65536 where it asks --bs=4096; gives --direct=0 where it "
            "asks --direct=1; gives --iodepth=1 where it asks --iodepth=16 "
            "(tests.fio_randread_direct)") in md, md[:3000]


def test_an_interference_test_is_held_by_its_record_not_by_a_command_of_its_own():
    """Its victims and aggressors run as two groups of steps: the rank lines of its
    output are one group's.  Its record (rebuilt from its kept files) holds it; the
    contract's command rules pass it by.  A real lab main job on local-gluster was NOT
    ACCEPTED: 'lighter than the contract: its output shows 2 ranks on 2 nodes, the
    verified entry tests.fio_interference asks 4 on 4'."""
    import yaml

    from fsaccept.benchmarks import registry
    from fsaccept.reporting.signoff import contract
    from fsaccept.suite.reference import REFERENCE_DIR
    spec = registry.TESTS["FioInterference"]
    entry = yaml.safe_load((REFERENCE_DIR / "local-gluster.yaml").read_text())["tests"][
        spec.key]
    fio = registry.BENCHMARKS[spec.benchmark]
    assert fio.contract_options(spec, entry, 4, []) is None
    assert contract.contract_argv(spec, fio, entry, 4, []) == (None, "")
    # The contract's command and output rules are never asked (they raised here before).
    from types import SimpleNamespace

    class Case(dict):
        job = SimpleNamespace(nodelist=["n1", "n2", "n3", "n4"])

    def asked(*_):
        raise AssertionError("a command rule was asked of an interference test")

    reference = SimpleNamespace(entries={spec.key: entry}, node_rounding="up")
    saved = contract._command_contract, contract._output_contract
    contract._command_contract = contract._output_contract = asked
    try:
        fraction, per_node = registry.placement_of(spec, entry)
        contract.contract_reasons(Case(partition_nodes=4, num_nodes=4, num_tasks=4 * per_node,
                                       node_fraction=fraction), spec, reference)
    finally:
        contract._command_contract, contract._output_contract = saved
    direct = registry.TESTS["FioRandomReadDirect"]
    assert fio.contract_options(direct, {"node_fraction": 1.0, "file_size": "64MiB",
                                         "runtime_s": 3, "outlier_fraction": 0}, 4, [])
