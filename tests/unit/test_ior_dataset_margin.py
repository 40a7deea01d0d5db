"""The dataset margin of IOR's deadline-bound phases (issue 49: the lab's main job flaked
when a read's dataset was sized with no margin): the data a phase had over what it moves
in its deadline, from real captures (tests/data/ior) and the same captures edited as a
hostile user would.  Never a verdict: a warning line in the report under the bound."""

from pathlib import Path

import pytest

from fsaccept.benchmarks import catalogue, registry
from fsaccept.benchmarks.ior import command, figures
from fsaccept.benchmarks.ior.parse import parse_ior
from fsaccept.core import inputs
from fsaccept.reporting import sections
from fsaccept.reporting.signoff import common, output
from fsaccept.reporting.case import case_of

DATA = Path(__file__).resolve().parent.parent / "data" / "ior"
MIB = 2**20


def _text(name: str) -> str:
    return (DATA / f"{name}.txt").read_text()


def _margin(text: str, check: str):
    return registry.BENCHMARKS["ior"].dataset_margin(text, registry.TESTS[check])


def test_ior_stat_line_is_kept_with_its_row():
    [row] = [r for r in parse_ior(_text("read-stonewalled")).results if r.access == "read"]
    assert (row.stat_bytes, row.bytes_moved) == (1073741824, 633339904)
    [row] = [r for r in parse_ior(_text("random-read-iops")).results if r.access == "read"]
    assert row.stat_bytes is None  # IOR prints it only when sizes differ


def test_a_deadline_bound_read_has_the_margin_of_its_files():
    # 1 GiB written (IOR's stat of the files), 604 MiB read in the 3 s deadline.
    m = _margin(_text("read-stonewalled"), "IORStonewalledRead")
    assert (m.available_bytes, m.consumed_bytes, m.deadline_s) == (2**30, 633339904, 3)
    assert m.ratio == pytest.approx(1.695, abs=1e-3) and not m.low
    assert m.sized_by == ("generation_deadline_s", "segments")
    m = _margin(_text("random-read-iops-deadline"), "IORRandomReadIOPS")
    assert m.available_bytes == 2**30 and m.ratio == pytest.approx(1.707, abs=1e-3)
    assert m.sized_by == ("block_size", "segments")


def test_an_exhausted_read_is_under_one():
    # The whole 1 GiB read in 1.50 s of 3 s: at its rate the deadline moves 2 GiB.
    m = _margin(_text("read-ended-early"), "IORStonewalledRead")
    assert (m.available_bytes, m.consumed_bytes) == (2**30, 2**31)
    assert m.ratio == pytest.approx(0.5) and m.low
    # 64 MiB read whole in 0.011 s: no Stat() line, the configured size is the dataset.
    m = _margin(_text("random-read-iops"), "IORRandomReadIOPS")
    assert m.available_bytes == 64 * MIB and m.ratio < 0.01


def test_a_deadline_bound_write_has_the_margin_of_its_room():
    m = _margin(_text("write-stonewall-wearout"), "IORWriteBandwidth")
    assert m.available_bytes == 4 * 450 * MIB and m.sized_by == ("segments",)
    assert m.ratio == pytest.approx(4 * 450 * MIB / m.consumed_bytes) and m.ratio > 2


@pytest.mark.parametrize("check", ["IORReadDatasetGeneration", "IORDataIntegrity",
                                   "IORIntegrityDataset", "IORCheckpointWrite"])
def test_a_phase_without_its_own_deadline_has_none(check):
    assert _margin(_text("read-generate"), check) is None


def test_a_write_test_of_a_read_only_output_has_none():
    # No write phase in the output: nothing to tell the write's margin from.
    assert _margin(_text("read-stonewalled"), "IORWriteBandwidth") is None


def test_a_read_without_a_deadline_has_none():
    text = _text("read-stonewalled").replace(" -D 3", "").replace(
        "stonewallingTime    : 3\n", "")
    assert parse_ior(text).params.stonewalling_time is None
    assert _margin(text, "IORStonewalledRead") is None
    assert figures.dataset_margin(parse_ior(text), "read", None) is None
    assert figures.dataset_margin(parse_ior(text), "read", 0) is None


@pytest.mark.parametrize("old,new", [
    # zero bytes moved, at a rate of 0
    ("read      200.69     200.71     3.01", "read      0.00       200.71     3.01"),
    # not a number
    ("read      200.69     200.71     3.01", "read      nan        200.71     3.01"),
    ("read      200.69     200.71     3.01        1024.00    1024.00    0.000072   3.01",
     "read      200.69     200.71     3.01        1024.00    1024.00    0.000072   nan "),
    ("read      200.69     200.71     3.01        1024.00    1024.00    0.000072   3.01",
     "read      200.69     200.71     3.01        1024.00    1024.00    0.000072   0.00"),
])
def test_a_row_that_tells_nothing_gives_no_margin(old, new):
    text = _text("read-stonewalled")
    assert old in text
    assert _margin(text.replace(old, new), "IORStonewalledRead") is None


