"""The acceptance sign-off report (``report.md``, ``report.html``) rendered with Jinja2
from ReFrame's run report: the tests and verdicts (:mod:`.runreport`, :mod:`.verdicts`),
the session's verdict (:mod:`.verdict`, decided there), their sections
(:mod:`.sections`), plots (:mod:`.plots`, :mod:`.plotbudget`) and the assessment against
hardware ceilings (:mod:`.assessment`).  ``fsaccept report RUN_REPORT`` writes it.

(Over 700 lines, one concept: the one pass from a run's files to the written report,
its context, escaping, reading and command; each section is laid out in a module of its
own, with its charts.)

One pass (:func:`write_report_context`): every file the sign-off uses is read once
(:class:`fsaccept.core.inputs.Reader`: the run report, the reference file, a ceilings
file, the job scripts shown, the manifest and its signature), and what is parsed or
shown is what is digested; the run report's test cases are typed once
(:func:`fsaccept.reporting.case.typed`); the typed cases are judged; the context is
built and rendered.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from fsaccept import __version__
from fsaccept.core import inputs, yamlfile
from fsaccept.core.formatting import LINE_BREAKS, format_number, one_line, prefixed_lines
from fsaccept.reporting import assessment
from fsaccept.reporting import manifest as run_manifest
from fsaccept.reporting.assessment import CeilingError
from fsaccept.reporting.bound import bound_section
from fsaccept.reporting.bound import drawn as bound_drawn
from fsaccept.reporting.components import components_section
from fsaccept.reporting.components import drawn as components_drawn
from fsaccept.reporting.degraded import degraded_section
from fsaccept.reporting.degraded import drawn as degraded_drawn
from fsaccept.reporting.io500 import io500_section
from fsaccept.reporting.plotbudget import MAX_PLOTS, Plot, PlotBudget
from fsaccept.reporting.plots import check_plot, figure_plot, per_node_plot
from fsaccept.reporting.reduction import data_reduction_lines
from fsaccept.reporting.semantics import semantics_section
from fsaccept.reporting.fill import fill_section
from fsaccept.reporting.fill import drawn as fill_drawn
from fsaccept.reporting.interference import interference_sections
from fsaccept.reporting.soak import plots as soak_plots
from fsaccept.reporting.soak import soak_sections
from fsaccept.reporting.scaling import drawn as scaling_drawn
from fsaccept.reporting.scaling import is_beyond, scaling_section, swept
from fsaccept.reporting.case import TypedReport, typed
from fsaccept.reporting.signoff.common import RunFiles
from fsaccept.reporting.signoff.output import dataset_margin_of
from fsaccept.reporting.runreport import Test, job_script, read_run_report, tests_of
from fsaccept.reporting.sections import (GROUP_LIMIT, WORST_SHOWN, anchor_of, case_section,
                                         check_summaries, check_text, data_left_lines,
                                         POOLED, family_of, scaled,
                                         per_node_values, summary_rows, summary_text,
                                         target_sections, target_text)
from fsaccept.reporting.verdict import SessionVerdict, console_lines, judge_session
from fsaccept.reporting.verdicts import RunReportError, spec_of_case
from fsaccept.suite.reference import ReferenceError, load_reference

# --------------------------------------------------------------------------- the context


class ReportWriteError(OSError):
    """The report cannot be written where --out says: the message names the path."""


def _unit_of(test: Test, figure: str) -> str:
    return next((fr.unit for fr in test.figures if fr.name == figure), "")


def _utc(ts: Any) -> str:
    """'2026-11-22 02:46:29 UTC' from a Unix time ('' if there is none)."""
    if not isinstance(ts, (int, float)) or isinstance(ts, bool):
        return ""
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def build_context(report: TypedReport | dict[str, Any], *, signed_by: str = "",
                  harness_version: str = "", git_commit: str = "",
                  ceilings: list[Any] | None = None,
                  job_scripts: dict[str, str] | Callable[[str, str], str] | None = None,
                  reference_check: str = "", plots: bool = True,
                  reference: Any = None, reference_problem: str = "",
                  integrity: Any = None, files: RunFiles | None = None,
                  run_ceilings: list[Any] | None = None, against: str = "",
                  run_ceilings_name: str = "") -> dict[str, Any]:
    """Everything the templates show, from a run report (typed at the door, once, when
    it is not yet) and the sign-off data (``reference``: the reference file the tests
    recorded, verified by its SHA-256, whose thresholds the recorded ones must match;
    None, and ``reference_problem`` says why, when it could not be verified: the sign-off
    is then not ACCEPTED; ``integrity``: the run's manifest verified
    (:class:`.manifest.Integrity`), or a function verifying it, called once the job
    scripts shown are read (their digests are of the bytes shown); None when there is
    none: a manifest that does not verify keeps the sign-off from ACCEPTED; ``files``:
    the run's files a check's record is rebuilt from, read by the same reader;
    ``against``: the verdict lines' words when ``ceilings`` are not the run's own, whose
    anomalies (``run_ceilings``, named ``run_ceilings_name``) are kept as rows of their
    own where ``ceilings`` find none).  The verdict is :func:`.verdict.judge_session`'s."""
    report = typed(report)
    tests = tests_of(report, reference=reference, files=files)
    # A sweep's curves, judged; its points beyond the partition end a curve: not tests
    # that did not run.
    sweep = scaling_section(tests, reference)
    tests = [t for t in tests if not is_beyond(t)]
    # Each figure at the declared fill level against its empty counterpart.
    filled = fill_section(tests, reference)
    # Each bounded figure against what the measured components can deliver.
    bounded = bound_section(tests, reference)
    checks = check_summaries(tests)
    budget = PlotBudget(plots, MAX_PLOTS if scaled(tests) else math.inf)
    scripts = job_scripts if callable(job_scripts) else (job_scripts or {}).get
    assess = _Assess(ceilings or [], run_ceilings or [], run_ceilings_name)
    sections = _test_sections(checks, assess, scripts, budget, files)
    # Every job script shown is read: the manifest's digests are of those bytes.
    integrity = integrity() if callable(integrity) else integrity
    judged = judge_session(report, tests, reference=reference,
                           reference_problem=reference_problem,
                           conditions=(sweep, filled, bounded),
                           integrity=integrity, checks=checks)
    node_plots = _node_plots(checks, budget)
    degraded = degraded_section(tests, reference)
    degraded_plot = degraded_drawn(degraded, budget)
    soaks = _soaks(tests, budget)
    fill_plot = fill_drawn(filled, budget)
    parts = components_section(tests, reference)
    parts_plots, bound_plots = components_drawn(parts, budget), bound_drawn(bounded, budget)
    curves = scaling_drawn(sweep, budget)
    signoff = _signoff(report.info, tests, judged, signed_by=signed_by,
                       harness_version=harness_version, git_commit=git_commit,
                       reference_check=reference_check, integrity=integrity,
                       assessment=_assessment_text(against, assess))
    shown = [t for chk in checks if not chk.large for t in chk.tests]
    return {"signoff": signoff, "judged": judged, "integrity": integrity,
            "sections": sections,
            "rows": summary_rows(shown), "targets": target_sections(tests, shown, reference),
            "checks": checks, "grouped": any(len(chk.tests) > 1 for chk in checks),
            "group_limit": GROUP_LIMIT, "worst_shown": WORST_SHOWN,
            "node_plots": node_plots, "plots": budget.plots,
            "assessments": [(s["test"].name, a) for s in sections for a in s["assessments"]],
            "plots_left_out": budget.left_out, "max_plots": MAX_PLOTS,
            "tests": tests, "has_ceilings": bool(ceilings) or assess.kept > 0,
            "data_reduction": data_reduction_lines(tests),
            "semantics": semantics_section(tests, reference),
            "components": parts, "components_plots": parts_plots,
            "bound": bounded, "bound_plots": bound_plots, "soaks": soaks,
            "interferences": [{"name": name, "section": section}
                              for name, section in interference_sections(tests)],
            "degraded": degraded, "degraded_plot": degraded_plot,
            "fill": filled, "fill_plot": fill_plot,
            "io500": io500_section(tests),
            "scaling": sweep, "scaling_curves": curves,
            "data_left": data_left_lines(tests)}


