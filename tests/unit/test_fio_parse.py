"""fsaccept.benchmarks.fio.parse (parser, figures, outliers) and fsaccept.benchmarks.fio.command (commands, names,
references) on real fio 3.33 captures (tests/data/fio/README.md)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from fsaccept.benchmarks.fio import command as fiocmd
from fsaccept.benchmarks.fio import figures
from fsaccept.benchmarks.fio import parse as fio
from fsaccept.suite import reference
from fsaccept.cli import main
from fsaccept.suite.reference import Threshold

from . import stepcount

DATA = Path(__file__).resolve().parents[1] / "data" / "fio"
REFS = Path(__file__).resolve().parents[2] / "reference"
NODES = ("n1", "n2", "n3", "n4")
GIB = 2**30


def text(name: str) -> str:
    return (DATA / name).read_text()


def raw_job(name: str, index: int = 0) -> dict:
    """The job as Python's json module reads the capture (independent of the parser)."""
    t = text(name)
    return json.loads(t[t.index("{\n"):])["jobs"][index]


def params(kind: str, **entry) -> fiocmd.FioParameters:
    base = {"node_fraction": 1.0}
    if kind == "metadata":
        base["files"] = 5000
    else:
        base.update(file_size="128MiB", runtime_s=3)
    return fiocmd.parameters(f"fio_{kind}", kind, {**base, **entry})


def kinds(run: fio.FioRun) -> set[str]:
    return {f.kind for f in run.findings}


# --------------------------------------------------------------------------- valid runs


@pytest.mark.parametrize("name", [f"randread-direct-{n}.json" for n in NODES]
                         + [f"fsync-{n}.json" for n in NODES]
                         + ["randread-buffered-n1.json", "seq-write-n3.json",
                            "seq-read-n2.json", "metadata-n2.json", "defaults.txt"])
def test_real_captures_are_valid(name: str) -> None:
    run = fio.parse_fio(text(name), node_memory_bytes=24 * GIB)
    assert run.valid, run.reasons
    assert run.version == "fio-3.33" and run.version_number == "3.33"
    assert all(j.error == 0 for j in run.jobs)


def test_randread_direct_figure_is_fios_iops() -> None:
    run = fio.parse_fio(text("randread-direct-n1.json"))
    (spec,) = fiocmd.figure_specs(params("randread_direct"))
    assert spec.name == "randread_4k_direct_iops" and spec.unit == "IOPS"
    assert figures.figure_value(run, spec) == raw_job("randread-direct-n1.json")["read"]["iops"]
    assert figures.figure_value(run, spec) == 20650.116628


def test_settings_that_change_meaning_are_recorded() -> None:
    job = fio.parse_fio(text("randread-direct-n1.json")).jobs[0]
    s = job.settings()
    assert (s["direct"], s["ioengine"], s["iodepth"], s["numjobs"], s["fallocate"],
            s["time_based"], s["runtime"], s["size"]) == (
        "1", "libaio", "16", "1", "none", "1", "3", "134217728")
    assert s["fsync"] is None
    assert fio.format_settings(job) == (
        "rw=randread bs=4096 direct=1 ioengine=libaio iodepth=16 numjobs=1 fallocate=none "
        "time_based=1 runtime=3 size=134217728 invalidate=1 group_reporting=1")


def test_time_based_wrap_is_noted_not_invalid() -> None:
    # 20650 IOPS x 3 s x 4 KiB = 254 MB through a 128 MiB file: fio wrapped around it.
    run = fio.parse_fio(text("randread-direct-n1.json"))
    assert run.valid
    (note,) = [f for f in run.findings if f.kind == "wrapped"]
    assert note.severity == fio.NOTE
    moved = raw_job("randread-direct-n1.json")["read"]["io_bytes"]
    assert f"moved {moved} bytes, {moved / 2**27:.2f} x its 134217728-byte" in note.text
    assert "re-read the same blocks (cache-inflated)" in note.text
    write = fio.parse_fio(text("seq-write-n3.json"))
    assert "overwrote the same blocks" in [f for f in write.findings
                                           if f.kind == "wrapped"][0].text


def test_no_wrap_note_when_the_runtime_moved_less_than_the_file() -> None:
    # fsync: 4260 IOPS x 3 s x 4 KiB = 52 MB of a 64 MiB file.
    run = fio.parse_fio(text("fsync-n1.json"))
    assert "wrapped" not in kinds(run)
    assert run.notes == []