def test_zero_bytes_and_stat_lines_fall_back_to_what_the_row_says():
    text = _text("read-stonewalled")
    spoiled = (text.replace("bytes moved = 633339904", "bytes moved = 0")
               .replace("file size      = 1073741824", "file size      = 0"))
    m = _margin(spoiled, "IORStonewalledRead")
    # the rate x time, over the configured 4 x 450 MiB
    assert m.available_bytes == 4 * 450 * MIB
    assert m.consumed_bytes == pytest.approx(200.69 * MIB * 3.01, rel=1e-9)


def test_the_keys_that_size_each_phase_come_from_the_phase_table():
    assert command.dataset_keys("read_bandwidth") == ("generation_deadline_s", "segments")
    assert command.dataset_keys("shared_read") == ("generation_deadline_s", "segments")
    assert command.dataset_keys("random_read_iops") == ("block_size", "segments")
    assert command.dataset_keys("write_bandwidth") == ("segments",)
    for phase in ("read_generation", "random_read_generation", "integrity_read",
                  "checkpoint_write"):
        assert command.dataset_keys(phase) == ()


# --------------------------------------------------------------------------- report

def _case(check: str, **fields):
    return case_of({"name": check, "result": "pass", "deadline_s": 3, **fields})


def test_the_report_shows_the_margin_and_warns_under_the_bound():
    m = _margin(_text("read-ended-early"), "IORStonewalledRead")
    sec = sections.case_section(_case("IORStonewalledRead"), "Measurement", margin=m)
    assert sec.dataset_margin == ("dataset 1,024 MiB, the 3 s read moves 2,048 MiB: "
                                  "margin 0.5x")
    assert "tests.ior_read_bandwidth.generation_deadline_s or " \
           "tests.ior_read_bandwidth.segments" in sec.margin_warning
    assert f"under {catalogue.DATASET_MARGIN_WARNING:g}x" in sec.margin_warning
    ok = _margin(_text("read-stonewalled"), "IORStonewalledRead")
    sec = sections.case_section(_case("IORStonewalledRead"), "Measurement", margin=ok)
    assert sec.dataset_margin.endswith("margin 1.7x") and sec.margin_warning == ""
    assert sections.case_section(_case("IORStonewalledRead"), "m").dataset_margin == ""


def test_the_recorded_fields_give_the_margin_without_the_run_files():
    case = _case("IORRandomReadIOPS", dataset_bytes=64 * MIB,
                 dataset_consumed_bytes=65 * MIB, dataset_margin=0.985,
                 dataset_sized_by="block_size segments")
    m = output.dataset_margin_of(case)
    assert (m.available_bytes, m.consumed_bytes, m.deadline_s) == (64 * MIB, 65 * MIB, 3)
    sec = sections.case_section(case, "Measurement", margin=m)
    assert "tests.ior_random_read_iops.block_size or" in sec.margin_warning
    # the recorded fields are the margin's line, not provenance rows of their own
    assert not {k for k, _ in sec.provenance} & set(output.MARGIN_FIELDS)


@pytest.mark.parametrize("fields", [
    {}, {"dataset_sized_by": "segments"},
    {"dataset_bytes": 0, "dataset_consumed_bytes": 5},
    {"dataset_bytes": 5, "dataset_consumed_bytes": 0},
    {"dataset_bytes": "5", "dataset_consumed_bytes": 5},
    {"dataset_bytes": True, "dataset_consumed_bytes": 5},
    {"dataset_bytes": float("nan"), "dataset_consumed_bytes": 5},
])
def test_recorded_fields_that_tell_nothing_give_no_margin(fields):
    fields = {"dataset_sized_by": "segments", **fields}
    assert output.dataset_margin_of(_case("IORStonewalledRead", **fields)) is None
    # a test of no deadline-bound phase has none, whatever it records
    assert output.dataset_margin_of(_case("IORDataIntegrity", dataset_bytes=5,
                                            dataset_consumed_bytes=5)) is None
    # nor a case that records no keys sizing its data
    assert output.dataset_margin_of(_case("IORStonewalledRead", dataset_bytes=5,
                                            dataset_consumed_bytes=5)) is None


def test_the_output_is_what_the_report_shows_over_the_record(tmp_path):
    # The record says 10x; the job's own output says 0.5x: the report shows the output's.
    out = tmp_path / "output"
    out.mkdir()
    (out / "rfm_job.out").write_text(_text("read-ended-early"))
    (out / "rfm_job.err").write_text("")
    case = _case("IORStonewalledRead", outputdir=str(out), dataset_bytes=10 * 2**30,
                 dataset_consumed_bytes=2**30, dataset_margin=10.0,
                 dataset_sized_by="generation_deadline_s segments")
    m = output.dataset_margin_of(case, common.RunFiles(inputs.Reader(tmp_path)))
    assert m.ratio == pytest.approx(0.5)
    assert output.dataset_margin_of(case).ratio == pytest.approx(10.0)
