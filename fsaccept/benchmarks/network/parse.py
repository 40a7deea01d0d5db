"""The network program's output (``python -m fsaccept.suite.network``) and iperf3's JSON,
parsed: pure, the live check and the sign-off call it on the same bytes.

The program's lines (``fsaccept-network`` first)::

    fsaccept-network version V runtime_s S servers H1:P1,H2:P2 nodes N1,N2
    fsaccept-network step KIND ROUND NODE SERVER PORT   (the plan; KIND alone|together|
                                                         together_read)
    fsaccept-network result ROUND NODE EXIT FILE        (iperf3's JSON of that step, kept)
    fsaccept-network end

In an ``alone`` round each node sends to a server of its own, so a node's figure is its
own link's; the ``together`` round has every node send at once, each to an endpoint of
its own: the aggregate is the sum of each node's steady rate, what it sent in its
1-second intervals but its first and its last over their seconds (the edges, where a
node that started earlier or ended later than the others had the link to itself, are
left out: the job steps start within a second of each other).  Format 2 adds the
``together_read`` round: every node at once again, each from its own endpoint, the
server sending (``iperf3 -R``): what a read crosses.  A figure is never printed: it is
read from iperf3's own JSON (``iperf3 -J``), which the job keeps (:func:`link_figure`).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from fsaccept.core import ownlines
from fsaccept.core.findings import INVALID, Finding, Findings, Judged, json_safe
from fsaccept.core.units import MIB

PREFIX = "fsaccept-network"
#: The output format the program prints as its version, and those still read (format 1
#: has no read round: its run measured no read).
FORMAT = "2"
FORMATS = ("1", "2")
ALONE, TOGETHER, TOGETHER_READ = "alone", "together", "together_read"
#: Each kind of step, and the server sends in it (iperf3 -R).
KINDS = {ALONE: False, TOGETHER: False, TOGETHER_READ: True}
#: A line at most this long is read (the version line lists every node and endpoint).
MAX_LINE = 1 << 20
#: iperf3's JSON of one step is read up to this size (a 1-second interval report is
#: about 1 KiB per stream: an hour of 8 streams fits).
MAX_REPORT = 64 << 20

_INT = r"(0|[1-9][0-9]{0,17})"
_NODE = r"([A-Za-z0-9][A-Za-z0-9._-]{0,63})"
_HOST = r"([A-Za-z0-9][A-Za-z0-9._:-]{0,252})"
_PORT = r"([1-9][0-9]{0,4})"
_NODE_NAME = re.compile(_NODE)
_ENDPOINT = re.compile(rf"{_HOST}:{_PORT}")
_HEADER = re.compile(rf"^{PREFIX} version (\S+) runtime_s {_INT} servers (\S+) "
                     rf"nodes (\S+)$")
_STEP = re.compile(rf"^{PREFIX} step ({'|'.join(KINDS)}) {_INT} {_NODE} {_HOST} {_PORT}$")
_RESULT = re.compile(rf"^{PREFIX} result {_INT} {_NODE} (-?[0-9]{{1,4}}) "
                     r"((?:a[0-9]{1,6}|t|r)-[A-Za-z0-9._-]{1,64}\.json)$")


@dataclass(frozen=True)
class Planned:
    """One step of the plan as the program printed it, and its result line."""

    kind: str
    round: int
    node: str
    server: str
    port: int
    exit: int | None = None
    report: str = ""  #: iperf3's JSON file of the step, in the job's directory

    @property
    def endpoint(self) -> str:
        return f"{self.server}:{self.port}"


@dataclass
class NetworkRun(Judged):
    """Everything parsed from one run of the network program."""

    version: str | None = None
    runtime_s: int | None = None
    endpoints: list[str] = field(default_factory=list)
    nodes: list[str] = field(default_factory=list)
    steps: list[Planned] = field(default_factory=list)
    ended: bool = False
    findings: list[Finding] = field(default_factory=Findings)

    def of(self, kind: str) -> list[Planned]:
        return [s for s in self.steps if s.kind == kind]

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["findings"] = [asdict(f) for f in self.findings]
        d["valid"], d["reasons"] = self.valid, self.reasons
        return json_safe(d)


def program_lines(text: str) -> str:
    """The program's own lines of a job's output, as printed."""
    return ownlines.program_lines(text, PREFIX)


def _invalid(run: NetworkRun, kind: str, lineno: int | None, text: str) -> None:
    run.findings.append(Finding(INVALID, kind, lineno, text))


def parse_network(text: str) -> NetworkRun:
    """The run ``text`` holds; what cannot be trusted is a finding (INVALID)."""
    run = NetworkRun()
    at: dict[tuple[int, str], int] = {}
    for lineno, line in ownlines.own_lines(text, PREFIX, MAX_LINE, run.findings,
                                           lambda: run.ended):
        if m := _HEADER.match(line):
            if run.version is not None:
                _invalid(run, "duplicate", lineno, "a second version line")
                continue
            endpoints, nodes = m.group(3).split(","), m.group(4).split(",")
            bad = [x for x in endpoints if not _ENDPOINT.fullmatch(x)] + [
                x for x in nodes if not _NODE_NAME.fullmatch(x)]
            if bad:
                _invalid(run, "malformed", lineno, f"{bad[0][:80]!r}: not a node or an "
                         "endpoint (host:port) of its version line")
            run.version, run.runtime_s = m.group(1), int(m.group(2))
            run.endpoints, run.nodes = endpoints, nodes
        elif run.version is None:
            _invalid(run, "order", lineno, f"{line[:200]}: before the version line")
        elif m := _STEP.match(line):
            key = (int(m.group(2)), m.group(3))
            if key in at:
                _invalid(run, "duplicate", lineno, f"a second step for round {key[0]} "
                         f"on {key[1]}")
                continue
            at[key] = len(run.steps)
            run.steps.append(Planned(m.group(1), key[0], key[1], m.group(4),
                                     int(m.group(5))))
        elif m := _RESULT.match(line):
            i = at.get((int(m.group(1)), m.group(2)))
            if i is None or run.steps[i].exit is not None:
                _invalid(run, "order", lineno, f"{line[:200]}: a result for no step of "
                         "the plan, or a second one")
                continue
            s = run.steps[i]
            run.steps[i] = Planned(s.kind, s.round, s.node, s.server, s.port,
                                   int(m.group(3)), m.group(4))
        elif line == f"{PREFIX} end":
            run.ended = True
        else:
            _invalid(run, "malformed", lineno, f"{line[:200]}: not a line it prints")
    if run.version is None:
        _invalid(run, "eof", None, f"no '{PREFIX} version' line: the network check did "
                 "not run")
    elif not run.ended:
        _invalid(run, "eof", None, f"no '{PREFIX} end' line: the network check did not "
                 "finish")
    return run


@dataclass(frozen=True)
class Link:
    """One iperf3 test as its JSON gives it: what the server received, MiB/s over the
    test's seconds; the sender's retransmits; its streams' mean round-trip time (ms,
    None where the kernel gives none); iperf3's version; its steady rate (MiB/s, what
    it sent in its intervals but the first and the last, over their seconds; None with
    fewer than 3)."""

    mib_s: float
    seconds: float
    retransmits: int
    rtt_ms: float | None
    version: str
    steady_mib_s: float | None = None


def _number(x: Any) -> float | None:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
        return None
    return float(x)


def parse_iperf3(report: str, reverse: bool = False) -> Link:
    """One client's ``iperf3 -J`` report; ValueError, saying why, for one that is not a
    complete TCP test from client to server (``reverse``: from server to client, ``-R``:
    then what the client received, and the server's retransmits and round-trip)."""
    if len(report) > MAX_REPORT:
        raise ValueError(f"{len(report):,} characters, more than an iperf3 report "
                         f"({MAX_REPORT:,})")
    try:
        data = json.loads(report)
    except ValueError as err:
        raise ValueError(f"not JSON ({str(err)[:120]})") from None
    if not isinstance(data, dict):
        raise ValueError("not an iperf3 report (not a JSON object)")
    if data.get("error"):
        raise ValueError(f"iperf3: {str(data['error'])[:200]}")
    start, end = data.get("start"), data.get("end")
    if not isinstance(start, dict) or not isinstance(end, dict):
        raise ValueError("no start or end section: not a finished iperf3 test")
    test = start.get("test_start") if isinstance(start.get("test_start"), dict) else {}
    if test.get("protocol") != "TCP":
        raise ValueError(f"protocol {test.get('protocol')!r}, not TCP")
    if not reverse and test.get("reverse") not in (0, False):
        raise ValueError("a reverse test (-R): the server sent, not the client")
    if reverse and test.get("reverse") not in (1, True):
        raise ValueError("not a reverse test (-R): the client sent, not the server")
    received = end.get("sum_received") if isinstance(end.get("sum_received"), dict) else {}
    sent = end.get("sum_sent") if isinstance(end.get("sum_sent"), dict) else {}
    got, seconds = _number(received.get("bytes")), _number(received.get("seconds"))
    if got is None or seconds is None or got <= 0 or seconds <= 0:
        raise ValueError("the server received nothing (end.sum_received)")
    retransmits = sent.get("retransmits", 0)
    if isinstance(retransmits, bool) or not isinstance(retransmits, int) or retransmits < 0:
        raise ValueError(f"end.sum_sent.retransmits {retransmits!r} is not a count")
    rtts = []
    for stream in end.get("streams") or []:
        sender = stream.get("sender") if isinstance(stream, dict) else None
        rtt = _number(sender.get("mean_rtt")) if isinstance(sender, dict) else None
        if rtt is not None and rtt >= 0:
            rtts.append(rtt)
    spans = []
    for i, interval in enumerate(data.get("intervals") or []):
        total = interval.get("sum") if isinstance(interval, dict) else None
        sent = _number(total.get("bytes")) if isinstance(total, dict) else None
        span = _number(total.get("seconds")) if isinstance(total, dict) else None
        if sent is None or span is None or sent < 0 or span <= 0:
            raise ValueError(f"intervals[{i}].sum: not bytes over seconds")
        if not total.get("omitted"):
            spans.append((sent, span))
    middle = spans[1:-1]
    steady = (sum(b for b, _ in middle) / sum(s for _, s in middle) / MIB
              if middle else None)
    version = start.get("version")
    if not isinstance(version, str) or not re.fullmatch(r"iperf \d+\.\d+(\.\d+)?\S*", version):
        raise ValueError(f"start.version {str(version)[:40]!r} is not iperf3's")
    return Link(got / seconds / MIB, seconds, retransmits,
                sum(rtts) / len(rtts) / 1000 if rtts else None, version.split()[1], steady)


def link_figure(report: str | None, exit_code: int | None, reverse: bool = False
                ) -> tuple[Link | None, str]:
    """(a step's link, or None; why not) from its iperf3 JSON and exit status
    (``reverse``: a step of the read round)."""
    if exit_code is None:
        return None, "its step has no result line"
    if report is None:
        return None, "its iperf3 report is missing"
    try:
        link = parse_iperf3(report, reverse)
    except ValueError as err:
        why = str(err)
        return None, (f"iperf3 exited {exit_code}: {why}" if exit_code else why)
    if exit_code != 0:
        return None, f"iperf3 exited {exit_code}"
    return link, ""