@dataclass
class _Assess:
    """Each figure against the ceilings, and against the run's own (``own``, named
    ``own_name``) where those find no anomaly: ``kept`` counts the anomalies so kept."""

    ceilings: list[Any]
    own: list[Any]
    own_name: str
    kept: int = 0

    def __call__(self, t: Test) -> tuple[dict[str, float], list[Any]]:
        """The ceiling of each of ``t``'s figures (drawn on its plot), and its assessments.
        A component test's figures are none: one target's or one link's figure is no
        figure of the whole system (its ceiling is the bound's, :mod:`.bound`)."""
        limits: dict[str, float] = {}
        found: list[Any] = []
        spec = spec_of_case(t.case)
        if spec is not None and spec.component:
            return limits, found
        for fr in t.figures:
            a = assessment.assess(fr.name, fr.value, fr.unit, t.nodes, self.ceilings)
            if a is not None:
                limits[fr.name] = a.ceiling
                found.append(a)
            own = assessment.assess(fr.name, fr.value, fr.unit, t.nodes, self.own)
            if own is not None and own.anomaly and not (a is not None and a.anomaly):
                found.append(replace(own, source=self.own_name))  # never dropped silently
                self.kept += 1
        return limits, found


def _assessment_text(against: str, assess: _Assess) -> str:
    """The Performance assessment row: whose ceilings, and the run's own anomalies kept."""
    n = assess.kept
    return against + (f"; {n:,} anomal{'y' if n == 1 else 'ies'} against {assess.own_name} "
                      "kept in the assessment" if against and n else "")


