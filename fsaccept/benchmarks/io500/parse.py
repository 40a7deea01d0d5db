"""IO500 (io500-isc26_v1): read a run's results: its result directory (``result.txt``,
``result_summary.txt``, ``config.ini``, the per-phase outputs) or its captured stdout.

Pure: it reads, never recomputes a figure (the score is recomputed in :mod:`.score`,
judged in :mod:`.validity`).  Formats as io500's src/main.c writes them (seen in the
real captures of ``../shared/captures/io500-isc26_v1/``):

- stdout and ``result_summary.txt``: ``IO500 version V (standard|extended)``, one line
  per phase (``[RESULT]`` scored, ``[      ]`` not), ``[SCORE ]`` / ``[SCOREX]``; on
  stdout, ``ERROR INVALID (src:line) message`` lines before the phase they are about.
- ``result.txt``: INI-like; ``[run]``, one section per phase (``; ERROR INVALID message``
  comments in it), ``[SCORE]`` (``[SCOREX]``), ``; END`` at the end of a run that ended.

Standard library only, plus IOR's and mdtest's own error-line rules for the per-phase
outputs (never copied here).
"""

from __future__ import annotations

import json
import os
import re
import shlex
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from fsaccept.benchmarks.ior import parse as ior_parse
from fsaccept.benchmarks.ior.patterns import data_pattern_of
from fsaccept.benchmarks.mdtest import parse as mdtest_parse
from fsaccept.benchmarks.io500.score import (BW, MD, NONE, PHASES,  # noqa: F401 (re-exported)
                                             recompute_all)
from fsaccept.core import inputs
from fsaccept.core.findings import INVALID, clip, json_safe

#: Phases that write: each must run until the stonewall (IO500's rules).
WRITE_PHASES = ("ior-easy-write", "ior-hard-write", "mdtest-easy-write",
                "mdtest-hard-write", "ior-rnd4K-write", "ior-rnd1MB-write")
#: The stonewall time IO500's rules ask for (its ``scc`` mode: 30 s).
RULES_STONEWALL_S, SCC_STONEWALL_S = 300, 30
MODES = ("standard", "extended")

_VERSION_RE = re.compile(r"^IO500 version (\S+) \((\w+)\)\s*$")
_PHASE_RE = re.compile(r"^\[(RESULT|      )\]\s+(\S+)\s+(\S+) (GiB/s|kIOPS) : time (\S+) "
                       r"seconds( \[INVALID\])?\s*$")
_SCORE_RE = re.compile(r"^\[(SCORE |SCOREX)\] Bandwidth (\S+) GiB/s : IOPS (\S+) kiops : "
                       r"TOTAL (\S+)( \[INVALID\])?\s*$")
_ERROR_RE = re.compile(r"^ERROR INVALID \(([^)]*)\) (.*)$")
_KEY_RE = re.compile(r"^([A-Za-z0-9_-]+)\s*= ?(.*)$")
_FATAL_RE = re.compile(r"^FATAL \(")
# A rank killed by an assertion or a signal (IOR's POSIX backend on a full file
# system: "Assertion `rc >= 0' failed", then exit status 134).
_DIED_RE = re.compile(r"Assertion .{0,200} failed|Process received signal|exited on signal|"
                      r"Segmentation fault|Aborted \(core dumped\)|MPI_ABORT was invoked|"
                      r"non-zero (?:status|exit code)|CANCELLED|DUE TO TIME LIMIT")
#: Messages printed once for the whole run, before its first phase.
_RUN_MESSAGES = ("stonewall-time ", "DRY RUN MODE", "pause-dir")


def _num(text: str | None) -> float | None:
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


@dataclass
class Phase:
    """One phase as IO500 reported it."""

    name: str
    group: str  #: ``BW``, ``MD`` or ``none``
    optional: bool  #: runs in extended mode only
    score: float | None = None  #: result.txt's ``score`` (else the printed line's)
    unit: str = ""  #: ``GiB/s`` or ``kIOPS``
    time_s: float | None = None  #: result.txt's ``t_delta`` (else the printed time)
    scored: bool | None = None  #: printed ``[RESULT]`` (True) or ``[      ]``
    io500_invalid: bool | None = None  #: ``[INVALID]`` on its printed line
    messages: list[str] = field(default_factory=list)  #: IO500's ERROR INVALID messages
    exe: str = ""
    extras: dict[str, str] = field(default_factory=dict)
    started: bool = False  #: a ``t_start`` in result.txt (or a printed line)
    ended: bool = False  #: a ``t_end`` in result.txt (or a printed line)
    printed_score: float | None = None  #: its stdout/result_summary line's score
    data_pattern: str = ""  #: IOR phases: the data IOR wrote or read (its exe line)
    tool_errors: list[str] = field(default_factory=list)  #: IOR/mdtest error lines


