import importlib.util
from pathlib import Path

import pytest
import yaml

from fsaccept.suite import provision as benchmarks
from fsaccept.suite.provision import (DEFAULT_SPACK_ENV, BenchmarkConfigError, activation_commands,
                                     environment_ok, load_spack_yaml, mode, parse_provenance,
                                     pinned_versions)
from fsaccept.core import versions
from fsaccept.core.versions import version_note, version_reasons

REPO = Path(__file__).resolve().parents[2]


def site_partitions():
    spec = importlib.util.spec_from_file_location("settings", REPO / "config" / "settings.py")
    settings = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(settings)
    for system in settings.site_configuration["systems"]:
        for part in system["partitions"]:
            yield system["name"], part


def test_the_environment_pins_ior_and_fio():
    assert pinned_versions(DEFAULT_SPACK_ENV) == {"ior": "4.0.0", "fio": "3.37"}


def test_the_environment_unifies_has_a_view_and_never_builds_mpi():
    env = load_spack_yaml(DEFAULT_SPACK_ENV)
    assert env["concretizer"]["unify"] is True and env["view"] is True
    assert env["packages"]["mpi"]["buildable"] is False
    # A plain string: Spack 0.23 refuses the {path, optional} form of Spack 1.x.
    assert env["include"] == ["systems/${FSACCEPT_SYSTEM}.yaml"]


def test_pinned_versions_are_tested_and_not_known_bad():
    for name, version in pinned_versions(DEFAULT_SPACK_ENV).items():
        assert version in versions.tested_versions()[name]
        assert version_note(name, version) == "tested"
        assert version_reasons(name, version, "bandwidth") == []


@pytest.mark.parametrize("system, part", list(site_partitions()),
                         ids=lambda v: v if isinstance(v, str) else v["name"])
def test_every_spack_system_declares_its_externals(system, part):
    if mode(part.get("extras", {})) == "path":
        pytest.skip(f"{system} uses binaries from PATH")
    system = part["extras"].get("spack_system", system)  # another system's build
    assert environment_ok(DEFAULT_SPACK_ENV, system) == []
    externals = yaml.safe_load((DEFAULT_SPACK_ENV / "systems" / f"{system}.yaml").read_text())
    assert externals["packages"]["openmpi"]["externals"]


def test_an_unpinned_spec_is_refused(tmp_path):
    (tmp_path / "spack.yaml").write_text("spack:\n  specs: [ior, fio@3.37]\n")
    with pytest.raises(BenchmarkConfigError, match=r"spack.yaml: specs: 'ior' is not pinned"):
        pinned_versions(tmp_path)


def test_a_missing_system_file_names_it(tmp_path):
    [problem] = environment_ok(DEFAULT_SPACK_ENV, "nosuchsystem")
    assert problem.startswith(f"{DEFAULT_SPACK_ENV}/systems/nosuchsystem.yaml: missing")


def test_unknown_mode_is_refused():
    with pytest.raises(BenchmarkConfigError, match="extras.benchmarks: 'conda' is not one of"):
        mode({"benchmarks": "conda"})


def test_spack_modes_source_the_sessions_activation_script_in_jobs():
    assert activation_commands({}, "/stage/fx") == []
    assert activation_commands({"benchmarks": "spack-env", "spack_env": "/apps/env"},
                               "/stage/my fx") == [". '/stage/my fx/spack-activate.sh'"]


def test_the_session_writes_the_activation_script_and_the_provenance():
    spack_env = {"benchmarks": "spack-env", "spack_env": "/apps/fs env"}
    assert benchmarks.session_commands(spack_env, "s") == [
        "spack env activate --sh -d '/apps/fs env' > spack-activate.sh",
        # One command, which the fixture redirects: specs, then what built them.
        "{ spack -e '/apps/fs env' find --format '{name} spack:{name}@{version}/{hash}' ior fio"
        "; echo \"spack-origin $(cat '/apps/fs env/fsaccept-origin.txt' 2>/dev/null || "
        "echo \"Spack $(spack --version)\")\"; }"]
    built = benchmarks.session_commands({"benchmarks": "spack-build"}, "site")
    assert str(benchmarks.rendered_env_dir("site")) in built[0]
    with pytest.raises(BenchmarkConfigError, match="spack-env needs spack_env"):
        benchmarks.session_commands({"benchmarks": "spack-env"}, "s")