def test_buffered_read_smaller_than_memory_is_the_cache_regime() -> None:
    cached = fio.parse_fio(text("randread-buffered-n1.json"), node_memory_bytes=24 * GIB)
    (note,) = [f for f in cached.findings if f.kind == "cache"]
    assert note.severity == fio.NOTE and cached.valid
    assert "134217728 bytes per node, less than the node's memory" in note.text
    small = fio.parse_fio(text("randread-buffered-n1.json"), node_memory_bytes=2**26)
    assert "cache" not in kinds(small)
    unknown = fio.parse_fio(text("randread-buffered-n1.json"))
    assert "compare with the node's memory" in [f for f in unknown.findings
                                                if f.kind == "cache"][0].text


def test_direct_reads_get_no_cache_note() -> None:
    run = fio.parse_fio(text("randread-direct-n1.json"), node_memory_bytes=24 * GIB)
    assert "cache" not in kinds(run)


def test_sequential_bandwidth_is_bw_bytes_over_2_to_the_20() -> None:
    run = fio.parse_fio(text("seq-write-n3.json"))
    (spec,) = fiocmd.figure_specs(params("seq_write"))
    assert spec.name == "seq_write_1m_direct_bw" and spec.unit == "MiB/s"
    raw = raw_job("seq-write-n3.json")["write"]
    assert figures.figure_value(run, spec) == raw["bw_bytes"] / 1048576 == 1127306291 / 2**20
    # fio's own KiB/s figure is bw_bytes // 1024: the same rate, rounded down.
    assert raw["bw"] == raw["bw_bytes"] // 1024
    (read_spec,) = fiocmd.figure_specs(params("seq_read"))
    assert read_spec.name == "seq_read_1m_direct_bw"
    assert figures.figure_value(fio.parse_fio(text("seq-read-n2.json")), read_spec) == \
        raw_job("seq-read-n2.json")["read"]["bw_bytes"] / 2**20


def test_fsync_figures_are_fios_iops_and_latencies_in_us() -> None:
    run = fio.parse_fio(text("fsync-n2.json"))
    raw = raw_job("fsync-n2.json")
    figs = {s.name: figures.figure_value(run, s) for s in fiocmd.figure_specs(params("fsync"))}
    assert figs == {
        "fsync_4k_iops": raw["write"]["iops"],
        "fsync_4k_write_clat_p50_us": raw["write"]["clat_ns"]["percentile"]["50.000000"] / 1000,
        "fsync_4k_write_clat_p99_us": raw["write"]["clat_ns"]["percentile"]["99.000000"] / 1000,
        "fsync_4k_write_clat_max_us": raw["write"]["clat_ns"]["max"] / 1000,
        "fsync_4k_sync_lat_p50_us": raw["sync"]["lat_ns"]["percentile"]["50.000000"] / 1000,
        "fsync_4k_sync_lat_p99_us": raw["sync"]["lat_ns"]["percentile"]["99.000000"] / 1000,
        "fsync_4k_sync_lat_max_us": raw["sync"]["lat_ns"]["max"] / 1000,
    }
    assert run.jobs[0].sync_total_ios == run.jobs[0].write.total_ios  # one fsync per write
    assert run.jobs[0].sync_lat is not None and run.jobs[0].sync_lat.percentile_ns(99) == \
        raw["sync"]["lat_ns"]["percentile"]["99.000000"]


def test_metadata_rates_are_the_three_jobs_iops() -> None:
    run = fio.parse_fio(text("metadata-n2.json"))
    assert [j.name for j in run.jobs] == ["filecreate", "filestat", "filedelete"]
    assert run.jobs[1].options["ioengine"] == "filestat"  # job option over global ones
    assert run.jobs[1].options["nrfiles"] == "5000"  # from "global options"
    figs = {s.name: figures.figure_value(run, s) for s in fiocmd.figure_specs(params("metadata"))}
    assert figs == {f"{job}_ops": raw_job("metadata-n2.json", i)["write"]["iops"]
                    for i, job in enumerate(fiocmd.METADATA_JOBS)}
    assert figs["filecreate_ops"] == 6435.006435
    # 5000 files created in 777 ms, deleted in 982 ms (stat: 1041 ms): fio's runtime is
    # in whole ms, so a rate over less than a second is imprecise.
    brief = [f for f in run.findings if f.kind == "brief"]
    assert [(f.severity, f.text.split(": ")[0]) for f in brief] == [
        (fio.WARNING, "job 'filecreate' (jobs[0]) write"),
        (fio.WARNING, "job 'filedelete' (jobs[2]) write")]
    assert "over 777 ms" in brief[0].text and run.valid


def test_defaults_are_warned_about() -> None:
    run = fio.parse_fio(text("defaults.txt"))
    assert run.valid
    (w,) = [f for f in run.findings if f.kind == "defaults"]
    assert w.text.endswith("direct, ioengine, iodepth, numjobs, fallocate not set: fio's "
                           "defaults applied")
    assert "ioengine=(fio default)" in fio.format_settings(run.jobs[0])