@dataclass
class Score:
    """A ``[SCORE]`` or ``[SCOREX]`` of result.txt, or a printed ``[SCORE ]`` line."""

    bw: float | None
    md: float | None
    total: float | None
    io500_invalid: bool
    hash: str = ""


@dataclass
class Io500Run:
    """An IO500 run as its files say it went; :meth:`to_dict` is ``fsaccept parse``'s."""

    path: str
    source: str  #: ``directory``, ``stdout`` or ``result.txt``
    version: str | None = None
    mode: str | None = None
    procs: int | None = None
    config_hash: str | None = None
    result_dir: str | None = None
    run_messages: list[str] = field(default_factory=list)
    phases: list[Phase] = field(default_factory=list)
    #: result.txt's ``[SCORE]``/``[SCOREX]`` sections, by name.
    scores: dict[str, Score] = field(default_factory=dict)
    #: The printed ``[SCORE ]``/``[SCOREX]`` lines (stdout or result_summary.txt).
    printed_scores: dict[str, Score] = field(default_factory=dict)
    ended: bool = False  #: result.txt's ``; END`` (stdout: its closing line)
    stonewall_s: int | None = None
    stonewall_source: str = ""
    scc: bool = False
    #: The data pattern IO500 gave IOR (``[global] dataPacketType``).
    data_pattern: str | None = None
    #: ``FATAL``, assertion, signal and launcher lines (stdout, stderr).
    died_lines: list[str] = field(default_factory=list)
    leftover_stonewall_files: list[str] = field(default_factory=list)
    exit_status: int | None = None
    notes: list[str] = field(default_factory=list)  #: what the parser could not read

    @property
    def dry_run(self) -> bool:
        return any(m.startswith("DRY RUN MODE") for m in self.run_messages)

    @property
    def io500_valid(self) -> bool | None:
        """IO500's own verdict: its ``[SCORE]`` not marked ``[INVALID]`` (None: none)."""
        score = self.scores.get("SCORE") or self.printed_scores.get("SCORE")
        return None if score is None else not score.io500_invalid

    def phase(self, name: str) -> Phase | None:
        return next((p for p in self.phases if p.name == name), None)

    def expected_phases(self) -> list[str]:
        """The phases its mode runs, in order (standard: the non-optional ones)."""
        return [n for n, (_, opt) in PHASES.items() if self.mode == "extended" or not opt]

    # ``valid``/``reasons``: what the parser itself found wrong in the files; IO500's
    # verdict and fsaccept's rules are :mod:`.validity`'s (``Benchmark.reread_rules``).
    @property
    def valid(self) -> bool:
        return not self.notes

    @property
    def reasons(self) -> list[str]:
        return list(self.notes)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = json_safe(asdict(self))
        d.pop("notes")
        d["valid"], d["reasons"] = self.valid, self.reasons
        d["dry_run"], d["io500_valid"] = self.dry_run, self.io500_valid
        d["recomputed"] = json_safe(recompute_all(self))
        return d


def run_from_dict(data: dict[str, Any]) -> Io500Run:
    """A run back from its :meth:`Io500Run.to_dict` (the check's record, re-read by the
    sign-off); ValueError when it is not one."""
    if not isinstance(data, dict) or not isinstance(data.get("phases"), list):
        raise ValueError("not an IO500 run record (no phases)")
    names = set(Io500Run.__dataclass_fields__) - {"phases", "scores", "printed_scores"}
    try:
        run = Io500Run(**{k: v for k, v in data.items() if k in names})
        run.phases = [Phase(**{k: v for k, v in ph.items()
                               if k in Phase.__dataclass_fields__})
                      for ph in data["phases"]]
        for key in ("scores", "printed_scores"):
            setattr(run, key, {n: Score(**s) for n, s in (data.get(key) or {}).items()})
        run.notes = list(data.get("reasons") or [])
    except (TypeError, AttributeError) as err:
        raise ValueError(f"not an IO500 run record ({err})") from None
    return run


