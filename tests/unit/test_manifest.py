"""A tamper-evident run (issue 28): ``fsaccept manifest write`` digests the run report,
every file of the tests' directories and the reference file; ``fsaccept report`` verifies
it and the optional SSH signature (Integrity row), and a file changed, missing or added
keeps the verdict from ACCEPTED, naming the file.

The run directory is built in tmp_path from a real run report of this project
(``local-spack-accepted.json``, scripts/acceptance on the emulated cluster, ACCEPTED),
its recorded paths moved into it, its tests' output directories holding real benchmark
captures (``tests/data/ior``, ``tests/data/fio``).  The run directory's name holds
blanks and shell characters."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
from pathlib import Path
from unittest import mock

import pytest

from fsaccept import cli
from fsaccept.benchmarks import registry
from fsaccept.benchmarks.fio import command as fio_command
from fsaccept.benchmarks.fio import figures as fio_figures
from fsaccept.benchmarks.fio import parse as fio_parse
from fsaccept.core import servers
from fsaccept.rfm.jobscript import NODE_CHECK_MARKER, RANK_MARKER
from fsaccept.reporting import manifest, plots
from fsaccept.reporting import report as signoff
from fsaccept.suite.reference import load_reference

DATA = Path(__file__).resolve().parent.parent / "data"
RECORDED = "/work/main/results/local-spack-20261125T004349-DiB7"
SSH_KEYGEN = shutil.which("ssh-keygen")
needs_ssh_keygen = pytest.mark.skipif(
    SSH_KEYGEN is None, reason="ssh-keygen not installed (Debian: openssh-client, which "
                               "scripts/setup installs): signatures cannot be tested")


@pytest.fixture(autouse=True)
def _no_plots(monkeypatch):
    """The verdict and the Integrity row are under test, not the plots."""
    for name in ("figure_plot", "check_plot", "per_node_plot"):
        monkeypatch.setattr(signoff, name, lambda *a, **k: b"")


def _cases(data: dict) -> list[dict]:
    return [c for r in data["runs"] for c in r["testcases"]]


def _own_figures(tc: dict, output: str, ref: Path | None = None) -> None:
    """A test's figures made those its output gives (the sign-off rebuilds IOR's,
    mdtest's and md-workbench's from it: a foreign output would make the test INVALID),
    and the variables the live check records of it (IOR's per-node figures, with the
    reference file ``ref``'s entry)."""
    spec = registry.TESTS.get(registry.class_of_case(tc["name"]))
    bench = registry.BENCHMARKS.get(spec.benchmark) if spec is not None else None
    if bench is None or bench.output_figures is None:
        return
    given, _ = bench.output_figures(output, spec)
    for key, values in (tc.get("perfvalues") or {}).items():
        name = key.rsplit(":", 1)[-1]
        if name in given:
            values[0] = given[name]
    if getattr(bench, "output_reasons", None) is not None and ref is not None:
        entry = load_reference(str(ref), ref.read_bytes()).entries.get(spec.key)
        tc.update(bench.output_reasons(output, "", spec, entry, tc.get("ranks_per_node"))[1])


def job_lines(tc: dict) -> tuple[str, str]:
    """The job's own lines a test case's record was read from, as the job prints them
    (``rfm_job.out`` of a real job: ``tests/data/ior/checkpoint-write-job.txt``): each
    node's answer to the mount check, the file-system type, where each rank ran; then,
    after the benchmark, its exit status and the nodes' answers on the servers."""
    def each(groups: str) -> list[tuple[str, str]]:
        return [(node, answer) for answer, nodes in (servers.ungrouped(groups) or {}).items()
                for node in nodes]

    before = [f"{NODE_CHECK_MARKER} {node} ok {answer}"
              for node, answer in each(tc.get("node_mounts") or "")]
    if tc.get("job_fstype"):
        before.append(f"fsaccept-info fstype {tc['job_fstype']}")
    for part in filter(None, (tc.get("rank_map") or "").split(",")):
        node, ranks = part.split(":")
        first, _, last = ranks.partition("-")
        before += [f"{RANK_MARKER} {r} {node}" for r in range(int(first), int(last or first) + 1)]
    after = ["fsaccept-info benchmark_ended 0"] + [
        f"{servers.MARKER} {node} {answer}" for node, answer in each(tc.get("servers_after") or "")]
    return "\n".join(before) + "\n", "\n".join(after) + "\n"


def _fio_reports(tc: dict) -> dict[str, str]:
    """A fio test's node reports (node -> fio-<node>.json), real captures of its kind
    (``tests/data/fio/<kind>-n*.json``, used again round its nodes); none for another
    test."""
    spec = registry.TESTS.get(registry.class_of_case(tc["name"]))
    if spec is None or spec.benchmark != "fio":
        return {}
    captures = sorted((DATA / "fio").glob(f"{spec.attrs['kind'].replace('_', '-')}-n*.json"))
    return {node: captures[i % len(captures)].read_text()
            for i, node in enumerate(tc["job_nodelist"])}


def _own_fio_figures(tc: dict, reports: dict[str, str], ref: Path) -> None:
    """A fio test's figures made those its node reports give (the sign-off rebuilds
    them from them, its figures those of the reference file's entry)."""
    spec = registry.TESTS[registry.class_of_case(tc["name"])]
    params = fio_command.parameters(spec.key, spec.attrs["kind"],
                                    load_reference(str(ref), ref.read_bytes()).entries[spec.key])
    specs = fio_command.figure_specs(params)
    given = fio_figures.reported_figures(fio_figures.combine(
        {node: fio_figures.node_figures(fio_parse.parse_fio(text), specs)
         for node, text in reports.items()}, specs, tc["outlier_fraction"]))
    for key, values in (tc.get("perfvalues") or {}).items():
        values[0] = given[key.rsplit(":", 1)[-1]]


def _as_ran(text: str, tc: dict) -> str:
    """An IOR capture's header made the test's: its command line the one the test
    recorded, its tasks and nodes the test's (the sign-off holds the header to the
    contract: a foreign header is another run)."""
    lines = []
    for line in text.splitlines(keepends=True):
        key = line.split(":", 1)[0].rstrip()
        if key == "Command line" and tc.get("benchmark_command"):
            line = f"Command line        : {tc['benchmark_command']}\n"
        elif key in ("tasks", "nodes", "clients per node") and tc.get("num_nodes"):
            value = {"tasks": tc["num_tasks"], "nodes": tc["num_nodes"],
                     "clients per node": tc["num_tasks_per_node"]}[key]
            line = f"{key:<20}: {value}\n"
        elif key.split(" ", 1)[0] in ("write", "read") and tc.get("num_nodes") and \
                len(line.split()) > 15:  # a summary row: its #Tasks and tPN the test's
            toks = line.split()
            toks[13], toks[14] = str(tc["num_tasks"]), str(tc["num_tasks_per_node"])
            line = " ".join(toks) + "\n"
        lines.append(line)
    return "".join(lines)


def _md_as_ran(text: str, tc: dict) -> str:
    """An mdtest or md-workbench capture's header made the test's: its command line the
    one the test recorded, quoted as each prints it, and mdtest's tasks and nodes the
    test's (the sign-off holds the header to the contract)."""
    import shlex
    argv = shlex.split(tc["benchmark_command"])
    lines = []
    for line in text.splitlines(keepends=True):
        if line.startswith("Command line used: "):
            line = "Command line used: " + " ".join(
                [argv[0], *(f"'{a}'" for a in argv[1:])]) + "\n"
        elif line.startswith("Args: "):
            line = "Args: " + " ".join([argv[0], *(f'"{a}"' for a in argv[1:])]) + "\n"
        elif " was launched with " in line:
            line = (line.split(" was launched with ")[0] + f" was launched with "
                    f"{tc['num_tasks']} total task(s) on {tc['num_nodes']} node(s)\n")
        elif line.split(" tasks, ")[0].isdigit() and " tasks, " in line:
            line = f"{tc['num_tasks']} tasks, " + line.split(" tasks, ", 1)[1]
        lines.append(line)
    return "".join(lines)


def _output(tc: dict) -> str:
    """A real capture as the test's benchmark output (a fio test's: its node scripts'
    lines, each node's report beside it), between the job's own lines its record was
    read from (:func:`job_lines`)."""
    before, after = job_lines(tc)
    return before + _benchmark_output(tc) + after


#: The real IOR capture a read test of the run reads back (the others write:
#: ``dummy-stonewall``): a read that ran its deadline, a verifying read.
IOR_READS = {"IORStonewalledRead": "read-stonewalled", "IORSharedFileRead": "read-stonewalled",
             "IORRandomReadIOPS": "random-read-iops-deadline",
             "IORDataIntegrity": "data-pattern-random"}


def _benchmark_output(tc: dict) -> str:
    name = tc["name"]
    if name.startswith("IOR"):
        capture = IOR_READS.get(registry.class_of_case(name), "dummy-stonewall")
        return _as_ran((DATA / "ior" / f"{capture}.txt").read_text(), tc)
    if name.startswith("Fio"):
        return "".join(f"{fio_command.NODE_MARKER} {node} memory_kib 24683656\n"
                       f"{fio_command.NODE_MARKER} {node} exit 0\n"
                       for node in tc["job_nodelist"])
    if name.startswith("MdtestHard"):
        return _md_as_ran((DATA / "mdtest" / "hard-stonewall.txt").read_text(), tc)
    if name.startswith("Mdtest"):
        return _md_as_ran((DATA / "mdtest" / "easy.txt").read_text(), tc)
    if name.startswith("MdWorkbench"):
        return _md_as_ran((DATA / "md-workbench" / "basic.txt").read_text(), tc)
    return f"{name}: output\n"


@pytest.fixture
def run(tmp_path) -> Path:
    """The run directory (its name hostile): run-report.json with every recorded path moved
    into it, each test's output directory with rfm_job.sh, .out, .err and its benchmark
    output, one stage directory kept; the reference file outside it."""
    run_dir = tmp_path / "results" / "local-spack 20261125 $(touch pwned); 'x' *"
    run_dir.mkdir(parents=True)
    ref = tmp_path / "reference" / "local-spack.yaml"
    ref.parent.mkdir()
    shutil.copyfile(DATA / "reframe" / "local-spack-accepted.reference.yaml", ref)
    text = (DATA / "reframe" / "local-spack-accepted.json").read_text()
    data = json.loads(text)
    info = data["session_info"]
    for key in ("prefix_output", "prefix_stage"):
        info[key] = info[key].replace(RECORDED, str(run_dir))
    cmd = (DATA / "ior" / "dummy-stonewall.cmd").read_text()
    for tc in _cases(data):
        for key in ("outputdir", "stagedir"):
            tc[key] = tc[key].replace(RECORDED, str(run_dir))
        if tc.get("reference_path"):
            tc["reference_path"] = str(ref)
        out = Path(tc["outputdir"])
        out.mkdir(parents=True, exist_ok=True)
        (out / "rfm_job.sh").write_text(f"#!/bin/bash\n# {tc['name']}\n{cmd}")
        (out / "rfm_job.out").write_text(_output(tc))
        (out / "rfm_job.err").write_text("")
        _own_figures(tc, _output(tc), ref)
        reports = _fio_reports(tc)
        for node, text in reports.items():
            (out / f"fio-{node}.json").write_text(text)
            (out / f"fio-{node}.log").write_text("")
        if reports:
            _own_fio_figures(tc, reports, ref)
    stage = Path(_case(data, "IORWriteBandwidth")["stagedir"])
    stage.mkdir(parents=True)
    (stage / "ior.out").write_text(_benchmark_output({"name": "IOR"}))
    (run_dir / "run-report.json").write_text(json.dumps(data, indent=2))
    assert not (Path.cwd() / "pwned").exists()
    return run_dir


def _case(data: dict, name: str) -> dict:
    return next(c for c in _cases(data) if c["name"] == name)


def _outdir(run: Path, name: str) -> Path:
    return run / "output" / "local-spack" / "compute" / "openmpi" / name


#: What a sign-off of these tests draws for each plot: they read its verdicts and rows,
#: never a plot's pixels (tests/unit/test_plots.py and the golden reports draw them),
#: and matplotlib's drawing took 11 s of a sign-off's 16 (a PNG of one pixel).
ONE_PIXEL_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")


def _undrawn(fig) -> bytes:
    plots._pyplot().close(fig)
    return ONE_PIXEL_PNG


def _signoff(run: Path, capsys, *more: str) -> tuple[int, str, str]:
    """(exit status, report.md with Markdown's escapes removed, console); each plot a
    PNG of one pixel (ONE_PIXEL_PNG)."""
    out = run.parent / "out"
    with mock.patch.object(plots, "_png", _undrawn):
        code = signoff.main([str(run / "run-report.json"), "--out", str(out), *more])
    md = (out / "report.md").read_text().replace("\\", "")
    return code, md, capsys.readouterr().out


def _integrity_row(md: str) -> str:
    [row] = [ln for ln in md.splitlines() if ln.startswith("| Integrity |")]
    return row


def _write(run: Path, *more: str) -> None:
    assert cli.main(["manifest", "write", str(run), *more]) == 0


# --------------------------------------------------------------------------- the manifest


def test_the_manifest_lists_every_file_relative_and_verifies(run, capsys):
    _write(run)
    data = json.loads((run / manifest.MANIFEST).read_text())
    files = data["files"]
    ior = "output/local-spack/compute/openmpi/IORWriteBandwidth/"
    for name in ("rfm_job.sh", "rfm_job.out", "rfm_job.err"):
        assert ior + name in files
    assert "run-report.json" in files
    assert "stage/local-spack/compute/openmpi/IORWriteBandwidth/ior.out" in files
    # Relative to the run directory, the reference file outside it by its copy inside it
    # (the path the run read it at recorded for information).
    assert [n for n in files if os.path.isabs(n)] == []
    original = run.parent.parent / "reference" / "local-spack.yaml"
    assert data["references"] == {"reference/local-spack.yaml": str(original)}
    assert (run / "reference" / "local-spack.yaml").read_bytes() == original.read_bytes()
    # and each of the 6 fio tests' 4 nodes' fio-<node>.json and .log
    assert len(files) == 1 + 23 * 3 + 6 * 4 * 2 + 1 + 1
    code, md, console = _signoff(run, capsys)
    assert code == 0 and "**Overall verdict: ACCEPTED**" in md
    assert _integrity_row(md) == f"| Integrity | verified (manifest.json, {len(files)} files; " \
                                 "not signed) |"
    assert f"integrity: verified (manifest.json, {len(files)} files; not signed)" in console
    assert console.splitlines()[-1] == "overall verdict: ACCEPTED"
    html = (run.parent / "out" / "report.html").read_text()
    assert "<tr><th>Integrity</th><td>verified (manifest.json" in html
    assert cli.main(["manifest", "verify", str(run / "run-report.json")]) == 0


def test_a_stage_file_edited_is_incomplete_naming_it(run, capsys):
    _write(run)
    out = _outdir(run, "IORWriteBandwidth") / "rfm_job.out"
    out.write_text(out.read_text().replace("Max Write:", "Max Write: 9"))
    assert "Max Write: 9" in out.read_text()
    code, md, console = _signoff(run, capsys)
    name = "output/local-spack/compute/openmpi/IORWriteBandwidth/rfm_job.out"
    assert code == 1 and "**Overall verdict: INCOMPLETE**" in md
    assert f"- integrity: {name} changed since the manifest was written" in md
    assert _integrity_row(md) == (f"| Integrity | not verified: {name} changed since the "
                                  "manifest was written |")
    assert console.splitlines()[-1] == "overall verdict: INCOMPLETE"


def test_the_run_report_edited_is_incomplete(run, capsys):
    _write(run)
    src = run / "run-report.json"
    data = json.loads(src.read_text())
    _case(data, "IORWriteBandwidth")["perfvalues"] = _case(data, "IORWriteBandwidth")[
        "perfvalues"]  # the same figures, written again: other bytes
    src.write_text(json.dumps(data))
    code, md, _ = _signoff(run, capsys)
    assert code == 1 and "**Overall verdict: INCOMPLETE**" in md
    assert "not verified: run-report.json changed since the manifest was written" in md


def test_a_missing_and_an_added_file_are_named(run, capsys):
    _write(run)
    (_outdir(run, "FioFsync") / "rfm_job.err").unlink()
    (_outdir(run, "MdtestEasy") / "extra result.txt").write_text("1\n")
    code, md, _ = _signoff(run, capsys)
    # FioFsync's figures cannot be rebuilt without its job's output either (INVALID
    # outranks the manifest's INCOMPLETE).
    assert code == 1 and "**Overall verdict: NOT ACCEPTED**" in md
    assert (f"- FioFsync: INVALID (evidence missing: "
            f"{_outdir(run, 'FioFsync') / 'rfm_job.err'})") in md, md[:2000]
    assert "- integrity: output/local-spack/compute/openmpi/FioFsync/rfm_job.err is " \
           "missing (the manifest lists it)" in md
    assert "- integrity: output/local-spack/compute/openmpi/MdtestEasy/extra result.txt " \
           "was added since the manifest was written" in md


def test_without_a_manifest_the_verdict_is_as_today(run, capsys):
    """A plain reframe -c checks -r session: rendered, not verified."""
    _write(run)
    (run / manifest.MANIFEST).unlink()
    code, md, console = _signoff(run, capsys)
    assert code == 0 and "**Overall verdict: ACCEPTED**" in md
    assert _integrity_row(md) == "| Integrity | not verified: no manifest |"
    assert "integrity: not verified: no manifest" in console
    # Asked for (--manifest, --allowed-signers), its absence is no longer silent.
    code, md, _ = _signoff(run, capsys, "--manifest", str(run / manifest.MANIFEST))
    assert code == 1 and "**Overall verdict: INCOMPLETE**" in md


def test_a_not_accepted_run_stays_not_accepted(run, capsys):
    """A manifest that does not verify makes the verdict at most INCOMPLETE."""
    src = run / "run-report.json"
    data = json.loads(src.read_text())
    w = _case(data, "IORWriteBandwidth")
    w.update(result="fail", fail_phase="performance", fail_reason="performance: too slow")
    for where in (data["runs"][0], data["session_info"]):
        where["num_failures"] += 1
    src.write_text(json.dumps(data))
    _write(run)
    (_outdir(run, "IORWriteBandwidth") / "rfm_job.err").write_text("edited\n")
    code, md, _ = _signoff(run, capsys)
    assert code == 1 and "**Overall verdict: NOT ACCEPTED**" in md
    assert "IORWriteBandwidth/rfm_job.err changed since the manifest was written" in md


def test_a_hostile_manifest_names_no_file_outside_the_run(run, capsys):
    _write(run)
    path = run / manifest.MANIFEST
    data = json.loads(path.read_text())
    data["files"]["/etc/passwd"] = "0" * 64
    data["files"]["../../reference/local-spack.yaml"] = "0" * 64
    data["directories"].append("/etc")
    path.write_text(json.dumps(data))
    code, md, _ = _signoff(run, capsys)
    assert code == 1 and "**Overall verdict: INCOMPLETE**" in md
    assert ("/etc/passwd: named by the manifest, outside the run directory and not a "
            "reference file of the run report: not read") in md
    assert "../../reference/local-spack.yaml: a name with '..' in the manifest" in md
    assert "/etc: not a directory below the run" in md
    assert "root:" not in md


def test_file_names_with_line_breaks_stay_on_one_line(run, capsys):
    _write(run)
    odd = _outdir(run, "MdtestHard") / "a\nb $(x).txt"
    odd.write_text("x")
    code, md, console = _signoff(run, capsys)
    assert code == 1
    assert "MdtestHard/a\\nb $(x).txt was added" in console
    assert [ln for ln in console.splitlines() if ln.startswith("overall verdict:")] == [
        "overall verdict: INCOMPLETE"]


def test_a_run_directory_moved_still_verifies_and_shows_its_job_scripts(run, capsys):
    _write(run)
    moved = run.parent / "copied to the vendor"
    shutil.copytree(run, moved, symlinks=True)
    shutil.rmtree(run)
    code, md, _ = _signoff(moved, capsys)
    assert code == 0 and "verified (manifest.json" in _integrity_row(md)
    assert "# IORWriteBandwidth" in md  # its job script, read below the new place


def _moved(run: Path, tmp_path: Path) -> Path:
    """The run directory copied to a new place (as sent to a vendor), the original and
    the reference file where the run read it gone."""
    moved = tmp_path / "vendor" / "received run"
    moved.parent.mkdir()
    shutil.copytree(run, moved, symlinks=True)
    shutil.rmtree(run)
    shutil.rmtree(tmp_path / "reference")
    return moved


def test_a_run_directory_sent_elsewhere_verifies_by_its_reference_copy(run, tmp_path,
                                                                       capsys):
    """Also, bullet 2: the manifest named the reference file by its absolute path, and a
    moved run directory read "not verified: … missing"."""
    original = tmp_path / "reference" / "local-spack.yaml"
    _write(run)
    moved = _moved(run, tmp_path)
    code, md, console = _signoff(moved, capsys)
    assert code == 0 and "**Overall verdict: ACCEPTED**" in md
    assert _integrity_row(md).startswith("| Integrity | verified (manifest.json, ")
    assert (f"reference/local-spack.yaml (the run's copy of {original}) still has SHA-256 "
            "") in md and "thresholds compared with it" in md
    assert f"| Reference file | `{original}`" in md  # as the run recorded it
    assert cli.main(["manifest", "verify", str(moved / "run-report.json")]) == 0
    assert capsys.readouterr().out.startswith("integrity: verified")


def test_a_reference_copy_edited_after_the_run_is_not_verified_naming_it(run, tmp_path,
                                                                        capsys):
    _write(run)
    moved = _moved(run, tmp_path)
    copy = moved / "reference" / "local-spack.yaml"
    copy.write_text(copy.read_text().replace("value:", "value: 0 #", 1))
    code, md, console = _signoff(moved, capsys)
    assert code == 1 and "**Overall verdict: INCOMPLETE**" in md
    assert ("not verified: reference/local-spack.yaml changed since the manifest was "
            "written") in _integrity_row(md)
    assert "reference/local-spack.yaml (the run's copy of" in md
    assert "changed or is gone since the run" in md
    assert cli.main(["manifest", "verify", str(moved / "run-report.json")]) == 1
    assert ("integrity: not verified: reference/local-spack.yaml changed since the "
            "manifest was written") in capsys.readouterr().out


def test_an_older_run_directory_without_a_copy_reads_as_before(run, tmp_path, capsys):
    """A manifest written before the copies: the reference file by its absolute path."""
    original = tmp_path / "reference" / "local-spack.yaml"
    _write(run)
    path = run / manifest.MANIFEST
    data = json.loads(path.read_text())
    data["files"][str(original)] = data["files"].pop(data.pop("references") and
                                                      "reference/local-spack.yaml")
    path.write_text(json.dumps(data))
    shutil.rmtree(run / "reference")
    code, md, _ = _signoff(run, capsys)
    assert code == 0 and f"{original} still has SHA-256" in md
    assert _integrity_row(md).startswith("| Integrity | verified (manifest.json, ")
    moved = _moved(run, tmp_path)
    code, md, _ = _signoff(moved, capsys)
    assert code == 1 and (f"not verified: {original} is missing (the manifest lists it)"
                          in _integrity_row(md))


def test_writing_the_manifest_again_keeps_the_copy_and_replaces_no_other_file(run, tmp_path,
                                                                             capsys):
    _write(run)
    _write(run)  # the same copy: kept
    copy = run / "reference" / "local-spack.yaml"
    copy.write_text("someone's own file\n")
    assert cli.main(["manifest", "write", str(run)]) == 2
    err = capsys.readouterr().err
    assert f"{copy}: already there, with other bytes than the reference file" in err
    assert copy.read_text() == "someone's own file\n"


def test_writing_refuses_a_test_directory_outside_the_run(run, tmp_path, capsys):
    src = run / "run-report.json"
    data = json.loads(src.read_text())
    _case(data, "MdtestEasy")["outputdir"] = str(tmp_path)
    src.write_text(json.dumps(data))
    assert cli.main(["manifest", "write", str(run)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"fsaccept manifest: {tmp_path}: MdtestEasy's outputdir is not "
                          "below the run directory") and len(err.splitlines()) == 1
    assert not (run / manifest.MANIFEST).exists()


# --------------------------------------------------------------------------- reading safely


def test_hostile_job_scripts_are_not_read_and_the_report_says_so(run, tmp_path, capsys):
    """A symbolic link to /etc/passwd, a directory outside the run, a script over 1 MiB:
    not read, and said so; each also breaks the manifest."""
    _write(run)
    link = _outdir(run, "IORWriteBandwidth") / "rfm_job.sh"
    link.unlink()
    link.symlink_to("/etc/passwd")
    big = _outdir(run, "FioFsync") / "rfm_job.sh"
    with open(big, "ab") as fh:
        fh.truncate((1 << 20) + 1)
    src = run / "run-report.json"
    data = json.loads(src.read_text())
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "rfm_job.sh").write_text("#!/bin/bash\necho secret-outside\n")
    _case(data, "MdtestEasy")["outputdir"] = str(outside)
    src.write_text(json.dumps(data))
    code, md, _ = _signoff(run, capsys)
    # A test whose directory is outside the run: its output is not read either, and its
    # figures cannot be rebuilt (INVALID outranks the manifest's INCOMPLETE).
    assert code == 1 and "**Overall verdict: NOT ACCEPTED**" in md
    assert "- MdtestEasy: INVALID (evidence missing: " in md, md[:2000]
    assert "root:x:" not in md and "secret-outside" not in md
    assert f"{link} is a symbolic link: not read as a job script" in md
    assert "1,048,577 bytes, more than the 1,048,576 read as a job script: refused" in md
    assert f"not below the run's directory {run}: not read as a job script" in md
    # The manifest names the link (and the edited run report) and never digests /etc/passwd.
    assert ("IORWriteBandwidth/rfm_job.sh is a symbolic link: not read as a file of the run"
            in md)
    assert "run-report.json changed since the manifest was written" in md


def test_a_changed_reference_file_has_no_digest_shown(run, tmp_path, capsys):
    """Only the digest of a file that verifies is printed (the run report may name any
    file as its reference)."""
    import hashlib
    ref = tmp_path / "reference" / "local-spack.yaml"
    ref.write_text(ref.read_text() + "# edited\n")
    code, md, _ = _signoff(run, capsys)
    assert code == 1 and "changed or is gone since the run" in md
    assert hashlib.sha256(ref.read_bytes()).hexdigest() not in md


# --------------------------------------------------------------------------- signatures


def _key(tmp_path: Path, name: str) -> Path:
    key = tmp_path / "keys" / name
    key.parent.mkdir(exist_ok=True)
    subprocess.run([SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)],
                   check=True, stdin=subprocess.DEVNULL)
    return key