def _test_sections(checks: list[Any], assess: _Assess, scripts: Callable[[str, str], str],
                   budget: PlotBudget, files: RunFiles | None) -> list[dict[str, Any]]:
    """Each test shown in full, under its check; a check of several test cases gets one
    plot of them all (a pooled one, none)."""
    sections = []
    for chk in checks:
        members = chk.tests
        for t in chk.detailed:
            sections.append(_test_section(t, chk.name, len(members) == 1, assess, scripts,
                                          budget, files))
            chk.sections.append(sections[-1])
        if len(members) > 1:
            chk.plot = budget.draw(
                f"{anchor_of(chk.name)}-check", f"{chk.name}\0check",
                f"{chk.name}: {len(members):,} test cases",
                lambda: None if chk.name == POOLED else check_plot(chk.name, members))
    return sections


def _test_section(t: Test, check: str, alone: bool, assess: _Assess,
                  scripts: Callable[[str, str], str], budget: PlotBudget,
                  files: RunFiles | None) -> dict[str, Any]:
    """One test: its runs, its generation (fixtures), its assessments and statistics, and
    its plot when it is alone in its check (a sweep's point: its curve, under Scaling)."""
    limits, found = assess(t)
    runs = [case_section(tc, f"Run {i + 1}" if len(t.cases) > 1 else "Measurement",
                         scripts(tc.get("uuid", ""), "") or "", dataset_margin_of(tc, files))
            for i, tc in enumerate(t.cases)]
    gens = [case_section(fx, "Generation (fixture: " + (fx.get("descr") or "dependency")
                         + ")", scripts(fx.get("uuid", ""), "") or "") for fx in t.fixtures]
    plot = budget.draw(anchor_of(t.name), t.name, f"{t.name}: measured vs threshold",
                       lambda: None if swept(t) else figure_plot(t, limits)) if alone else None
    return {"test": t, "anchor": anchor_of(t.name), "runs": runs, "generation": gens,
            "plot": plot, "assessments": found, "check": check,
            "stats": [(fr.name, fr.unit, fr.stats) for fr in t.figures
                      if fr.stats and fr.stats.n > 1]}


def _node_plots(checks: list[Any], budget: PlotBudget) -> list[Plot]:
    """One plot per check family and figure of its per-node values (a sweep's points:
    its curve, in the Scaling section)."""
    if not budget.drawing:
        return []
    single = [t for chk in checks if len(chk.tests) == 1 for t in chk.tests if not swept(t)]
    tests_by_family = {family_of(t.name): t for t in single}
    drawn = []
    for (family, fig), vals in per_node_values(single).items():
        unit = _unit_of(tests_by_family.get(family, single[0]), fig) if single else ""
        drawn.append(budget.draw(f"{anchor_of(family)}-{fig}-per-node",
                                 f"{family}\0{fig}\0per node", f"{family}: {fig} per node",
                                 lambda: per_node_plot(family, fig, vals, unit)))
    return [p for p in drawn if p]


def _soaks(tests: list[Test], budget: PlotBudget) -> list[dict[str, Any]]:
    """Each soak's section and its plots, one per figure over the run."""
    soaks = []
    for name, section in soak_sections(tests):
        drawn = [budget.draw(f"soak-{name}-{figure}".replace(" ", "-"),
                             f"\0soak\0{name}\0{figure}", f"{name}: {figure} over the run",
                             lambda png=png: png)
                 for figure, png in (soak_plots(section).items() if budget.drawing else ())]
        soaks.append({"name": name, "section": section, "plots": [p for p in drawn if p]})
    return soaks