# --------------------------------------------------------------------------- invalid runs


def test_job_error_is_invalid_with_errno_text() -> None:
    run = fio.parse_fio(text("enospc.json"), text("enospc.log"))
    assert not run.valid
    assert "job 'seq_write' (jobs[0]) failed: error=28 (No space left on device)" in run.reasons
    assert any("fio said: fio: io_u error on file" in r for r in run.reasons)
    assert run.messages[0].startswith("fio: io_u error")


def test_messages_before_the_json_are_read_from_one_stream() -> None:
    run = fio.parse_fio(text("enospc-combined.txt"))
    assert not run.valid and run.jobs[0].error == 28
    assert run.reasons[0].startswith("line 1: fio said: fio: io_u error")
    assert run.reasons[1].startswith("line 2: fio said: fio: pid=")


def test_refused_options_give_no_json_and_fios_words() -> None:
    run = fio.parse_fio(text("missing-dir.txt"))
    assert not run.valid and run.jobs == []
    assert "no-json" in kinds(run)
    assert "line 1: fio said: fio: /var/tmp/fsaccept-missing-dir is not a directory" in \
        run.reasons
    # With --output the report file is never created: the log is all there is.
    sep = fio.parse_fio("", text("missing-dir.log"))
    assert "empty" in kinds(sep)
    assert any("failed parsing directory" in r for r in sep.reasons)


def test_sigterm_is_invalid_even_with_a_complete_report() -> None:
    run = fio.parse_fio(text("terminated.txt"))
    assert run.jobs[0].error == 0  # fio itself reports no error
    assert run.reasons == [
        "line 2: fio said: fio: terminating on signal 15",
        "job 'randread_direct' (jobs[0]) ran 2.59 s of its time_based runtime of 10 s: "
        "it was stopped early"]


def test_sigkill_leaves_an_empty_report() -> None:
    assert (DATA / "killed.json").stat().st_size == 0
    run = fio.parse_fio(text("killed.json"))
    assert not run.valid and "empty" in kinds(run)


@pytest.mark.parametrize("cut", [0.1, 0.5, 0.99])
def test_truncated_report_is_invalid(cut: float) -> None:
    t = text("randread-direct-n1.json")
    run = fio.parse_fio(t[: int(len(t) * cut)])
    assert not run.valid
    (f,) = [f for f in run.findings if f.kind == "truncated"]
    assert f.text.startswith("truncated JSON report at line")


def test_output_mixed_into_the_report_is_malformed() -> None:
    lines = text("randread-direct-n1.json").splitlines(keepends=True)
    lines.insert(20, "fio: something printed in the middle\n")
    run = fio.parse_fio("".join(lines))
    assert any(r.startswith("malformed JSON report at line 21") for r in run.reasons)


def test_json_that_is_not_a_fio_report_names_the_key() -> None:
    with pytest.raises(ValueError, match=r"^jobs: missing or not a list"):
        fio.parse_fio('{\n"tests": []\n}\n')
    job = raw_job("randread-direct-n1.json")
    del job["read"]
    with pytest.raises(ValueError, match=r"^jobs\[0\]\.read: missing"):
        fio.parse_fio("{\n" + json.dumps({"jobs": [job]})[1:])


def test_a_missing_figure_names_its_path() -> None:
    run = fio.parse_fio(text("randread-direct-n1.json"))
    spec = figures.FigureSpec("x_us", "us", "randread_direct",
                          ("read", "clat_ns", "percentile", "99.990001"), "latency")
    with pytest.raises(ValueError, match=r"percentile\.99\.990001: missing"):
        figures.figure_value(run, spec)
    with pytest.raises(KeyError, match="no fio job named 'nope'"):
        figures.figure_value(run, figures.FigureSpec("y", "IOPS", "nope", ("read", "iops")))


def test_to_dict_is_json_with_verdict() -> None:
    d = fio.parse_fio(text("fsync-n1.json")).to_dict()
    json.dumps(d)
    assert d["valid"] is True and d["reasons"] == [] and "raw" not in d["jobs"][0]
    assert d["jobs"][0]["settings"]["fsync"] == "1"
    assert d["jobs"][0]["sync_lat"]["percentiles"]["99.000000"] == \
        raw_job("fsync-n1.json")["sync"]["lat_ns"]["percentile"]["99.000000"]