def _allowed(tmp_path: Path, principal: str, key: Path) -> Path:
    path = tmp_path / "keys" / f"allowed-{principal}"
    path.write_text(f"{principal} {Path(str(key) + '.pub').read_text()}")
    return path


@needs_ssh_keygen
def test_a_good_signature_names_the_signer(run, tmp_path, capsys):
    key = _key(tmp_path, "site")
    _write(run, "--sign-key", str(key), "--signer", "storage-team@site.example")
    assert (run / "manifest.json.sig").is_file()
    allowed = _allowed(tmp_path, "storage-team@site.example", key)
    code, md, console = _signoff(run, capsys, "--allowed-signers", str(allowed))
    assert code == 0 and "**Overall verdict: ACCEPTED**" in md
    assert _integrity_row(md).startswith(
        "| Integrity | verified, signed by storage-team@site.example (manifest.json, ")
    assert "integrity: verified, signed by storage-team@site.example" in console
    # Without --allowed-signers the digests verify; the report says it did not check it.
    code, md, _ = _signoff(run, capsys)
    assert code == 0 and "signature not checked: give --allowed-signers FILE" in md


@needs_ssh_keygen
def test_the_signer_is_found_when_the_manifest_names_none(run, tmp_path, capsys):
    """Signed by hand, as a site would: ssh-keygen -Y sign -n fsaccept-manifest."""
    key = _key(tmp_path, "site")
    _write(run)
    subprocess.run([SSH_KEYGEN, "-q", "-Y", "sign", "-f", str(key), "-n", manifest.NAMESPACE,
                    str(run / manifest.MANIFEST)], check=True, stdin=subprocess.DEVNULL)
    allowed = _allowed(tmp_path, "ops@site.example", key)
    code, md, _ = _signoff(run, capsys, "--allowed-signers", str(allowed))
    assert code == 0 and "verified, signed by ops@site.example" in _integrity_row(md)


