"""The run against its contract (:func:`contract_reasons`): the nodes, ranks per node and
tasks its verified entry asks of the recorded partition (the benchmark record's
``placement``, as live), the job's node list, the recorded command
(``Benchmark.contract_options``: IOR's ``ior_options``, mdtest's and md-workbench's
``run_options``, fio's ``command_line``) and the job's own rank lines and output header
(``Benchmark.output_header``, ``sized_options``).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from fsaccept.benchmarks import registry
from fsaccept.benchmarks.catalogue import ACCEPTANCE, FIXTURE, TestSpec
from fsaccept.benchmarks.ior.patterns import argv_of, last_option
from fsaccept.core import joboutput, placement
from fsaccept.core.formatting import format_number
from fsaccept.reporting.case import Case
from fsaccept.reporting.signoff.common import (EvidenceMissing, JobOutput, RunFiles,
                                               count_problem, job_output, kept_dirs)


def contract_reasons(case: Case, spec: TestSpec, reference: Any,
                     files: RunFiles | None = None) -> list[str]:
    """A run held to what the verified reference's entry asks of it, as the live check
    derived its job from it (one function, two callers), so that a lighter run relabelled
    with the contract's digest is never ACCEPTED:

    - its placement (:func:`fsaccept.benchmarks.registry.placement_of`, the benchmark's
      rule, and :func:`fsaccept.core.placement.nodes_asked` of the recorded partition's
      node count, ``partition_nodes``, rounded as the reference says): the recorded
      ``num_nodes``, ``node_fraction``, ranks per node and ``num_tasks``, and the job's
      node list (``job_nodelist``);
    - its command (``Benchmark.contract_options``: IOR's ``ior_options``, mdtest's and
      md-workbench's ``run_options``, fio's ``command_line``): the recorded
      ``benchmark_command`` and the benchmark's arguments in ``executable_opts``;
    - where the run directory is there, the job's own ``rfm_job.out``: the ranks and nodes
      its rank lines show, and the tasks, nodes and sized options
      (``Benchmark.sized_options``: IOR's ``-t -b -s -D``, mdtest's ``-n``...) its
      output's header prints (fio's reports: :func:`.fio.fio_reasons`).

    An acceptance test or a fixture with an entry; a scaling point is its sweep's."""
    if reference is None or spec.role not in (ACCEPTANCE, FIXTURE) or not spec.key:
        return []
    entry = getattr(reference, "entries", {}).get(spec.key)
    if not isinstance(entry, dict):
        return []  # looser_thresholds says the entry is missing
    where = f"tests.{spec.key}"
    total = case.get("partition_nodes")
    why = count_problem(total)
    if why:
        return [f"partition_nodes {str(total)[:40]!r} ({why}): the nodes {where} asks "
                "cannot be known"]
    try:
        fraction, per_node = registry.placement_of(spec, entry)
        nodes = placement.nodes_asked(fraction, total, reference.node_rounding)
    except (KeyError, TypeError, ValueError) as err:
        return [f"the nodes {where} asks cannot be known: {str(err)[:200]}"]
    asked = (f"node_fraction {format_number(fraction)} of {total}, rounded "
             f"{reference.node_rounding}" if fraction is not None else "one node")
    out = []
    ran = case.get("num_nodes")
    if ran != nodes:
        out.append(f"{_lighter(ran, nodes)}: ran on {str(ran)[:40]} nodes, the verified "
                   f"entry {where} asks {nodes} ({asked})")
    if fraction is not None and case.get("node_fraction") != fraction:
        out.append(f"node_fraction is recorded as {str(case.get('node_fraction'))[:40]}, "
                   f"the verified entry {where} says {format_number(fraction)}")
    for key in ("ranks_per_node", "num_tasks_per_node"):
        if key in case and case.get(key) != per_node:
            out.append(f"{_lighter(case.get(key), per_node)}: {key} is "
                       f"{str(case.get(key))[:40]}, the verified entry {where} asks "
                       f"{per_node} per node")
    tasks = nodes * per_node
    if case.get("num_tasks") != tasks:
        out.append(f"{_lighter(case.get('num_tasks'), tasks)}: num_tasks is "
                   f"{str(case.get('num_tasks'))[:40]}, the verified entry {where} asks "
                   f"{tasks} ({nodes} nodes x {per_node})")
    listed = list(case.job.nodelist)
    if listed and len(listed) != nodes:
        out.append(f"{_lighter(len(listed), nodes)}: the job's node list (job_nodelist) "
                   f"has {len(listed)} nodes ({', '.join(listed)[:100]}), the verified "
                   f"entry {where} asks {nodes}")
    bench = registry.BENCHMARKS.get(spec.benchmark)
    if bench is None or bench.contract_options is None:
        return out
    asked, why = contract_argv(spec, bench, entry, tasks, [])
    if asked is None and not why:
        return out  # no command of its own to hold (an interference test: its record)
    out += _command_contract(case, spec, bench, entry, tasks)
    if files is not None and kept_dirs(case, files):
        try:
            job = job_output(case, files)
        except EvidenceMissing:
            return out  # said by the output's own figures
        out += _output_contract(case, spec, bench, entry, job, nodes, tasks)
    return out


