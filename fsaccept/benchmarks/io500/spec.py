"""IO500, declared once: its record.  fsaccept does not build IO500 (its sources are in
no package registry): a site builds it with IO500's own ``prepare.sh`` and fsaccept reads
its results (``fsaccept parse io500 RESULT_DIR``)."""

from __future__ import annotations

from fsaccept.benchmarks.catalogue import Benchmark
from fsaccept.benchmarks.io500 import parse, validity

#: The IO500 releases whose output the parser is tested on (real captures).
TESTED_VERSIONS = ("io500-isc26_v1", "io500-isc26_v2")


def version_note(version: str | None) -> str:
    """IO500 names its releases by tag (``io500-isc26_v1``), not by number."""
    if not version:
        return "version unknown"
    if version in TESTED_VERSIONS:
        return "tested"
    return f"untested: fsaccept's io500 parser is tested on {', '.join(TESTED_VERSIONS)}"


BENCHMARK = Benchmark(
    # No Spack package: the site's own build.  Its figures are its own score, judged by
    # its own rules and fsaccept's (validity), not by IOR's known bugs.
    name="io500", binary="io500", spack_package="", version_name="io500",
    figure_kinds=(), parser=parse.parse_text, path_parser=parse.read_io500,
    version_note=version_note, reread_rules=validity.reread_reasons,
    # Its reference entry (no check reads it yet: the IO500 check is to come).
    extra_keys={"io500": "io500.schema.json"},
    pattern_reducible=validity.pattern_reducible)
