"""How ReFrame, typed bare (``reframe -c checks -r``), finds fsaccept's configuration
and picks a system.

- **The configuration**: ``. .venv/bin/activate`` sets ``RFM_CONFIG_FILES`` to
  ``config/settings.py`` (a block :func:`install_activation` adds to the activation
  script, which ``scripts/setup`` runs); ``deactivate`` restores what was there.
- **The system**: ReFrame 4.10 picks the first system, in configuration order, one of
  whose ``hostnames`` patterns matches the host name (``socket.gethostname()``), and
  ReFrame's own ``generic`` (0 checks) when none does.  ``config/settings.py`` lists the
  sites' systems before the emulated ones (:func:`sites_first`), so a site's login node
  selects the site.
- **The cluster emulated on this host** (the lab: ``lab/emulated.py``, ``lab/systems/``)
  is known here only by its partition feature (:data:`EMULATED_FEATURE`) and by the names
  of its two default systems, for the advice :func:`ior_fix` and :func:`spack_fix` give.
- ``fsaccept system [NAME]`` prints, for the scripts, the system ReFrame selects here
  (or NAME) and whether it is an emulated one; when no system matches it says what to do,
  and for a NAME that is a system file's, not a system's, which system that file defines.
- ``fsaccept system --reframe-options ARG...``: whether ReFrame's own command line takes
  the arguments a script passes on to it (:func:`reframe_options_error`), before the
  script runs anything.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import os
import shlex
import socket
import sys
from pathlib import Path
from typing import Any

from fsaccept.core import paths, servers
from fsaccept.suite import faults, provision
from fsaccept.core.paths import REPO_ROOT

SETTINGS = REPO_ROOT / "config" / "settings.py"
SYSTEMS_DIR = REPO_ROOT / "config" / "systems"
#: The emulated cluster with benchmarks from PATH, and with benchmarks built by Spack.
PATH_SYSTEM = "local"
SPACK_SYSTEM = "local-spack"
#: The partition feature that marks a system as a cluster emulated on this host.
EMULATED_FEATURE = "emulated"
#: ReFrame's built-in catch-all system (``hostnames: ['.*']``), selected when none of
#: fsaccept's matches: no check runs there.
REFRAME_GENERIC = "generic"


def this_host() -> str:
    """The host name ReFrame's system selection matches (its default autodetection)."""
    return socket.gethostname()


def state_dir() -> Path:
    """fsaccept's state directory, read now (as the cluster reads it): CI and tests move
    it with FSACCEPT_STATE_DIR."""
    return Path(os.environ.get("FSACCEPT_STATE_DIR") or paths.STATE_DIR)


def ior_view(state: Path | None = None) -> Path:
    """Where the ``local-spack`` environment's view puts ``ior`` once set-up built it."""
    spack = (state or state_dir()) / "spack"  # provision.SPACK_STATE, read now
    return provision.rendered_env_dir(SPACK_SYSTEM, spack) / ".spack-env" / "view" / "bin" / "ior"


def spack_built(state: Path | None = None) -> bool:
    """Whether set-up has built IOR with Spack for the emulated cluster."""
    return os.access(ior_view(state), os.X_OK)


def built_modules(state: Path | None = None) -> tuple[list[str], Path | None]:
    """The benchmarks' Lmod modules (``ior/4.0.0``, ``fio/3.37``) and the directory for
    MODULEPATH where set-up had Spack write them all (None before it has)."""
    names = provision.module_names()
    root = (state or state_dir()) / "spack" / provision.MODULES_DIR  # MODULES_ROOT, read now
    return names, provision.lmod_core(names, root)