def _lighter(ran: Any, asked: int) -> str:
    return ("lighter than the contract" if isinstance(ran, int) and ran < asked
            else "not the run the contract asks")


def recorded_argv(case: Case) -> list[str]:
    """The benchmark's arguments the case recorded: the command it ran
    (``benchmark_command``), else the job's (``executable_opts``); [] for neither."""
    commands = _recorded_commands(case)
    return commands[0][1] if commands else []


def sized_values(argv: list[str], flags: tuple[str, ...]) -> dict[str, str]:
    """Each of ``flags`` (a benchmark's ``sized_options``) an argument list gives, as
    given ('-t 1m', '--bs=4k'); the last where it is given twice, as the benchmark
    applies it."""
    return {key: shown for key, shown in _option_units(argv) if key in flags}


def _recorded_commands(case: Case) -> list[tuple[str, list[str]]]:
    """(what, the benchmark's arguments) of each command the case recorded: the command
    its benchmark ran (``benchmark_command``: as the benchmark printed it, or the live
    check's), and ReFrame's ``executable_opts`` after the rank-map wrapper."""
    out = []
    command = case.get("benchmark_command")
    if isinstance(command, str) and command:
        argv = argv_of(command)
        out.append(("the recorded command (benchmark_command)",
                    argv[1:] if argv and not argv[0].startswith("-") else argv))
    opts = case.get("executable_opts")
    if isinstance(opts, list) and all(isinstance(o, str) for o in opts):
        if joboutput.RANK_MARKER in opts:
            opts = opts[opts.index(joboutput.RANK_MARKER) + 2:]
        out.append(("the job's command (executable_opts)", opts))
    return out


def contract_argv(spec: TestSpec, bench: Any, entry: dict, tasks: int,
                   recorded: list[str]) -> tuple[list[str] | None, str]:
    try:
        return bench.contract_options(spec, entry, tasks, recorded), ""
    except (KeyError, TypeError, ValueError) as err:
        return None, str(err)[:200]


def _command_contract(case: Case, spec: TestSpec, bench: Any, entry: dict,
                      tasks: int) -> list[str]:
    out = []
    for what, got in _recorded_commands(case):
        want, why = contract_argv(spec, bench, entry, tasks, got)
        if why:
            return [f"the command tests.{spec.key} asks cannot be built: {why}"]
        diff = options_differ(got, want) if want is not None else ""
        if diff:
            out.append(f"not the run the contract asks: {what} {diff} (tests.{spec.key} "
                       f"among {tasks} ranks)")
    return out