#: The units of IO500's [SCORE] figures as the check reports them.
SCORE_UNITS = {"total": "score", "bw": "GiB/s", "md": "kIOPS"}


def figures_of(run: Io500Run | None) -> dict[str, tuple[float, str]]:
    """IO500's own figures (the check's, and what the sign-off holds its record to): its
    [SCORE] (result.txt's, else the printed line) as total, bw and md, and each scored
    phase's score."""
    if run is None:
        return {}
    out: dict[str, tuple[float, str]] = {}
    score = run.scores.get("SCORE") or run.printed_scores.get("SCORE")
    if score is not None:
        for name, value in (("total", score.total), ("bw", score.bw), ("md", score.md)):
            if value is not None:
                out[name] = (value, SCORE_UNITS[name])
    for ph in run.phases:
        if ph.group != NONE and ph.score is not None:
            out[ph.name] = (ph.score, ph.unit)
    return out


# --------------------------------------------------------------------------- reading


#: How a file's text is read: :func:`fsaccept.core.inputs.read_text`'s signature (the
#: live check's, or a sign-off's :meth:`fsaccept.core.inputs.Reader.read_text`).
TextReader = Callable[..., str]


def read_io500(path: str | os.PathLike, stdout: str | None = None, stderr: str | None = None,
               exit_status: int | None = None, *, read_text: TextReader = inputs.read_text,
               shown: str | None = None) -> Io500Run:
    """The run at ``path``: a result directory, or one file (captured stdout,
    ``result_summary.txt`` or ``result.txt``).  ``stdout``/``stderr``: the job's streams
    when the caller has them (the check).  ValueError (``PATH: message``) when ``path``
    is no IO500 output: missing, empty, binary, not IO500's or cut inside its header.

    ``read_text``: how each file is read (the sign-off reads the run's copy through its
    own reader, so that what it judges is what its manifest digests); ``shown``: the path
    the run names and records in place of ``path`` (the stage directory the live check
    read, where the sign-off reads the copy in the output directory)."""
    p = Path(path)
    name = Path(shown) if shown is not None else p
    if p.is_dir():
        run = _read_directory(p, read_text, name)
    else:
        text = _text(p, "IO500 output", read_text)
        run = Io500Run(path=str(name),
                       source="result.txt" if _is_result_txt(text) else "stdout")
        if run.source == "result.txt":
            _parse_result_txt(run, text, str(name))
        else:
            _parse_printed(run, text, str(name), is_stdout=True)
    if stdout is not None:
        _parse_printed(run, stdout, "stdout", is_stdout=True)
    if stderr:
        _scan_died(run, stderr)
    run.exit_status = exit_status
    return run


def job_run(result_dir: str | os.PathLike, stdout: str, stderr: str,
            exit_status: int | None, *, read_text: TextReader = inputs.read_text,
            shown: str | None = None) -> tuple[Io500Run | None, str]:
    """(the run as a job's result directory, else its stdout, says it went; why the
    directory could not be read, or ''): the live check's reading, and the sign-off's
    of the copy it verifies (one function, two callers).  None when io500 left
    neither."""
    try:
        return read_io500(result_dir, stdout=stdout, stderr=stderr, exit_status=exit_status,
                          read_text=read_text, shown=shown), ""
    except (ValueError, inputs.InputError) as err:
        why = str(err)
    try:
        run = parse_text(stdout)
    except ValueError:
        return None, why
    run.exit_status = exit_status
    return run, why


def record_of(run: Io500Run) -> str:
    """The record the check keeps of a run (``io500_result``): ``fsaccept parse``'s JSON
    without the recomputed score (the sign-off recomputes it from the phases)."""
    record = run.to_dict()
    record.pop("recomputed", None)
    return json.dumps(record, sort_keys=True)


def parse_text(text: str) -> Io500Run:
    """A captured stdout (or result.txt) given as text (``Benchmark.parser``)."""
    if not text.strip() or "\x00" in text:
        raise ValueError("empty or binary: not IO500's output")
    run = Io500Run(path="", source="result.txt" if _is_result_txt(text) else "stdout")
    if run.source == "result.txt":
        _parse_result_txt(run, text, "result.txt")
    else:
        _parse_printed(run, text, "stdout", is_stdout=True)
    return run


