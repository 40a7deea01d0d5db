"""Command line: ``fsaccept parse ior|mdtest|fio FILE [--json-summary] [--job-file F]``
and ``fsaccept reference FILE``.

``parse`` prints the parsed figures and findings as JSON (indent 2) on stdout, judged by
the same version rules as the checks (a known-bad version or one that cannot be read is
INVALID, an untested one is labelled in ``"version_note"``). Exit status:

* 0: the file was parsed (even when the run itself is not valid: see ``"valid"`` and
  ``"reasons"`` in the output);
* 2: the file is missing or unreadable, or its content cannot be parsed (one-line message
  naming the file on stderr).

``reference`` validates a reference file: exit 0, or 2 with ``FILE: key: message`` lines.

More benchmark kinds (mdtest, fio) plug in by adding entries to :data:`PARSERS`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from fsaccept import benchmarks, fio, ior, mdtest, reference, spackenv, validity

#: kind -> (text parser, JSON-summary parser or None). Each returns an object with
#: ``to_dict()``, or raises ``ValueError`` for content it cannot parse.
PARSERS: dict[str, tuple[Callable[[str], Any], Callable[[str], Any] | None]] = {
    "ior": (ior.parse_ior, ior.parse_ior_json),
    "mdtest": (mdtest.parse_mdtest, None),
    # fio: its report is JSON either way (the --output file, or stdout with messages).
    "fio": (fio.parse_fio, fio.parse_fio),
}

#: kind -> (name in the version lists, figure kinds the parsed output reports): the
#: same rules as the checks (``validity.version_reasons``, ``benchmarks.version_note``).
VERSIONED: dict[str, tuple[str, tuple[str, ...]]] = {
    "ior": ("ior", ("bandwidth", "iops")),
    "mdtest": ("ior", ("metadata",)),  # mdtest is part of IOR and carries its version
    "fio": ("fio", ("bandwidth", "iops", "latency")),
}


def _build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="fsaccept", description="fsaccept acceptance-test tools")
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("parse", help="parse a benchmark's output and print figures as JSON")
    p.add_argument("kind", choices=sorted(PARSERS), help="which benchmark produced FILE")
    p.add_argument("file", metavar="FILE", help="captured output (stdout+stderr) of one run")
    p.add_argument(
        "--json-summary",
        action="store_true",
        help="FILE is the benchmark's JSON summary file (IOR: -O summaryFormat=JSON "
        "-O summaryFile=FILE) rather than its text output",
    )
    spack = sub.add_parser("spack", help="build IOR, mdtest and fio with Spack into .state/spack/ "
                                         "(what scripts/setup --spack runs)")
    spackenv.add_arguments(spack)
    p.add_argument("--job-file", metavar="JOBFILE",
                   help="fio: the job file (or a file holding the command line) fio ran: "
                   "fio's JSON leaves out options given as bare flags (time_based, "
                   "group_reporting)")
    r = sub.add_parser("reference", help="validate a reference file (reference/<system>.yaml)")
    r.add_argument("file", metavar="FILE")
    return ap


def _cmd_parse(args: argparse.Namespace) -> int:
    text_parser, json_parser = PARSERS[args.kind]
    if args.json_summary and json_parser is None:
        print(f"fsaccept: {args.kind} has no JSON-summary parser", file=sys.stderr)
        return 2
    parse: Callable[[str], Any] = text_parser
    if args.json_summary and json_parser is not None:
        parse = json_parser
    if args.job_file and args.kind != "fio":
        print("fsaccept: --job-file is for fio", file=sys.stderr)
        return 2
    try:
        text = _read_text(args.file)
        job_file = _read_text(args.job_file) if args.job_file else None
    except OSError as e:
        print(f"fsaccept: cannot read {e.filename}: {e.strerror or e}", file=sys.stderr)
        return 2
    try:
        result = parse(text, job_file=job_file) if job_file else parse(text)
    except ValueError as e:
        print(f"fsaccept: cannot parse {args.file}: {e}", file=sys.stderr)
        return 2
    out = result.to_dict()
    reasons = out.pop("reasons")
    name, figure_kinds = VERSIONED[args.kind]
    version = validity.version_number(out.get("version"))
    if out.get("version") or not reasons:  # nothing to certify anyway when it failed first
        reasons += dict.fromkeys(r for k in figure_kinds
                                 for r in validity.version_reasons(name, version, k))
    out = {"kind": args.kind, "file": args.file, "valid": out.pop("valid") and not reasons,
           "reasons": reasons, "version_note": benchmarks.version_note(name, version), **out}
    try:
        json.dump(out, sys.stdout, indent=2)
        sys.stdout.write("\n")
        sys.stdout.flush()
    except BrokenPipeError:  # e.g. piped into head
        pass
    return 0


def _read_text(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as fh:
        return fh.read()


def _cmd_reference(args: argparse.Namespace) -> int:
    try:
        reference.load_reference(args.file)
    except reference.ReferenceError as e:
        print(str(e), file=sys.stderr)
        return 2
    print(f"{args.file}: valid")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``fsaccept`` console script."""
    args = _build_parser().parse_args(argv)
    if args.command == "parse":
        return _cmd_parse(args)
    if args.command == "spack":
        return spackenv.run(args)
    if args.command == "reference":
        return _cmd_reference(args)
    return 2  # pragma: no cover - argparse enforces the choices


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
