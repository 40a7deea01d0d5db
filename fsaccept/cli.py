"""The one ``fsaccept`` command.

Its own subcommands:

* ``fsaccept parse ior|mdtest|fio|... FILE [--json-summary] [--job-file F]`` prints the
  parsed figures and findings as JSON (indent 2), judged by the same version rules as
  the checks (a known-bad version or one that cannot be read is INVALID, an untested one
  is labelled in ``"version_note"``). Exit 0 when the file was parsed (even when the run
  is not valid: see ``"valid"`` and ``"reasons"``), 2 when it is missing, unreadable or
  cannot be parsed (one line naming the file on stderr). The kinds are the benchmark
  registry's (``fsaccept/benchmarks/registry.py``). A FILE that starts with ``{`` is read
  as the JSON summary even without ``--json-summary``.
* ``fsaccept reference FILE [--get KEY]`` validates a reference file: exit 0, or 2 with
  ``FILE: key: message`` lines; ``--get target.path`` prints one value of it.
* ``fsaccept job-name SYSTEM``: the Slurm job name every benchmark job of SYSTEM shares.
* ``fsaccept spack ...``: build the benchmarks with Spack (what ``scripts/setup`` runs).

And the tools of each layer, with their own options (``fsaccept report --help``...):

* ``report``: the sign-off report (``fsaccept.reporting.report``);
* ``manifest``: a run directory's SHA-256 manifest, written and verified
  (``fsaccept.reporting.manifest``);
* ``nightly``: regression against stored nightly sessions (``fsaccept.reporting.trends``);
* ``ceilings``: measure a disk's ceilings with fio (``fsaccept.reporting.assessment``);
* ``system``: the ReFrame system this host selects, for the scripts (``fsaccept.suite.sites``);
* ``fill``: remove a fill session's filler (``fsaccept.suite.fillrun``);
* ``survey``: each storage target measured alone, the slow one named
  (``fsaccept.suite.survey``);
* ``network``: iperf3 from each node to the servers, alone and all at once, the slow
  link named (``fsaccept.suite.network``).

Only the standard library is imported before a subcommand is chosen: each one pays only
for what it uses.  The emulated Slurm cluster is not fsaccept's: it is the lab's
(``scripts/local-cluster``).
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys

# Each tool's own command line, imported when it is chosen: only the standard library is
# imported before (``fsaccept parse`` never pays for matplotlib).  Start-up: every import
# inside a function of this module is there so that a subcommand pays only for its own.
def _report(argv: list[str]) -> int:
    from fsaccept.reporting import report
    return report.main(argv)


def _manifest(argv: list[str]) -> int:
    from fsaccept.reporting import manifest
    return manifest.main(argv)


def _nightly(argv: list[str]) -> int:
    from fsaccept.reporting import trends
    return trends.main(argv)


def _compare(argv: list[str]) -> int:
    from fsaccept.reporting import compare
    return compare.main(argv)


def _ceilings(argv: list[str]) -> int:
    from fsaccept.reporting import assessment
    return assessment.main(argv)


def _fill(argv: list[str]) -> int:
    from fsaccept.suite import fillrun
    return fillrun.main(argv)


def _survey(argv: list[str]) -> int:
    from fsaccept.suite import survey
    return survey.main(argv)


def _network(argv: list[str]) -> int:
    from fsaccept.suite import network
    return network.main(argv)


def _owned(argv: list[str]) -> int:
    from fsaccept.suite import owned
    return owned.main(argv)


def _system(argv: list[str]) -> int:
    from fsaccept.suite import sites
    return sites.main(argv)


#: Subcommands that are a tool's own command line: name -> (its entry, help).
TOOLS = {
    "report": (_report,
               "write the sign-off report (report.md, report.html) from a ReFrame run report"),
    "manifest": (_manifest, "write or verify a run directory's manifest of SHA-256 digests "
                            "(optionally signed with ssh-keygen)"),
    "nightly": (_nightly, "nightly regression against ReFrame's results database"),
    "compare": (_compare, "compare two sign-offs: each figure's ratio B / A with its "
                          "confidence interval, and a forest plot"),
    "ceilings": (_ceilings, "measure a disk's ceilings with fio"),
    "system": (_system, "the ReFrame system of config/settings.py this host selects by its name"),
    "owned": (_owned, "the data the harness owns on the targets: a stopped session's "
                      "removed (fsaccept owned sweep-stopped --pid PID)"),
    "fill": (_fill, "the filler of a fill session: remove it, whatever ended the session "
                    "(fsaccept fill remove RUN_DIR)"),
    "survey": (_survey, "measure each GlusterFS brick alone from the clients and name the "
                        "slow one (fsaccept survey --target DIR --out DIR)"),
    "network": (_network, "iperf3 from each node to the file system's servers, alone and "
                          "all at once; name the slow link (fsaccept network --in-dir DIR "
                          "--out DIR)"),
}


# ``fsaccept parse KIND`` imports KIND's spec alone, not the registry's four with their
# parsers and rules (test_cli checks that these are the registry's benchmarks).
def _ior():
    from fsaccept.benchmarks.ior import spec
    return spec.BENCHMARK


def _mdtest():
    from fsaccept.benchmarks.mdtest import spec
    return spec.BENCHMARK


def _md_workbench():
    from fsaccept.benchmarks.md_workbench import spec
    return spec.BENCHMARK


def _fio():
    from fsaccept.benchmarks.fio import spec
    return spec.BENCHMARK


def _io500():
    from fsaccept.benchmarks.io500 import spec
    return spec.BENCHMARK


def _semantics():
    from fsaccept.benchmarks.semantics import spec
    return spec.BENCHMARK


def _quota():
    from fsaccept.benchmarks.quota import spec
    return spec.BENCHMARK


def _survey():
    from fsaccept.benchmarks.survey import spec
    return spec.BENCHMARK


def _network_record():
    from fsaccept.benchmarks.network import spec
    return spec.BENCHMARK


#: Each benchmark ``fsaccept parse`` reads: its name -> its record (``Benchmark``).
PARSED = {"ior": _ior, "mdtest": _mdtest, "md-workbench": _md_workbench, "fio": _fio,
          "io500": _io500, "semantics": _semantics, "quota": _quota,
          "survey": _survey, "network": _network_record}


def _build_parser(command: str = "") -> argparse.ArgumentParser:
    """The command line; ``spack``'s own options only for ``fsaccept spack`` (they import
    the catalogue, which ``fsaccept parse`` need not pay for)."""
    ap = argparse.ArgumentParser(prog="fsaccept", description="fsaccept acceptance-test tools")
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("parse", help="parse a benchmark's output and print figures as JSON")
    p.add_argument("kind", choices=sorted(PARSED), help="which benchmark produced FILE")
    p.add_argument("file", metavar="FILE", help="captured output (stdout+stderr) of one run; io500: its "
                   "result directory (result.txt...) or its captured stdout")
    p.add_argument(
        "--json-summary",
        action="store_true",
        help="FILE is the benchmark's JSON summary file (IOR: -O summaryFormat=JSON "
        "-O summaryFile=FILE) rather than its text output (a FILE starting with '{' is "
        "read as one anyway)",
    )
    p.add_argument("--job-file", metavar="JOBFILE",
                   help="fio: the job file (or a file holding the command line) fio ran: "
                   "fio's JSON leaves out options given as bare flags (time_based, "
                   "group_reporting)")
    p.add_argument("--reference", metavar="FILE",
                   help="judge the run by this reference file's entry --test KEY as well "
                   "(its settings and threshold): the verdict the live check gives")
    p.add_argument("--test", metavar="KEY", help="with --reference: the entry tests.KEY")
    p.add_argument("--target", metavar="NAME", default="",
                   help="with --reference of several targets (targets:): the target whose "
                        "entry --test KEY is")
    r = sub.add_parser("reference", help="validate a reference file (reference/<system>.yaml), "
                                         "or list the checks, their reference keys and the "
                                         "conditions")
    r.add_argument("file", metavar="FILE", nargs="?")
    r.add_argument("--get", metavar="KEY", help="print the value of KEY (e.g. target.path)")
    r.add_argument("--list", metavar="KEY", nargs="?", const="", default=None,
                   help="print the checks, their reference keys and the conditions "
                        "(Markdown tables); with "
                        "KEY, every option of the entry tests.KEY")
    r.add_argument("--has-test", metavar="KEY",
                   help="exit 0 when a target of FILE has the entry tests.KEY, else 1 "
                        "(e.g. whether a file asks for an IO500 score)")
    r.add_argument("--check-dirs", action="store_true",
                   help="print the check folders a main session of FILE loads, one a line: "
                        "checks, and each opt-in benchmark's (checks/io500, "
                        "checks/semantics) whose test a target defines (scripts/acceptance)")
    r.add_argument("--repetitions", action="store_true",
                   help="print the most repetitions an entry of FILE asks (1 without): "
                        "scripts/acceptance runs ReFrame with --repeat that many")
    r.add_argument("--paths", action="store_true",
                   help="print each target's path, one a line, in the file's order "
                        "(scripts/acceptance measures the emulated disk's ceilings in the "
                        "first)")
    r.add_argument("--check-targets", action="store_true",
                   help="check, here (the login node), that each target of FILE is a "
                        "writable directory on the file system the file says (type; mount "
                        "point, source and mount options where it pins them), as each test "
                        "does before its job: exit 2 naming each that is not "
                        "(scripts/acceptance, before the session)")
    r.add_argument("--target", metavar="NAME",
                   help="with several targets (targets:): the one --io500-dry-run, "
                        "--scaling-checks and --degraded-checks are for")
    r.add_argument("--degraded-checks", action="store_true",
                   help="print a ReFrame -n pattern selecting the checks of a degraded-mode "
                        "session of FILE (scripts/acceptance --degraded)")
    r.add_argument("--io500-dry-run", action="store_true",
                   help="print the config file and the command the IO500 check would run "
                        "for FILE's tests.io500 (the data directory as a placeholder under "
                        "the target); runs nothing")
    r.add_argument("--scaling-checks", action="store_true",
                   help="print a ReFrame -n pattern selecting the checks of a scaling-sweep "
                        "session of FILE (scripts/acceptance --scaling)")
    r.add_argument("--fill-checks", action="store_true",
                   help="print a ReFrame -n pattern selecting the checks of a fill session "
                        "of FILE (scripts/acceptance --fill): exit 2, naming the key, when "
                        "FILE does not allow filling its target (fill.allowed, "
                        "target.dedicated)")
    j = sub.add_parser("job-name", help="the Slurm job name of every benchmark job of SYSTEM")
    j.add_argument("system")
    spack = sub.add_parser("spack", help="build IOR, mdtest and fio with Spack into .state/spack/ "
                                         "(what scripts/setup --spack runs)")
    if command == "spack":
        from fsaccept.suite import spack as spackenv
        spackenv.add_arguments(spack)
    for name, (_, text) in TOOLS.items():
        sub.add_parser(name, help=text + f" (fsaccept {name} --help)", add_help=False)
    return ap


def _cmd_parse(args: argparse.Namespace) -> int:
    from fsaccept.core import inputs, versions

    bench = PARSED[args.kind]()
    if args.json_summary and bench.json_parser is None:
        print(f"fsaccept: {args.kind} has no JSON-summary parser", file=sys.stderr)
        return 2
    if args.job_file and args.kind != "fio":
        print("fsaccept: --job-file is for fio", file=sys.stderr)
        return 2
    if bench.path_parser and not (args.json_summary or args.job_file or args.reference):
        return _print_parsed(args, bench, versions)
    if bench.path_parser:
        print(f"fsaccept: {args.kind} takes no --json-summary, --job-file or --reference",
              file=sys.stderr)
        return 2
    try:
        # Binary data is refused at the piece that holds it, before the rest is read.
        text = inputs.read_text(args.file, inputs.MAX_LOG_BYTES, f"{args.kind} output",
                                binary=False)
        job_file = inputs.read_text(args.job_file, inputs.MAX_JOB_FILE_BYTES,
                                    "fio job file") if args.job_file else None
    except inputs.InputError as e:
        print(f"fsaccept: {e}", file=sys.stderr)
        return 2
    # A JSON summary given without --json-summary is read as one (as text it would only
    # look truncated): no text output of these tools starts with "{".
    json_summary = args.json_summary or bool(
        bench.json_parser and text.lstrip("\ufeff \t\r\n").startswith("{"))
    try:
        parse = bench.json_parser if json_summary else bench.parser
        result = parse(text, job_file=job_file) if job_file else parse(text)
    except ValueError as e:
        # the file at fault: the job file's errors are the job file's (fio's JobFileError)
        bad = args.job_file if getattr(e, "in_job_file", False) else args.file
        print(f"fsaccept: cannot parse {bad}: {e}", file=sys.stderr)
        return 2
    out = result.to_dict()
    reasons = out.pop("reasons")
    # The same version rules as the checks (mdtest prints IOR's version).
    name = bench.version_name
    version = versions.version_number(out.get("version"))
    if out.get("version") or not reasons:  # nothing to certify anyway when it failed first
        reasons += dict.fromkeys(r for k in bench.figure_kinds
                                 for r in versions.version_reasons(name, version, k))
    # The live check's rules this output can be held to (one verdict, live or re-read).
    not_applied: list[str] = []
    if bench.reread_rules:
        more, not_applied = bench.reread_rules(result)
        reasons += [r for r in more if r not in reasons]
    judged = {}
    if args.reference:
        try:
            judged, rules, skipped = _judge(bench, result, args.reference, args.test,
                                            args.target)
        except ValueError as e:
            print(f"fsaccept: {e}", file=sys.stderr)
            return 2
        reasons += [r for r in rules if r not in reasons]
        not_applied += skipped
    else:
        not_applied.append("thresholds and the reference's settings: give --reference FILE "
                           "--test KEY")
    valid = out.pop("valid") and not reasons
    verdict = "INVALID" if not valid else (
        ("PASS" if _within(judged) else "FAIL") if judged else "not judged")
    out = {"kind": args.kind, "file": args.file, "valid": valid, "verdict": verdict,
           "reasons": reasons, "rules_not_applied": not_applied,
           **({"judged": judged} if judged else {}),
           "version_note": versions.version_note(name, version), **out}
    return _write_json(out)


def _check_targets(ref) -> int:
    """Each target of ``ref`` held to its declaration by the tests' own guard
    (:func:`fsaccept.core.guards.check_target`): 0, or 2 with a line for each that
    fails (a target not mounted here makes every test of the session an ERROR)."""
    from fsaccept.core import guards
    status = 0
    for t in ref.targets:
        try:
            guards.check_target(t.path, t.fstype, ref.path, mount_point=t.mount_point,
                                source=t.source, mount_options=(list(t.required_options),
                                                                list(t.forbidden_options)))
        except guards.GuardError as err:
            print(f"fsaccept reference: {t.where}: {err}", file=sys.stderr)
            status = 2
    return status


def _io500_dry_run(ref) -> int:
    """What the IO500 check would run for a reference file, without a cluster: a site's
    check of its io500: entry before the first job (the example Lustre site has no Lustre
    here)."""
    from fsaccept.benchmarks.io500 import config
    try:
        params = config.parameters(ref.entry("io500"))
    except (KeyError, ValueError) as err:  # ReferenceError is a ValueError
        print(str(err), file=sys.stderr)
        return 2
    datadir = f"{ref.target_path}/fsaccept/IO500.<run>/{params.datadir}"
    print(f"# {config.CONFIG_FILE}, in the test's stage directory")
    print(config.config_text(params, datadir), end="")
    print(f"# the job, at {ref.entry('io500')['node_fraction']:g} of the partition's nodes, "
          f"{ref.entry('io500')['ranks_per_node']} ranks per node:")
    print("srun --distribution=block <io500_binary> " + " ".join(config.options(params)))
    return 0


def _write_json(out: dict) -> int:
    try:
        sys.stdout.write(_json_text(out))
        sys.stdout.flush()
    except BrokenPipeError:  # e.g. piped into head
        pass
    return 0


def _print_parsed(args: argparse.Namespace, bench, versions) -> int:
    """A benchmark that reads its own path (IO500's result directory or stdout): the
    same JSON shape as the others, its rules those of its record."""
    try:
        result = bench.path_parser(args.file)
    except ValueError as e:  # inputs.InputError names the path
        print(f"fsaccept: {e}" if str(e).startswith(str(args.file))
              else f"fsaccept: cannot parse {args.file}: {e}", file=sys.stderr)
        return 2
    out = result.to_dict()
    reasons = out.pop("reasons")
    not_applied: list[str] = []
    if bench.reread_rules:
        more, not_applied = bench.reread_rules(result)
        reasons += [r for r in more if r not in reasons]
    valid = out.pop("valid") and not reasons
    note = (bench.version_note(out.get("version")) if bench.version_note
            else versions.version_note(bench.version_name, out.get("version")))
    out = {"kind": args.kind, "file": args.file, "valid": valid,
           "verdict": "not judged" if valid else "INVALID", "reasons": reasons,
           "rules_not_applied": not_applied, "version_note": note, **out}
    return _write_json(out)


#: Lists printed on one line: one entry per rank (IOR's rank_pairs), tens of thousands.
_ONE_LINE = ("rank_pairs",)


def _json_text(out: dict) -> str:
    """``out`` as JSON, indent 2, in one string (json.dump writes piece by piece), with
    the per-rank lists on one line each rather than one line per number."""
    compact = {}
    for key in _ONE_LINE:
        if isinstance(out.get(key), list) and out[key]:
            mark = f"@@fsaccept-{key}-{secrets.token_hex(8)}@@"
            compact[json.dumps(mark)] = json.dumps(out[key], separators=(",", ":"))
            out = {**out, key: mark}
    text = json.dumps(out, indent=2)
    for mark, value in compact.items():
        text = text.replace(mark, value, 1)
    return text + "\n"


def _within(judged: dict) -> bool:
    """A judged figure against its floor (a rate) or its ceiling (a time)."""
    return (judged.get("lower") is None or judged["value"] >= judged["lower"]) and \
        (judged.get("upper") is None or judged["value"] <= judged["upper"])


def _judge(bench, result, reference_file: str, key: str | None, target: str = ""):
    """(judged figure, INVALID reasons, rules not applied) of a parsed run by the
    reference entry ``tests.<key>`` (of ``targets.<target>``); ValueError with the
    message otherwise."""
    from fsaccept.benchmarks.registry import owner_of, tests_with_key
    from fsaccept.suite import reference

    if not key:
        raise ValueError("--reference needs --test KEY (e.g. ior_read_bandwidth)")
    # ReferenceError is a ValueError.
    ref = reference.load_reference(reference_file).for_target(target)
    entry = ref.entry(key)
    if owner_of(key) is not bench:
        raise ValueError(f"{ref.path}: {ref.target.tests_where}.{key} is not a "
                         f"{bench.name} test")
    if not bench.reference_rules:
        return {}, [], [f"tests.{key}: the reference rules are not applied to "
                        f"{bench.name} output yet"]
    reasons, figure, skipped = bench.reference_rules(result, key, entry, tests_with_key(key))
    return figure or {}, reasons, skipped


def _cmd_reference(args: argparse.Namespace) -> int:
    from fsaccept.suite import reference

    if args.list is not None:
        return _cmd_list(args.list)
    if not args.file:
        print("fsaccept reference: FILE is required (or --list [KEY])", file=sys.stderr)
        return 2

    try:
        ref = reference.load_reference(args.file)
        if args.target is not None:
            ref = ref.for_target(args.target)
    except reference.ReferenceError as e:
        print(str(e), file=sys.stderr)
        return 2
    if args.paths:
        print("\n".join(str(t.path) for t in ref.targets))
        return 0
    if args.repetitions:
        print(ref.most_repetitions)
        return 0
    if args.has_test is not None:
        return 0 if any(args.has_test in t.entries for t in ref.targets) else 1
    if args.check_targets:
        return _check_targets(ref)
    if args.check_dirs:
        from fsaccept.suite import listing
        print("\n".join(listing.main_session_dirs(ref)))
        return 0
    if args.degraded_checks:
        from fsaccept.suite import listing
        try:
            print(listing.degraded_session_pattern(ref))
        except ValueError as err:
            print(str(err), file=sys.stderr)
            return 2
        return 0
    if args.io500_dry_run:
        return _io500_dry_run(ref)
    if args.scaling_checks:
        from fsaccept.suite import listing
        try:
            print(listing.scaling_session_pattern(ref))
        except reference.ReferenceError as err:
            print(str(err), file=sys.stderr)
            return 2
        return 0
    if args.fill_checks:
        from fsaccept.suite import listing
        try:
            print(listing.fill_session_pattern(ref))
        except reference.ReferenceError as err:
            print(str(err), file=sys.stderr)
            return 2
        return 0
    if not args.get:
        print(f"{args.file}: valid")
        return 0
    value = ref.data
    for key in args.get.split("."):
        if not isinstance(value, dict) or key not in value:
            print(f"{ref.path}: {args.get}: not in the file", file=sys.stderr)
            return 2
        value = value[key]
    print(value if isinstance(value, str) else json.dumps(value))
    return 0


def _cmd_list(key: str) -> int:
    """``fsaccept reference --list [KEY]``: the catalogue and the options of each entry."""
    from fsaccept.benchmarks import registry
    from fsaccept.suite import listing

    if key and registry.owner_of(key) is None:
        keys = sorted(k for b in registry.BENCHMARKS.values() for k in b.reference_keys)
        print(f"fsaccept reference --list: {key!r} is not a reference key; the keys are "
              f"{', '.join(keys)}", file=sys.stderr)
        return 2
    text = (listing.keys_table(key) if key
            else listing.checks_table() + "\n" + listing.keys_table() + "\n"
            + listing.conditions_table())
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:  # e.g. piped into head
        sys.stdout = None  # nothing more to flush at exit
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``fsaccept`` console script."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in TOOLS:
        return TOOLS[argv[0]][0](argv[1:])
    args = _build_parser(argv[0] if argv else "").parse_args(argv)
    if args.command == "parse":
        return _cmd_parse(args)
    if args.command == "spack":
        from fsaccept.suite import spack as spackenv
        return spackenv.run(args)
    if args.command == "reference":
        return _cmd_reference(args)
    if args.command == "job-name":
        from fsaccept.core.slurm import benchmark_job_name
        print(benchmark_job_name(args.system))
        return 0
    return 2  # pragma: no cover - argparse enforces the choices


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
