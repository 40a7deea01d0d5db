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
    from fsaccept.reporting.evidence import SessionEvidence
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
    from fsaccept.reporting.evidence import SessionEvidence, evidence_reasons
    from fsaccept.suite.reference import load_reference

    path = REPO_ROOT / "reference" / "local-gluster.yaml"
    reference = load_reference(str(path), path.read_bytes())
    spec = registry.TESTS["SemanticsProgram"]
    assert not spec.runs_job
    case = case_of({"name": "SemanticsProgram ~local-gluster:compute+openmpi",
                    "result": "pass", "perfvalues": {}})
    assert evidence_reasons(case, spec, reference.target.fstype, SessionEvidence(),
                            reference) == []
