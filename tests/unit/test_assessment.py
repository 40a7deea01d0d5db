"""Ceilings: figures as a percentage of what the hardware can do."""

from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from fsaccept.reporting import assessment as asm
from fsaccept.reporting import report as signoff
from fsaccept.reporting import runreport
from fsaccept.suite.reference import ReferenceError, load_reference

DATA = Path(__file__).resolve().parent.parent / "data" / "reframe"

CEILINGS = {
    "client_nic": {"component": "client", "per": "node",
                   "bandwidth": {"value": 100, "unit": "Gbit/s"}},
    "servers": {"component": "servers", "per": "system", "count": 4,
                "bandwidth": {"value": 5, "unit": "GB/s"},
                "iops": {"value": 100000, "unit": "IOPS"}},
    "mds": {"component": "servers", "ops": {"value": 50000, "unit": "ops/s"},
            "figures": "^file_"},
}


def test_units_convert_exactly_to_mib_per_s():
    assert asm.to_figure_unit(100, "Gbit/s", "bandwidth", "x") == float(
        Decimal(100) * Decimal(10**9) / Decimal(8 * 2**20))  # 11920.928955078125
    assert asm.to_figure_unit(100, "Gbit/s", "bandwidth", "x") == 11920.928955078125
    assert asm.to_figure_unit(1, "GiB/s", "bandwidth", "x") == 1024
    assert asm.to_figure_unit(1.048576, "MB/s", "bandwidth", "x") == 1.0


def test_the_lowest_ceiling_that_applies_and_its_component():
    ceilings = asm.parse_ceilings(CEILINGS, "ref.yaml")
    # 1 node: the client NIC (11,920.93 MiB/s) is below the servers (4 × 5 GB/s = 19,073.49).
    a = asm.assess("write_bandwidth", 5960.464477539062, "MiB/s", 1, ceilings)
    assert a.component == "client" and a.limiting == "client"
    assert a.ceiling == 11920.928955078125 and a.percent == pytest.approx(50.0)
    assert a.explanation == "1 node × 100 Gbit/s" and not a.anomaly
    # 4 nodes: the servers' aggregate is lower.
    a = asm.assess("write_bandwidth", 10000.0, "MiB/s", 4, ceilings)
    assert a.component == "servers" and a.explanation == "4 × 5 GB/s"
    assert a.ceiling == pytest.approx(4 * 5e9 / 2**20)
    assert "% of the servers ceiling" in a.note


def test_a_figure_above_its_ceiling_is_an_anomaly_probably_cache():
    ceilings = asm.parse_ceilings(CEILINGS)
    a = asm.assess("read_iops", 600000.0, "IOPS", 2, ceilings)  # 4 servers × 100,000
    assert a.anomaly and a.limiting == "cache" and a.percent == pytest.approx(150.0)
    assert a.note.startswith("ANOMALY: 150.0 % of the servers ceiling")
    assert "probably served from a cache" in a.note


def test_ceilings_apply_by_unit_and_figure_pattern():
    ceilings = asm.parse_ceilings(CEILINGS)
    assert asm.assess("file_creation", 100.0, "ops/s", 1, ceilings).ceiling == 50000
    assert asm.assess("dir_creation", 100.0, "ops/s", 1, ceilings) is None
    assert asm.assess("fsync_4k_sync_lat_p99_us", 10.0, "us", 1, ceilings) is None
    assert asm.assess("write_bandwidth", None, "MiB/s", 1, ceilings) is None
    # A per-node ceiling without a node count does not apply.
    only_nic = asm.parse_ceilings({"nic": CEILINGS["client_nic"]})
    assert asm.assess("write_bandwidth", 1.0, "MiB/s", None, only_nic) is None


