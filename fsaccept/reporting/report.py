"""The acceptance sign-off report (``report.md``, ``report.html``) rendered with Jinja2
from ReFrame's run report: the tests and verdicts (:mod:`.runreport`, :mod:`.verdicts`),
their sections (:mod:`.sections`), plots (:mod:`.plots`) and the assessment against
hardware ceilings (:mod:`.assessment`).  ``fsaccept report RUN_REPORT`` writes it.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fsaccept.core.formatting import format_number
from fsaccept.reporting.plots import figure_plot, per_node_plot
from fsaccept.reporting.runreport import (Test, job_script, load_run_report, overall_verdict,
                                          tests_of)
from fsaccept.reporting.sections import (anchor_of, case_section, family_of, per_node_values,
                                         summary_rows, summary_text)
from fsaccept.reporting.verdicts import ACCEPTED, RunReportError

# --------------------------------------------------------------------------- rendering


@dataclass
class Plot:
    name: str  # file name under plots/
    title: str
    png: bytes

    @property
    def base64(self) -> str:
        import base64
        return base64.b64encode(self.png).decode("ascii")


class ReportWriteError(OSError):
    """The report cannot be written where --out says: the message names the path."""


#: Longest plot file name kept as it is (a file name has at most 255 bytes; a ReFrame
#: test name can be longer).
_PLOT_STEM_CHARS = 80
_PLAIN_STEM = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*[A-Za-z0-9_]")


def _plot_file(stem: str, key: str, used: set[str]) -> str:
    """``stem.png`` when ``stem`` is a short, plain file name not yet used in this report
    (case-insensitively: some file systems are); else its slug cut short and a hash of
    ``key`` (the full names): non-ASCII test names all slug to 'test-', a long one is too
    long for a file name, and two plots must never share (overwrite) one file."""
    name = stem
    if not (len(stem) <= _PLOT_STEM_CHARS and _PLAIN_STEM.fullmatch(stem)
            and stem.lower() not in used):
        slug = re.sub(r"[^a-z0-9]+", "-", stem.lower()).strip("-")[:_PLOT_STEM_CHARS]
        digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()
        name = f"{slug}-{digest[:12]}"
        if name.lower() in used:  # taken by a plain name: the whole hash
            name = f"{slug}-{digest}"
    used.add(name.lower())
    return name + ".png"


def _unit_of(test: Test, figure: str) -> str:
    return next((fr.unit for fr in test.figures if fr.name == figure), "")


def _utc(ts: Any) -> str:
    """'2026-11-22 02:46:29 UTC' from a Unix time ('' if there is none)."""
    if not isinstance(ts, (int, float)) or isinstance(ts, bool):
        return ""
    from datetime import datetime, timezone
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def build_context(report: dict[str, Any], *, signed_by: str = "", harness_version: str = "",
                  git_commit: str = "", ceilings: list[Any] | None = None,
                  job_scripts: dict[str, str] | None = None,
                  reference_check: str = "", plots: bool = True) -> dict[str, Any]:
    """Everything the templates show, from a run report and the sign-off data."""
    from fsaccept.reporting import assessment

    info = report.get("session_info", {})
    tests = tests_of(report)
    verdict, blocking = overall_verdict(tests)
    job_scripts = job_scripts or {}
    sections, all_plots, assessments = [], [], []
    plot_files: set[str] = set()
    for t in tests:
        limits: dict[str, float] = {}
        t_assess = []
        for fr in t.figures:
            a = assessment.assess(fr.name, fr.value, fr.unit, t.nodes, ceilings or [])
            if a is not None:
                limits[fr.name] = a.ceiling
                t_assess.append(a)
                assessments.append((t.name, a))
        runs = [case_section(tc, f"Run {i + 1}" if len(t.cases) > 1 else "Measurement",
                             job_scripts.get(tc.get("uuid", ""), ""))
                for i, tc in enumerate(t.cases)]
        gens = [case_section(fx, "Generation (fixture: " + (fx.get("descr") or "dependency")
                             + ")", job_scripts.get(fx.get("uuid", ""), ""))
                for fx in t.fixtures]
        plot = None
        if plots:
            png = figure_plot(t, limits)
            if png:
                plot = Plot(_plot_file(anchor_of(t.name), t.name, plot_files),
                            f"{t.name}: measured vs threshold", png)
                all_plots.append(plot)
        sections.append({"test": t, "anchor": anchor_of(t.name), "runs": runs,
                         "generation": gens, "plot": plot, "assessments": t_assess,
                         "stats": [(fr.name, fr.unit, fr.stats) for fr in t.figures
                                   if fr.stats and fr.stats.n > 1]})
    node_plots = []
    if plots:
        tests_by_family = {family_of(t.name): t for t in tests}
        for (family, fig), vals in per_node_values(tests).items():
            unit = _unit_of(tests_by_family.get(family, tests[0]), fig) if tests else ""
            p = Plot(_plot_file(f"{anchor_of(family)}-{fig}-per-node",
                                f"{family}\0{fig}\0per node", plot_files),
                     f"{family}: {fig} per node",
                     per_node_plot(family, fig, vals, unit))
            node_plots.append(p)
            all_plots.append(p)
    refs = sorted({(tc.get("reference_path") or "—", tc.get("reference_sha256") or "—")
                   for t in tests for tc in t.cases + t.fixtures
                   if tc.get("reference_sha256") or tc.get("reference_path")})
    systems = sorted({tc.get("system") for t in tests for tc in t.cases if tc.get("system")})
    signoff = {
        "system": ", ".join(systems) or "—",
        "date": _utc(info.get("time_start_unix")) or info.get("time_start", "—"),
        "time_end": _utc(info.get("time_end_unix")) or info.get("time_end", "—"),
        "harness_version": harness_version or "—",
        "git_commit": git_commit or "—",
        "reframe_version": info.get("version", "—"),
        "session_uuid": info.get("uuid", "—"),
        "cmdline": info.get("cmdline", "—"),
        "hostname": info.get("hostname", "—"),
        "user": info.get("user", "—"),
        "references": refs,
        "reference_check": reference_check,
        "signed_by": signed_by or "(not signed: pass --signed-by NAME)",
        "verdict": verdict,
        "blocking": blocking,
    }
    return {"signoff": signoff, "rows": summary_rows(tests), "sections": sections,
            "node_plots": node_plots, "plots": all_plots, "assessments": assessments,
            "tests": tests, "has_ceilings": bool(ceilings)}


def render(context: dict[str, Any], template: str) -> str:
    """Render ``templates/<template>`` (report.md.j2 or report.html.j2)."""
    import jinja2
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("fsaccept.reporting", "templates"),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html.j2",),
                                            default_for_string=False),
        trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True)
    env.filters["num"] = format_number
    env.filters["md"] = lambda s: str(s).replace("|", "\\|").replace("\n", " ")
    return env.get_template(template).render(**context)


def write_report(run_report: Path | str, out_dir: Path | str, *, signed_by: str = "",
                 repo: Path | None = None, reference: Path | str | None = None,
                 ceilings_file: Path | str | None = None) -> list[Path]:
    """Write report.md, report.html and plots/ into ``out_dir``; returns their paths.

    Ceilings come from ``ceilings_file`` (a YAML file with a ``ceilings:`` map, e.g.
    measured by ``python -m fsaccept.reporting.assessment measure``), else from ``reference``
    (default: the reference file the tests recorded, when its SHA-256 still
    matches what they recorded).
    """
    import hashlib

    from fsaccept import __version__
    from fsaccept.reporting import assessment

    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise ReportWriteError(f"{out_dir}: --out is not a directory")
    report = load_run_report(run_report)
    tests = tests_of(report)
    scripts = {tc.get("uuid", ""): job_script(tc) for t in tests for tc in t.cases + t.fixtures}
    ceilings: list[assessment.Ceiling] = []
    check = ""
    recorded = {(tc.get("reference_path"), tc.get("reference_sha256")) for t in tests
                for tc in t.cases if tc.get("reference_path")}
    if reference is None and len(recorded) == 1:
        path, sha = next(iter(recorded))
        from fsaccept.core import inputs, yamlfile
        try:  # a path the run report names: read bounded, as any reference file
            now = hashlib.sha256(inputs.read_bytes(path, yamlfile.MAX_BYTES,
                                                   "reference file")).hexdigest()
        except inputs.InputError:
            now = None
        if now == sha:
            reference = path
            check = f"{path} still has SHA-256 {sha}: ceilings read from it"
        else:
            check = (f"{path} changed or is gone since the run (SHA-256 now "
                     f"{now or 'unreadable'}): no ceilings shown")
    elif reference is None and len(recorded) > 1:
        check = "the tests recorded different reference files: no ceilings shown"
    if ceilings_file is not None:
        ceilings = assessment.ceilings_from_reference_file(ceilings_file)
        check = f"ceilings from {ceilings_file}"
        if Path(ceilings_file).is_file():
            first = Path(ceilings_file).read_text().splitlines()[:1]
            if first and first[0].startswith("#"):
                check += f" ({first[0].lstrip('# ')})"
    elif reference is not None:
        ceilings = assessment.ceilings_from_reference_file(reference)
        if not check:
            check = f"ceilings read from {reference}"
        if not ceilings:
            check += " (it states no ceilings: no assessment)"
    repo = repo or Path(__file__).resolve().parent.parent
    ctx = build_context(report, signed_by=signed_by, harness_version=__version__,
                        git_commit=git_describe(repo), ceilings=ceilings, job_scripts=scripts,
                        reference_check=check)
    pages = {name: render(ctx, name + ".j2") for name in ("report.md", "report.html")}
    written = []
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        if ctx["plots"]:
            (out_dir / "plots").mkdir(exist_ok=True)
            for p in ctx["plots"]:
                (out_dir / "plots" / p.name).write_bytes(p.png)
                written.append(out_dir / "plots" / p.name)
        for name, page in pages.items():
            (out_dir / name).write_text(page)
            written.append(out_dir / name)
    except OSError as err:
        where = err.filename or out_dir
        raise ReportWriteError(f"{where}: cannot write the report (--out {out_dir}): "
                               f"{err.strerror or err}") from None
    return written


def main(argv: list[str] | None = None) -> int:
    import argparse
    import sys

    from fsaccept.reporting.assessment import CeilingError

    ap = argparse.ArgumentParser(
        prog="fsaccept report",
        description="write the sign-off report (report.md, report.html) from a ReFrame run report")
    ap.add_argument("run_report", help="the JSON file ReFrame wrote with --report-file")
    ap.add_argument("--out", help="directory to write into (default: the run report's)")
    ap.add_argument("--signed-by", default="", metavar="NAME")
    ap.add_argument("--reference", help="reference file whose ceilings to use (default: the "
                    "one the tests recorded, if unchanged)")
    ap.add_argument("--ceilings", metavar="FILE", help="YAML file with a ceilings: map "
                    "(e.g. from python -m fsaccept.reporting.assessment measure); overrides the reference's")
    args = ap.parse_args(argv)
    out = Path(args.out) if args.out else Path(args.run_report).resolve().parent
    try:
        written = write_report(args.run_report, out, signed_by=args.signed_by,
                               reference=args.reference, ceilings_file=args.ceilings)
    except (RunReportError, CeilingError, ReportWriteError) as err:
        print(f"fsaccept.reporting.report: {err}", file=sys.stderr)
        return 2
    del written
    tests = tests_of(load_run_report(args.run_report))
    ctx_verdict = overall_verdict(tests)
    print(summary_text(summary_rows(tests)))
    print(f"report: {out / 'report.md'}")
    print(f"report: {out / 'report.html'}")
    print(f"overall verdict: {ctx_verdict[0]}"
          + "".join(f"\n  {b}" for b in ctx_verdict[1]))
    return 0 if ctx_verdict[0] == ACCEPTED else 1


if __name__ == "__main__":
    raise SystemExit(main())


def git_describe(repo: Path) -> str:
    """'<commit>' or '<commit> (with uncommitted changes)'; 'unknown' outside git."""
    try:
        commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"],
                                capture_output=True, text=True, timeout=30)
        if commit.returncode != 0:
            return "unknown (not a git work tree)"
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain",
                                "--untracked-files=no"], capture_output=True, text=True,
                               timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown (git not available)"
    text = commit.stdout.strip()
    if dirty.stdout.strip():
        text += " (with uncommitted changes)"
    return text
