"""Where the benchmark binaries come from, and which versions are in use.

A partition says in its ReFrame ``extras`` how it gets IOR, mdtest and fio:

- ``benchmarks: path`` (default): whatever ``ior``/``mdtest``/``fio`` are on PATH;
- ``benchmarks: spack-build``: the checks build ``spack-env/``, rendered for
  the system into ``.state/spack/env/<system>/`` (``fsaccept.suite.spack``), with
  ReFrame's Spack build system before the first benchmark job;
- ``benchmarks: spack-env``: a Spack environment the admins already
  installed (``extras.spack_env``);
- ``benchmarks: modules``: the Lmod modules the partition (or its environment)
  lists in ReFrame's ``modules``, which ReFrame loads in every job; Spack
  generates them for what it built (``fsaccept.suite.spack``, named
  ``ior/4.0.0``: :func:`module_names`).

Either Spack way, the session's first step writes the environment's
activation script once (``spack env activate --sh``) and every job sources it.
With modules, the session's first step loads each module on its own first, as
the jobs' shell will, and reads what Lmod said (:func:`module_problems`): a
module that cannot be loaded skips every check, a benchmark no module puts on
PATH the checks that need it (:func:`missing_from_modules`).
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path
from typing import Any

import yaml

from fsaccept.benchmarks import registry
from fsaccept.core.paths import REPO_ROOT, STATE_DIR

MODES = ("path", "spack-build", "spack-env", "modules")
DEFAULT_SPACK_ENV = REPO_ROOT / "spack-env"
#: Where scripts/setup keeps Spack's configuration, builds and rendered environments.
SPACK_STATE = STATE_DIR / "spack"
#: The activation script the benchmark fixture writes once per session.
ACTIVATION_SCRIPT = "spack-activate.sh"
#: Beside a rendered environment's spack.yaml: the Spack and package repository that
#: built it ("Spack 1.1.1, spack-packages 119680a"), written by scripts/setup.
ORIGIN_FILE = "fsaccept-origin.txt"
#: The provenance line that names what built a Spack environment.
ORIGIN_KEY = "spack-origin"
#: Where set-up has Spack write the Lmod module files of what it built.
MODULES_DIR = "modules"
MODULES_ROOT = SPACK_STATE / MODULES_DIR
#: How Spack names a benchmark's module (Spack's ``projections``): ``ior/4.0.0``.
MODULE_PROJECTION = "{name}/{version}"
#: The line the session's first step prints for each module it loaded (or not).
MODULE_MARKER = "fsaccept-module"
_PINNED = re.compile(r"^([a-z0-9-]+)@(=?)([0-9][0-9A-Za-z.]*)(\s|$)")


class BenchmarkConfigError(ValueError):
    """A bad benchmark set-up; the message names the file or setting."""


def mode(extras: dict[str, Any]) -> str:
    value = extras.get("benchmarks", "path")
    if value not in MODES:
        raise BenchmarkConfigError(f"partition extras.benchmarks: {value!r} is not one of "
                                   f"{', '.join(MODES)}")
    return value


def rendered_env_dir(system: str, state: Path = SPACK_STATE) -> Path:
    """Where ``spack-env/`` is rendered (and built) for ``system``."""
    return state / "env" / system


def spack_env_dir(extras: dict[str, Any], system: str) -> Path:
    """The Spack environment a partition's jobs activate."""
    if mode(extras) == "spack-env":
        if not extras.get("spack_env"):
            raise BenchmarkConfigError("partition extras: benchmarks: spack-env needs "
                                       "spack_env: <environment directory>")
        return Path(extras["spack_env"])
    return rendered_env_dir(system)


def load_spack_yaml(env_dir: Path) -> dict[str, Any]:
    path = env_dir / "spack.yaml"
    try:
        data = yaml.safe_load(path.read_text())
    except OSError as err:
        raise BenchmarkConfigError(f"{path}: cannot read: {err.strerror}") from None
    except yaml.YAMLError as err:
        raise BenchmarkConfigError(f"{path}: not valid YAML: {err}") from None
    if not isinstance(data, dict) or not isinstance(data.get("spack"), dict):
        raise BenchmarkConfigError(f"{path}: no top-level 'spack:' mapping")
    return data["spack"]


def pinned_versions(env_dir: Path) -> dict[str, str]:
    """Package → exact version of every spec in the environment; a spec
    without an exact version is an error (results must name their build)."""
    path = env_dir / "spack.yaml"
    versions = {}
    for spec in load_spack_yaml(env_dir).get("specs", []):
        match = _PINNED.match(str(spec))
        if not match:
            raise BenchmarkConfigError(f"{path}: specs: {spec!r} is not pinned to one version "
                                       "(write e.g. ior@4.0.0)")
        versions[match.group(1)] = match.group(3)
    return versions


def system_include(env_dir: Path, system: str) -> Path:
    """The per-system file the environment includes for ``FSACCEPT_SYSTEM=system``."""
    return env_dir / "systems" / f"{system}.yaml"


def module_names(env_dir: Path = DEFAULT_SPACK_ENV) -> list[str]:
    """The Lmod modules Spack generates for the benchmarks of an environment, as
    named by :data:`MODULE_PROJECTION`: ``["ior/4.0.0", "fio/3.37"]``."""
    versions = pinned_versions(env_dir)
    return [MODULE_PROJECTION.format(name=name, version=versions[name])
            for name in registry.spack_packages() if name in versions]


