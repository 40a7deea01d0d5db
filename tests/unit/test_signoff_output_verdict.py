"""The sign-off judges IOR's, mdtest's and md-workbench's verdict again from the job's own
output (``rfm_job.out``), by the live check's rules (``Benchmark.output_reasons``: the
benchmark's validity functions on the parsed output, the ranks' placement), and requires
what the live check records of that output (``node_mounts``, ``servers_after``,
``job_fstype``, ``rank_map``) to be what the run report records.  A run whose own output
the live check calls INVALID is never ACCEPTED because its run report says pass.

The run directory is ``test_manifest``'s: the real ``local-spack-accepted`` run report
(every test passed) with each test's output beside it, a real capture between the job's
own lines.  Each test makes one output what a job the live check found INVALID printed
(a real capture edited as that job's would be), and leaves the run report saying pass,
or edits it as a hostile user would to match."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.unit.test_manifest import DATA, _case, _outdir, _signoff, run  # noqa: F401


def _spoil(run: Path, name: str, edit) -> None:  # noqa: F811
    out = _outdir(run, name) / "rfm_job.out"
    text = out.read_text()
    spoiled = edit(text)
    assert spoiled != text
    out.write_text(spoiled)


def _record(run: Path, name: str, **fields) -> None:  # noqa: F811
    path = run / "run-report.json"
    data = json.loads(path.read_text())
    _case(data, name).update(fields)
    path.write_text(json.dumps(data))


def _invalid(run: Path, capsys, name: str) -> str:  # noqa: F811
    """The test's verdict line, the report NOT ACCEPTED."""
    code, md, _ = _signoff(run, capsys)
    assert code == 1 and "**Overall verdict: NOT ACCEPTED**" in md, md[:2000]
    [line] = [ln for ln in md.splitlines() if ln.startswith(f"- {name}: ")]
    assert line.startswith(f"- {name}: INVALID ("), line
    return line


ERROR_IOR = ('ERROR: open64("/x", 66, 0664) failed, errno 2, No such file or directory '
             '(aiori-POSIX.c:412)')


def test_an_ior_error_line_is_invalid_in_the_live_check_s_words(run, capsys):  # noqa: F811
    _spoil(run, "IORWriteBandwidth",
           lambda t: t.replace("Summary of all tests:", ERROR_IOR + "\nSummary of all tests:"))
    line = _invalid(run, capsys, "IORWriteBandwidth")
    assert re.search(r"INVALID \(its output \(rfm_job\.out\): line \d+: "
                     + re.escape(ERROR_IOR) + r"\)$", line), line


def test_an_ior_output_cut_short_or_holding_two_runs_is_invalid(run, capsys):  # noqa: F811
    _spoil(run, "IORWriteBandwidth", lambda t: t[:t.index("Summary of all tests:")])
    _spoil(run, "IORSharedFileWrite", lambda t: t.replace(
        "fsaccept-info benchmark_ended", (DATA / "ior" / "dummy-stonewall.txt").read_text()
        + "fsaccept-info benchmark_ended"))
    code, md, _ = _signoff(run, capsys)
    assert code == 1 and "**Overall verdict: NOT ACCEPTED**" in md
    # Its figures are none, too (the figures' own rebuild says so first).
    [cut] = [ln for ln in md.splitlines() if ln.startswith("- IORWriteBandwidth: INVALID (")]
    assert ("its output (rfm_job.out): no 'Summary of all tests:' table: output truncated or "
            "run aborted; its output (rfm_job.out): no 'Finished' line: output truncated or "
            "run aborted") in cut, cut
    assert re.search(r"- IORSharedFileWrite: INVALID \(its output \(rfm_job\.out\): line "
                     r"\d+: a second IOR run starts here: the output holds more than one run",
                     md), md[:3000]


def test_a_known_bad_ior_version_is_invalid(run, capsys):  # noqa: F811
    """IOR 3.2.1 (``fsaccept/data/known_bad_versions.yaml``: before 3.3.0, bandwidth)."""
    _spoil(run, "IORWriteBandwidth", lambda t: t.replace("IOR-4.0.0:", "IOR-3.2.1:"))
    _record(run, "IORWriteBandwidth", benchmark_version="IOR-4.0.0")
    assert ("INVALID (its output (rfm_job.out): ior 3.2.1 has a known bug affecting "
            "bandwidth: after a stonewall, the wear-out phase resumed at the wrong offset") \
        in _invalid(run, capsys, "IORWriteBandwidth")