def ior_fix(emulated: bool, state: Path | None = None) -> str:
    """How to get IOR (with mdtest and md-workbench) for a check that did not find it:
    on the emulated cluster exactly which ``--system`` to add, or which set-up command to
    run; on a site, how its system file provides the benchmarks."""
    if not emulated:
        return ("IOR 4.0.0 (with mdtest and md-workbench) is in no package registry: build it "
                "with Spack (partition extras `benchmarks: spack-build` or `spack-env` in "
                "config/systems/<site>.py; docs/user/spack.md) or put its bin/ on PATH")
    if spack_built(state):
        return (f"set-up built it with Spack ({ior_view(state).parent}): add "
                f"`--system {SPACK_SYSTEM}` (reframe, scripts/acceptance, scripts/nightly)")
    return ("IOR 4.0.0 (with mdtest and md-workbench) is in no package registry: build it "
            "with `scripts/setup --spack <Spack tarball, checkout or 'path'> "
            "[--spack-mirror DIR]`; this host's default system is then "
            f"{SPACK_SYSTEM} (or add `--system {SPACK_SYSTEM}`)")


def spack_fix(emulated: bool, system: str) -> str:
    """How to get the Spack a partition's ``spack-build``/``spack-env`` needs."""
    if emulated:
        return ("build the benchmarks with `scripts/setup --spack <Spack tarball, checkout or "
                "'path'> [--spack-mirror DIR]` (docs/user/spack.md), or add `--system "
                f"{PATH_SYSTEM}` to take them from PATH")
    return ("put Spack on PATH in config/systems/<site>.py (e.g. a module in the system's "
            f"`modules`) or build the benchmarks with `scripts/setup --spack <Spack> "
            f"--spack-system {system}` (docs/user/spack.md)")


def modules_fix(emulated: bool, system: str, partition: str) -> str:
    """How to get the Lmod modules a partition's ``benchmarks: modules`` loads."""
    if emulated:
        return ("generate them with `scripts/setup --spack <Spack tarball, checkout or "
                f"'path'>` (after the build it writes them into {provision.MODULES_ROOT}; "
                f"docs/user/spack.md), check the names in system {system}'s `modules` "
                f"(lab/systems/), or add `--system {SPACK_SYSTEM}`")
    return (f"check system {system}, partition {partition} in config/systems/<site>.py: "
            "each name in `modules` as `module avail` shows it, MODULEPATH reaching it, and "
            "each benchmark on PATH once loaded (docs/user/site-setup.md#modules)")


def takes_modules(system: dict[str, Any]) -> bool:
    """Whether a partition of ``system`` takes its benchmarks from Lmod modules."""
    return any(p.get("extras", {}).get("benchmarks") == "modules"
               for p in system.get("partitions", []))


def modules_settings(systems: list[str]) -> list[dict[str, Any]]:
    """ReFrame's ``general`` entry for systems whose benchmarks come from modules:
    ReFrame writes `module load` lines into the jobs and loads nothing itself (by
    default it loads each module in its own process first, and a missing one would fail
    the session's first step, and with it every check); fsaccept's first step loads each
    one and skips, naming it (fsaccept.suite.provision.module_problems).  ReFrame then
    needs no Lmod of its own (no LMOD_CMD) either.  None without such a system."""
    return [{"target_systems": list(systems), "resolve_module_conflicts": False}] if systems \
        else []


def quick_polling(systems: list[str]) -> dict[str, Any]:
    """ReFrame's ``general`` entry for systems whose scheduler answers at once and costs
    little to ask (daemons on this host: sacct ~0.1 s, squeue ~0.02 s; ps).  ReFrame polls
    its jobs 10 times a second at first, then ever more slowly, down to poll_rate_min
    (default 0.1: every 10 s), so a job that ended waited up to 10 s to be noticed: most
    of a local job's overhead.  Keep polling at least 5 times a second
    (bench/bench_overhead.py, squeue backend: median overhead per job 0.82 s over a bare
    srun, 1.30 s at twice a second).  A production Slurm keeps ReFrame's defaults."""
    return {"target_systems": list(systems), "poll_rate_min": 5}


def is_emulated(system: dict[str, Any]) -> bool:
    return any(EMULATED_FEATURE in p.get("features", []) for p in system.get("partitions", []))