@pytest.mark.parametrize("value,nbytes", [
    # fio 3.33 with its default kb_base=1024 reads the IEC spelling as powers of 10
    # (verified with fio --debug=parse): 1GiB is 10**9 bytes there.
    ("134217728", 134217728), ("64m", 64 * 2**20), ("4k", 4096), ("1GiB", 10**9),
    ("2g", 2 * 2**30), ("50%", None), ("4k-16k", None), (None, None)])
def test_fio_sizes_use_fios_default_kb_base(value: str | None, nbytes: int | None) -> None:
    assert fio.parse_fio_size(value) == nbytes


# --------------------------------------------------------------------------- nodes


def node_figures(stem: str, kind: str) -> tuple[dict[str, dict[str, float]], list]:
    specs = fiocmd.figure_specs(params(kind))
    per_node = {n: {s.name: figures.figure_value(fio.parse_fio(text(f"{stem}-{n}.json")), s)
                    for s in specs} for n in NODES}
    return per_node, specs


def test_four_real_nodes_sum_and_slowest() -> None:
    per_node, specs = node_figures("randread-direct", "randread_direct")
    c = figures.combine(per_node, specs, outlier_fraction=0.8)
    iops = [raw_job(f"randread-direct-{n}.json")["read"]["iops"] for n in NODES]
    assert c.aggregate["randread_4k_direct_iops"] == math.fsum(iops)
    assert c.node_min["randread_4k_direct_iops"] == min(iops) == 20650.116628
    assert c.outliers == {} and c.outlier_nodes == []


def test_latency_over_nodes_is_the_worst_node() -> None:
    per_node, specs = node_figures("fsync", "fsync")
    c = figures.combine(per_node, specs, outlier_fraction=0.8)
    p99 = [raw_job(f"fsync-{n}.json")["sync"]["lat_ns"]["percentile"]["99.000000"] / 1000
           for n in NODES]
    assert c.aggregate["fsync_4k_sync_lat_p99_us"] == max(p99)
    assert "fsync_4k_sync_lat_p99_us" not in c.node_min


def test_a_slow_node_is_named() -> None:
    per_node, specs = node_figures("randread-direct", "randread_direct")
    per_node["n3"]["randread_4k_direct_iops"] = 9000.0
    c = figures.combine(per_node, specs, outlier_fraction=0.8)
    assert c.outlier_nodes == ["n3"]
    (o,) = c.outliers["randread_4k_direct_iops"]
    assert o.median == (20650.116628 + 20681.772742) / 2  # n1 and n2 are the middle two
    assert c.describe_outliers().startswith(
        "n3 (randread_4k_direct_iops 9,000 IOPS, 0.44 x the median 20,666 IOPS)")


@pytest.mark.parametrize("values,fraction,slow", [
    ({"a": 100, "b": 100, "c": 79}, 0.8, ["c"]),
    ({"a": 100, "b": 100, "c": 80}, 0.8, []),  # exactly the fraction: not an outlier
    ({"a": 100, "b": 10}, 0.8, ["b"]),  # median of two is their mean (55)
    ({"a": 100, "b": 10, "c": 11, "d": 12}, 0.8, []),  # most nodes slow: median is slow
    ({"a": 100, "b": 1}, 0.0, []),  # 0 turns detection off
    ({"only": 5}, 0.8, []),
    ({}, 0.8, []),
])
def test_find_outliers(values: dict, fraction: float, slow: list) -> None:
    assert [o.node for o in figures.find_outliers(values, fraction)] == slow


def test_per_node_figures_are_exact_data() -> None:
    per_node, specs = node_figures("randread-direct", "randread_direct")
    logged = figures.per_node_figures(per_node, specs)
    assert list(logged) == [s.name for s in specs]
    assert logged["randread_4k_direct_iops"]["n1"] == 20650.116628
    assert logged["randread_4k_direct_iops"] == \
        {n: per_node[n]["randread_4k_direct_iops"] for n in NODES}
    assert json.loads(json.dumps(logged)) == logged  # as the run report records it


def test_findings_over_many_nodes_are_summarised() -> None:
    per_node = {n: fio.parse_fio(text(f"randread-direct-{n}.json")).findings for n in NODES}
    (line,) = figures.summarize_by_node(per_node)
    assert line.startswith("all 4 nodes: n1: job 'randread_direct'")
    assert line.endswith("(and 3 more like it)")
    some = {"n1": [], "n2": per_node["n2"], "n3": per_node["n3"], "n4": []}
    assert figures.summarize_by_node(some)[0].startswith("n2,n3: n2: job")
    assert figures.summarize_by_node({"n1": per_node["n1"]})[0].startswith("n1: job")


# --------------------------------------------------------------------------- commands


