"""The IO500 check without an io500 binary: its config file generated from the reference
entry, its place in the catalogue (opt-in: listed with ``-c checks/io500 -t io500`` only),
the fixture that never runs io500; and the sign-off's IO500 section, on a synthetic run
report built from a real one with an IO500 case made from a real io500 capture (IO500's
result files, never a measurement of this harness)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from fsaccept.benchmarks import registry
from fsaccept.benchmarks.io500 import config, parse, validity
from fsaccept.reporting import report as signoff
from fsaccept.suite import provision
from tests.conftest import capture_with_reference
from tests.unit import test_io500
from tests.unit.test_io500 import io500_captures

REPO = Path(__file__).resolve().parents[2]


# ------------------------------------------------------------------ the config file

def test_the_config_file_follows_the_entry_and_keeps_io500s_defaults_otherwise():
    p = config.parameters({"node_fraction": 1, "ranks_per_node": 2, "thresholds": {},
                           "ior_easy_block_size": "512GiB", "ior_hard_segments": 2000,
                           "mdtest_easy_files_per_rank": 5000,
                           "mdtest_hard_files_per_rank": 2000})
    text = config.config_text(p, "/lustre/fsaccept/IO500.x/io500")
    assert text.splitlines()[2:] == [
        "", "[global]", "datadir = /lustre/fsaccept/IO500.x/io500", "timestamp-datadir = FALSE",
        "resultdir = io500-results", "timestamp-resultdir = FALSE", "dataPacketType = random",
        "", "[debug]", "stonewall-time = 300",
        "", "[ior-easy]", "blockSize = 512g", "", "[ior-hard]", "segmentCount = 2000",
        "", "[mdtest-easy]", "n = 5000", "", "[mdtest-hard]", "n = 2000"]
    assert config.options(p) == ["io500.ini"]


def test_extended_mode_a_pattern_asked_and_no_sizes():
    p = config.parameters({"extended": True, "data_pattern": "timestamp", "stonewall_s": 30,
                           "datadir": "a/b"})
    text = config.config_text(p, "/t/a/b")
    assert "dataPacketType = timestamp" in text and "stonewall-time = 30" in text
    assert "[ior-easy]" not in text and "[mdtest-hard]" not in text
    assert config.options(p) == ["io500.ini", "--mode=extended"]
    assert config.deadline_s(p) == 2 * 6 * 30


@pytest.mark.parametrize("size, text", [(9920000 * 2**20, "9920000m"), (3 * 2**30, "3g"),
                                        (2**40, "1t"), (1536 * 2**10, "1536k")])
def test_sizes_are_written_as_ior_reads_them(size, text):
    assert config.ior_size(size) == text


def test_a_block_size_io500s_transfer_does_not_divide_is_refused():
    assert config.entry_errors("tests.io500", {"ior_easy_block_size": "3MiB"}) == [
        "tests.io500.ior_easy_block_size: 3MiB is not a multiple of IO500's ior-easy "
        "transferSize (2MiB): IOR would refuse the run"]
    assert config.entry_errors("tests.io500", {"ior_easy_block_size": "4MiB"}) == []


# ------------------------------------------------------------------ the catalogue

def test_io500_is_an_acceptance_test_of_the_catalogue_with_its_figures():
    spec = registry.TESTS["IO500"]
    assert (spec.role, spec.key, spec.benchmark, spec.main_figure) == (
        "acceptance", "io500", "io500", "total")
    assert {"bw", "md", "ior-easy-write", "mdtest-hard-delete", "find"} <= set(spec.figures)
    assert "timestamp" not in spec.figures and "ior-rnd4K-easy-read" not in spec.figures
    assert spec.all_tags == {"acceptance", "io500"}
    assert not registry.BENCHMARKS["io500"].extra_keys


def _listed(*args):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    # The virtualenv's own reframe (this interpreter's), with this checkout first.
    proc = subprocess.run([str(Path(sys.executable).parent / "reframe"), "-C", str(REPO / "config" / "settings.py"), "--system", "local",
                           *args, "-l"], capture_output=True, text=True, env=env, timeout=120,
                          cwd=REPO)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return proc.stdout


def test_the_check_is_opt_in_listed_with_its_directory_and_tag_only():
    """``reframe --list`` sets up nothing (no Slurm, no job): the check only loads."""
    assert "- IO500 /" in _listed("-c", str(REPO / "checks" / "io500"), "-t", "io500")
    assert "Found 0 check(s)" in _listed("-c", str(REPO / "checks"), "-t", "io500")


def test_the_binaries_fixture_looks_io500_up_and_never_runs_it():
    [line] = provision.session_commands({"benchmarks": "path"}, "local")
    assert " io500" in line and "command -v $b" in line and "--version" not in line


def test_without_a_binary_the_skip_names_where_io500_comes_from_and_how_to_declare_it():
    from fsaccept.rfm.io500 import no_binary_fix
    text = no_binary_fix("io500 not found on PATH")
    assert "prepare.sh" in text and "'io500_binary': '/path/to/io500'" in text
    assert "config/systems/<site>.py" in text


# ------------------------------------------------------------------ the sign-off

IO500_ENTRY = {"node_fraction": 0.5, "ranks_per_node": 1, "stonewall_s": 300,
               "thresholds": {"total": {"value": 1, "unit": "score"},
                              "bw": {"value": 0.1, "unit": "GiB/s"},
                              "md": {"value": 1, "unit": "kIOPS"}}}


def synthetic_run(tmp_path, capture="standard-2rank", edit_record=lambda d: None):
    """A synthetic run report: the real local-spack session, its reference copy given an
    io500 entry (every case's recorded digest follows the copy), and an IO500 case made
    from an MdtestEasy case of it and the real io500 capture's result files, judged
    INVALID as the live check judges that capture."""
    data = capture_with_reference("local-spack-accepted", tmp_path)
    ref = tmp_path / "reference.yaml"
    doc = yaml.safe_load(ref.read_text())
    doc["tests"]["io500"] = IO500_ENTRY
    ref.write_text(yaml.safe_dump(doc))
    sha = hashlib.sha256(ref.read_bytes()).hexdigest()
    cases = [c for r in data["runs"] for c in r["testcases"]]
    for c in cases:
        if c.get("reference_sha256"):
            c["reference_sha256"] = sha
    model = next(c for c in cases if c["name"].split()[0] == "MdtestEasy")
    run = parse.read_io500(io500_captures() / capture / "result", exit_status=0)
    record = run.to_dict()
    record.pop("recomputed")
    edit_record(record)
    # As the live check records it: its reasons for the capture, as read.
    reasons = "; ".join(validity.invalid_reasons(run, procs=run.procs))
    case = json.loads(json.dumps(model))
    case.update(name="IO500", display_name="IO500", unique_name="IO500",
                descr=registry.TESTS["IO500"].descr, tags=["acceptance", "io500"],
                reference_key="io500", result="fail", fail_phase="sanity",
                fail_reason="INVALID: " + reasons, invalid_reasons=reasons,
                perfvalues={}, num_tasks=run.procs, num_tasks_per_node=1,
                uuid=model["uuid"] + "-io500", io500_result=json.dumps(record),
                data_pattern="io500 timestamp (reducible; asked by the reference)",
                benchmark_version=run.version, benchmark_command="io500 io500.ini")
    for k in ("mdtest_binary", "items_per_rank", "mdtest_nodes", "mdtest_tasks"):
        case.pop(k, None)
    data["runs"][-1]["testcases"].append(case)
    for counts in (data["runs"][-1], data["session_info"]):
        counts["num_cases"] += 1
        counts["num_failures"] += 1
    return data


@pytest.fixture(autouse=True)
def _no_plots(monkeypatch):
    for name in ("figure_plot", "check_plot", "per_node_plot", "timeline_plot"):
        monkeypatch.setattr(signoff, name, lambda *a, **k: b"")


def _signoff(data, tmp_path):
    src = tmp_path / "synthetic-run-report.json"
    src.write_text(json.dumps(data))
    code = signoff.main([str(src), "--out", str(tmp_path / "out")])
    out = tmp_path / "out"
    return code, (out / "report.md").read_text().replace("\\", ""), (
        out / "report.html").read_text()


def _section(md):
    start = md.index("\n## IO500")
    return md[start:md.index("\n## ", start + 3)]


def test_the_io500_section_shows_score_phases_times_reasons_and_the_recomputed_score(tmp_path):
    code, md, html = _signoff(synthetic_run(tmp_path), tmp_path)
    assert code == 1 and "**Overall verdict: ACCEPTED**" not in md
    section = _section(md)
    assert "### IO500: INVALID" in section
    assert ("IO500 io500-isc26_v1 (standard), 2 ranks; IO500's own verdict: INVALID. "
            "Score 7.260427, BW 1.107868 GiB/s, MD 47.581283 kIOPS.") in section
    assert "stonewall time 5 s (from config.ini), IO500's rules ask for 300 s" in section
    # From the 6-decimal phase scores: the last digit may differ (io500 uses unrounded).
    assert ("| [SCORE] | TOTAL | 7.260427 | 7.260428 | agrees (within the printed "
            "precision) |") in section
    assert section.count("agrees (within the printed precision)") == 3
    assert "| ior-easy-write | BW | 0.341397 GiB/s | 1.4676 s | INVALID |" in section
    assert "| timestamp | — |" in section
    assert section.count("\n| ") - 4 == 3 + 14  # 3 score rows, 14 phase rows
    assert '<table class="io500-phases">' in html and "<h3>IO500: INVALID</h3>" in html


def test_a_score_the_phases_do_not_give_is_named_with_both_values(tmp_path):
    def edit(record):
        record["scores"]["SCORE"]["total"] = 9.5
    _, md, _ = _signoff(synthetic_run(tmp_path, edit_record=edit), tmp_path)
    section = _section(md)
    assert "| [SCORE] | TOTAL | 9.500000 | 7.260428 | MISMATCH |" in section
    assert ("[SCORE] TOTAL: result.txt says 9.500000, the phase scores give 7.260428"
            in section)


def test_a_run_that_died_is_invalid_from_its_record_alone(tmp_path):
    def edit(record):
        record["phases"] = record["phases"][:3]
        record["ended"] = False
        record["exit_status"] = 134
    _, md, _ = _signoff(synthetic_run(tmp_path, edit_record=edit), tmp_path)
    assert "the run died in phase ior-hard-write: io500 exited with status 134" in _section(md)


def test_a_figure_its_results_do_not_give_and_a_missing_record_are_invalid(tmp_path):
    data = synthetic_run(tmp_path)
    case = data["runs"][-1]["testcases"][-1]
    case.update(result="pass", fail_phase=None, fail_reason=None, invalid_reasons="",
                perfvalues={"local-spack:compute:total": [8.0, 1, -0.1, None, "score",
                                                          "pass"]})
    _, md, _ = _signoff(data, tmp_path)
    assert "total is recorded as 8.0, but its recorded IO500 results give 7.260427" in md
    assert "IO500 marked [SCORE] INVALID" in _section(md)  # the pass is judged again
    case.pop("io500_result")
    _, md, _ = _signoff(data, tmp_path)
    assert "evidence missing: no io500_result, which the IO500 check records" in md


def test_without_the_captures_a_test_that_needs_them_skips_with_the_reason(tmp_path,
                                                                         monkeypatch):
    """As test_io500.py's do: where ../shared/captures is absent (hidden here)."""
    monkeypatch.setattr(test_io500, "CAPTURES", None)
    with pytest.raises(pytest.skip.Exception, match="the IO500 captures are absent"):
        synthetic_run(tmp_path)


def test_the_example_lustre_sites_io500_config():
    """The example Lustre site's io500: entry as its config file (no Lustre here: ReFrame's
    --dry-run there stops at the target guard, /lustre/scratch/acceptance does not exist)."""
    import yaml
    root = Path(__file__).resolve().parents[2]
    entry = yaml.safe_load((root / "reference" / "example-lustre.yaml").read_text())["tests"]["io500"]
    text = config.config_text(config.parameters(entry),
                              "/lustre/scratch/acceptance/fsaccept/IO500.x/io500")
    assert "stonewall-time = 300" in text and "dataPacketType = random" in text
    assert "blockSize = 1t" in text and "datadir = /lustre/scratch/acceptance/fsaccept/" in text
    assert config.deadline_s(config.parameters(entry)) >= 4 * 300


def test_the_io500_dry_run_prints_the_config_and_the_command_and_runs_nothing(capsys):
    from fsaccept.cli import main
    root = Path(__file__).resolve().parents[2] / "reference"
    assert main(["reference", str(root / "example-lustre.yaml"), "--io500-dry-run"]) == 0
    out = capsys.readouterr().out
    assert "datadir = /lustre/scratch/acceptance/fsaccept/IO500.<run>/io500" in out
    assert "stonewall-time = 300" in out and out.rstrip().endswith(
        "srun --distribution=block <io500_binary> io500.ini")
    assert main(["reference", str(root / "local.yaml"), "--io500-dry-run"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "tests.io500: missing" in err[0]