def lmod_core(names: list[str], root: Path = MODULES_ROOT) -> Path | None:
    """The directory for MODULEPATH where Spack wrote every module of ``names``
    (``<root>/<platform-os-target>/Core``, one per architecture), or None."""
    for core in sorted(root.glob("*/Core")):
        if names and all((core / f"{name}.lua").is_file() for name in names):
            return core
    return None


def module_check_commands(modules: list[str]) -> list[str]:
    """Shell lines that load each module on its own and say how it went, one
    ``fsaccept-module NAME ok`` or ``fsaccept-module NAME failed: what Lmod said`` each."""
    return [f"for m in {' '.join(shlex.quote(m) for m in modules)}; do "
            'said=$(module load "$m" 2>&1) && echo "' + MODULE_MARKER + ' $m ok" || '
            'echo "' + MODULE_MARKER + " $m failed: ${said//$'\\n'/ }\"; done"]


def module_problems(modules: list[str], said: str, fix: str) -> str:
    """Why the partition's modules cannot provide the benchmarks ("" when they can):
    no module listed, or each module that did not load with what Lmod said, then ``fix``."""
    if not modules:
        return ("partition extras benchmarks: modules, but neither the partition nor its "
                f"environment lists a module in `modules`: {fix}")
    if "module: command not found" in said:
        return ("Lmod is not set up in the jobs' shell (`module`: command not found): source "
                "Lmod's init there, e.g. the partition's prepare_cmds "
                f"['. /usr/share/lmod/lmod/init/bash']; {fix}")
    failed = []
    for name in modules:
        said_of = [line[len(f"{MODULE_MARKER} {name} "):] for line in said.splitlines()
                   if line.startswith(f"{MODULE_MARKER} {name} ")]
        answer = said_of[-1].strip() if said_of else "failed: not tried"
        if answer != "ok":
            why = " ".join(answer.removeprefix("failed:").split())
            # Lmod's own first sentence, without its standard advice.
            why = re.sub(r"^Lmod has detected the following errors?:\s*", "", why)
            why = re.split(r"\s+(?:Please check|It is also possible|Also make sure)", why)[0]
            why = why[:300] or "no reason given"
            failed.append(f"module {name} cannot be loaded ({why})")
    return "; ".join(failed) + f": {fix}" if failed else ""


def missing_from_modules(binary: str, modules: list[str], fix: str) -> str:
    """The skip reason of a check whose benchmark no loaded module put on PATH."""
    return (f"{binary} not on PATH after `module load {' '.join(modules)}` (the partition's "
            f"modules loaded, but none provides {binary}): {fix}")


def activation_commands(extras: dict[str, Any], fixture_stagedir: str) -> list[str]:
    """Shell lines that put a partition's Spack-built benchmarks on PATH in a job:
    the activation script the fixture wrote once for the session (none from PATH, and
    none with modules: ReFrame loads the partition's modules in every job)."""
    if mode(extras) in ("path", "modules"):
        return []
    return [f". {shlex.quote(os.path.join(fixture_stagedir, ACTIVATION_SCRIPT))}"]


def session_commands(extras: dict[str, Any], system: str) -> list[str]:
    """Shell lines, run once per session after any build, that write the activation
    script and print where each benchmark binary comes from (with modules: where the
    partition's modules, loaded by ReFrame, put it)."""
    if mode(extras) in ("path", "modules"):
        source = "path" if mode(extras) == "path" else "module"
        return ["for b in " + " ".join(registry.binaries()) +
                f'; do echo "$b {source}:$(command -v $b || echo missing)"; done']
    env_dir = spack_env_dir(extras, system)
    env = shlex.quote(str(env_dir))
    origin = shlex.quote(str(env_dir / ORIGIN_FILE))
    # One command (the caller redirects it): the specs, then what built them; an
    # environment fsaccept did not build names at least the Spack's version.
    return [f"spack env activate --sh -d {env} > {ACTIVATION_SCRIPT}",
            f"{{ spack -e {env} find --format '{{name}} spack:{{name}}@{{version}}/{{hash}}' "
            + " ".join(registry.spack_packages())
            + f"; echo \"{ORIGIN_KEY} $(cat {origin} 2>/dev/null || "
              "echo \"Spack $(spack --version)\")\"; }"]


def parse_provenance(text: str) -> dict[str, str]:
    """'name source' lines → {name: source}; a ``spack-origin`` line (what built the
    environment) is added to each Spack spec: ``spack:ior@4.0.0/abc (Spack 1.1.1, …)``."""
    out = {}
    for line in text.splitlines():
        parts = line.split(None, 1)
        if len(parts) == 2:
            out[parts[0]] = parts[1].strip()
    origin = out.pop(ORIGIN_KEY, "")
    if origin:
        out = {k: f"{v} ({origin})" if v.startswith("spack:") else v for k, v in out.items()}
    for bench in registry.BENCHMARKS.values():  # mdtest and md-workbench come with ior
        built_by = out.get(bench.spack_package, "")
        if bench.binary not in out and built_by.startswith("spack:"):
            out[bench.binary] = built_by
    return out


def environment_ok(env_dir: Path, system: str) -> list[str]:
    """Problems with a Spack environment for ``system`` (empty: fine)."""
    problems = []
    try:
        versions = pinned_versions(env_dir)
    except BenchmarkConfigError as err:
        return [str(err)]
    for name in registry.spack_packages():
        if name not in versions:
            problems.append(f"{env_dir}/spack.yaml: specs: no {name}")
    if not system_include(env_dir, system).exists():
        problems.append(f"{system_include(env_dir, system)}: missing: declare {system}'s MPI "
                        "(and Slurm) as externals there")
    return problems

