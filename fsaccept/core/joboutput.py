"""A benchmark job's own output (``rfm_job.out``, ``rfm_job.err``) as the live check reads
it, and as the sign-off reads it again from the run directory: one set of functions, two
callers (:mod:`fsaccept.rfm.acceptance`, :mod:`fsaccept.rfm.benchmark`;
:mod:`fsaccept.reporting.signoff.common`).

The job's lines that are not the benchmark's start with a marker: ``fsaccept-rank``
(where each rank ran), ``fsaccept-info KEY VALUE`` (what the job recorded about itself),
``fsaccept-retry`` (a crashed launch is run once more: what came before it on stderr,
and the rank lines before it on stdout, belong to the attempt that crashed).

Pure: text in, text out.
"""

from __future__ import annotations

import codecs
import itertools
import re
from collections.abc import Iterable, Iterator
from typing import Any, Callable

from fsaccept.core import placement, servers

#: ReFrame's names of a job's standard output and error, in its stage directory and
#: copied to its output directory.
JOB_STDOUT = "rfm_job.out"
JOB_STDERR = "rfm_job.err"

RANK_MARKER = "fsaccept-rank"
INFO_MARKER = "fsaccept-info"
#: Starts the line (on stdout and stderr) a job prints before it launches its benchmark
#: step once more (see ``BenchmarkTest.retry_crashed_launch``): what came before it on
#: stderr, and the rank lines before it on stdout, belong to the attempt that crashed.
RETRY_MARKER = "fsaccept-retry"
#: Starts each node's line of the per-node check (mount, and O_DIRECT when asked):
#: ``fsaccept-node-check NODE ok ANSWER`` or ``... NODE bad WHY``.
NODE_CHECK_MARKER = "fsaccept-node-check"

_TIME_LIMIT = re.compile(r"\*\*\* JOB \S+ ON \S+ CANCELLED AT \S+ DUE TO TIME LIMIT \*\*\*")
_STEP_CANCELLED = re.compile(r"\*\*\* STEP \S+ ON \S+ CANCELLED")


def decoded(data: bytes) -> str:
    """A job file's bytes as the live check reads them (``open(path, errors="replace")``):
    UTF-8 with undecodable bytes replaced, CRLF and CR line ends as ``\\n``."""
    text = data.decode("utf-8", "replace")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def decoded_lines(pieces: Iterable[bytes]) -> Iterator[str]:
    """The lines of a job file's bytes given a piece at a time, each without its end:
    exactly ``decoded(b"".join(pieces)).splitlines()``, never the whole text at once."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    carry: list[str] = []  # the parts of a line not ended yet
    cr = False  # the last piece ended with CR (maybe half of a CRLF)
    for piece in itertools.chain(pieces, [None]):
        text = decoder.decode(piece or b"", final=piece is None)
        if cr:
            text, cr = "\r" + text, False
        if piece is not None and text.endswith("\r"):
            text, cr = text[:-1], True
        for part in text.replace("\r\n", "\n").replace("\r", "\n").splitlines(keepends=True):
            line = part.splitlines()[0]
            carry.append(part)
            if line != part:  # it ends a line
                yield "".join(carry).splitlines()[0] if len(carry) > 1 else line
                carry = []
    if carry:
        yield "".join(carry)


def counted_stdout_lines(read: Callable[[], Iterable[str]]) -> Iterator[str]:
    """:func:`counted_stdout`'s lines, from a job's stdout read line by line twice
    (``read()``: its lines anew): where its last retry marker is, then the lines that
    count.  Exactly ``counted_stdout(text).splitlines()``, never the whole text."""
    marker, rank = RETRY_MARKER + " ", RANK_MARKER + " "
    last = None
    for i, line in enumerate(read()):
        if marker in line:
            last = i
    for i, line in enumerate(read()):
        if last is None or i > last:
            yield line
        elif i < last:
            if not line.startswith(rank):
                yield line
        else:  # the marker's line: what came before the marker was a rank line's start
            at = line.rfind(marker)
            yield line[at:] if line[:at].startswith(rank) else line


def counted_stdout(text: str) -> str:
    """The job's stdout without the rank lines of a launch that crashed (the one that
    counts is the last: the benchmark printed nothing in the crashed one)."""
    before, marker, after = text.rpartition(RETRY_MARKER + " ")
    if not marker:
        return text
    kept = [line for line in before.splitlines(keepends=True)
            if not line.startswith(RANK_MARKER + " ")]
    return "".join(kept) + marker + after


def counted_stderr(text: str) -> str:
    """The job's stderr from the launch that counts (the last one) on."""
    return text[text.rfind(RETRY_MARKER + " "):] if RETRY_MARKER + " " in text else text