@needs_ssh_keygen
def test_a_bad_signature_is_incomplete(run, tmp_path, capsys):
    site, other = _key(tmp_path, "site"), _key(tmp_path, "other")
    _write(run, "--sign-key", str(other), "--signer", "storage-team@site.example")
    allowed = _allowed(tmp_path, "storage-team@site.example", site)
    code, md, _ = _signoff(run, capsys, "--allowed-signers", str(allowed))
    assert code == 1 and "**Overall verdict: INCOMPLETE**" in md
    assert _integrity_row(md).startswith(
        "| Integrity | not verified: bad signature: manifest.json.sig does not verify the "
        "manifest as signed by 'storage-team@site.example'")


@needs_ssh_keygen
def test_a_manifest_written_again_after_signing_is_a_bad_signature(run, tmp_path, capsys):
    """A file edited and the manifest written anew to match: the digests verify, the
    site's signature does not."""
    key = _key(tmp_path, "site")
    _write(run, "--sign-key", str(key), "--signer", "ops@site.example")
    out = _outdir(run, "IORWriteBandwidth") / "rfm_job.out"  # its figures unchanged
    out.write_text(out.read_text() + "edited\n")
    _write(run, "--signer", "ops@site.example")  # the old signature stays
    allowed = _allowed(tmp_path, "ops@site.example", key)
    code, md, _ = _signoff(run, capsys, "--allowed-signers", str(allowed))
    assert code == 1 and "**Overall verdict: INCOMPLETE**" in md
    assert "not verified: bad signature" in _integrity_row(md)
    # Signing again does not overwrite a signature it did not write.
    assert cli.main(["manifest", "write", str(run), "--sign-key", str(key)]) == 2
    assert "manifest.json.sig: already there" in capsys.readouterr().err