def sites_first(systems: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Sites before emulated systems (stable): ReFrame takes the first match, and on a
    site's login node that is also set up for the emulated cluster the site must win."""
    return sorted(systems, key=is_emulated)


# -- what ReFrame selects ------------------------------------------------------------

def _settings_module(settings: Path = SETTINGS) -> Any:
    spec = importlib.util.spec_from_file_location("fsaccept_settings", settings)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def known_systems(settings: Path = SETTINGS) -> list[dict[str, Any]]:
    """The systems of fsaccept's configuration, in ReFrame's order."""
    return _settings_module(settings).site_configuration["systems"]


def _names_by_file(module: Any) -> dict[Path, list[str]]:
    return {Path(path): [s["name"] for s in conf["systems"]]
            for path, conf in module.system_files.items()}


def system_files(settings: Path = SETTINGS) -> dict[Path, list[str]]:
    """Each system file of fsaccept's configuration (``config/systems/*.py``, then the
    lab's) and the names of the systems it defines."""
    return _names_by_file(_settings_module(settings))


def unknown_system_message(name: str, known: list[str], files: dict[Path, list[str]]) -> str:
    """What to tell a user who asked for a system no file defines: the known names, and
    which system a file named ``name`` defines (a system is chosen by its own name)."""
    text = (f"fsaccept system: no system {name!r} in config/systems/*.py or "
            f"lab/systems/*.py (known: {', '.join(known)})")
    for path, names in files.items():
        if path.stem == name:
            text += (f"; {path.parent.parent.name}/{path.parent.name}/{path.name} defines "
                     f"{', '.join(map(repr, names))}: give that name")
    return text


def no_system_message(config_files: list[str], system: str, host: str,
                      names: list[str]) -> str | None:
    """What to tell a user whose ReFrame selected no fsaccept system (None: one was)."""
    if system != REFRAME_GENERIC:
        return None
    choose = f"--system NAME ({', '.join(names)})" if names else "--system NAME"
    if not any(Path(f).name == "settings.py" and Path(f).parent.name == "config"
               for f in config_files):
        return (f"fsaccept: ReFrame is not using fsaccept's configuration (settings files: "
                f"{', '.join(config_files) or 'none'}), so it selected the system "
                f"{system!r}, which runs no check: activate fsaccept's environment "
                f"(`. .venv/bin/activate` in the fsaccept directory sets RFM_CONFIG_FILES) "
                f"or pass `-C config/settings.py`")
    return (f"fsaccept: no system in config/systems/ matches this host ({host!r}), so ReFrame "
            f"selected {system!r}, which runs no check: on a site, add it as "
            f"config/systems/<site>.py with `hostnames` matching this host (copy "
            f"config/systems/example-lustre.py; docs/user/site-setup.md); for the Slurm "
            f"cluster emulated on this host, `scripts/local-cluster up` (it is then selected "
            f"by this host's name); or choose a system with {choose}")


def selected(name: str | None = None, settings: Path = SETTINGS) -> dict[str, Any]:
    """The system ReFrame selects from ``settings`` on this host (``name``: that one),
    by ReFrame's own rules.  ValueError with what to do when there is none."""
    from reframe.core import config  # heavy: ReFrame
    from reframe.core.exceptions import ConfigError  # heavy: ReFrame

    conf = config.load_config(str(settings))
    module = _settings_module(settings)
    names = [s["name"] for s in module.site_configuration["systems"]]
    try:
        conf.select_subconfig(name)
    except ConfigError:
        raise ValueError(unknown_system_message(name, names, _names_by_file(module))) from None
    system = conf.get("systems/0")
    message = no_system_message(conf.sources, system["name"], this_host(), names)
    if message:
        raise ValueError(message)
    return system


# -- the activation script -----------------------------------------------------------

BEGIN = "# >>> fsaccept: ReFrame finds fsaccept's configuration (written by scripts/setup) >>>"
END = "# <<< fsaccept <<<"


def activation_block(settings: Path = SETTINGS) -> str:
    """Shell lines (bash, zsh) that export ``RFM_CONFIG_FILES`` and make ``deactivate``
    restore what it was (also when it was unset)."""
    value = shlex.quote(str(settings))
    return f"""{BEGIN}
# `reframe -c checks -r` then reads {settings};
# the system follows from this host's name (config/systems/).
if [ -z "${{_FSACCEPT_SAVED_RFM_CONFIG_FILES+set}}" ]; then
    _FSACCEPT_SAVED_RFM_CONFIG_FILES="${{RFM_CONFIG_FILES-__fsaccept_unset__}}"
fi
RFM_CONFIG_FILES={value}
export RFM_CONFIG_FILES
# deactivate: restore RFM_CONFIG_FILES, then the virtual environment's own deactivate.
eval "_fsaccept_venv_$(declare -f deactivate)"
deactivate () {{
    if [ "${{_FSACCEPT_SAVED_RFM_CONFIG_FILES-}}" = __fsaccept_unset__ ]; then
        unset RFM_CONFIG_FILES
    elif [ -n "${{_FSACCEPT_SAVED_RFM_CONFIG_FILES+set}}" ]; then
        RFM_CONFIG_FILES="$_FSACCEPT_SAVED_RFM_CONFIG_FILES"
        export RFM_CONFIG_FILES
    fi
    unset _FSACCEPT_SAVED_RFM_CONFIG_FILES
    _fsaccept_venv_deactivate "$@"
    if [ ! "${{1:-}}" = nondestructive ]; then
        unset -f _fsaccept_venv_deactivate
    fi
}}
{END}
"""


def install_activation(activate: Path, settings: Path = SETTINGS) -> bool:
    """Add (or renew) the block at the end of a virtual environment's ``bin/activate``;
    True when the file changed."""
    text = activate.read_text()
    start = text.find(BEGIN)
    if start >= 0:
        end = text.find(END, start)
        end = len(text) if end < 0 else end + len(END) + 1
        kept = text[:start] + text[end:]
    else:
        kept = text
    new = kept.rstrip("\n") + "\n\n" + activation_block(settings)
    if new == text:
        return False
    activate.write_text(new)
    return True


def reframe_options_error(args: list[str]) -> str:
    """'' when ReFrame's command line takes ``args`` (what ``scripts/acceptance`` and
    ``scripts/nightly`` pass on to ``reframe ... -r``), else ReFrame's own error
    ('reframe: error: unrecognized arguments: --bogus').  Nothing is run: ReFrame's
    parser (its ``cli.main`` builds it, then parses) is stopped once it has parsed."""
    from reframe.frontend import argparse as rfm_argparse  # heavy: ReFrame
    from reframe.frontend import cli  # heavy: ReFrame

    class Parsed(Exception):
        pass

    parse = rfm_argparse.ArgumentParser.parse_args

    def parse_only(self: Any, *a: Any, **k: Any) -> None:
        parse(self, *a, **k)
        raise Parsed

    err, argv = io.StringIO(), sys.argv
    try:
        rfm_argparse.ArgumentParser.parse_args = parse_only  # type: ignore[method-assign]
        sys.argv = ["reframe", *args, "-r"]
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            cli.main()
    except Parsed:
        return ""
    except SystemExit as stop:  # argparse's error (2), or an option that exits (0)
        lines = err.getvalue().strip().splitlines()
        return "" if not stop.code else (lines[-1] if lines else "not ReFrame's options")
    finally:
        rfm_argparse.ArgumentParser.parse_args = parse  # type: ignore[method-assign]
        sys.argv = argv
    return "ReFrame ran past its options"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="fsaccept system",
        description="The ReFrame system of config/settings.py that this host selects by its "
        "name (or NAME), as shell assignments for the scripts: system=NAME, emulated=0|1.")
    ap.add_argument("name", nargs="?", metavar="NAME", help="this system instead")
    ap.add_argument("--write-activation", metavar="ACTIVATE",
                    help="add the block that sets RFM_CONFIG_FILES to this activation script "
                    "(.venv/bin/activate) instead")
    ap.add_argument("--degraded-dry-run", action="store_true",
                    help="check the system's degraded-mode declaration (extras.degraded of "
                    "each partition) and its server probe (extras.server_probe, else "
                    "fsaccept's own for the reference file's file-system type), and print, "
                    "in order, what a degraded-mode job would run (for each scenario of "
                    "extras.degraded.scenarios); nothing is executed (docs/user/degraded.md)")
    ap.add_argument("--reference", metavar="FILE",
                    help="with --degraded-dry-run: the reference file whose target's type "
                    "chooses the server probe (default: reference/<system>.yaml)")
    ap.add_argument("--reframe-options", nargs=argparse.REMAINDER, metavar="ARG",
                    help="exit 0 when ReFrame's command line takes these arguments (what "
                    "scripts/acceptance passes on to reframe), else 2 with ReFrame's error; "
                    "runs nothing")
    args = ap.parse_args(argv)
    if args.reframe_options is not None:
        error = reframe_options_error(args.reframe_options)
        if error:
            print(f"fsaccept system: {error}", file=sys.stderr)
        return 2 if error else 0
    if args.write_activation:
        path = Path(args.write_activation)
        try:
            changed = install_activation(path)
        except OSError as err:
            print(f"fsaccept system: {path}: {err.strerror}", file=sys.stderr)
            return 2
        print(f"{path}: {'sets' if changed else 'already sets'} RFM_CONFIG_FILES={SETTINGS}")
        return 0
    try:
        system = selected(args.name)
    except ValueError as err:
        print(err, file=sys.stderr)
        return 2
    if args.degraded_dry_run:
        return degraded_dry_run(system, args.reference)
    print(f"system={shlex.quote(system['name'])}")
    print(f"emulated={int(is_emulated(system))}")
    return 0