def test_provenance_lines_are_parsed():
    assert parse_provenance("ior spack:ior@4.0.0/abc\nfio spack:fio@3.37/def\n") == {
        "ior": "spack:ior@4.0.0/abc", "mdtest": "spack:ior@4.0.0/abc",
        "md-workbench": "spack:ior@4.0.0/abc", "fio": "spack:fio@3.37/def"}
    assert parse_provenance("ior path:/opt/ior/bin/ior\nfio path:missing\n")["fio"] == \
        "path:missing"


def test_provenance_names_the_spack_and_package_repository_beside_each_spec():
    found = parse_provenance("ior spack:ior@4.0.0/abcdefg\nfio spack:fio@3.37/hijklmn\n"
                             "spack-origin Spack 1.1.1, spack-packages 119680a\n")
    assert found == {
        "ior": "spack:ior@4.0.0/abcdefg (Spack 1.1.1, spack-packages 119680a)",
        "mdtest": "spack:ior@4.0.0/abcdefg (Spack 1.1.1, spack-packages 119680a)",
        "md-workbench": "spack:ior@4.0.0/abcdefg (Spack 1.1.1, spack-packages 119680a)",
        "fio": "spack:fio@3.37/hijklmn (Spack 1.1.1, spack-packages 119680a)"}
    # Binaries from PATH are not Spack's: no origin added.
    assert parse_provenance("fio path:/usr/bin/fio\nspack-origin Spack 1.1.1\n") == {
        "fio": "path:/usr/bin/fio"}


def test_the_session_provenance_command_runs_in_a_shell(tmp_path):
    import subprocess
    env_dir = tmp_path / "env dir"
    env_dir.mkdir()
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "spack").write_text("#!/bin/sh\n[ \"$1\" = --version ] && { echo 0.23.0.dev0; exit; }\n"
                                "echo 'ior spack:ior@4.0.0/abc'\n")
    (fake / "spack").chmod(0o755)
    extras = {"benchmarks": "spack-env", "spack_env": str(env_dir)}
    command = benchmarks.session_commands(extras, "s")[-1] + " > provenance.txt"
    env = {"PATH": f"{fake}:/usr/bin:/bin"}
    subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, check=True)
    assert parse_provenance((tmp_path / "provenance.txt").read_text())["ior"] == \
        "spack:ior@4.0.0/abc (Spack 0.23.0.dev0)"  # an environment fsaccept did not build
    (env_dir / "fsaccept-origin.txt").write_text("Spack 1.1.1, spack-packages 119680a\n")
    subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, check=True)
    assert parse_provenance((tmp_path / "provenance.txt").read_text())["mdtest"] == \
        "spack:ior@4.0.0/abc (Spack 1.1.1, spack-packages 119680a)"


def test_untested_versions_are_labelled():
    assert version_note("ior", "4.1.0").startswith("untested: fsaccept's ior parser is tested on")
    assert version_note("ior", None) == "version unknown"


# --- benchmarks: modules (Lmod) ------------------------------------------------------

def test_the_benchmarks_modules_are_named_as_spack_projects_them():
    assert benchmarks.module_names() == ["ior/4.0.0", "fio/3.37"]
    assert benchmarks.MODULE_PROJECTION.format(name="ior", version="4.0.0") == "ior/4.0.0"