@pytest.mark.parametrize("entry,message", [
    ({"component": "cpu", "iops": {"value": 1, "unit": "IOPS"}}, "ceilings.x.component"),
    ({"component": "servers", "bandwidth": {"value": 1, "unit": "Mbit/s"}},
     r"ceilings.x.bandwidth.unit: 'Mbit/s' is not a bandwidth unit"),
    ({"component": "servers", "iops": {"value": 1, "unit": "MiB/s"}},
     r"ceilings.x.iops.unit: 'MiB/s'; iops ceilings are in IOPS"),
    ({"component": "servers"}, "ceilings.x: states no ceiling"),
    ({"component": "servers", "per": "rack", "ops": {"value": 1, "unit": "ops/s"}},
     "ceilings.x.per"),
    ({"component": "servers", "count": 0, "ops": {"value": 1, "unit": "ops/s"}},
     "ceilings.x.count"),
    ({"component": "servers", "figures": "(", "ops": {"value": 1, "unit": "ops/s"}},
     "ceilings.x.figures: not a regular expression"),
    ({"component": "servers", "speed": 3, "ops": {"value": 1, "unit": "ops/s"}},
     "ceilings.x: unknown key"),
])
def test_bad_ceilings_name_file_and_key(entry, message):
    with pytest.raises(asm.CeilingError, match=message) as err:
        asm.parse_ceilings({"x": entry}, "ref.yaml")
    assert str(err.value).startswith("ref.yaml: ")


def test_reference_schema_accepts_ceilings_and_nightly_and_rejects_bad_ones(tmp_path):
    raw = yaml.safe_load((DATA / "ior-fail.reference.yaml").read_text())
    raw["ceilings"] = CEILINGS
    raw["nightly"] = {"sessions": 5, "tolerance": 0.15,
                      "tests": {"ior_write_bandwidth": {"segments": 64}}}
    path = tmp_path / "r.yaml"
    path.write_text(yaml.safe_dump(raw))
    load_reference(path)
    assert len(asm.ceilings_from_reference_file(path)) == 3
    raw["ceilings"]["servers"]["bandwidth"]["unit"] = "furlongs"
    path.write_text(yaml.safe_dump(raw))
    with pytest.raises(ReferenceError, match="ceilings.servers.bandwidth.unit"):
        load_reference(path)


def test_report_shows_percentages_with_ceilings():
    report = runreport.load_run_report(DATA / "ior-pass.json")
    ceilings = asm.parse_ceilings({
        "disk_write": {"component": "devices", "figures": "write",
                       "bandwidth": {"value": 1000, "unit": "MiB/s"},
                       "iops": {"value": 50000, "unit": "IOPS"}}})
    ctx = signoff.build_context(report, ceilings=ceilings, plots=False)
    md = signoff.render(ctx, "report.md.j2")
    assert "## Performance assessment" in md
    # 1,987.01 MiB/s written against a 1,000 MiB/s disk: faster than the hardware.
    assert ("| IORWriteBandwidth | write_bandwidth | 1,987.0 MiB/s | 1,000 MiB/s"
            " | 198.7 % | cache |") in md
    assert "| IORRandomWriteIOPS | write_iops | 31,618 IOPS | 50,000 IOPS" in md
    assert "63.2 % | devices |" in md
    assert "IORStonewalledRead | read_bandwidth" not in md.split("## Tests")[0]


def test_ceilings_block_from_measured_values():
    block = asm.ceilings_block({"write": 1700.5, "read": 950.0, "randwrite": 30000.0,
                                "randread": 40000.0})
    assert block["disk_write"] == {"component": "devices", "per": "system",
                                   "figures": "write(?!.*node_min)",
                                   "bandwidth": {"value": 1700.5, "unit": "MiB/s"},
                                   "iops": {"value": 30000.0, "unit": "IOPS"}}
    ceilings = asm.parse_ceilings(block)
    assert len(ceilings) == 2
    assert asm.assess("seq_write_1m_direct_bw", 1.0, "MiB/s", 4, ceilings).ceiling == 1700.5
    assert asm.assess("seq_write_1m_direct_bw_node_min", 1.0, "MiB/s", 4, ceilings) is None
    assert asm.assess("read_iops", 1.0, "IOPS", 1, ceilings).ceiling == 40000.0