@needs_ssh_keygen
def test_a_signature_demanded_but_absent_is_incomplete(run, tmp_path, capsys):
    key = _key(tmp_path, "site")
    _write(run)
    allowed = _allowed(tmp_path, "ops@site.example", key)
    code, md, _ = _signoff(run, capsys, "--allowed-signers", str(allowed))
    assert code == 1 and "not verified: the manifest is not signed" in _integrity_row(md)


def test_scripts_acceptance_writes_the_manifest_before_the_report():
    text = (Path(__file__).resolve().parents[2] / "scripts" / "acceptance").read_text()
    assert text.index("fsaccept manifest write \"") < text.index("fsaccept report \"")
    assert text.index('--report-file "$run_dir') < text.index("fsaccept manifest write \"")


def _tree(root: Path, skip: Path) -> dict[str, tuple[int, int]]:
    """Every entry below ``root`` but ``skip``: (mtime in ns, size)."""
    out = {}
    for here, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if Path(here, d) != skip]
        for name in dirs + files:
            st = os.lstat(Path(here, name))
            out[str(Path(here, name))] = (st.st_mtime_ns, st.st_size)
    return out


def test_rendering_and_verifying_write_nothing_outside_out(run, tmp_path, capsys):
    """The run directory inside a git checkout (results/ is): verifying the manifest and
    rendering the report leave the checkout, .git included, as they found it."""
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "add", "reference"], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "commit", "-qm", "x"], check=True, env=env)
    _write(run)
    os.utime(tmp_path / "reference" / "local-spack.yaml")  # what git status would refresh
    out = run.parent / "out"
    out.mkdir()  # --out's own creation aside
    before = _tree(tmp_path, out)
    code = signoff.write_report_context(run / "run-report.json", out, repo=tmp_path)[1]
    assert code["signoff"]["integrity"].startswith("verified (manifest.json")
    assert _tree(tmp_path, out) == before
    assert not (tmp_path / ".git" / "index.lock").exists()