def _signoff(info: Mapping[str, Any], tests: list[Test], judged: SessionVerdict, *,
             signed_by: str, harness_version: str, git_commit: str, reference_check: str,
             integrity: Any, assessment: str) -> dict[str, Any]:
    """The Sign-off table, and the verdict and its reasons above it."""
    refs = sorted({(tc.get("reference_path") or "—", tc.get("reference_sha256") or "—")
                   for t in tests for tc in t.cases + t.fixtures
                   if tc.get("reference_sha256") or tc.get("reference_path")})
    systems = sorted({tc.get("system") for t in tests for tc in t.cases if tc.get("system")})
    return {
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
        "integrity": integrity.text if integrity is not None else "not verified: no manifest",
        "assessment": assessment,
        "signed_by": signed_by or "(not signed: pass --signed-by NAME)",
        "verdict": judged.verdict,
        "blocking": judged.reasons,
    }


class MarkdownText(str):
    """Text already made safe for Markdown (a code span or block): not escaped again."""


#: Markdown's inline punctuation, escaped with a backslash: emphasis, code, links,
#: images, tables, headings, strikethrough.  '_' inside a word cannot start emphasis
#: (CommonMark), so ``write_bandwidth`` stays as it is.
_MD_SPECIAL = re.compile(r"[\\`*\[\]|#~!]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")


def md_escape(value: Any) -> str:
    """Any field for report.md: one line (a reason never opens a paragraph of its own),
    HTML inert (``<``, ``>``, ``&`` as entities), Markdown's punctuation escaped (a ``|``
    cannot split a table cell; ``**``, ``[x](y)`` and headings are text)."""
    if isinstance(value, MarkdownText):
        return value
    text = LINE_BREAKS.sub(" ", str(value))
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MD_SPECIAL.sub(lambda m: "\\" + m.group(0), text)
    # A field never starts a block (a list item, a quote, a numbered list) either.
    return re.sub(r"^([-+=]|\d{1,9}[.)])(?=\s|$)", r"\\\1", text)


def md_code(value: Any) -> MarkdownText:
    """An inline code span on one line, whatever backticks it holds (a longer fence),
    with ``|`` escaped (GitHub's tables split on it even inside code)."""
    text = LINE_BREAKS.sub(" ", str(value)).replace("|", "\\|")
    run = max((len(r) for r in re.findall(r"`+", text)), default=0)
    fence = "`" * (run + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return MarkdownText(f"{fence}{pad}{text}{pad}{fence}")


def md_block(value: Any, info: str = "") -> MarkdownText:
    """A fenced code block whose fence no line of ``value`` can close."""
    text = str(value).replace("\r\n", "\n")
    run = max((len(r) for r in re.findall(r"`{3,}", text)), default=2)
    fence = "`" * (run + 1)
    return MarkdownText(f"{fence}{info}\n{text.rstrip(chr(10))}\n{fence}")


def md_strong(value: Any) -> MarkdownText:
    """``**value**``, the value escaped."""
    return MarkdownText(f"**{md_escape(value)}**")


def render(context: dict[str, Any], template: str) -> str:
    """Render ``templates/<template>`` (report.md.j2 or report.html.j2).  Every field is
    escaped: HTML by Jinja2's autoescape, Markdown by :func:`md_escape` (``finalize``).
    The words both reports share are in ``templates/words/``, one file per section,
    escaped as the report that includes them (``strong``: bold in either)."""
    import jinja2  # heavy: only a report rendered pays for Jinja2
    import markupsafe  # Jinja2's own
    markdown = template.endswith(".md.j2")
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("fsaccept.reporting", "templates"),
        autoescape=not markdown,
        trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True, finalize=md_escape if markdown else None)
    env.filters["strong"] = md_strong if markdown else (
        lambda v: markupsafe.Markup("<strong>{}</strong>").format(v))
    env.filters["num"] = format_number
    env.filters["code"] = md_code
    env.filters["anchor"] = anchor_of
    env.filters["block"] = md_block
    return env.get_template(template).render(**context)


#: In plots/: the plots this report wrote (name → SHA-256), so that the next report into
#: the same directory removes those it does not write again, and nothing else.
PLOTS_MANIFEST = "fsaccept-plots.json"
_PLOT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*\.png")