def test_fio_ceiling_reads_bytes_per_second_and_iops():
    out = {"jobs": [{"read": {"bw_bytes": 2**20 * 3, "iops": 12.5},
                     "write": {"bw_bytes": 0, "iops": 0}}]}
    assert asm.fio_ceiling(out, "read", "bandwidth") == 3.0
    assert asm.fio_ceiling(out, "randread", "iops") == 12.5


@pytest.mark.parametrize("content, message", [
    (b"ceilings: \xff\xfe\n", "line 1: not UTF-8 text"),
    (b"- a\n- b\n", "(top level): a list, expected a map with a ceilings: key"),
    (b"x: &x {y: *x}\n", "x.y: a YAML alias (*name) inside the value it names"),
])
def test_a_ceilings_file_that_cannot_be_read_exits_2_naming_it(tmp_path, capsys, content,
                                                               message):
    path = tmp_path / "ceilings.yaml"
    path.write_bytes(content)
    with pytest.raises(asm.CeilingError) as err:
        asm.ceilings_from_reference_file(path)
    assert str(err.value).startswith(f"{path}: {message}")
    assert signoff.main([str(DATA / "ior-pass.json"), "--out", str(tmp_path / "out"),
                         "--ceilings", str(path)]) == 2
    assert f"{path}: {message}" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()  # refused before anything is written


# --------------------------------------------------------------------------- a re-made report
# The run directory is test_manifest's: the real local-spack-accepted run report (ACCEPTED
# on the emulated cluster, whose scripts/acceptance measures the disk's ceilings first)
# with each test's output beside it.  Its ceilings.yaml is what `fsaccept ceilings
# measure` prints (assessment.ceilings_block), with a disk of 1 MiB/s and 1 IOPS: every
# write and read figure of the run is above it, an anomaly.

from markupsafe import escape  # noqa: E402

from tests.unit.test_manifest import _signoff, _write, run  # noqa: E402,F401


def _measured(run_dir: Path, mib_s: float = 1.0) -> Path:
    """The run's ceilings.yaml, as scripts/acceptance writes it (fsaccept ceilings measure)."""
    block = asm.ceilings_block({"write": mib_s, "read": mib_s, "randwrite": mib_s,
                                "randread": mib_s})
    path = run_dir / "ceilings.yaml"
    path.write_text("# measured with fio --direct=1 --iodepth=16 --numjobs=4 in /tmp/x "
                    "(64m per job, 2 s each)\n"
                    + yaml.safe_dump({"ceilings": block}, sort_keys=False))
    return path


def _assessment_rows(md: str) -> list[str]:
    part = md.split("## Performance assessment", 1)
    if len(part) == 1:
        return []
    return [ln for ln in part[1].split("\n## ", 1)[0].splitlines() if ln.startswith("| ")
            and not ln.startswith(("| Test |", "| --- |"))]


def test_a_re_made_report_assesses_against_the_run_s_own_ceilings(run, capsys):
    """Class 12: re-made as docs/user/manifest.md says (`fsaccept report RUN/run-report.json
    --out DIR`), the report had no assessment: the run's digested ceilings.yaml unused."""
    _measured(run)
    _write(run, "--include", "ceilings.yaml")
    code, md, console = _signoff(run, capsys)
    assert code == 0 and "**Overall verdict: ACCEPTED**" in md
    rows = _assessment_rows(md)
    assert rows and all("ANOMALY" in r for r in rows), rows
    assert any(r.startswith("| IORWriteBandwidth | write_bandwidth |") for r in rows)
    assert ("ceilings from the run's ceilings.yaml (measured with fio --direct=1 "
            "--iodepth=16 --numjobs=4 in /tmp/x (64m per job, 2 s each))") in md
    assert "not the run's" not in md and "assessment:" not in console
    # The path scripts/acceptance once passed (--ceilings RUN/ceilings.yaml) is the same.
    code, md2, console = _signoff(run, capsys, "--ceilings", str(run / "ceilings.yaml"))
    assert code == 0 and _assessment_rows(md2) == rows and "assessment:" not in console