def test_a_link_anywhere_on_the_way_and_a_fifo_are_refused(run, tmp_path):
    """open_below opens component by component with O_NOFOLLOW: a directory on the way
    that is a link is refused as the last component is; a FIFO does not block."""
    from fsaccept.core import inputs
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "rfm_job.sh").write_text("root:hash\n")
    (run / "linked").symlink_to(secret)
    with pytest.raises(inputs.InputError, match=r"linked is a symbolic link: not read as x$"):
        inputs.read_below(run, run / "linked" / "rfm_job.sh", 1 << 20, "x")
    with pytest.raises(inputs.InputError, match="is a symbolic link"):
        inputs.sha256_below(run, run / "linked" / "rfm_job.sh", 1 << 20, "x")
    os.mkfifo(run / "fifo")
    with pytest.raises(inputs.InputError, match="a FIFO .named pipe., not a regular file"):
        inputs.sha256_below(run, run / "fifo", 1 << 20, "x")
    with pytest.raises(inputs.InputError, match="not below the run's directory"):
        inputs.sha256_below(run, run / ".." / "x", 1 << 20, "x")


# --------------------------------------------------------------------------- one read (issue 41)


def _failed_run(run: Path) -> bytes:
    """The run report made to record a failed write (the run that was signed); returns
    the bytes it had (the passing copy)."""
    src = run / "run-report.json"
    passing = src.read_bytes()
    data = json.loads(passing)
    w = _case(data, "IORWriteBandwidth")
    w.update(result="fail", fail_phase="performance", fail_reason="performance: too slow")
    for where in (data["runs"][0], data["session_info"]):
        where["num_failures"] += 1
    src.write_text(json.dumps(data, indent=2))
    return passing


