"""The package installs (issue 29): a wheel built from the files git tracks holds every file
under ``fsaccept/``, and fsaccept installed from it (not editable), in a fresh virtual
environment outside the checkout, validates a reference file, parses each benchmark's real
capture exactly as the checkout does, and writes the sign-off report.

About a minute (``-m wheel`` selects it, ``-m "not wheel"`` leaves it out).  Offline when
the running environment holds the build backend ``pyproject.toml`` asks for (the dev extra
brings it); otherwise pip fetches the backend from PyPI into an isolated build.  The fresh
environment reads the dependencies from the running one's site-packages (a ``.pth`` file,
which does not run that directory's own ``.pth`` files, so the editable install's finder
stays out).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from fsaccept import cli

pytestmark = pytest.mark.wheel

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
#: One real capture per benchmark of the registry (``fsaccept parse KIND FILE``).
CAPTURES = {
    "ior": "ior/suite-basic-01-write-z-fpp-1rank.txt",
    "mdtest": "mdtest/easy.txt",
    "fio": "fio/json-normal.txt",
    "md-workbench": "md-workbench/basic.txt",
}
#: A real accepted run report and the reference file it used.
RUN_REPORT = DATA / "reframe" / "local-spack-accepted.json"
RUN_REFERENCE = DATA / "reframe" / "local-spack-accepted.reference.yaml"


def _run(argv, cwd, timeout=600, env=None):
    return subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)


def _tracked() -> list[str]:
    """The files git tracks in this checkout (a developer's uncommitted edits included);
    skipped outside a git work tree, but never under CI, which runs on a clone."""
    try:
        out = _run(["git", "-C", REPO, "ls-files", "-z"], cwd=REPO)
    except OSError as err:
        out = subprocess.CompletedProcess([], 1, "", str(err))
    if out.returncode != 0:
        reason = f"the wheel is built from the files git tracks: {out.stderr.strip()}"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return [name for name in out.stdout.split("\0") if name]


def _export(files: list[str], dest: Path) -> None:
    """A clean export: only the tracked files (as the working tree has them now)."""
    for name in files:
        src = REPO / name
        if not src.exists() and not src.is_symlink():  # deleted, not yet committed
            continue
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest / name, follow_symlinks=False)


def _build_wheel(src: Path, dist: Path) -> Path:
    """``pip wheel`` of the export, offline with this environment's build backend when it
    is the one pyproject.toml asks for, else in pip's isolated build (from PyPI)."""
    base = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-index", "-w", dist, src]
    out = _run([*base[:4], "--no-build-isolation", "--check-build-dependencies", *base[4:]],
               cwd=src)
    if out.returncode != 0 and "build dependencies" in out.stdout + out.stderr:
        base.remove("--no-index")
        out = _run(base, cwd=src)
    assert out.returncode == 0, (
        "pip wheel failed (it builds offline when this environment holds the setuptools "
        f"pyproject.toml asks for: scripts/setup installs it, with the dev extra):\n"
        f"{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
    wheels = sorted(dist.glob("fsaccept-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def _venv(root: Path, wheel: Path) -> Path:
    """A fresh virtual environment with fsaccept installed from ``wheel`` (not editable),
    then given this environment's site-packages for the dependencies.  Installed before
    the ``.pth`` exists, so that pip sees no fsaccept there and removes nothing."""
    out = _run([sys.executable, "-m", "venv", "--without-pip", root], cwd=root.parent)
    assert out.returncode == 0, out.stderr
    python = root / "bin" / "python"
    out = _run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps",
                "--no-index", wheel], cwd=root.parent)
    assert out.returncode == 0, f"pip install failed:\n{out.stdout}\n{out.stderr}"
    purelib = _run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                   cwd=root.parent).stdout.strip()
    # This interpreter's own site-packages, found from its sys.prefix (a venv's, in CI).
    deps = [p for p in site.getsitepackages([sys.prefix]) if Path(p).is_dir()]
    (Path(purelib) / "fsaccept-test-dependencies.pth").write_text("\n".join(deps) + "\n")
    return root


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(the wheel, the venv with fsaccept installed from it, a directory outside the
    checkout to run in, the environment to run with)."""
    tmp = tmp_path_factory.mktemp("wheel")
    files = _tracked()
    # The environment lies in some git work tree with a commit (a site's .venv in its own
    # repository): that commit is not fsaccept's.
    for argv in (["init", "-q"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q",
                                  "--allow-empty", "-m", "a site's repository"]):
        out = _run(["git", "-C", tmp, *argv], cwd=tmp)
        assert out.returncode == 0, out.stderr
    _export(files, tmp / "src")
    wheel = _build_wheel(tmp / "src", tmp / "dist")
    venv = _venv(tmp / "venv", wheel)
    work = tmp / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["PYTHONNOUSERSITE"] = "1"
    return wheel, venv, work, env, files


def _fsaccept(installed, *args, timeout=600):
    _, venv, work, env, _ = installed
    return _run([venv / "bin" / "fsaccept", *args], cwd=work, env=env, timeout=timeout)


def test_the_wheel_holds_every_file_of_the_package(installed):
    """Every tracked file under fsaccept/ (schemas, templates, data, Python) is in it."""
    wheel, *_, files = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    package = [f for f in files if f.startswith("fsaccept/") and (REPO / f).exists()]
    missing = sorted(set(package) - names)
    assert not missing, f"{wheel.name} lacks {missing} (pyproject.toml's package-data)"
    resources = [f for f in package if not f.endswith(".py")]
    assert any(f.endswith("schema.json") for f in resources)
    assert any("/templates/" in f for f in resources)


def test_fsaccept_is_imported_from_the_wheel_not_the_checkout(installed):
    _, venv, work, env, _ = installed
    out = _run([venv / "bin" / "python", "-c", "import fsaccept; print(fsaccept.__file__)"],
               cwd=work, env=env)
    assert out.returncode == 0, out.stderr
    where = Path(out.stdout.strip()).resolve()
    assert where.is_relative_to(venv.resolve()), where
    assert not where.is_relative_to(REPO), where


def test_reference_files_are_validated_by_the_installed_schemas(installed):
    work = installed[2]
    for src in (REPO / "reference" / "local.yaml", RUN_REFERENCE):
        ref = work / src.name
        shutil.copyfile(src, ref)
        out = _fsaccept(installed, "reference", ref)
        assert (out.returncode, out.stdout) == (0, f"{ref}: valid\n"), out.stderr
    out = _fsaccept(installed, "reference", ref, "--get", "target.fstype")
    assert (out.returncode, out.stdout) == (0, "ext4\n"), out.stderr
    # An edited copy the schema refuses: one line naming the file and the key, exit 2.
    bad = work / "bad.yaml"
    bad.write_text(RUN_REFERENCE.read_text().replace("  ior_write_bandwidth:",
                                                     "  ior_write_bandwith:", 1))
    out = _fsaccept(installed, "reference", bad)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    assert str(bad) in out.stderr and "ior_write_bandwith" in out.stderr, out.stderr
    out = _fsaccept(installed, "reference", "--list")
    assert out.returncode == 0, out.stderr
    assert "ior_write_bandwidth" in out.stdout and "IORWriteBandwidth" in out.stdout


def _checkout_parse(*args) -> str:
    """``fsaccept parse`` of the checkout, in this process: what the wheel must print."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert cli.main(["parse", *map(str, args)]) == 0
    return buf.getvalue()


@pytest.mark.parametrize("kind", sorted(CAPTURES))
def test_captures_parse_as_in_the_checkout(installed, kind):
    work = installed[2]
    capture = work / Path(CAPTURES[kind]).name
    shutil.copyfile(DATA / CAPTURES[kind], capture)
    out = _fsaccept(installed, "parse", kind, capture)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["valid"] is True
    assert out.stdout == _checkout_parse(kind, capture)


def test_a_capture_is_judged_by_a_reference_as_in_the_checkout(installed):
    work = installed[2]
    capture, ref = work / "judged.txt", work / "judged.yaml"
    shutil.copyfile(DATA / CAPTURES["ior"], capture)
    shutil.copyfile(RUN_REFERENCE, ref)
    args = ("parse", "ior", capture, "--reference", ref, "--test", "ior_write_bandwidth")
    out = _fsaccept(installed, *args)
    assert out.returncode == 0, out.stderr
    assert "judged" in json.loads(out.stdout)
    assert out.stdout == _checkout_parse(*args[1:])


def test_the_signoff_report_is_written_from_the_installed_templates(installed):
    """The real accepted run report, its reference file beside it (the same bytes, so its
    SHA-256 verifies): ACCEPTED, report.md and report.html from the package's templates,
    no commit claimed for an installed fsaccept, and nothing written into the
    environment."""
    _, venv, work, _, _ = installed
    ref = work / "run.reference.yaml"
    shutil.copyfile(RUN_REFERENCE, ref)
    data = json.loads(RUN_REPORT.read_text())
    for case in (c for r in data["runs"] for c in r["testcases"]):
        if case.get("reference_path"):
            case["reference_path"] = str(ref)
    src = work / "run-report.json"
    src.write_text(json.dumps(data))
    before = _files(venv)
    out = _fsaccept(installed, "report", src, "--out", work / "out")
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.splitlines()[-1] == "overall verdict: ACCEPTED"
    html = (work / "out" / "report.html").read_text()
    assert html.startswith("<!DOCTYPE html>") or "<html" in html[:200]
    assert "<title>Acceptance report: " in html and "ACCEPTED" in html
    md = (work / "out" / "report.md").read_text()
    assert "**Overall verdict: ACCEPTED**" in md
    assert "git commit `unknown (not a git work tree)`" in md  # not the site's repository's
    assert sorted((work / "out" / "plots").glob("*.png"))
    assert _files(venv) == before


def _files(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if "__pycache__" not in p.parts}