def _output_contract(case: Case, spec: TestSpec, bench: Any, entry: dict, job: JobOutput,
                     nodes: int, tasks: int) -> list[str]:
    """The job's own output against the contract: its rank lines (where each rank ran,
    from Slurm) and its benchmark's header."""
    out = []
    where = f"tests.{spec.key}"
    ranks = placement.parse_rank_map(job.stdout, joboutput.RANK_MARKER)
    seen = sorted(set(ranks.values()))
    if ranks and (len(ranks), len(seen)) != (tasks, nodes):
        light = len(ranks) < tasks or len(seen) < nodes
        out.append(("lighter than the contract" if light else "not the run the contract asks")
                   + ": "
                   f"its output ({job.path}) shows {len(ranks)} ranks on {len(seen)} nodes "
                   f"({', '.join(seen)[:100]}), the verified entry {where} asks {tasks} "
                   f"on {nodes}")
    listed = set(case.job.nodelist)
    if ranks and listed and not set(seen) <= listed:
        out.append(f"its output ({job.path}) shows ranks on "
                   f"{', '.join(sorted(set(seen) - listed))[:100]}, which the job's node "
                   "list (job_nodelist) does not name")
    if bench.output_header is None:
        return out
    printed_tasks, printed_nodes, argv = bench.output_header(job.stdout)
    got = (argv[1:] if argv and not argv[0].startswith("-") else argv) or []
    want = contract_argv(spec, bench, entry, tasks, got)[0] if argv else None
    seen_asked = [(f"{printed_tasks} tasks", f"{tasks} tasks", printed_tasks, tasks),
                  (f"{printed_nodes} nodes", f"{nodes} nodes", printed_nodes, nodes)]
    seen_asked = [(a, b, x < y) for a, b, x, y in seen_asked if x is not None and x != y]
    for flag in bench.sized_options if want is not None else ():
        if last_option(got, flag) != last_option(want, flag):
            seen_asked.append((_shown(flag, last_option(got, flag)),
                               _shown(flag, last_option(want, flag)), False))
    if seen_asked:
        light = any(x for _, _, x in seen_asked)
        out.append(("lighter than the contract" if light else "not the run the contract asks")
                   + f": its output's own header ({job.path}) prints "
                   + ", ".join(a for a, _, _ in seen_asked) + f"; the verified entry {where} "
                   "asks " + ", ".join(b for _, b, _ in seen_asked))
    return out


def _shown(flag: str, value: str | None) -> str:
    return f"{flag} {value[:40]}" if value is not None else f"no {flag}"


def _option_units(argv: list[str]) -> list[tuple[str, str]]:
    """(its key, the option as given) of each option of an argument list: a flag with the
    value after it ('-t 1m'; IOR's '-O name=value' keyed by its name), or alone
    ('-F', '--runtime=3', keyed by its name)."""
    out, i = [], 0
    while i < len(argv):
        arg = argv[i]
        if arg.startswith("-") and i + 1 < len(argv) and not argv[i + 1].startswith("-"):
            value = argv[i + 1]
            key = f"{arg} {value.split('=', 1)[0]}" if arg == "-O" else arg
            out.append((key, f"{arg} {value}"))
            i += 2
            continue
        out.append((arg.split("=", 1)[0], arg))
        i += 1
    return out


def options_differ(got: list[str], want: list[str]) -> str:
    """'' when the two argument lists give the same options (in any order); else what
    differs: 'gives -D 2 where it asks -D 60; lacks -F; adds -z'."""
    got_units, want_units = Counter(_option_units(got)), Counter(_option_units(want))
    extra = list((got_units - want_units).elements())
    missing = list((want_units - got_units).elements())
    if not extra and not missing:
        return ""
    parts = []
    for key, shown in missing:
        other = next((u for u in extra if u[0] == key), None)
        if other is not None:
            extra.remove(other)
            parts.append(f"gives {other[1][:60]} where it asks {shown[:60]}")
        else:
            parts.append(f"lacks {shown[:60]}")
    parts += [f"adds {shown[:60]}" for _, shown in extra]
    return "; ".join(dict.fromkeys(parts))