@needs_ssh_keygen
def test_the_run_report_judged_is_the_run_report_digested(run, tmp_path, capsys, monkeypatch):
    """Class 1: a failed run, signed; its run report swapped for a passing copy, which is
    swapped back once it has been parsed.  Judged from one read and digested from
    another, the passing copy's verdict was paired with the signed copy's digest:
    'verified, signed by ... ACCEPTED'.  Read once, its digest is the passing copy's."""
    from fsaccept.reporting import runreport
    passing = _failed_run(run)
    key = _key(tmp_path, "site")
    _write(run, "--sign-key", str(key), "--signer", "ops@site.example")
    src = run / "run-report.json"
    signed = src.read_bytes()
    src.write_bytes(passing)
    schema_errors = runreport._schema_errors

    def parsed_then_swapped(data):
        src.write_bytes(signed)
        return schema_errors(data)
    monkeypatch.setattr(runreport, "_schema_errors", parsed_then_swapped)
    allowed = _allowed(tmp_path, "ops@site.example", key)
    code, md, console = _signoff(run, capsys, "--allowed-signers", str(allowed))
    assert src.read_bytes() == signed  # swapped back, as the hook does
    assert code == 1 and "**Overall verdict: INCOMPLETE**" in md
    assert _integrity_row(md) == ("| Integrity | not verified: run-report.json changed since "
                                  "the manifest was written |")
    assert console.splitlines()[-1] == "overall verdict: INCOMPLETE"