def _text(path: Path, what: str, read_text: TextReader = inputs.read_text) -> str:
    # Binary data (NUL bytes) is refused at the piece that holds it, before the rest.
    text = read_text(path, inputs.MAX_LOG_BYTES, what, binary=False)
    if not text.strip():
        raise inputs.InputError(f"{path}: empty: no {what}")
    return text


def _is_result_txt(text: str) -> bool:
    return text.lstrip("\ufeff \t\n").startswith("[run]")


def _read_directory(d: Path, read_text: TextReader = inputs.read_text,
                    name: Path | None = None) -> Io500Run:
    """The result directory ``d`` (named ``name`` in the run and its notes)."""
    name = d if name is None else name
    result = d / "result.txt"
    if not result.exists():
        raise inputs.InputError(f"{d}: no result.txt: not an IO500 result directory")
    run = Io500Run(path=str(name), source="directory")
    _parse_result_txt(run, _text(result, "IO500 result.txt", read_text),
                      str(name / "result.txt"))
    summary = d / "result_summary.txt"
    if summary.exists():
        text = read_text(summary, inputs.MAX_LOG_BYTES, "IO500 result_summary.txt")
        if text.strip():  # empty when the run died before io500 wrote its version line
            _parse_printed(run, text, str(name / "result_summary.txt"), is_stdout=False)
    config = d / "config.ini"
    if config.exists():
        _parse_config(run, read_text(config, inputs.MAX_JOB_FILE_BYTES, "IO500 config.ini"))
    run.leftover_stonewall_files = sorted(f.name for f in d.glob("*.stonewall"))
    for ph in run.phases:
        out = d / f"{ph.name}.txt"
        if out.is_file():
            _scan_phase_output(ph, read_text(out, inputs.MAX_LOG_BYTES,
                                             f"IO500 {ph.name} output"))
    return run


def _new_phase(run: Io500Run, name: str) -> Phase:
    ph = run.phase(name)
    if ph is None:
        group, optional = PHASES.get(name, (NONE, False))
        ph = Phase(name=name, group=group, optional=optional,
                   unit="GiB/s" if name.startswith("i") else "kIOPS")  # as io500 prints
        run.phases.append(ph)
    return ph


def _parse_result_txt(run: Io500Run, text: str, where: str) -> None:
    section, ph = "", None
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.rstrip()
        if not line:
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            ph = None if section in ("run", "SCORE", "SCOREX") else _new_phase(run, section)
            if section in ("SCORE", "SCOREX"):
                run.scores[section] = Score(None, None, None, False)
            continue
        if line.startswith(";"):
            body = line.lstrip("; ")
            if body.startswith("ERROR INVALID "):
                msg = body[len("ERROR INVALID "):]
                (ph.messages if ph else run.run_messages).append(msg)
            elif body.startswith("END"):
                run.ended = True
            continue
        m = _KEY_RE.match(line)
        if not m:
            run.notes.append(f"{where}: line {lineno}: not a key = value line: {clip(line, 80)}")
            continue
        key, value = m.group(1), m.group(2).strip()
        if section == "run":
            _run_key(run, key, value)
        elif section in ("SCORE", "SCOREX"):
            _score_key(run.scores[section], key, value)
        elif ph is not None:
            _phase_key(ph, key, value)
    if run.version is None or run.mode is None or run.procs is None:
        raise inputs.InputError(f"{where}: no complete [run] header (version, procs, mode): "
                                "not IO500's result.txt, or cut inside its header")


def _run_key(run: Io500Run, key: str, value: str) -> None:
    if key == "procs":
        run.procs = int(value) if value.isdigit() else None
    elif key == "version":
        run.version = value
    elif key == "config-hash":
        run.config_hash = value
    elif key == "result-dir":
        run.result_dir = value
    elif key == "mode":
        run.mode = value if value in MODES else None


def _score_key(score: Score, key: str, value: str) -> None:
    if key == "SCORE":
        score.io500_invalid = value.endswith("[INVALID]")
        score.total = _num(value.removesuffix("[INVALID]").strip())
    elif key in ("MD", "BW"):
        setattr(score, key.lower(), _num(value))
    elif key == "hash":
        score.hash = value


def _phase_key(ph: Phase, key: str, value: str) -> None:
    if key == "t_start":
        ph.started = True
    elif key == "t_end":
        ph.ended = True
    elif key == "score":
        ph.score = _num(value)
    elif key == "t_delta":
        ph.time_s = _num(value)
    elif key == "exe":
        ph.exe = value
        ph.data_pattern = _pattern_of(value)
    else:
        ph.extras[key] = value