def _plots_written_before(plots_dir: Path) -> dict[str, str]:
    """name → SHA-256 of the plots an earlier fsaccept report wrote into ``plots_dir``
    (its manifest); {} without one, or with one fsaccept could not have written."""
    try:
        data = json.loads((plots_dir / PLOTS_MANIFEST).read_text())
    except (OSError, ValueError):
        return {}
    plots = data.get("plots") if isinstance(data, dict) else None
    if not isinstance(plots, dict) or data.get("written_by") != "fsaccept report":
        return {}
    return {n: h for n, h in plots.items() if isinstance(n, str) and isinstance(h, str)
            and _PLOT_NAME.fullmatch(n)}


def _remove_earlier_plots(plots_dir: Path, earlier: dict[str, str], now: set[str]) -> None:
    """Remove the earlier report's plots that this one does not write, each only if it is
    still the very file fsaccept wrote (a regular file with the SHA-256 recorded): a
    file someone put there or changed since stays."""
    for name, sha in earlier.items():
        path = plots_dir / name
        if name in now or path.is_symlink() or not path.is_file():
            continue
        try:
            if hashlib.sha256(path.read_bytes()).hexdigest() == sha:
                path.unlink()
        except OSError:
            continue


def _load_verified_reference(path: str, raw: bytes) -> Any:
    """The reference file (validated as a run reads it) from its bytes ``raw``, or why it
    cannot be read."""
    try:
        return load_reference(path, raw)
    except (ReferenceError, OSError, ValueError) as err:
        return str(err).splitlines()[0][:200]


def _read_reference(reads: inputs.Reader, path: Path | str) -> bytes:
    """A reference file's bytes, read once for this sign-off (wherever it is)."""
    return reads.read(path, yamlfile.MAX_BYTES, "reference file", below=False)


def _given_reference(path: str, recorded: set[tuple[Any, Any]],
                     reads: inputs.Reader) -> tuple[Any, str, str]:
    """(the reference file given with --reference, or None; what the report says of it; why
    it does not verify the run, or ''): its thresholds are compared, and it verifies the
    run when it is the file the tests recorded (the same SHA-256)."""
    try:
        raw = _read_reference(reads, path)
    except inputs.InputError as err:
        return None, f"{path}: {err}", str(err)
    loaded = _load_verified_reference(path, raw)
    if isinstance(loaded, str):
        return None, f"{path}: {loaded}", loaded
    sha = loaded.sha256  # of the very bytes whose thresholds are compared (no second read)
    check = f"{path} (--reference, SHA-256 {sha}): thresholds compared with it"
    shas = {s for _, s in recorded}
    if shas != {sha}:
        why = (f"the tests recorded reference SHA-256 {', '.join(sorted(map(str, shas)))}"
               if shas else "the tests recorded no reference file")
        return loaded, f"{check}; {why}", f"{path} is not the file the run used: {why}"
    return loaded, check, ""


def _ceilings_of(reads: inputs.Reader, path: Path | str) -> tuple[list[Any], bytes]:
    """The ceilings a reference or ceilings file states, and its bytes (read once)."""
    try:
        raw = _read_reference(reads, path)
    except inputs.InputError as err:
        raise CeilingError(str(err)) from None
    return assessment.ceilings_from_reference_file(path, raw), raw


def _comment(raw: bytes) -> str:
    """' (its first line)' of a ceilings file whose first line is a comment (what
    ``fsaccept ceilings measure`` ran), else ''."""
    first = raw.decode("utf-8", "replace").splitlines()[:1]
    return f" ({one_line(first[0].lstrip('# '))})" if first and first[0].startswith("#") else ""


def _joined(check: str, more: str) -> str:
    return f"{check}; {more}" if check and more else check or more


def _is_run_file(path: Path | str, run_dir: Path) -> bool:
    """Whether ``path`` names the run's own ceilings file (as ``scripts/acceptance`` once
    passed it: not another file)."""
    own = os.path.join(run_dir, assessment.RUN_FILE)
    return os.path.abspath(path) == own and os.path.lexists(own)