def test_the_job_script_shown_is_the_job_script_digested(run, capsys, monkeypatch):
    """Class 1: a job script swapped between its digest and its display (another file
    at each open): the report showed a script the manifest never verified."""
    from fsaccept.core import inputs
    _write(run)
    script = _outdir(run, "IORWriteBandwidth") / "rfm_job.sh"
    opened = []
    open_below = inputs.open_below

    def swapped_at_the_second_open(root, path, what="input"):
        if os.path.abspath(path) == str(script):
            opened.append(what)
            if len(opened) == 2:
                script.write_text("#!/bin/bash\necho not the job that ran\n")
        return open_below(root, path, what)
    monkeypatch.setattr(inputs, "open_below", swapped_at_the_second_open)
    code, md, _ = _signoff(run, capsys)
    assert code == 0 and "verified (manifest.json" in _integrity_row(md)
    assert "# IORWriteBandwidth" in md and "not the job that ran" not in md
    assert opened == ["a job script"]  # read once, and digested from those bytes


def test_the_ceilings_shown_are_those_of_the_reference_verified(run, tmp_path, capsys,
                                                                 monkeypatch):
    """Class 1: the reference file swapped once its thresholds were read: its ceilings
    (the assessment) came from a third read, of a file nobody verified."""
    _write(run)
    ref = tmp_path / "reference" / "local-spack.yaml"
    load = signoff.load_reference

    def loaded_then_swapped(*args, **kwargs):
        out = load(*args, **kwargs)
        ref.write_text(ref.read_text() + "ceilings:\n  disk_write:\n    component: devices\n"
                       "    figures: write\n    bandwidth: {value: 1, unit: MiB/s}\n")
        return out
    monkeypatch.setattr(signoff, "load_reference", loaded_then_swapped)
    code, md, _ = _signoff(run, capsys)
    assert code == 0 and "**Overall verdict: ACCEPTED**" in md
    assert "ceilings read from it (it states no ceilings: no assessment)" in md
    assert "Performance assessment" not in md


