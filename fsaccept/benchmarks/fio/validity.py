"""fio's INVALID rules, per job: errors, short runs of time-based jobs, bare flags fio's JSON
leaves out, settings left to fio's defaults, figures no file system can have, and what a
figure means (cache regime, wrapped time-based reads)."""

from __future__ import annotations

import os

from fsaccept.benchmarks.fio.run import (DIRECTIONS, MORE_THAN_SIZE, MUST_BE_EXPLICIT, NOTE,
                                         FioJob, Latency, parse_fio_size, parse_fio_time)
from fsaccept.core.findings import INVALID, WARNING, Finding, figure_problem

def flag_findings(job: FioJob, reports: int, have_job_file: bool) -> list[Finding]:
    """Infer the bare flags fio left out of its JSON where its figures show them,
    and say so; say it when they stay unknown."""
    out = []
    label = f"job {job.name!r} (jobs[{job.index}])"
    numjobs = parse_fio_size(job.options.get("numjobs")) or 1
    if "group_reporting" not in job.options and numjobs > 1 and reports == 1:
        job.options["group_reporting"] = "1"
        out.append(Finding(NOTE, "inferred", None,
                           f"{label}: group_reporting in effect (one report for numjobs="
                           f"{numjobs}), although fio's JSON omits it (given as a bare flag)"))
    size = job.option_bytes("size")
    if "time_based" not in job.options and size and "runtime" in job.options \
            and not any(k in job.options for k in MORE_THAN_SIZE) \
            and job.io_bytes > size * (numjobs if job.flag("group_reporting") else 1):
        job.options["time_based"] = "1"
        out.append(Finding(NOTE, "inferred", None,
                           f"{label}: time_based in effect (it moved {job.io_bytes} bytes, more "
                           f"than its size), although fio's JSON omits it (a bare flag)"))
    if "time_based" not in job.options and "runtime" in job.options and not have_job_file:
        out.append(Finding(NOTE, "flags-unknown", None,
                           f"{label}: runtime={job.options['runtime']} but no time_based in "
                           "fio's JSON: fio leaves out options given as bare flags; pass the "
                           "job file to know (fsaccept parse fio --job-file)"))
    return out


def job_findings(job: FioJob, node_memory_bytes: int | None) -> list[Finding]:
    out: list[Finding] = []
    label = f"job {job.name!r} (jobs[{job.index}])"
    if job.error:
        try:
            meaning = os.strerror(job.error)
        except (OverflowError, ValueError):  # beyond a C int: no errno
            meaning = "not an errno"
        out.append(Finding(INVALID, "job-error", None,
                           f"{label} failed: error={job.error} ({meaning})"))
    out += _bogus_figures(job, label)
    time_based = job.flag("time_based")
    runtime = job.options.get("runtime")
    runtime_s = parse_fio_time(runtime)
    numjobs = parse_fio_size(job.options.get("numjobs")) or 1
    size = job.option_bytes("size")
    if size and job.flag("group_reporting"):
        size *= numjobs
    if runtime is not None and runtime_s is None:
        out.append(Finding(WARNING, "runtime", None,
                           f"{label}: runtime={runtime} is not a time fio reads as meant (use "
                           "whole seconds, or 10s, 5m, 2h): whether it ran its course is "
                           "not checked"))
    elif runtime_s and job.runtime_ms < 0.99 * runtime_s * 1000:
        ss = job.steady_state
        if ss and ss.attained:
            # fio's ss= ends a job once its criterion holds: early by design, not cut short
            out.append(Finding(NOTE, "steady-state", None,
                               f"{label} ended after {job.runtime_ms / 1000:g} s of its "
                               f"runtime of {runtime_s:g} s because steady state was "
                               f"attained (ss={ss.criterion} over {ss.duration_s} s, "
                               f"reached {ss.measured}): fio's steady-state termination, "
                               "not a run stopped early"))
        elif time_based:
            out.append(Finding(INVALID, "short", None,
                               f"{label} ran {job.runtime_ms / 1000:g} s of its time_based "
                               f"runtime of {runtime_s:g} s: it was stopped early"
                               + (f" (its steady state, ss={ss.criterion}, was not attained)"
                                  if ss else "")))
        elif size and job.io_bytes < size and job.error == 0:
            out.append(Finding(INVALID, "short", None,
                               f"{label} ran {job.runtime_ms / 1000:g} s of its runtime of "
                               f"{runtime_s:g} s and moved {job.io_bytes} of its {size} bytes:"
                               " it was stopped early"
                               + (f" (its steady state, ss={ss.criterion}, was not attained)"
                                  if ss else "")))
    for name in DIRECTIONS:
        d = job.direction(name)
        if d.short_ios or d.drop_ios:
            out.append(Finding(WARNING, "short-ios", None,
                               f"{label} {name}: {d.short_ios} short and {d.drop_ios} dropped "
                               "I/Os"))
        if d.total_ios and 0 < d.runtime_ms < 1000:
            out.append(Finding(WARNING, "brief", None,
                               f"{label} {name}: rate measured over {d.runtime_ms} ms (fio "
                               "counts whole ms): imprecise, give it more work"))
    missing = [k for k in MUST_BE_EXPLICIT if k not in job.options]
    if missing:
        out.append(Finding(WARNING, "defaults", None,
                           f"{label}: {', '.join(missing)} not set: fio's defaults applied"))
    out += _meaning_notes(job, label, time_based, node_memory_bytes)
    return out