def _run_ceilings(reads: inputs.Reader, run_dir: Path,
                  listed: dict[str, Any] | None) -> tuple[list[Any] | None, str]:
    """The ceilings the run measured (``RUN_DIR/ceilings.yaml``), verified by the
    manifest's digest where there is a manifest, and what the Ceilings row says of them:
    (None, '') when the run has none; (None, why) when they cannot be used (changed since
    the manifest, not in it, unreadable, not ceilings): then no assessment."""
    path = run_dir / assessment.RUN_FILE
    if not os.path.lexists(path):
        return None, ""
    name = f"the run's {assessment.RUN_FILE}"
    try:
        raw = reads.read(path, yamlfile.MAX_BYTES, "the run's ceilings")
    except inputs.InputError as err:
        return None, f"{name} not read ({err}): no assessment"
    if listed is not None:
        sha = listed["files"].get(assessment.RUN_FILE)
        if sha is None:
            return None, f"{name} is not in the manifest (added since the run): no assessment"
        if sha.lower() != hashlib.sha256(raw).hexdigest():
            return None, f"{name} changed since the manifest was written: no assessment"
    try:
        found = assessment.ceilings_from_reference_file(path, raw)
    except CeilingError as err:
        return None, f"{name}: {err}: no assessment"
    return found, (f"ceilings from {name}" + _comment(raw)
                   + ("" if listed is not None else " (no manifest verifies it)")
                   + ("" if found else " (it states no ceilings: no assessment)"))


def write_report(run_report: Path | str, out_dir: Path | str, **options: Any) -> list[Path]:
    """Write report.md, report.html and plots/ into ``out_dir``; returns their paths
    (options: those of :func:`write_report_context`)."""
    return write_report_context(run_report, out_dir, **options)[0]


def write_report_context(run_report: Path | str, out_dir: Path | str, **options: Any
                         ) -> tuple[list[Path], dict[str, Any]]:
    """Write report.md, report.html and plots/ into ``out_dir``; returns their paths and
    the context they show (options: those of :func:`signoff_context`)."""
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise ReportWriteError(f"{out_dir}: --out is not a directory")
    ctx = signoff_context(run_report, **options)
    pages = {name: render(ctx, name + ".j2") for name in ("report.md", "report.html")}
    return write_pages(out_dir, pages, ctx["plots"]), ctx


