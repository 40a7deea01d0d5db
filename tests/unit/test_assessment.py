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
