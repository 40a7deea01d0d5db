"""Parse the JSON summary file IOR writes with ``-O summaryFormat=JSON
-O summaryFile=F`` into the same :class:`~.run.IorRun` as the text parser."""

from __future__ import annotations

import json
import math
import re
from typing import Any

from fsaccept.benchmarks.ior.parse import derived_findings, set_params
from fsaccept.benchmarks.ior.run import (INVALID, Finding, IorRun, IterationResult, MaxBandwidth,
                                         SummaryRow)


_NAN_RE = re.compile(r'(:\s*)(-?nan|-?inf)\b', re.IGNORECASE)


def parse_ior_json(text: str) -> IorRun:
    """Parse the JSON summary file (``-O summaryFormat=JSON -O summaryFile=F``).

    Raises ``ValueError`` with a clear message when the text is empty, not JSON (IOR 4.0.0
    writes invalid JSON into the summary file when run with ``-v``), or lacks IOR's keys.
    """
    if not text.strip():
        raise ValueError("IOR JSON summary is empty")

    def _bad(m: re.Match[str]) -> str:
        v = m.group(2).lower()
        if "nan" in v:
            return m.group(1) + "NaN"
        return m.group(1) + ("-Infinity" if v.startswith("-") else "Infinity")

    try:
        doc = json.loads(_NAN_RE.sub(_bad, text), parse_int=_int, parse_float=_Printed)
    except RecursionError:
        raise ValueError("IOR JSON summary is not valid JSON (nested too deeply)") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"IOR JSON summary is not valid JSON (line {e.lineno}, column "
                         f"{e.colno}: {e.msg}); {_why_broken(text, e)}") from None
    if not isinstance(doc, dict) or "tests" not in doc or "summary" not in doc:
        raise ValueError("not an IOR JSON summary: expected an object with 'tests' and 'summary'")

    run = IorRun(source="json")
    for key in ("Version", "Command line", "Began", "Machine", "Finished"):
        if doc.get(key) is not None and not isinstance(doc[key], str):
            raise ValueError(f"IOR JSON summary: {key!r} is {_shown(doc[key])}, not a string")
    ver = doc.get("Version")
    run.version = f"IOR-{ver}" if ver else None
    run.command_line = doc.get("Command line")
    run.began = doc.get("Began")
    run.machine = doc.get("Machine")
    run.finished = doc.get("Finished")
    try:
        tests = doc["tests"] or []
        if tests:
            t0 = tests[0]
            run.start_time = t0.get("StartTime")
            for k in ("TestID", "Path", "Capacity", "Used Capacity", "Inodes", "Used Inodes"):
                if k in t0:
                    run.header[k] = str(t0[k])
            run.parameters = {k: str(v) for k, v in (t0.get("Options") or {}).items()}
            prm = t0.get("Parameters") or {}
            for key in ("deadlineForStonewall", "stoneWallingWearOut"):
                _count(prm, key, "tests[0].Parameters")  # a deadline must be read, never lost
            # the Options block lacks the stonewall settings unless -D; take them from Parameters
            if prm.get("deadlineForStonewall"):
                run.parameters.setdefault("stonewallingTime", str(prm["deadlineForStonewall"]))
                run.parameters.setdefault(
                    "stoneWallingWearOut", str(prm.get("stoneWallingWearOut", 0)))
        for t in tests:
            counters: dict[str, int] = {}
            for item in _flatten(t.get("Results") or []):
                acc = item.get("access", "?")
                it = counters.get(acc, 0)
                counters[acc] = it + 1
                run.results.append(IterationResult(
                    access=acc,
                    bw_mib=_jnum(item.get("bwMiB")),
                    iops=_jnum(item.get("iops")),
                    latency_s=_jnum(item.get("latency")),
                    block_kib=_jnum(item.get("blockKiB")),
                    xfer_kib=_jnum(item.get("xferKiB")),
                    open_s=_jnum(item.get("openTime")),
                    wrrd_s=_jnum(item.get("wrRdTime")),
                    close_s=_jnum(item.get("closeTime")),
                    total_s=_jnum(item.get("totalTime")),
                    iteration=it,
                    bw_token=_token(item.get("bwMiB")),
                    test_id=_test_id(t),
                ))
            mx = t.get("max")
            if isinstance(mx, dict):
                for op in ("write", "read"):
                    if f"{op}MiB" in mx:
                        run.max_bandwidth.append(
                            MaxBandwidth(op, _figure(mx, f"{op}MiB", "max"),
                                         _figure(mx, f"{op}MB", "max", math.nan))
                        )
        for i, s in enumerate(doc["summary"] or []):
            where = f"summary[{i}]"
            run.summary.append(SummaryRow(
                operation=_text(s, "operation", where),
                max_mib=_figure(s, "bwMaxMIB", where),
                min_mib=_figure(s, "bwMinMIB", where),
                mean_mib=_figure(s, "bwMeanMIB", where),
                stddev_mib=_figure(s, "bwStdMIB", where),
                max_ops=_figure(s, "OPsMax", where),
                min_ops=_figure(s, "OPsMin", where),
                mean_ops=_figure(s, "OPsMean", where),
                stddev_ops=_figure(s, "OPsSD", where),
                mean_s=_figure(s, "MeanTime", where),
                stonewall_s=_jnum(s.get("StoneWallTime")),
                stonewall_mib=_jnum(s.get("StoneWallbwMeanMIB")),
                test_id=_count(s, "TestID", where),
                tasks=_count(s, "numTasks", where),
                tasks_per_node=_count(s, "tasksPerNode", where),
                reps=_count(s, "repetitions", where),
                fpp=_count(s, "filePerProc", where),
                reord=_count(s, "reorderTasks", where),
                reordoff=_count(s, "taskPerNodeOffset", where),
                reordrand=_count(s, "reorderTasksRandom", where),
                seed=_count(s, "reorderTasksRandomSeed", where),
                segments=_count(s, "segmentCount", where),
                block_bytes=_count(s, "blockSize", where),
                xfer_bytes=_count(s, "transferSize", where),
                agg_mib=_jnum(s.get("xsizeMiB")),
                api=s.get("API"),
                ref_num=_count(s, "ReferenceNumber", where),
                printed=_printed(s),
            ))
    except _Refused as e:
        raise ValueError(f"IOR JSON summary: {e}") from None
    except (KeyError, TypeError, AttributeError, ValueError) as e:
        raise ValueError(f"IOR JSON summary has an unexpected structure: {e!r}") from None

    set_params(run)
    if run.finished is None:
        run.findings.append(Finding(INVALID, "truncated", None, "JSON summary has no 'Finished'"))
    derived_findings(run)
    return run