def test_fio_options_pass_every_meaningful_setting() -> None:
    opts = fiocmd.fio_options(params("randread_direct"), "/t/n1")
    assert opts == ["--name=randread_direct", "--directory=/t/n1", "--numjobs=1",
                    "--fallocate=none", "--group_reporting=1", "--output-format=json",
                    "--rw=randread", "--bs=4096", "--size=134217728", "--direct=1",
                    "--ioengine=libaio", "--iodepth=16", "--invalidate=1", "--time_based=1",
                    "--runtime=3", "--refill_buffers=1", "--buffer_compress_percentage=0",
                    "--dedupe_percentage=0"]
    assert "--fsync=1" in fiocmd.fio_options(params("fsync"), "/t")
    assert "--direct=0" in fiocmd.fio_options(params("randread_buffered"), "/t")
    assert "--end_fsync=1" in fiocmd.fio_options(params("seq_write"), "/t")


def test_the_captured_runs_used_the_generated_options() -> None:
    # The captures are the checks' own commands (README): the options fio recorded
    # are what fiocmd generates for reference/local.yaml.
    ref = reference.load_reference(REFS / "local.yaml")
    for stem, kind in [("randread-direct-n1", "randread_direct"), ("fsync-n1", "fsync"),
                       ("randread-buffered-n1", "randread_buffered"),
                       ("seq-write-n3", "seq_write"), ("seq-read-n2", "seq_read")]:
        p = fiocmd.parameters(f"fio_{kind}", kind, ref.entry(f"fio_{kind}"))
        got = {k: v for k, v in fio.parse_fio(text(stem + ".json")).jobs[0].job_options.items()
               if k != "directory"}
        # The captures predate the buffer options (issue 23): those are checked
        # against fio itself by tests/unit/test_reduction.py.
        pattern = set(fiocmd.DATA_PATTERNS[p.data_pattern])
        want = dict(o[2:].split("=", 1) for o in fiocmd.fio_options(p, "/d")
                    if not o.startswith(("--directory", "--output-format"))
                    and o not in pattern)
        assert got == want, stem


def test_metadata_options_three_stonewalled_jobs() -> None:
    opts = fiocmd.fio_options(params("metadata", files=7, numjobs=2), "/t")
    assert "--nrfiles=7" in opts and "--numjobs=2" in opts and "--time_based=0" in opts
    assert opts[-8:] == ["--name=filecreate", "--ioengine=filecreate",
                         "--name=filestat", "--ioengine=filestat", "--stonewall",
                         "--name=filedelete", "--ioengine=filedelete", "--stonewall"]


def test_entry_overrides_and_names_follow_the_block_size() -> None:
    p = params("randread_direct", block_size="8KiB", iodepth=64, numjobs=4, ioengine="io_uring")
    assert (p.iodepth, p.numjobs, p.ioengine, p.block_size) == (64, 4, "io_uring", 8192)
    assert p.bytes_per_node == 4 * 2**27
    assert [s.name for s in fiocmd.figure_specs(p)] == ["randread_8k_direct_iops"]
    assert [s.name for s in fiocmd.figure_specs(params("seq_read", block_size="4MiB"))] == \
        ["seq_read_4m_direct_bw"]
    assert params("seq_read", outlier_fraction=0).outlier_fraction == 0.0  # YAML int: a float
    assert isinstance(params("seq_read", outlier_fraction=0).outlier_fraction, float)
    assert params("seq_read").outlier_fraction == fiocmd.DEFAULT_OUTLIER_FRACTION == 0.8


@pytest.mark.parametrize("kind,entry,message", [
    ("randread_direct", {"runtime_s": 3}, r"tests\.fio_x\.file_size: required"),
    ("randread_direct", {"file_size": "1MiB"}, r"tests\.fio_x\.runtime_s: required"),
    ("randread_direct", {"file_size": "1MiB", "runtime_s": 1, "files": 3},
     r"\.files: only for the metadata test"),
    ("metadata", {}, r"\.files: required"),
    ("metadata", {"files": 3, "runtime_s": 3}, r"\.runtime_s: not for the metadata test"),
    ("seq_write", {"file_size": "1536KiB", "runtime_s": 1},
     r"file_size: 1536KiB is not a multiple of block_size 1MiB"),
    ("nope", {}, r"unknown fio test kind 'nope'"),
])
def test_bad_entries_name_the_key(kind: str, entry: dict, message: str) -> None:
    with pytest.raises(fiocmd.FioEntryError, match=message):
        fiocmd.parameters("fio_x", kind, {"node_fraction": 1, **entry}, where="ref.yaml")