def _meaning_notes(job: FioJob, label: str, time_based: bool,
                   node_memory_bytes: int | None) -> list[Finding]:
    out: list[Finding] = []
    size = job.option_bytes("size")
    jobs = parse_fio_size(job.options.get("numjobs")) or 1
    if size and job.flag("group_reporting"):
        size *= jobs  # one file set per job, all reported together
    # (a bogus io_bytes, e.g. an integer beyond a float's range, is INVALID already)
    if time_based and size and job.io_bytes > size and not figure_problem(job.io_bytes):
        verb = {(True, False): "re-read", (False, True): "overwrote"}.get(
            (job.read.io_bytes > 0, job.write.io_bytes > 0), "re-read and overwrote")
        out.append(Finding(
            NOTE, "wrapped", None,
            f"{label}: time_based moved {job.io_bytes} bytes, {job.io_bytes / size:.2f} x its "
            f"{size}-byte file(s): fio wrapped around and {verb} the same blocks "
            "(cache-inflated)"))
    reads = job.read.total_ios > 0
    if reads and not job.direct_io and "file" not in job.options.get("ioengine", ""):
        if node_memory_bytes and size and size < node_memory_bytes:
            out.append(Finding(
                NOTE, "cache", None,
                f"{label}: buffered read of {size} bytes per node, less than the node's "
                f"memory ({node_memory_bytes} bytes): the cache regime (page-cache hits), "
                "not the file system's"))
        elif not node_memory_bytes:
            out.append(Finding(
                NOTE, "cache", None,
                f"{label}: buffered read (direct=0) of {size or 'unknown'} bytes: compare with "
                "the node's memory; if it fits, this is the cache regime"))
    return out


def _bogus_figures(job: FioJob, label: str) -> list[Finding]:
    """Numbers fio cannot have measured: not finite or negative anywhere, or a rate
    of 0 for a direction that did I/O (fio's JSON carries 1e400 as infinity)."""
    problems = []
    for name in DIRECTIONS:
        d = job.direction(name)
        io_done = d.io_bytes > 0 and d.runtime_ms > 0
        for key in ("io_bytes", "bw_bytes", "iops", "runtime_ms", "total_ios"):
            why = figure_problem(getattr(d, key), io_done=io_done and key in ("bw_bytes",
                                                                           "iops"))
            if why:
                problems.append(f"{name}.{key} {why}")
        for lat_name, lat in (("clat_ns", d.clat), ("lat_ns", d.lat)):
            problems += _latency_problems(f"{name}.{lat_name}", lat)
    problems += _latency_problems("sync.lat_ns", job.sync_lat)
    if not problems:
        return []
    return [Finding(INVALID, "bogus-figure", None,
                    f"{label}: numbers fio cannot have measured: {'; '.join(problems[:5])}"
                    + (f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""))]


def _latency_problems(where: str, lat: Latency | None) -> list[str]:
    if lat is None:
        return []
    values = {"min": lat.min_ns, "max": lat.max_ns, "mean": lat.mean_ns,
              **{f"percentile[{k}]": v for k, v in lat.percentiles.items()}}
    return [f"{where}.{k} {why}" for k, v in values.items()
            if (why := figure_problem(v, io_done=False))]