def job_info(stdout: str | Iterable[str]) -> dict[str, str]:
    """What the job recorded about itself (``fsaccept-info KEY VALUE`` lines of the
    counted stdout, or its lines; a later line of a key wins).  The rank lines a retry
    drops are none of them: the stdout's own lines give the same."""
    info = {}
    for line in (stdout.splitlines() if isinstance(stdout, str) else stdout):
        if line.startswith(INFO_MARKER + " "):
            _, key, *value = line.split(" ", 2)
            info[key] = value[0] if value else ""
    return info


def ended_well(info: dict[str, str], stderr: str) -> bool:
    """Whether the benchmark step ended with exit 0 and no step was cancelled."""
    return info.get("benchmark_ended") == "0" and not _STEP_CANCELLED.search(stderr)


def benchmark_stderr(info: dict[str, str], stderr: str) -> str:
    """The counted stderr as the benchmark's aftermath: without Slurm's line of a time
    limit that came after the benchmark had ended well."""
    if not ended_well(info, stderr):
        return stderr
    return "".join(line for line in stderr.splitlines(keepends=True)
                   if not _TIME_LIMIT.search(line))


def parsed(parse: Callable[[str], Any], error_findings: Callable[[str], list[Any]],
           stdout: str, stderr: str) -> Any:
    """The benchmark's report (the counted stdout) parsed, with the findings of the
    benchmark's stderr added after it, each said to be stderr's (stdout carries the
    benchmark's own error lines; stderr the aftermath)."""
    run = parse(stdout)
    for finding in error_findings(stderr):
        finding.text = f"stderr: {finding.text}"
        run.findings.append(finding)
    return run


def exit_status(info: dict[str, str]) -> int | None:
    """The benchmark step's exit status the job recorded (``benchmark_ended``)."""
    status = info.get("benchmark_ended", "")
    return int(status) if re.fullmatch(r"-?[0-9]{1,9}", status) else None


def job_fstype(info: dict[str, str]) -> str:
    """The file-system type the job saw at its data directory (findmnt prints one line
    per mount stacked on the directory: the first counts)."""
    return (info.get("fstype", "").split() or [""])[0]


def node_mount_answers(stdout: str) -> dict[str, list[str]]:
    """{answer: its nodes} of the nodes whose per-node check said "ok" (the answer
    without its "ok "): each node's view of the target before the benchmark."""
    answers = servers.node_answers(stdout, NODE_CHECK_MARKER)
    return {answer.removeprefix("ok "): nodes for answer, nodes in answers.items()
            if answer.startswith("ok ")}


def recorded_fields(stdout: str) -> dict[str, str]:
    """What the live check records of its job from the job's counted stdout, as it
    records it: the nodes' view of the target before the benchmark (``node_mounts``),
    their clients' answer on the storage servers after it (``servers_after``), the
    file-system type the job saw (``job_fstype``) and where each rank ran
    (``rank_map``).  The sign-off requires the run report's to be these."""
    return {
        "node_mounts": "; ".join(servers.grouped(node_mount_answers(stdout))),
        "servers_after": "; ".join(servers.grouped(servers.node_answers(stdout))),
        "job_fstype": job_fstype(job_info(stdout)),
        "rank_map": placement.format_rank_map(placement.parse_rank_map(stdout, RANK_MARKER)),
    }