def test_the_run_s_ceilings_edited_or_added_after_the_manifest_are_not_used(run, capsys):
    path = _measured(run)
    _write(run, "--include", "ceilings.yaml")
    path.write_text(path.read_text().replace("value: 1.0", "value: 100000.0"))
    code, md, console = _signoff(run, capsys)
    assert code == 1 and "**Overall verdict: INCOMPLETE**" in md
    assert "the run's ceilings.yaml changed since the manifest was written: no assessment" in md
    assert "not verified: ceilings.yaml changed since the manifest was written" in console
    assert _assessment_rows(md) == []
    # One put there after a manifest that lists none: not the run's.
    _write(run)
    code, md, _ = _signoff(run, capsys)
    assert code == 0 and _assessment_rows(md) == []
    assert "the run's ceilings.yaml is not in the manifest (added since the run): " \
           "no assessment" in md


def test_another_ceilings_file_is_named_and_keeps_the_run_s_anomalies(run, tmp_path, capsys):
    """Class 12: any --ceilings file removed the run's anomaly rows, while the Integrity row
    still said verified, and nothing named the other file."""
    _measured(run)
    _write(run, "--include", "ceilings.yaml")
    _, own_md, _ = _signoff(run, capsys)
    own = _assessment_rows(own_md)
    other = tmp_path / "vendor-ceilings.yaml"
    other.write_text(yaml.safe_dump({"ceilings": asm.ceilings_block(
        {"write": 10**6, "read": 10**6, "randwrite": 10**6, "randread": 10**6})}))
    code, md, console = _signoff(run, capsys, "--ceilings", str(other))
    # What an anomaly does to the verdict is as it was (nothing, here).
    assert code == 0 and "**Overall verdict: ACCEPTED**" in md
    assert "| Integrity | verified (manifest.json" in md
    said = (f"performance assessment against {other} (--ceilings), not the run's "
            f"ceilings.yaml; {len(own)} anomalies against the run's ceilings.yaml kept in "
            "the assessment")
    assert f"The {said}." in md and f"| Performance assessment | {said} |" in md
    lines = console.splitlines()
    assert f"assessment: {said}" in lines and lines[-1] == "overall verdict: ACCEPTED"
    rows = _assessment_rows(md)
    kept = [r for r in rows if "against the run's ceilings.yaml: ANOMALY" in r]
    assert len(kept) == len(own) and len(rows) == 2 * len(own)
    assert not [r for r in rows if "ANOMALY" in r and r not in kept]
    html = (run.parent / "out" / "report.html").read_text()
    assert f'<p id="assessment-against">The {escape(said)}.</p>' in html


def test_another_ceilings_file_for_a_run_without_its_own_is_named(run, tmp_path, capsys):
    _write(run)
    other = tmp_path / "vendor-ceilings.yaml"
    other.write_text(yaml.safe_dump({"ceilings": asm.ceilings_block({"write": 1.0})}))
    code, md, console = _signoff(run, capsys, "--ceilings", str(other))
    assert code == 0 and _assessment_rows(md)
    assert (f"assessment: performance assessment against {other} (--ceilings): the run has "
            "no ceilings of its own") in console.splitlines()
    # The run's own, named but not there: bad input, as any --ceilings file.
    assert signoff.main([str(run / "run-report.json"), "--out", str(tmp_path / "o"),
                         "--ceilings", str(run / "ceilings.yaml")]) == 2
    assert "ceilings.yaml" in capsys.readouterr().err


def test_scripts_acceptance_leaves_the_run_s_ceilings_to_the_report():
    """The live report finds the run's ceilings.yaml as a re-made one does (one way)."""
    text = (Path(__file__).resolve().parents[2] / "scripts" / "acceptance").read_text()
    report = text[text.index(".venv/bin/fsaccept report "):]
    assert "--ceilings" not in report.split("|| verdict=$?")[0]
    assert 'mv "$run_dir/ceilings.yaml.part" "$run_dir/ceilings.yaml"' in text
