"""Every figure and verdict the reports show, from every captured run report, is the same
as it was when the golden files were written (tests/data/golden/): a refactoring of
reporting/ that changes any of them fails here.

For each run report in tests/data/reframe/ (alone, and with its ``.reference.yaml``
when there is one), and each run directory there (``NAME/run-report.json``, with the
files its checks kept and its manifest, and its copy of the reference): what ``fsaccept report`` prints and writes (report.md, report.html
with the plots' PNG data left out, the plots' names and titles), and the nightly side's
lines (each test's verdict line, the figures it compares, the trend points) and the
per-node values the plots draw. Only what depends on the moment and place of rendering
is masked: the output directory, the checkout's path, the harness version and commit,
the PNG bytes (matplotlib's, not fsaccept's).  A reference file a capture names outside
tests/data is never read: it is judged as changed since the run (only_data_references).

Regenerate after a deliberate change of the reports (and read the diff):
``FSACCEPT_REGEN_GOLDEN=1 python -m pytest tests/unit/test_golden_reports.py``.
"""

import io
import json
import os
import re
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from fsaccept import __version__
from fsaccept.reporting import report as signoff
from fsaccept.reporting import runreport, sections, trends

DATA = Path(__file__).resolve().parent.parent / "data" / "reframe"
GOLDEN = DATA.parent / "golden"
REGEN = os.environ.get("FSACCEPT_REGEN_GOLDEN") == "1"

#: Each capture: a run report alone (``NAME.json``, its reference ``NAME.reference.yaml``),
#: or a run directory with the files its checks kept (``NAME/run-report.json``, its
#: reference copy ``NAME/reference/*.yaml``), by its path below tests/data/reframe.
CAPTURES = sorted(p.relative_to(DATA).as_posix() for p in
                  [*DATA.glob("*.json"), *DATA.glob("*/run-report.json")])


def _reference_of(name: str) -> str | None:
    """A capture's reference file: ``NAME.reference.yaml``, or the run directory's own
    copy (``NAME/reference/*.yaml``, which its manifest digests)."""
    path = DATA / name
    refs = ([path.with_suffix(".reference.yaml")] if path.parent == DATA
            else sorted((path.parent / "reference").glob("*.yaml")))
    refs = [r for r in refs if r.exists()]
    return refs[0].relative_to(DATA).as_posix() if len(refs) == 1 else None


def _stem(name: str) -> str:
    """The golden files' name of a capture: its file's, or its run directory's."""
    return Path(name).stem if "/" not in name else Path(name).parent.name


CASES = [(n, None) for n in CAPTURES] + [(n, _reference_of(n)) for n in CAPTURES
                                          if _reference_of(n)]


def _masked(text: str, out: Path) -> str:
    text = text.replace(str(out), "<OUT>").replace(str(DATA), "<DATA>")
    text = re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "data:image/png;base64,<PNG>",
                  text)
    text = text.replace(__version__, "<VERSION>")
    # the harness's commit: recorded by the run, else this checkout's (git describe)
    commit = signoff.git_describe(Path(signoff.__file__).resolve().parent.parent)
    return text.replace(commit, "<COMMIT>") if commit else text


def _rendered(name: str, reference: str | None, out: Path) -> str:
    argv = [str(DATA / name), "--out", str(out), "--signed-by", "Golden Signer"]
    if reference:
        argv += ["--reference", str(DATA / reference)]
    console = io.StringIO()
    with redirect_stdout(console):
        code = signoff.main(argv)
    parts = [f"== exit {code}", "== console", console.getvalue()]
    for page in ("report.md", "report.html"):
        parts += [f"== {page}", (out / page).read_text()]
    plots = out / "plots" / signoff.PLOTS_MANIFEST
    if plots.exists():
        parts += ["== plots", "\n".join(sorted(json.loads(plots.read_text())["plots"]))]
    return _masked("\n".join(parts), out)


def _figure_lines(name: str) -> str:
    """What the nightly comparison takes from a run report (the verdict lines, this
    session's figures with their bounds, the trend points) and the per-node values."""
    report = runreport.load_run_report(DATA / name)
    tests = runreport.tests_of(report)
    lines = ["== verdict lines"] + [f"{t.name}: {t.verdict}" + (f" ({t.reason})" if t.reason
                                                                  else "") for t in tests]
    lines += ["== current figures"] + [repr(f) for f in trends.current_figures(report)]
    series = trends.trend_series(runreport.all_testcases(report))
    lines += ["== trend series"] + [f"{key}: {[tuple(vars(p).values()) for p in pts]}"
                                    for key, pts in sorted(series.items())]
    per_node = sections.per_node_values(tests)
    lines += ["== per-node values"] + [f"{key}: {nodes}" for key, nodes in per_node.items()]
    return "\n".join(lines) + "\n"


def _compare(golden: Path, text: str) -> None:
    if REGEN:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(text)
    assert golden.exists(), f"{golden}: no golden file (FSACCEPT_REGEN_GOLDEN=1 writes it)"
    assert text == golden.read_text(), f"{golden}: the report differs from the golden one"


#: What the sign-off reads of a reference file the capture names outside tests/data (the
#: checkout it was captured in): never that file, which changes, or is absent on another
#: machine.  The capture is then judged as a run whose reference file has changed.
ELSEWHERE = b"# a reference file outside tests/data: not read by the golden test\n"


@pytest.fixture
def only_data_references(monkeypatch):
    read = signoff._read_reference

    def inside_data(reads, path):
        if not Path(path).resolve().is_relative_to(DATA):
            return ELSEWHERE
        return read(reads, path)
    monkeypatch.setattr(signoff, "_read_reference", inside_data)


@pytest.mark.parametrize("name,reference", CASES)
def test_report_is_golden(name, reference, tmp_path, only_data_references):
    stem = _stem(name) + ("+reference" if reference else "")
    _compare(GOLDEN / f"{stem}.report.txt", _rendered(name, reference, tmp_path / "out"))


@pytest.mark.parametrize("name", CAPTURES)
def test_figure_lines_are_golden(name):
    _compare(GOLDEN / f"{_stem(name)}.figures.txt", _figure_lines(name))