def test_an_mdtest_error_line_a_cut_output_or_two_runs_are_invalid(run, capsys):  # noqa: F811
    _spoil(run, "MdtestEasy", lambda t: t.replace(
        "SUMMARY rate:", "ERROR: mdtest: cannot stat file /x (mdtest.c:555)\nSUMMARY rate:", 1))
    _spoil(run, "MdtestHard", lambda t: t[:t.index("SUMMARY rate:")])
    twice = (DATA / "md-workbench" / "basic.txt").read_text()
    _spoil(run, "MdWorkbench", lambda t: t.replace(
        "fsaccept-info benchmark_ended", twice + "fsaccept-info benchmark_ended"))
    code, md, _ = _signoff(run, capsys)
    assert code == 1 and "**Overall verdict: NOT ACCEPTED**" in md
    assert re.search(r"- MdtestEasy: INVALID \(its output \(rfm_job\.out\): line \d+: "
                     r"ERROR: mdtest: cannot stat file /x \(mdtest\.c:555\)\)", md), md[:3000]
    [cut] = [ln for ln in md.splitlines() if ln.startswith("- MdtestHard: INVALID (")]
    assert ("its output (rfm_job.out): no 'SUMMARY rate' table: output truncated or run "
            "aborted; its output (rfm_job.out): no '-- finished at' line: output truncated "
            "or run aborted") in cut, cut
    assert re.search(r"- MdWorkbench: INVALID \(.*its output \(rfm_job\.out\): line \d+: a "
                     r"second md-workbench run in the same output: which one is meant\?", md), \
        md[:3000]


def test_ranks_not_in_blocks_are_invalid_even_with_the_rank_map_edited_to_match(run, capsys):  # noqa: F811
    """8 ranks on 4 nodes placed round-robin (Slurm's cyclic distribution), and the run
    report's rank map made the output's."""
    cyclic = "".join(f"fsaccept-rank {r} n{r % 4 + 1}\n" for r in range(8))
    _spoil(run, "IORSharedFileWrite",
           lambda t: re.sub(r"(?m)^fsaccept-rank .*\n", "", t).replace(
               "fsaccept-info fstype", cyclic + "fsaccept-info fstype"))
    _record(run, "IORSharedFileWrite", rank_map="n1:0,n2:1,n3:2,n4:3,n1:4,n2:5,n3:6,n4:7")
    assert _invalid(run, capsys, "IORSharedFileWrite") == (
        "- IORSharedFileWrite: INVALID (its output (rfm_job.out): ranks were not placed in "
        "blocks of 2 per node (n1:0,n2:1,n3:2,n4:3,n1:4,n2:5,n3:6,n4:7): -C would not move "
        "readers off-node)")


def test_a_rank_line_missing_is_invalid(run, capsys):  # noqa: F811
    _spoil(run, "MdtestEasy", lambda t: t.replace("fsaccept-rank 5 n3\n", ""))
    # The contract's rule (the ranks the output shows) and the live check's (blocks).
    assert re.sub(r"its output \(\S.*?/rfm_job\.out\)", "its output (PATH)",
                  _invalid(run, capsys, "MdtestEasy")) == (
        "- MdtestEasy: INVALID (lighter than the contract: its output (PATH) shows 7 ranks "
        "on 4 nodes (n1, n2, n3, n4), the verified entry tests.mdtest_easy asks 8 on 4; "
        "its output (rfm_job.out): ranks were not placed in blocks "
        "of 2 per node (n1:0-1,n2:2-3,n3:4,n4:6-7): -N 1 would not move stat and read to "
        "another node; rank_map is recorded as 'n1:0-1,n2:2-3,n3:4-5,n4:6-7', but its output "
        "(rfm_job.out) gives 'n1:0-1,n2:2-3,n3:4,n4:6-7')")


def test_a_tmpfs_job_or_node_is_invalid(run, capsys):  # noqa: F811
    _spoil(run, "IORWriteBandwidth",
           lambda t: t.replace("fsaccept-info fstype ext4", "fsaccept-info fstype tmpfs"))
    _spoil(run, "MdtestEasy", lambda t: t.replace("fsaccept-node-check n3 ok ext4 / /dev/vda",
                                                  "fsaccept-node-check n3 ok tmpfs /dev/shm tmpfs"))
    code, md, _ = _signoff(run, capsys)
    assert code == 1 and "**Overall verdict: NOT ACCEPTED**" in md
    assert re.search(r"- IORWriteBandwidth: INVALID \(job_fstype is recorded as 'ext4', but its "
                     r"output \(rfm_job\.out\) gives 'tmpfs'; job_fstype: \S+ is on tmpfs where "
                     r"the job ran, ext4 was expected: is the file system mounted there\?\)",
                     md), md[:3000]
    assert ("- MdtestEasy: INVALID (node_mounts is recorded as 'n1,n2,n3,n4: ext4 / /dev/vda', "
            "but its output (rfm_job.out) gives 'n1,n2,n4: ext4 / /dev/vda; n3: tmpfs /dev/shm "
            "tmpfs'; node n3 saw the target on tmpfs (/dev/shm), not on ext4 (/))") in md, \
        md[:3000]


def test_a_server_down_after_the_benchmark_is_invalid(run, capsys):  # noqa: F811
    down = "down GlusterFS client not connected to brick n1:/bricks/b1"
    _spoil(run, "MdWorkbench", lambda t: t + f"fsaccept-servers n2 {down}\n")
    assert _invalid(run, capsys, "MdWorkbench") == (
        f"- MdWorkbench: INVALID (servers_after is recorded as '', but its output "
        f"(rfm_job.out) gives 'n2: {down}'; the file system was degraded when the benchmark "
        f"ended: node n2: {down.removeprefix('down ')}; evidence missing: node n1,n3,n4 of "
        "the job gave no answer of the server probe after the benchmark)")