def test_the_modulepath_directory_is_the_core_that_has_every_module(tmp_path):
    names = ["ior/4.0.0", "fio/3.37"]
    assert benchmarks.lmod_core(names, tmp_path) is None
    core = tmp_path / "linux-debian12-x86_64" / "Core"
    (core / "ior").mkdir(parents=True)
    (core / "ior" / "4.0.0.lua").write_text("")
    assert benchmarks.lmod_core(names, tmp_path) is None  # fio's is missing
    (core / "fio").mkdir()
    (core / "fio" / "3.37.lua").write_text("")
    assert benchmarks.lmod_core(names, tmp_path) == core
    assert benchmarks.lmod_core([], tmp_path) is None


def test_with_modules_jobs_activate_nothing_and_the_provenance_says_module():
    extras = {"benchmarks": "modules"}
    assert mode(extras) == "modules"
    assert activation_commands(extras, "/stage/fx") == []
    [command] = benchmarks.session_commands(extras, "s")
    assert 'echo "$b module:$(command -v $b || echo missing)"' in command
    assert parse_provenance("ior module:/opt/ior/bin/ior\nfio module:missing\n") == {
        "ior": "module:/opt/ior/bin/ior", "fio": "module:missing"}


LMOD_UNKNOWN = ("fsaccept-module nosuch/1.0 failed: Lmod has detected the following error: "
                'The following module(s) are unknown: "nosuch/1.0"  Please check the spelling '
                'or version number. Also try "module spider ..." It is also possible your '
                "cache file is out-of-date")


def test_modules_that_load_are_no_problem():
    said = "fsaccept-module ior/4.0.0 ok\nfsaccept-module fio/3.37 ok\n"
    assert benchmarks.module_problems(["ior/4.0.0", "fio/3.37"], said, "FIX") == ""


def test_a_module_that_does_not_exist_is_named_with_lmods_reason_and_the_fix():
    said = "fsaccept-module ior/4.0.0 ok\n" + LMOD_UNKNOWN + "\n"
    assert benchmarks.module_problems(["ior/4.0.0", "nosuch/1.0"], said, "FIX") == (
        'module nosuch/1.0 cannot be loaded (The following module(s) are unknown: '
        '"nosuch/1.0"): FIX')


def test_a_module_never_tried_and_an_empty_list_are_named():
    assert benchmarks.module_problems(["ior/4.0.0"], "", "FIX") == \
        "module ior/4.0.0 cannot be loaded (not tried): FIX"
    assert benchmarks.module_problems([], "", "FIX").startswith(
        "partition extras benchmarks: modules, but neither the partition nor its environment "
        "lists a module in `modules`: FIX")


def test_no_lmod_in_the_jobs_shell_says_to_source_its_init():
    said = "fsaccept-module ior/4.0.0 failed: bash: line 1: module: command not found\n"
    why = benchmarks.module_problems(["ior/4.0.0"], said, "FIX")
    assert why.startswith("Lmod is not set up in the jobs' shell (`module`: command not found)")
    assert "prepare_cmds" in why and why.endswith("; FIX")


def test_a_benchmark_no_module_provides_is_named_with_the_modules_loaded():
    assert benchmarks.missing_from_modules("ior", ["ior/4.0.0", "fio/3.37"], "FIX") == (
        "ior not on PATH after `module load ior/4.0.0 fio/3.37` (the partition's modules "
        "loaded, but none provides ior): FIX")


def test_the_module_check_runs_in_a_shell_and_reads_back(tmp_path):
    import subprocess
    # A stand-in for Lmod's `module` function: knows one module, fails as Lmod does.
    fake = ('module() { [ "$2" = ior/4.0.0 ] && return 0; printf "%s\\n%s\\n" '
            '"Lmod has detected the following error: The following module(s) are unknown: '
            '\\"$2\\"" "Please check the spelling" >&2; return 1; }')
    modules = ["ior/4.0.0", "no such/1"]
    script = "\n".join([fake, *benchmarks.module_check_commands(modules)])
    said = subprocess.run(["bash", "-c", script], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin"}, check=True).stdout
    assert said.splitlines()[0] == "fsaccept-module ior/4.0.0 ok"
    assert benchmarks.module_problems(modules, said, "FIX") == (
        'module no such/1 cannot be loaded (The following module(s) are unknown: '
        '"no such/1"): FIX')