def signoff_context(run_report: Path | str, *, signed_by: str = "",
                    repo: Path | None = None, reference: Path | str | None = None,
                    ceilings_file: Path | str | None = None,
                    manifest: Path | str | None = None,
                    allowed_signers: Path | str | None = None,
                    plots: bool = True) -> dict[str, Any]:
    """The sign-off of a run report, as report.md shows it: its tests judged again from
    their outputs, its verdict, its manifest verified (``plots``: whether to draw them).

    Ceilings come from ``ceilings_file`` (a YAML file with a ``ceilings:`` map, e.g.
    measured by ``python -m fsaccept.reporting.assessment measure``), else from ``reference``
    (default: the reference file the tests recorded, when its SHA-256 still
    matches what they recorded).  The run's manifest (``manifest``, default the one beside
    the run report) is verified, its signature too with ``allowed_signers``.

    One pass: each file is read once (``reads``), parsed or shown from the bytes read,
    and digested from the same bytes when the manifest is verified, last (after the job
    scripts shown are read); the run report's test cases are typed once (``typed``) and
    judged as typed (:func:`build_context`).
    """
    run_dir = Path(os.path.abspath(run_report)).parent
    reads = inputs.Reader(run_dir)
    report = typed(read_run_report(reads, run_report))
    by_uuid = {tc.get("uuid", ""): tc for tc in report.cases}
    rebase = run_manifest.rebaser(report.record, run_dir)

    def scripts(uuid: str, default: str = "") -> str:  # read only for the cases shown
        if uuid not in by_uuid:
            return default
        tc = by_uuid[uuid]  # its directories where the run directory is now
        moved = {k: rebase(tc[k]) for k in ("outputdir", "stagedir")
                 if isinstance(tc.get(k), str) and tc[k]}
        return job_script({**tc, **moved}, run_dir, reads)
    ceilings: list[assessment.Ceiling] = []
    check = ""
    verified = None  # the reference file the tests recorded, SHA-256 verified
    recorded = {(tc.get("reference_path"), tc.get("reference_sha256")) for tc in report.cases
                if tc.get("reference_path") and not tc.get("fixture")}
    problem = ("the tests recorded no reference file" if not recorded else
               f"the tests recorded {len(recorded)} different reference files")
    listed = run_manifest.listed(reads, manifest)  # the bytes verify() reads, last
    recorded_ok = False  # the reference file the tests recorded verifies
    if reference is not None:
        verified, check, problem = _given_reference(str(reference), recorded, reads)
    elif len(recorded) == 1:
        recorded_path, sha = next(iter(recorded))
        # The run directory's copy of it, where the manifest names one (a run directory
        # moved or sent), else the file where the run read it.
        copy = run_manifest.reference_copy(listed, run_dir, str(recorded_path))
        path = copy or recorded_path
        try:  # a path the run report names: read bounded, as any reference file
            raw = _read_reference(reads, path)
        except inputs.InputError:
            raw = None
        now = hashlib.sha256(raw).hexdigest() if raw is not None else None
        shown = (f"{os.path.relpath(copy, run_dir)} (the run's copy of {recorded_path})"
                 if copy else path)
        if now == sha:
            # The thresholds of the very bytes whose digest verifies (one read).
            verified = _load_verified_reference(path, raw)
            check = f"{shown} still has SHA-256 {sha}: " + (
                "thresholds compared with it" if not isinstance(verified, str)
                else f"its thresholds could not be compared ({verified})")
            reference = path
            recorded_ok = True
            problem = ""
            if isinstance(verified, str):
                problem, verified = f"{path}: {verified}", None
        else:
            # No digest of a file that does not verify (the run report may name any).
            check = (f"{shown} changed or is gone since the run (not SHA-256 {sha}"
                     f"{'' if now else ', or unreadable'}): thresholds not compared; "
                     "no ceilings shown")
            problem = check
    elif reference is None and len(recorded) > 1:
        check = "the tests recorded different reference files: no ceilings shown"
    # The run's own ceilings: those it measured (ceilings.yaml), else its reference's.
    own, own_text = _run_ceilings(reads, run_dir, listed)
    own_name = f"the run's {assessment.RUN_FILE}"
    against, theirs = "", None
    if ceilings_file is not None and not _is_run_file(ceilings_file, run_dir):
        ceilings, raw = _ceilings_of(reads, ceilings_file)
        check = _joined(check, f"ceilings from {ceilings_file}" + _comment(raw))
        if own is None and not own_text and recorded_ok:
            own_name = f"the ceilings of {reference}"
            try:
                own = _ceilings_of(reads, reference)[0] or None
            except CeilingError:
                own = None
        against = f"performance assessment against {ceilings_file} (--ceilings)" + (
            f", not {own_name}" if own is not None else f", not {own_name} ({own_text})"
            if own_text
            else ": the run has no ceilings of its own")
        theirs = own
    elif own is not None or own_text:
        ceilings = own or []
        check = _joined(check, own_text)
    elif reference is not None:
        ceilings, _ = _ceilings_of(reads, reference)
        if recorded_ok:
            check += "; ceilings read from it"
        elif not check:
            check = f"ceilings read from {reference}"
        if not ceilings:
            check += " (it states no ceilings: no assessment)"
    repo = repo or Path(__file__).resolve().parent.parent
    ctx = build_context(report, signed_by=signed_by, harness_version=__version__,
                        git_commit=_commit_of(report.info, repo), ceilings=ceilings,
                        job_scripts=scripts,
                        reference_check=check, reference=verified,
                        reference_problem=problem,
                        files=RunFiles(reads, rebase), against=against,
                        run_ceilings=theirs, run_ceilings_name=own_name,
                        # Last: every file it digests that the report used is read.
                        integrity=lambda: run_manifest.verify(
                            reads, run_report, report.record, manifest, allowed_signers),
                        plots=plots)
    return ctx


