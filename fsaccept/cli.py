"""Command line: ``fsaccept parse ior FILE [--json-summary]``.

Prints the parsed figures and findings as JSON (indent 2) on stdout. Exit status:

* 0: the file was parsed (even when the run itself is not valid: see ``"valid"`` and
  ``"reasons"`` in the output);
* 2: the file is missing or unreadable, or its content cannot be parsed (one-line message
  naming the file on stderr).

More benchmark kinds (mdtest, fio) plug in by adding entries to :data:`PARSERS`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from fsaccept import fio, ior, mdtest, spackenv

#: kind -> (text parser, JSON-summary parser or None). Each returns an object with
#: ``to_dict()``, or raises ``ValueError`` for content it cannot parse.
PARSERS: dict[str, tuple[Callable[[str], Any], Callable[[str], Any] | None]] = {
    "ior": (ior.parse_ior, ior.parse_ior_json),
    "mdtest": (mdtest.parse_mdtest, None),
    # fio: its report is JSON either way (the --output file, or stdout with messages).
    "fio": (fio.parse_fio, fio.parse_fio),
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
    return ap


def _cmd_parse(args: argparse.Namespace) -> int:
    text_parser, json_parser = PARSERS[args.kind]
    if args.json_summary and json_parser is None:
        print(f"fsaccept: {args.kind} has no JSON-summary parser", file=sys.stderr)
        return 2
    parse: Callable[[str], Any] = text_parser
    if args.json_summary and json_parser is not None:
        parse = json_parser
    try:
        with open(args.file, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError as e:
        print(f"fsaccept: cannot read {args.file}: {e.strerror or e}", file=sys.stderr)
        return 2
    try:
        result = parse(text)
    except ValueError as e:
        print(f"fsaccept: cannot parse {args.file}: {e}", file=sys.stderr)
        return 2
    out = result.to_dict()
    out = {"kind": args.kind, "file": args.file, "valid": out.pop("valid"),
           "reasons": out.pop("reasons"), **out}
    try:
        json.dump(out, sys.stdout, indent=2)
        sys.stdout.write("\n")
        sys.stdout.flush()
    except BrokenPipeError:  # e.g. piped into head
        pass
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``fsaccept`` console script."""
    args = _build_parser().parse_args(argv)
    if args.command == "parse":
        return _cmd_parse(args)
    if args.command == "spack":
        return spackenv.run(args)
    return 2  # pragma: no cover - argparse enforces the choices


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