def degraded_dry_run(system: dict[str, Any], reference_file: str | None = None) -> int:
    """``fsaccept system NAME --degraded-dry-run``: each partition's declaration and
    server probe checked and its steps printed; exit 2 naming the file, the partition
    and the key of what cannot be used."""
    # Imported here: config/settings.py imports this module and needs none of it.
    from fsaccept.suite import reference

    path = Path(reference_file) if reference_file else reference.reference_path(system["name"])
    try:
        fstype = reference.load_reference(path).target_fstype
    except (reference.ReferenceError, OSError) as err:
        print(f"fsaccept system: {err} (its target's type chooses the server probe; "
              "--reference FILE)", file=sys.stderr)
        return 2
    status = 0
    for part in system.get("partitions", []):
        where = f"{system['name']}:{part['name']}: extras"
        extras = part.get("extras") or {}
        try:
            plans = faults.plans_of(extras.get("degraded"), f"{where}.degraded")
            probe = servers.probe_for(fstype, servers.declared(extras.get(servers.EXTRA),
                                                               f"{where}.{servers.EXTRA}"))
            if probe is None:
                raise ValueError(f"{where}.{servers.EXTRA}: not declared, and fsaccept has no "
                                 f"server probe for {fstype} ({path}): the fault could not "
                                 "be proven (docs/user/site-setup.md)")
            steps = {name: faults.dry_run(plan, probe) for name, plan in plans.items()}
        except ValueError as err:
            print(f"fsaccept system: {err}", file=sys.stderr)
            status = 2
            continue
        for name, said in steps.items():
            print(f"{system['name']}:{part['name']}: "
                  + (f"scenario {name}: " if name else "")
                  + f"a degraded-mode job on {fstype} would:")
            print("\n".join(f"  {i}. {step}" for i, step in enumerate(said, 1)))
    return status