def test_latency_thresholds_are_upper_bounds() -> None:
    specs = fiocmd.figure_specs(params("fsync"))
    refs = fiocmd.reframe_references(
        {"fsync_4k_iops": Threshold(100, "IOPS", 0.1),
         "fsync_4k_iops_node_min": Threshold(20, "IOPS"),
         "fsync_4k_sync_lat_p99_us": Threshold(5000, "us", 0.2)}, specs,
        outlier_detection=True)
    assert refs == {"fsync_4k_iops": (100, -0.1, None, "IOPS"),
                    "fsync_4k_iops_node_min": (20, -0.0, None, "IOPS"),
                    "fsync_4k_sync_lat_p99_us": (5000, None, 0.2, "us"),
                    "outlier_nodes": (0, None, 0, "nodes")}
    assert "outlier_nodes" not in fiocmd.reframe_references({}, specs, False)


def test_threshold_on_an_unknown_figure_or_unit_is_refused() -> None:
    specs = fiocmd.figure_specs(params("randread_direct"))
    with pytest.raises(fiocmd.FioEntryError,
                       match=r"t\.randread_4k_iops: not a figure of this test; it reports: "
                             r"randread_4k_direct_iops, randread_4k_direct_iops_node_min"):
        fiocmd.reframe_references({"randread_4k_iops": Threshold(1, "IOPS")}, specs, False,
                                  where="t")
    with pytest.raises(fiocmd.FioEntryError, match=r"unit: 'ops/s', but .* is in 'IOPS'"):
        fiocmd.reframe_references({"randread_4k_direct_iops": Threshold(1, "ops/s")}, specs,
                                  False)


# --------------------------------------------------------------------------- references


@pytest.mark.parametrize("name", ["local.yaml", "workstation.yaml", "example-lustre.yaml"])
def test_reference_fio_entries_make_tests(name: str) -> None:
    ref = reference.load_reference(REFS / name)
    entries = {k: v for k, v in ref.entries.items() if k.startswith("fio_")}
    assert set(entries) == {"fio_randread_direct", "fio_randread_buffered", "fio_seq_write",
                            "fio_seq_read", "fio_fsync", "fio_metadata"}
    for key, entry in entries.items():
        p = fiocmd.parameters(key, key[len("fio_"):], entry)
        fiocmd.reframe_references(ref.thresholds(key), fiocmd.figure_specs(p),
                                  p.outlier_fraction > 0)


def test_schema_refuses_unknown_keys_and_bad_sizes() -> None:
    errors = reference.validation_errors({
        "system": "s", "target": {"path": "/x", "fstype": "nfs4"},
        "tests": {"fio_seq_write": {"node_fraction": 1, "file_size": "1GB", "direct": True,
                                    "thresholds": {"seq_write_1m_direct_bw":
                                                   {"value": 1, "unit": "GB/s"}}}}})
    assert any(e.startswith("tests.fio_seq_write: unknown key(s) 'direct'") for e in errors)
    assert any(e.startswith("tests.fio_seq_write.file_size: '1GB' is not a binary size")
               for e in errors)
    assert any(e.startswith("tests.fio_seq_write.thresholds.seq_write_1m_direct_bw.unit")
               for e in errors)


# --------------------------------------------------------------------------- CLI


def test_cli_parse_fio(capsys: pytest.CaptureFixture[str]) -> None:
    path = DATA / "fsync-n1.json"
    assert main(["parse", "fio", str(path)]) == 0
    d = json.loads(capsys.readouterr().out)
    assert (d["kind"], d["file"], d["valid"], d["reasons"]) == ("fio", str(path), True, [])
    assert d["jobs"][0]["write"]["iops"] == raw_job("fsync-n1.json")["write"]["iops"]


def test_cli_invalid_fio_run_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parse", "fio", str(DATA / "enospc-combined.txt")]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["valid"] is False
    assert "job 'seq_write' (jobs[0]) failed: error=28 (No space left on device)" in \
        d["reasons"]


