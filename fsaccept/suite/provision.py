"""Where the benchmark binaries come from, and which versions are in use.

A partition says in its ReFrame ``extras`` how it gets IOR, mdtest and fio:

- ``benchmarks: path`` (default): whatever ``ior``/``mdtest``/``fio`` are on PATH;
- ``benchmarks: spack-build``: the checks build ``spack-env/``, rendered for
  the system into ``.state/spack/env/<system>/`` (``fsaccept.suite.spack``), with
  ReFrame's Spack build system before the first benchmark job;
- ``benchmarks: spack-env``: a Spack environment the admins already
  installed (``extras.spack_env``).

Either Spack way, the session's first step writes the environment's
activation script once (``spack env activate --sh``) and every job sources it.
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

MODES = ("path", "spack-build", "spack-env")
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


def activation_commands(extras: dict[str, Any], fixture_stagedir: str) -> list[str]:
    """Shell lines that put a partition's Spack-built benchmarks on PATH in a job:
    the activation script the fixture wrote once for the session."""
    if mode(extras) == "path":
        return []
    return [f". {shlex.quote(os.path.join(fixture_stagedir, ACTIVATION_SCRIPT))}"]


def session_commands(extras: dict[str, Any], system: str) -> list[str]:
    """Shell lines, run once per session after any build, that write the activation
    script and print where each benchmark binary comes from."""
    if mode(extras) == "path":
        return ["for b in " + " ".join(registry.binaries()) +
                '; do echo "$b path:$(command -v $b || echo missing)"; done']
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

