"""The target survey on a GlusterFS volume: each brick measured alone, through the whole
stack from the clients, and the slow one named with its server.

1. **Placement.** In a directory of the run's own (its owner marker first), files are
   created until every brick the client lists (``<mount>/.meta``, as the probe reads it)
   holds one: a file's bricks are what the client answers for its ``pathinfo`` xattr
   (:func:`fsaccept.core.probes.glusterfs.parse_pathinfo`).  The files no brick needs are
   removed at once.
2. **Rounds.** :func:`fsaccept.core.components.survey_plan`: in one round each node
   writes one target's file and each server serves one target, all at once.
3. **Measurement.** fio, one job step per (node, target) (``srun -N1 -n1 -w NODE``):
   1 MiB sequential writes with O_DIRECT and irreducible data, fsync at the end; fio's
   JSON is parsed by the fio benchmark's strict parser, and a run it calls invalid is a
   target not measured, never a figure.
4. **Judgement.** :func:`fsaccept.core.components.slow_targets`.

The directory is removed by descriptor (:func:`fsaccept.suite.owned.remove_owned`)
whatever ended the survey.  A target whose brick cannot be placed is named as not
placed: a survey never judges a volume it saw only part of.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fsaccept.benchmarks.survey import validity
from fsaccept.benchmarks.survey.parse import FORMAT, PREFIX, target_figure
from fsaccept.core import components
from fsaccept.core.components import Step, Target
from fsaccept.core.formatting import format_number
from fsaccept.core.guards import GuardError, mount_of
from fsaccept.core.probes.glusterfs import PATHINFO_XATTRS, parse_pathinfo
from fsaccept.core.units import parse_size
from fsaccept.suite import owned
from fsaccept.suite.steps import LAUNCHER, ProgramError, job_nodes

#: Files created per brick at most before a brick that got none is reported as not
#: placed (a distributed volume hashes names: 4 bricks need about 8 files, 1,000 about
#: 7,500; 40 per brick leaves a brick unplaced with odds below 1e-15).
FILES_PER_BRICK = 40

#: fio's options for one target: every option that changes the figure's meaning is
#: explicit, so the recorded command says what was measured.
FIO_WRITE = ("--rw=write", "--bs=1M", "--direct=1", "--ioengine=psync", "--end_fsync=1",
             "--refill_buffers", "--randrepeat=0", "--output-format=json")


class SurveyError(ProgramError):
    """A survey that cannot be run or judged; the message names the path or node."""


def listed_bricks(mount: str) -> list[tuple[str, str]]:
    """``(host, brick path)`` of every brick the client's graph lists
    (``<mount>/.meta/graphs/active/*/``, its ``protocol/client`` translators)."""
    graph = Path(mount) / ".meta" / "graphs" / "active"
    try:
        entries = sorted(graph.iterdir())
    except OSError as err:
        raise SurveyError(f"cannot list the GlusterFS client's bricks in {graph}: "
                          f"{err.strerror or err}") from err
    bricks = []
    for x in entries:
        try:
            if (x / "type").read_text().strip() != "protocol/client":
                continue
            bricks.append(((x / "options" / "remote-host").read_text().strip(),
                           (x / "options" / "remote-subvolume").read_text().strip()))
        except OSError:
            continue
    if not bricks:
        raise SurveyError(f"no brick in {graph}")
    return bricks


def bricks_of(path: str) -> tuple[tuple[str, str], ...]:
    """The bricks that hold ``path``, from its pathinfo xattr."""
    last: OSError | None = None
    for name in PATHINFO_XATTRS:
        try:
            return parse_pathinfo(os.getxattr(path, name).decode(errors="replace"))
        except OSError as err:
            last = err
    raise SurveyError(f"{path}: the GlusterFS client gives no pathinfo "
                      f"({', '.join(PATHINFO_XATTRS)}): {last.strerror if last else ''}")


def target_of(bricks: Sequence[tuple[str, str]]) -> Target:
    """A file's target: its brick (``host:/path``), or its replica set, bricks joined."""
    return Target(",".join(f"{h}:{b}" for h, b in bricks),
                  ",".join(sorted({h for h, _ in bricks})))


@dataclass
class Placement:
    """One file per target, and the bricks no file reached."""

    files: dict[Target, str] = field(default_factory=dict)
    unplaced: list[str] = field(default_factory=list)
    created: int = 0


def place(directory: str, bricks: Sequence[tuple[str, str]],
          locate: Callable[[str], tuple[tuple[str, str], ...]] = bricks_of) -> Placement:
    """Create ``t<i>`` files in ``directory`` until as many bricks as the client lists
    (``bricks``) hold one; keep one file per target, remove the rest.  A brick is known
    by what the file's pathinfo says (its server's own host name and its path); the
    client's list may name the host otherwise (an address), so the bricks that got no
    file are named by their path."""
    seen: set[tuple[str, str]] = set()
    out = Placement()
    for i in range(FILES_PER_BRICK * len(bricks)):
        if len(seen) >= len(bricks):
            break
        path = os.path.join(directory, f"t{i}")
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_CLOEXEC, 0o600))
        out.created += 1
        held = locate(path)
        target = target_of(held)
        if target in out.files or not set(held) - seen:
            os.unlink(path)
            continue
        out.files[target] = path
        seen.update(held)
    paths = {b for _, b in seen}
    out.unplaced = sorted(f"{h}:{b}" for h, b in bricks if b not in paths)
    return out


def fio_argv(fio: str, target: Target, path: str, size: int, runtime_s: int) -> list[str]:
    """One target's fio: ``size`` bytes, or what ``runtime_s`` allows (a slow target ends
    on time, its figure over what it wrote)."""
    return [fio, f"--name={target.name}", f"--filename={path}", f"--size={size}",
            f"--runtime={runtime_s}", *FIO_WRITE]


@dataclass
class Result:
    """The survey's figures (MiB/s per target), its steps' commands and what failed."""

    rounds: list[list[Step]]
    write_mib_s: dict[Target, float] = field(default_factory=dict)
    commands: dict[str, str] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0


def _say(*words: object) -> None:
    """One of the program's own lines (:mod:`fsaccept.benchmarks.survey.parse`)."""
    print(" ".join([PREFIX, *map(str, words)]), flush=True)


def measure(placement: Placement, nodes: Sequence[str], fio: str, size: int,
            runtime_s: int, out_dir: Path, launcher: Sequence[str] = LAUNCHER) -> Result:
    """Every round's steps at once, each fio's JSON to ``out_dir/r<round>-<node>.json``;
    the next round starts when this one has ended.  Each step's plan line is printed
    before it runs, its result line after."""
    plan = components.survey_plan(list(placement.files), nodes)
    result = Result(plan)
    for steps in plan:
        for step in steps:
            _say("target", step.round, step.node, step.target.server, step.target.name)
    start = time.monotonic()
    for steps in plan:
        running = []
        for step in steps:
            argv = [*launcher, "-w", step.node,
                    *fio_argv(fio, step.target, placement.files[step.target], size, runtime_s)]
            name = f"r{step.round}-{step.node}.json"
            result.commands[step.target.name] = shlex.join(argv)
            with open(out_dir / name, "w") as fh:
                running.append((step, name, subprocess.Popen(
                    argv, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)))
        for step, name, proc in running:
            code = proc.wait()
            _say("result", step.round, step.node, code, name)
            value, why = target_figure((out_dir / name).read_text(errors="replace"), code)
            if value is None:
                result.failed[step.target.name] = f"on {step.node}: {why}"
            else:
                result.write_mib_s[step.target] = value
    result.seconds = time.monotonic() - start
    return result


def judged(result: Result, placement: Placement, max_spread: float) -> list[str]:
    """The survey's reasons to fail: targets not placed or not measured, slow targets."""
    reasons = [f"brick {b}: no file could be placed on it" for b in placement.unplaced]
    reasons += [f"target {t}: not measured ({why})" for t, why in sorted(result.failed.items())]
    return reasons + validity.failures(result.write_mib_s, max_spread)


def table(result: Result) -> list[str]:
    """One line per target, slowest first."""
    return [f"{t.name}  {format_number(v)} MiB/s  (server {t.server})"
            for t, v in sorted(result.write_mib_s.items(), key=lambda kv: (kv[1], kv[0]))]


def survey_in(directory: str, mount: str, nodes: Sequence[str], fio: str, size: int,
              runtime_s: int, out_dir: Path, max_spread: float,
              launcher: Sequence[str] = LAUNCHER) -> tuple[Result, Placement, list[str]]:
    """Place, measure and judge in ``directory`` (the caller's, which it removes)."""
    bricks = listed_bricks(mount)
    _say("version", FORMAT, "size", size, "runtime_s", runtime_s, "bricks", len(bricks),
         "nodes", ",".join(nodes), "dir", directory)
    placement = place(directory, bricks)
    for brick in placement.unplaced:
        _say("unplaced", brick)
    result = measure(placement, nodes, fio, size, runtime_s, out_dir, launcher)
    _say("end")
    return result, placement, judged(result, placement, max_spread)


def run_survey(target_dir: str, mount: str, nodes: Sequence[str], fio: str, size: int,
               runtime_s: int, out_dir: Path, max_spread: float,
               launcher: Sequence[str] = LAUNCHER) -> tuple[Result, Placement, list[str]]:
    """:func:`survey_in` a directory of its own (its owner marker first), removed by
    descriptor whatever happened."""
    run_id = owned.new_run_id()
    directory = os.path.join(target_dir, f"fsaccept-survey-{run_id}")
    os.mkdir(directory, 0o700)
    try:
        os.close(os.open(os.path.join(directory, owned.owner_marker(run_id)),
                         os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_CLOEXEC, 0o600))
        return survey_in(directory, mount, nodes, fio, size, runtime_s, out_dir,
                         max_spread, launcher)
    finally:
        removal = owned.remove_owned(directory, run_id)
        if not removal.gone:
            # Said whatever ended the survey: data of this run left behind is never silent.
            print(f"fsaccept survey: {removal.left}", file=sys.stderr)


def record(result: Result, placement: Placement, reasons: list[str], nodes: Sequence[str],
           size: int, runtime_s: int, max_spread: float) -> dict:
    """The survey as ``survey.json`` keeps it: each target's figure, server, node, round
    and command, what could not be placed or measured, and the reasons."""
    step_of = {s.target: s for steps in result.rounds for s in steps}
    return {
        "nodes": list(nodes), "size_bytes": size, "runtime_s": runtime_s,
        "max_spread": max_spread, "rounds": len(result.rounds),
        "seconds": round(result.seconds, 3), "files_created": placement.created,
        "targets": [{"target": t.name, "server": t.server, "node": step_of[t].node,
                     "round": step_of[t].round, "command": result.commands.get(t.name, ""),
                     "write_mib_s": result.write_mib_s.get(t),
                     "failed": result.failed.get(t.name, "")}
                    for t in sorted(step_of)],
        "unplaced": placement.unplaced, "reasons": reasons}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        prog="fsaccept survey",
        description="measure each storage target of a GlusterFS volume alone, through "
                    "the whole stack from the clients, and name the slow one "
                    "(docs/user/components.md); exit 0, 1 when a target is slow or "
                    "could not be measured, 2 on bad input")
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--target", metavar="DIR",
                       help="a directory on the volume: the survey's own directory is made "
                            "in it and removed at the end")
    where.add_argument("--in-dir", metavar="DIR",
                       help="survey in this directory, which the caller made and removes "
                            "(the TargetSurvey check's own)")
    ap.add_argument("--out", required=True, metavar="DIR",
                    help="where fio's JSON of each target and survey.json are kept")
    ap.add_argument("--nodes", metavar="N1,N2",
                    help="the client nodes (default: the Slurm allocation's)")
    ap.add_argument("--size", default="64MiB", help="bytes written per target (%(default)s)")
    ap.add_argument("--runtime", type=int, default=10, metavar="S",
                    help="seconds a target is written at most (%(default)s)")
    ap.add_argument("--max-spread", type=float, default=components.DEFAULT_MAX_SPREAD,
                    help="a target below (1 - this) x the median is slow (%(default)s)")
    ap.add_argument("--fio", default="fio", help="the fio program (%(default)s)")
    args = ap.parse_args(argv)
    try:
        size = parse_size(args.size)
        if not 1 <= args.runtime <= 3600:
            raise SurveyError(f"--runtime {args.runtime}: not between 1 and 3600 s")
        if not 0 <= args.max_spread < 1:
            raise SurveyError(f"--max-spread {args.max_spread}: not in [0, 1)")
        given = args.target or args.in_dir
        flag = "--target" if args.target else "--in-dir"
        target = os.path.realpath(given)
        if not os.path.isdir(target):
            raise SurveyError(f"{flag} {given}: not a directory")
        mount = mount_of(Path(target))
        if mount.fstype != "fuse.glusterfs":
            raise SurveyError(f"{flag} {given}: on {mount.fstype} at "
                              f"{mount.target}; the survey places files on GlusterFS "
                              "bricks only (fuse.glusterfs)")
        nodes = job_nodes(args.nodes)
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        survey = survey_in if args.in_dir else run_survey
        result, placement, reasons = survey(target, mount.target, nodes, args.fio, size,
                                            args.runtime, out, args.max_spread)
    except (ProgramError, GuardError, ValueError, OSError) as err:
        print(f"fsaccept survey: {err}", file=sys.stderr)
        return 2
    rec = record(result, placement, reasons, nodes, size, args.runtime, args.max_spread)
    if args.target:
        part = out / "survey.json.part"
        part.write_text(json.dumps(rec, indent=2) + "\n")
        part.replace(out / "survey.json")
    print(f"survey: {len(result.write_mib_s)} of {len(placement.files)} targets measured "
          f"in {len(result.rounds)} rounds ({result.seconds:.1f} s), slowest first:")
    for line in table(result):
        print("  " + line)
    for reason in reasons:
        print("FAIL: " + reason)
    # In a check's directory the check judges (its lines): the program ran, exit 0.
    return 1 if reasons and not args.in_dir else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