@needs_ssh_keygen
def test_every_file_the_sign_off_uses_is_read_once(run, tmp_path, capsys, monkeypatch):
    """One read per file: the run report, the manifest, its signature, the reference
    file, a ceilings file and each job script are each opened once by the sign-off."""
    (run / "ceilings.yaml").write_text("# measured by fio\nceilings: {}\n")
    key = _key(tmp_path, "site")
    _write(run, "--include", "ceilings.yaml", "--sign-key", str(key), "--signer", "ops@x")
    allowed = _allowed(tmp_path, "ops@x", key)
    watched = {str(run / n) for n in ("run-report.json", manifest.MANIFEST, "ceilings.yaml",
                                      manifest.MANIFEST + manifest.SIGNATURE_SUFFIX)}
    watched |= {str(p) for p in run.rglob("rfm_job.sh")}
    watched.add(str(run / "reference" / "local-spack.yaml"))  # the run's copy, not the file
    opened = dict.fromkeys(watched, 0)
    original = str(tmp_path / "reference" / "local-spack.yaml")
    opened[original] = 0
    real_open = os.open

    def counting(path, flags, mode=0o777, *, dir_fd=None):
        full = (os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), path)
                if dir_fd is not None else os.path.abspath(path))
        if full in opened:
            opened[full] += 1
        return real_open(path, flags, mode, dir_fd=dir_fd)
    monkeypatch.setattr(os, "open", counting)
    code, md, _ = _signoff(run, capsys, "--allowed-signers", str(allowed), "--ceilings",
                           str(run / "ceilings.yaml"))
    monkeypatch.undo()
    assert code == 0 and "verified, signed by ops@x" in _integrity_row(md)
    assert "ceilings from" in md and "(measured by fio)" in md
    assert {p: n for p, n in opened.items() if n != 1} == {original: 0}


def test_a_test_directory_made_after_signing_is_not_covered(run, capsys):
    """Class 9: a test directory the run report names that did not exist when the run
    was signed (a stage directory ReFrame removed), made afterwards with a job script:
    the report showed that script beside 'verified'."""
    out = _outdir(run, "FioFsync")
    shutil.rmtree(out)  # no output kept for this test when the run was signed
    _write(run)
    stage = Path(_case(json.loads((run / "run-report.json").read_text()), "FioFsync")
                 ["stagedir"])
    assert not stage.exists()
    stage.mkdir(parents=True)
    (stage / "rfm_job.sh").write_text("#!/bin/bash\necho injected after signing\n")
    code, md, console = _signoff(run, capsys)
    name = "stage/local-spack/compute/openmpi/FioFsync"
    # Its figures cannot be rebuilt from that directory (INVALID outranks INCOMPLETE).
    assert code == 1 and "**Overall verdict: NOT ACCEPTED**" in md
    assert f"- FioFsync: INVALID (evidence missing: {out / 'rfm_job.out'})" in md, md[:2000]
    assert (f"- integrity: {name}: a test directory the run report names, not covered by "
            "the manifest: added since it was written") in md
    assert _integrity_row(md).startswith(f"| Integrity | not verified: {name}: a test "
                                         "directory the run report names")
    assert console.splitlines()[-1] == "overall verdict: NOT ACCEPTED"
    # Its output directory made again is not covered either.
    out.mkdir(parents=True)
    code, md, _ = _signoff(run, capsys)
    assert ("output/local-spack/compute/openmpi/FioFsync: a test directory the run report "
            "names, not covered") in md


def test_a_manifest_larger_than_a_run_needs_is_refused_unread(run, capsys):
    """Class 10: 40 MiB is more than the manifest of a 10,000-case run (25 MB): refused
    by its size before it is read (json.loads holds ~6 bytes a byte read: a 234 MB
    manifest took 1.3 GB), never parsed."""
    _write(run)
    with open(run / manifest.MANIFEST, "ab") as fh:  # sparse: nothing is written
        fh.truncate(40 << 20)
    code, md, _ = _signoff(run, capsys)
    assert code == 1 and "**Overall verdict: INCOMPLETE**" in md
    assert (f"manifest.json: {40 << 20:,} bytes, more than the "
            f"{manifest.MAX_MANIFEST_BYTES:,} read as the manifest: refused") in md


def test_a_reader_gives_the_bytes_of_its_one_read_or_refuses(run):
    """inputs.Reader: the bytes of its first read at every use, and their digest; bytes
    not kept and read again after a swap are refused, never paired with the old digest."""
    import hashlib

    from fsaccept.core import inputs
    path = run / "run-report.json"
    reads = inputs.Reader(run)
    first = reads.read(path, 1 << 30, "the run report", below=False)
    path.write_bytes(b"{}")
    assert reads.read(path, 1 << 30, "x") == first
    assert reads.sha256(path, 1 << 30, "x") == hashlib.sha256(first).hexdigest()
    reads = inputs.Reader(run)
    reads.read(path, 1 << 30, "the run report", below=False, keep=False)
    path.write_bytes(first)
    with pytest.raises(inputs.InputError, match="changed while the sign-off read it"):
        reads.read(path, 1 << 30, "the run report")