_VERBOSE_RE = re.compile(r'"Command line": "[^"\n]*\s-(?:v+|-verbose)[\s"]')


def _why_broken(text: str, error: json.JSONDecodeError) -> str:
    """The likely cause, from what the file shows: it stops mid-document (IOR writes the
    file as the run goes: an aborted run leaves it cut short), or its run had -v (IOR 4.0.0
    then prints "]" twice)."""
    if not text[error.pos:].strip():
        return ("it stops before its end: the run was aborted (see its output) or the file "
                "was cut short")
    if _VERBOSE_RE.search(text):
        return "IOR 4.0.0 writes a broken summary file when run with -v"
    return "not a summary file IOR wrote whole"


class _Printed(float):
    """A JSON number that keeps the text IOR printed ("%.4f"): its precision bounds the
    true value (a 7.4e-5 s phase prints 0.0001)."""

    text: str

    def __new__(cls, text: str) -> _Printed:
        value = super().__new__(cls, text)
        value.text = text
        return value


#: JSON summary key -> SummaryRow field, for the figures the consistency rule reads.
_PRINTED_FIELDS = {"bwMaxMIB": "max_mib", "bwMinMIB": "min_mib", "bwMeanMIB": "mean_mib",
                   "OPsMax": "max_ops", "OPsMin": "min_ops", "OPsMean": "mean_ops",
                   "MeanTime": "mean_s", "xsizeMiB": "agg_mib",
                   "StoneWallTime": "stonewall_s", "StoneWallbwMeanMIB": "stonewall_mib"}


def _printed(summary: dict[str, Any]) -> dict[str, str]:
    return {name: summary[key].text for key, name in _PRINTED_FIELDS.items()
            if isinstance(summary.get(key), _Printed)}


def _int(text: str) -> int | float:
    """A JSON integer; beyond a float's range (1e400 written out) the float it becomes,
    an infinity: a figure the bogus-figure rules make INVALID, where float(int) would
    raise OverflowError (and int() refuses more than 4,300 digits)."""
    value = float(text)
    return int(text) if math.isfinite(value) else value


def _flatten(items: list[Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for it in items:
        if isinstance(it, list):
            out.extend(_flatten(it))
        elif isinstance(it, dict):
            out.append(it)
    return out


class _Refused(ValueError):
    """A value of the wrong type where IOR prints a number (the message names it)."""


def _shown(value: Any) -> str:
    return repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."


def _figure(obj: dict[str, Any], key: str, where: str, default: float | None = None) -> float:
    """A figure IOR prints "%.4f": a JSON number, or the string IOR writes for an infinity
    ("inf"); any other string, a boolean or null is no figure."""
    value = obj.get(key, default) if default is not None else obj[key]
    if isinstance(value, float):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)  # within a float's range: _int made the others infinite
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            number = 0.0
        if not math.isfinite(number):
            return number
    raise _Refused(f"{where}.{key} is {_shown(value)} where IOR prints a number")


def _text(obj: dict[str, Any], key: str, where: str) -> str:
    value = obj[key]
    if not isinstance(value, str):
        raise _Refused(f"{where}.{key} is {_shown(value)} where IOR prints a string")
    return value


def _count(obj: dict[str, Any], key: str, where: str) -> int | None:
    """An integer IOR prints "%d"/"%lld" (absent: None)."""
    value = obj.get(key)
    if value is None and key not in obj:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise _Refused(f"{where}.{key} is {_shown(value)} where IOR prints an integer")


def _token(v: Any) -> str | None:
    return v.text if isinstance(v, _Printed) else None


def _test_id(test: dict[str, Any]) -> int | None:
    tid = test.get("TestID")
    return tid if isinstance(tid, int) and not isinstance(tid, bool) else None


def _jnum(v: Any) -> float | None:
    if v is None:
        return None
    try:
        return float(v)  # IOR prints inf as the string "inf"
    except (TypeError, ValueError):
        return None