def write_pages(out_dir: Path, pages: dict[str, str], plots: list[Plot]) -> list[Path]:
    """Write ``pages`` and ``plots`` (into plots/, with their manifest) into ``out_dir``,
    removing the plots an earlier report wrote there that this one does not."""
    written = []
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        plots_dir = out_dir / "plots"
        earlier = _plots_written_before(plots_dir)
        if plots:
            plots_dir.mkdir(exist_ok=True)
            for p in plots:
                (plots_dir / p.name).write_bytes(p.png)
                written.append(plots_dir / p.name)
        _remove_earlier_plots(plots_dir, earlier, {p.name for p in plots})
        if plots or earlier:
            (plots_dir / PLOTS_MANIFEST).write_text(json.dumps(
                {"written_by": "fsaccept report", "plots": {
                    p.name: hashlib.sha256(p.png).hexdigest() for p in plots}},
                indent=1) + "\n")
            written.append(plots_dir / PLOTS_MANIFEST)
        for name, page in pages.items():
            (out_dir / name).write_text(page)
            written.append(out_dir / name)
    except OSError as err:
        where = err.filename or out_dir
        raise ReportWriteError(f"{where}: cannot write the report (--out {out_dir}): "
                               f"{err.strerror or err}") from None
    return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="fsaccept report",
        description="write the sign-off report (report.md, report.html) from a ReFrame run report")
    ap.add_argument("run_report", help="the JSON file ReFrame wrote with --report-file")
    ap.add_argument("--out", help="directory to write into (default: the run report's)")
    ap.add_argument("--signed-by", default="", metavar="NAME")
    ap.add_argument("--reference", help="reference file to judge the run against, and whose "
                    "ceilings to use (default: the one the tests recorded, if unchanged); "
                    "the sign-off verifies only when it is the file the run recorded")
    ap.add_argument("--ceilings", metavar="FILE", help="YAML file with a ceilings: map "
                    "(e.g. from python -m fsaccept.reporting.assessment measure); overrides the reference's")
    ap.add_argument("--manifest", metavar="FILE", help="the run's manifest of SHA-256 "
                    f"digests (default: {run_manifest.MANIFEST} beside the run report, if "
                    "there is one); every digest is verified")
    ap.add_argument("--allowed-signers", metavar="FILE", help="verify the manifest's SSH "
                    f"signature ({run_manifest.MANIFEST}{run_manifest.SIGNATURE_SUFFIX}, "
                    f"namespace {run_manifest.NAMESPACE}) with ssh-keygen -Y verify against "
                    "this allowed-signers file; the report names the signer")
    args = ap.parse_args(argv)
    out = Path(args.out) if args.out else Path(args.run_report).resolve().parent
    try:
        _, ctx = write_report_context(args.run_report, out, signed_by=args.signed_by,
                                      reference=args.reference, ceilings_file=args.ceilings,
                                      manifest=args.manifest,
                                      allowed_signers=args.allowed_signers)
    except (RunReportError, CeilingError, ReportWriteError) as err:
        print(prefixed_lines("fsaccept.reporting.report: ", err), file=sys.stderr)
        return 2
    # The verdict the report shows (its reference file's thresholds compared), not another.
    judged: SessionVerdict = ctx["judged"]
    # Every line of recorded text folded (one_line), whatever line breaks it holds: only
    # the last line below says "overall verdict:".
    for target in ctx["targets"]:  # several file systems: one table each
        print(target_text(target))
        if target.rows:
            print(summary_text(target.rows))
    if ctx["rows"] and not ctx["targets"]:
        print(summary_text(ctx["rows"]))
    if ctx["grouped"]:
        print(check_text(ctx["checks"]))
    for line in ctx["data_left"]:
        print(f"data left on the target: {one_line(line)}")
    print(f"report: {one_line(out / 'report.md')}")
    print(f"report: {one_line(out / 'report.html')}")
    print("integrity: " + one_line(ctx["signoff"]["integrity"]))
    if ctx["signoff"]["assessment"]:  # another file's ceilings than the run's: named
        print("assessment: " + one_line(ctx["signoff"]["assessment"]))
    for line in console_lines(judged):  # the last: "overall verdict: ..."
        print(line)
    return 0 if judged.accepted else 1


if __name__ == "__main__":
    raise SystemExit(main())


def _commit_of(info: Mapping[str, Any], repo: Path) -> str:
    """The harness's commit the run recorded (``scripts/acceptance`` passes it as the
    session extra ``fsaccept_commit`` in ``session_info``), else this checkout's, read
    without locks."""
    recorded = info.get("fsaccept_commit")
    if isinstance(recorded, str) and recorded:
        return recorded.replace("+dirty", " (with uncommitted changes)") + " (recorded by the run)"
    return git_describe(repo)


def git_describe(repo: Path) -> str:
    """'<commit>' or '<commit> (with uncommitted changes)' of the work tree whose root is
    ``repo``; 'unknown' otherwise: an installed fsaccept (a wheel, in a virtual environment
    that may itself lie in some git work tree) has no commit of its own.  Read without
    git's optional locks: rendering a report writes nothing outside ``--out`` (``git
    status`` would otherwise refresh ``.git/index``)."""
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0")
    try:
        commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "--show-toplevel", "HEAD"],
                                capture_output=True, text=True, timeout=30, env=env)
        top, _, head = commit.stdout.strip().partition("\n")
        if commit.returncode != 0 or Path(top).resolve() != Path(repo).resolve():
            return "unknown (not a git work tree)"
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain",
                                "--untracked-files=no"], capture_output=True, text=True,
                               timeout=30, env=env)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown (git not available)"
    text = head.strip()
    if dirty.stdout.strip():
        text += " (with uncommitted changes)"
    return text