def test_cli_json_that_is_not_fio_exits_2(capsys: pytest.CaptureFixture[str],
                                          tmp_path: Path) -> None:
    path = tmp_path / "other.json"
    path.write_text('{\n"tests": []\n}\n')
    assert main(["parse", "fio", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"fsaccept: cannot parse {path}: jobs: missing or not a list (not fio " \
                  "--output-format=json output?)"


# --------------------------------------------------------------------------- normal output


def test_json_normal_clean_status_line_is_not_an_error() -> None:
    """``--output-format=json,normal``: fio's ``jn: (groupid=0, jobs=1): err= 0: ...``
    is the clean status line, not an error (a real capture, fio 3.33)."""
    t = text("json-normal.txt")
    status = next(line for line in t.splitlines() if "err= 0:" in line)
    assert status.startswith("jn: (groupid=0, jobs=1): err= 0: pid=")
    run = fio.parse_fio(t)
    assert run.valid, run.reasons
    assert status in run.messages  # still shown, as fio's words
    # The same line of a failed job (fio prints errno and its text) is INVALID.
    failed = t.replace("err= 0:", "err= 5 (file:io_u.c:1889, func=io_u error, "
                       "error=Input/output error):")
    bad = fio.parse_fio(failed)
    assert any("fio said: jn: (groupid=0, jobs=1): err= 5" in r for r in bad.reasons)
    assert not fio.parse_fio(t.replace("err= 0:", "err=12:")).valid


# --------------------------------------------------------------------------- steady state


def test_steady_state_attained_ends_a_time_based_job_early_by_design() -> None:
    """``ss=iops:20% ss_dur=3``: fio ended the 30 s job after 4.569 s because its
    steady state was attained (a real capture, fio 3.33): valid, and said so."""
    run = fio.parse_fio(text("steady-state.txt"))
    [job] = run.jobs
    assert job.flag("time_based") and job.options["runtime"] == "30"
    assert job.runtime_ms == 4569 and job.steady_state is not None
    assert (job.steady_state.criterion, job.steady_state.duration_s,
            job.steady_state.attained) == ("iops:20.000000%", 3, True)
    assert run.valid, run.reasons
    [note] = [f.text for f in run.findings if f.kind == "steady-state"]
    assert note.startswith("job 'steady' (jobs[0]) ended after 4.569 s of its runtime of 30 s "
                           "because steady state was attained (ss=iops:20.000000% over 3 s")
    d = run.to_dict()
    assert d["jobs"][0]["steady_state"]["attained"] is True and note in d["notes"]


@pytest.mark.parametrize("attained", [0, "1", True, None])
def test_steady_state_not_attained_and_stopped_early_is_invalid(attained) -> None:
    """The same capture with fio's ``attained`` anything but the integer 1 (edited in
    code): the job stopped 25 s short without steady state, so it was cut short."""
    t = text("steady-state.txt")
    doc = json.loads(t[t.index("{\n"):])
    doc["jobs"][0]["steadystate"]["attained"] = attained
    run = fio.parse_fio(json.dumps(doc))
    assert not run.valid
    assert run.reasons == [
        "job 'steady' (jobs[0]) ran 4.569 s of its time_based runtime of 30 s: it was stopped "
        "early (its steady state, ss=iops:20.000000%, was not attained)"]
    # A signal still makes it INVALID, steady state or not.
    assert not fio.parse_fio("fio: terminating on signal 15\n" + t).valid


# --------------------------------------------------------------------------- job files


def _showcmd() -> str:
    """What ``fio --showcmd comments.fio`` printed (line 3 of comments.cmd)."""
    return text("comments.cmd").splitlines()[2]


def test_job_file_is_read_as_fios_showcmd_reads_it() -> None:
    """Comments are cut at the first ``;`` or ``#`` of a line, headers included
    (``[global] ; ...``, an apostrophe in ``[sized] ; it's ...``): the same options as
    ``fio --showcmd`` printed for the real job file."""
    from_file = fio.job_file_options(text("comments.fio"))
    from_fio = fio.job_file_options(_showcmd())
    for options in from_fio.values():
        options.pop("name", None)  # the command line's --name=X is the file's [X]
    assert from_file == from_fio
    assert from_file["global"]["time_based"] == "0" and from_file["global"]["runtime"] == "30"
    assert from_file["timed"]["time_based"] == "1"  # a bare flag, its comment cut


@pytest.mark.parametrize("header", ["[global] ; fio reads this header as [global]", "[global]"])
def test_job_file_comments_never_turn_a_value_true(header: str) -> None:
    """``time_based=0 ; size-bound...`` is 0: the size-bound job that read its 256 KiB in
    1 ms of its runtime=30 was not stopped early; the bare ``time_based`` of [timed] runs
    that job time-based over [global]'s 0 (it ran 2.001 s, as fio's JSON shows)."""
    job_file = text("comments.fio").replace(
        "[global] ; fio reads this header as [global]", header)
    run = fio.parse_fio(text("comments.json"), job_file=job_file)
    assert run.valid, run.reasons
    sized, timed = run.jobs
    assert not sized.flag("time_based") and sized.options["time_based"] == "0"
    assert timed.flag("time_based") and timed.runtime_ms == 2001
    assert "wrapped" in {f.kind for f in run.findings if "'timed'" in f.text}
    assert "job-file-mismatch" not in kinds(run)


def test_job_file_never_overrides_a_value_in_fios_json() -> None:
    """Job files edited (in code) away from the one that ran: fio's JSON wins."""
    real = text("comments.fio")
    # a bare time_based in [global]: fio's JSON has global time_based=0, which wins
    bare = real.replace("time_based=0 ; size-bound", "time_based ; size-bound")
    run = fio.parse_fio(text("comments.json"), job_file=bare)
    assert not run.jobs[0].flag("time_based") and run.valid
    # a value the JSON does not have for the job: only bare flags are taken from the file
    valued = real.replace("rw=read\n", "rw=read\ntime_based=1\n", 1)
    run = fio.parse_fio(text("comments.json"), job_file=valued)
    assert not run.jobs[0].flag("time_based") and run.valid
    # a value that differs from the JSON's: the JSON's is read, and the mismatch said
    other = real.replace("runtime=30 ", "runtime=5 ")
    run = fio.parse_fio(text("comments.json"), job_file=other)
    assert run.jobs[0].options["runtime"] == "30" and run.valid
    [warning] = [f.text for f in run.findings if f.kind == "job-file-mismatch"]
    assert "[global] runtime=5 (fio's JSON: 30)" in warning


def test_job_file_that_is_not_one_is_refused_naming_it(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A binary (this Python interpreter) given as the job file is refused at once by
    its control characters, naming the job file, exit 2; so are an unclosed quote in a
    command line and an option before any section (which fio refuses too)."""
    import sys
    report = str(DATA / "comments.json")
    assert main(["parse", "fio", report, "--job-file", sys.executable]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"fsaccept: cannot parse {sys.executable}: line ")
    assert "not a text file" in err and "\n" not in err
    for name, content, says in [
            ("quote.cmd", "fio --name=x --description='it is\n", "No closing quotation"),
            ("outside.fio", "bs=4k\n" + text("comments.fio"),
             "line 1: 'bs=4k' before any [section]")]:
        path = tmp_path / name
        path.write_text(content)
        assert main(["parse", "fio", report, "--job-file", str(path)]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith(f"fsaccept: cannot parse {path}: ") and says in err
    with pytest.raises(fio.JobFileError):
        fio.parse_fio(text("comments.json"), job_file="[x]\nbs=4k\x00\n")


# --------------------------------------------------------------------------- linear cost


def _linear_edits() -> dict[str, object]:
    """The real comments.json/comments.fio edited (in code) to grow by n units: option
    values with a run of blanks (fio's size and time syntax), a message line, a job
    file's line."""
    report, job_file = text("comments.json"), text("comments.fio")

    def options(n: int) -> str:
        doc = json.loads(report)
        doc["jobs"][1]["job options"].update(size="256" + " " * n + "x",
                                             runtime="2" + " " * n + "x")
        return json.dumps(doc)

    return {
        "option-values": lambda n: (options(n), job_file),
        "message-line": lambda n: ("fio: err=" + " " * n + "x\n" + report, job_file),
        "job-file-line": lambda n: (report, job_file.replace(
            "time_based   ;", "time_based" + " " * n + ";")),
    }


@pytest.mark.parametrize("edit", sorted(_linear_edits()))
def test_parsing_cost_is_linear_in_a_lines_length(edit: str) -> None:
    """The work of parsing grown by n and by 8n units, over that of the real capture,
    grows about 8x, not 64x (a long run of blanks made fio's size and time patterns
    quadratic). Counted deterministically, no clock: every pattern call of the fio
    modules replayed by a step-counting matcher, plus the Python lines run
    (``tests/unit/stepcount.py``)."""
    from fsaccept.benchmarks.fio import run as fiorun
    from fsaccept.benchmarks.fio import validity
    make = _linear_edits()[edit]
    stepcount.assert_linear(lambda n: make(n), lambda pair: fio.parse_fio(pair[0],
                                                                          job_file=pair[1]),
                            [fio, fiorun, validity], n=200)

def test_fio_writes_new_random_data_in_every_block_unless_the_entry_asks():
    from fsaccept.benchmarks.fio.command import fio_options, parameters
    entry = {"node_fraction": 1, "file_size": "1MiB", "runtime_s": 5}
    opts = fio_options(parameters("fio_seq_write", "seq_write", entry), "/d")
    assert {"--refill_buffers=1", "--buffer_compress_percentage=0",
            "--dedupe_percentage=0"} <= set(opts)
    asked = fio_options(parameters("fio_seq_write", "seq_write",
                                   {**entry, "data_pattern": "scrambled"}), "/d")
    assert "--refill_buffers=1" not in asked and "--scramble_buffers=1" in asked
    meta = fio_options(parameters("fio_metadata", "metadata",
                                  {"node_fraction": 1, "files": 10}), "/d")
    assert not any("buffers" in o for o in meta)  # no data written