def _pattern_of(exe: str) -> str:
    try:
        argv = shlex.split(exe)
    except ValueError:
        argv = exe.split()
    return data_pattern_of(argv) if argv and argv[0].endswith("ior") else ""


def _parse_printed(run: Io500Run, text: str, where: str, is_stdout: bool) -> None:
    """stdout or result_summary.txt: the version line, a line per phase, the scores."""
    pending: list[str] = []
    seen_version = False
    for line in text.splitlines():
        m = _VERSION_RE.match(line)
        if m:
            seen_version = True
            run.version = run.version or m.group(1)
            run.mode = run.mode or (m.group(2) if m.group(2) in MODES else None)
            continue
        m = _ERROR_RE.match(line)
        if m:
            msg = m.group(2).strip()
            if msg.startswith(_RUN_MESSAGES) or not seen_version:
                if msg not in run.run_messages:
                    run.run_messages.append(msg)
            else:
                pending.append(msg)
            continue
        m = _PHASE_RE.match(line)
        if m:
            ph = _new_phase(run, m.group(2))
            ph.scored, ph.unit = m.group(1) == "RESULT", m.group(4)
            ph.printed_score = _num(m.group(3))
            ph.io500_invalid = bool(m.group(6))
            if ph.score is None:
                ph.score = ph.printed_score
            if ph.time_s is None:
                ph.time_s = _num(m.group(5))
            ph.started = ph.ended = True
            ph.messages += [msg for msg in pending if msg not in ph.messages]
            pending = []
            continue
        m = _SCORE_RE.match(line)
        if m:
            run.printed_scores[m.group(1).strip()] = Score(
                _num(m.group(2)), _num(m.group(3)), _num(m.group(4)), bool(m.group(5)))
            continue
        if line.startswith("The result files are stored in the directory: "):
            run.ended = True
            run.result_dir = run.result_dir or line.split(": ", 1)[1].strip()
        if is_stdout:
            _scan_died(run, line)
    if not seen_version and run.version is None:
        raise inputs.InputError(f"{where}: no 'IO500 version' line: not IO500's output")


def _scan_died(run: Io500Run, text: str) -> None:
    for line in text.splitlines():
        if (_FATAL_RE.match(line) or _DIED_RE.search(line)) and line not in run.died_lines:
            run.died_lines.append(clip(line.strip(), 200))


def _parse_config(run: Io500Run, text: str) -> None:
    """config.ini: the settings io500 ran with (every key, defaults included)."""
    section = ""
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            continue
        m = _KEY_RE.match(line)
        if not m:
            continue
        key, value = m.group(1), m.group(2).strip()
        if section == "debug" and key == "stonewall-time" and value.isdigit():
            run.stonewall_s, run.stonewall_source = int(value), "config.ini"
        elif section == "global" and key == "scc":
            run.scc = value.upper() == "TRUE"
        elif section == "global" and key == "dataPacketType":
            run.data_pattern = value


def _scan_phase_output(ph: Phase, text: str) -> None:
    """IOR's or mdtest's own error lines in a phase's output file (their rules)."""
    tool = ior_parse if ph.name.startswith("ior-") else (
        mdtest_parse if ph.name.startswith("mdtest-") else None)
    if tool is None:
        return
    ph.tool_errors = [f"line {f.line}: {f.text}" for f in tool.error_findings(text)
                      if f.severity == INVALID]


def stonewall_of(run: Io500Run) -> tuple[int | None, str]:
    """The stonewall time the run used and where it was read: config.ini, IO500's
    ``stonewall-time Ns != 300s`` message, an ior write's ``-D``; else IO500 printed no
    such message, so it was the rules' value."""
    if run.stonewall_s is not None:
        return run.stonewall_s, run.stonewall_source
    for msg in run.run_messages:
        m = re.match(r"stonewall-time (\d+)s", msg)
        if m:
            return int(m.group(1)), "IO500's stonewall-time message"
    for ph in run.phases:
        m = re.search(r" -D (\d+)", ph.exe) if ph.name in WRITE_PHASES else None
        if m:
            return int(m.group(1)), f"{ph.name}'s -D"
    rules = SCC_STONEWALL_S if run.scc else RULES_STONEWALL_S
    return rules, "IO500 printed no stonewall-time message"
