"""IO500, declared once: its record.  fsaccept does not build IO500 (its sources are in
no package registry): a site builds it with IO500's own ``prepare.sh`` and fsaccept reads
its results (``fsaccept parse io500 RESULT_DIR``)."""

from __future__ import annotations

from fsaccept.benchmarks.catalogue import ACCEPTANCE, Benchmark, TestSpec
from fsaccept.benchmarks.io500 import config, parse, validity
from fsaccept.benchmarks.ior import spec as ior_spec
from fsaccept.benchmarks.ior.patterns import DATA_PATTERNS

#: The IO500 releases whose output the parser is tested on (real captures).
TESTED_VERSIONS = ("io500-isc26_v1", "io500-isc26_v2")


def version_note(version: str | None) -> str:
    """IO500 names its releases by tag (``io500-isc26_v1``), not by number."""
    if not version:
        return "version unknown"
    if version in TESTED_VERSIONS:
        return "tested"
    return f"untested: fsaccept's io500 parser is tested on {', '.join(TESTED_VERSIONS)}"


#: IO500's [SCORE] (TOTAL, BW, MD), then each scored phase by its IO500 name.
FIGURES = ("total", "bw", "md",
           *(name for name, (group, _) in parse.PHASES.items() if group != parse.NONE))

TESTS = (
    # Opt-in (checks/io500/, -t io500): the site's own binary, for hours at scale.
    TestSpec(check="IO500", role=ACCEPTANCE, key="io500", benchmark="io500",
             descr="IO500 with the site's own io500 binary: its score (TOTAL, BW, MD) "
                   "and phases",
             tags=("io500",), figures=FIGURES, schema="io500.schema.json"),
)

#: What the target path cannot hold: IO500's config parser ends its datadir at a blank and
#: a comment character, and refuses the file on one with no blank before it
#: (:func:`config.read_config`: the path would not be read as written; control characters
#: are every benchmark's refusal already); the IOR and mdtest it runs below datadir split
#: ``-o``/``-d`` on ``@``.  A blank and ``#`` first, so that the refusal names the pair.
UNSAFE_PATH_CHARS = {
    **{f" {c}": f"IO500 reads a value of its config file only up to a blank and {c!r} (a "
                "comment starts there): its datadir would be a sibling of the target"
       for c in config.COMMENT},
    **{c: f"io500 refuses its config file on a {c!r} with no blank before it (its "
          "datadir line)" for c in config.COMMENT},
    **{c: f"IO500 runs IOR below its datadir: {why}"
       for c, why in ior_spec.BENCHMARK.unsafe_path_chars.items()},
}

BENCHMARK = Benchmark(
    # No Spack package: the site's own build.  Its figures are its own score, judged by
    # its own rules and fsaccept's (validity), not by IOR's known bugs.
    name="io500", binary="io500", spack_package="", version_name="io500", checks_dir="io500",
    figure_kinds=(), parser=parse.parse_text, path_parser=parse.read_io500,
    version_note=version_note, reread_rules=validity.reread_reasons, tests=TESTS,
    entry_rules=config.entry_errors, unsafe_path_chars=UNSAFE_PATH_CHARS,
    # IO500's IOR phases write IOR's patterns.
    pattern_reducible=validity.pattern_reducible, data_patterns=tuple(DATA_PATTERNS))
