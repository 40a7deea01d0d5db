"""The ReFrame site configuration (config/settings.py) as ReFrame itself loads and
validates it: the example site's perflog handlers, the local systems' poll rate; which
system ReFrame selects on this host; the activation step that makes the bare
`reframe -c checks` find it (tried in a fresh shell)."""

import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from reframe.core import config

from fsaccept import cli
from fsaccept.suite import sites
from fsaccept.suite.reference import load_reference
from lab import emulated

REPO = Path(__file__).resolve().parents[2]
SETTINGS = REPO / "config" / "settings.py"


def site(system: str):
    conf = config.load_config(str(SETTINGS))
    conf.select_subconfig(system)
    conf.validate()  # ReFrame's JSON schema: raises on a handler it does not accept
    return conf


def test_example_site_streams_every_figure_to_its_monitoring_and_keeps_perflog_files():
    conf = site("example-lustre")
    handlers = conf.get("logging/0/handlers_perflog")
    assert [h["type"] for h in handlers] == ["filelog", "httpjson"]
    http = handlers[1]
    assert http["url"].startswith("https://") and http["level"] == "info"
    assert http["retry_timeout"] > 0 and http["extras"]["facility"] == "fsaccept"
    # Provenance is not filtered out: the figures and every logged variable go.
    assert not conf.get("logging/0/handlers_perflog/1/ignore_keys")
    # ReFrame's console and debug-log handlers are kept.
    assert conf.get("logging/0/handlers$")[0]["type"] == "stream"
    assert "check_#ALL" in handlers[0]["format"]


@pytest.mark.parametrize("system", ["local", "local-spack", "workstation"])
def test_other_systems_keep_reframes_logging_and_poll_quickly(system):
    conf = site(system)
    assert [h["type"] for h in conf.get("logging/0/handlers_perflog")] == ["filelog"]
    assert conf.get("general/0/poll_rate_min") >= 1


@pytest.mark.parametrize("system, max_jobs", [("local", 2), ("local-spack", 2),
                                              ("local-gluster", 2), ("local-gluster-cephfs", 2),
                                              ("example-lustre", 2),
                                              ("workstation", 1)])
def test_slurm_holds_the_next_job_and_a_workstation_runs_one(system, max_jobs):
    # Under Slurm the next job waits in its queue (--dependency=singleton); without a
    # scheduler to hold it, one job at a time.
    assert site(system).get("systems/0/partitions/0/max_jobs") == max_jobs


def test_example_site_keeps_reframes_default_poll_rate():
    assert site("example-lustre").get("general/0/poll_rate_min") == 0.1


# --- Which system ReFrame selects on this host (fsaccept/suite/sites.py) ------------

def emulated_state(tmp_path, cluster=True, spack_view=False):
    """A state directory like set-up leaves it: the emulated cluster's slurm.conf (written
    by `scripts/local-cluster up`), and an executable ior in the local-spack view."""
    state = tmp_path / "state"
    if cluster:
        (state / "cluster").mkdir(parents=True)
        (state / "cluster" / "slurm.conf").write_text("# emulated\n")
    if spack_view:
        ior = sites.ior_view(state)
        ior.parent.mkdir(parents=True)
        ior.write_text("#!/bin/sh\n")
        ior.chmod(0o755)
    return state


def forget_loaded_settings():
    """ReFrame keeps a configuration file it imported (sys.modules): load it anew, as
    each `reframe` command does, so that it sees this test's state directory."""
    for name, module in list(sys.modules.items()):
        path = Path(getattr(module, "__file__", None) or "/")
        if path.name == "settings.py" and path.parent.name == "config":
            del sys.modules[name]


@pytest.fixture(autouse=True)
def fresh_settings():
    forget_loaded_settings()
    yield
    forget_loaded_settings()


def selected_by_host_name(settings=SETTINGS):
    """The system ReFrame 4.10 itself selects on this host (no --system)."""
    forget_loaded_settings()
    conf = config.load_config(str(settings))
    conf.select_subconfig(None)
    return conf.get("systems/0")


@pytest.mark.parametrize("spack_view,expected", [(False, "local"), (True, "local-spack")])
def test_this_host_selects_the_emulated_cluster_set_up_built(tmp_path, monkeypatch,
                                                             spack_view, expected):
    state = emulated_state(tmp_path, spack_view=spack_view)
    monkeypatch.setenv("FSACCEPT_STATE_DIR", str(state))
    assert emulated.default_emulated() == expected
    system = selected_by_host_name()
    assert system["name"] == expected
    # Its Slurm is the emulated cluster's, also when selected by host name.
    assert ["SLURM_CONF", str(state / "cluster" / "slurm.conf")] in system["env_vars"]
    # Only the default claims the host name: ReFrame would take the first match.
    claimed = [s["name"] for s in sites.known_systems() if s["hostnames"]
               and sites.is_emulated(s)]
    assert claimed == [expected]
    forget_loaded_settings()
    assert sites.selected()["name"] == expected


def test_no_system_matching_says_what_to_do_not_zero_checks(tmp_path, monkeypatch):
    # A host where the emulated cluster never ran and no site file matches.
    monkeypatch.setenv("FSACCEPT_STATE_DIR", str(emulated_state(tmp_path, cluster=False)))
    assert selected_by_host_name()["name"] == sites.REFRAME_GENERIC
    forget_loaded_settings()
    with pytest.raises(ValueError) as err:
        sites.selected()
    text = str(err.value)
    assert "config/systems/<site>.py" in text and "--system NAME (" in text
    assert "scripts/local-cluster up" in text and repr(sites.this_host()) in text
    assert "local-spack" in text and "example-lustre" in text


def test_without_fsaccepts_configuration_the_message_names_the_activation():
    text = sites.no_system_message(["<builtin>"], "generic", "vm", [])
    assert "RFM_CONFIG_FILES" in text and ". .venv/bin/activate" in text
    assert "-C config/settings.py" in text
    assert sites.no_system_message([str(SETTINGS)], "local", "vm", ["local"]) is None


def copy_of_config(tmp_path):
    """This checkout's config/ and, beside it as in the checkout, the lab's systems."""
    conf_dir = tmp_path / "config"
    shutil.copytree(SETTINGS.parent, conf_dir, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "lab" / "systems", tmp_path / "lab" / "systems",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return conf_dir


def test_a_sites_host_names_select_it_before_the_emulated_cluster(tmp_path, monkeypatch):
    monkeypatch.setenv("FSACCEPT_STATE_DIR", str(emulated_state(tmp_path, spack_view=True)))
    conf_dir = copy_of_config(tmp_path)
    assert selected_by_host_name(conf_dir / "settings.py")["name"] == "local-spack"
    # A site on a login node also set up for the emulated cluster (selected above):
    # the site still wins, whatever its file's name.
    site = (conf_dir / "systems" / "example-lustre.py").read_text()
    site = site.replace("'example-lustre'", "'zeus'").replace(
        r"r'^login\d+\.example\.org$'", repr("^" + re.escape(sites.this_host()) + "$"))
    (conf_dir / "systems" / "zeus.py").write_text(site)
    assert selected_by_host_name(conf_dir / "settings.py")["name"] == "zeus"


def test_ior_missing_says_which_system_to_add_or_which_set_up_to_run(tmp_path):
    built = sites.ior_fix(True, emulated_state(tmp_path / "a", spack_view=True))
    assert "`--system local-spack`" in built and "scripts/setup" not in built
    not_built = sites.ior_fix(True, emulated_state(tmp_path / "b"))
    assert "`scripts/setup --spack" in not_built and "local-spack" in not_built
    site = sites.ior_fix(False)
    assert "config/systems/<site>.py" in site and "--system local-spack" not in site


def test_fsaccept_system_prints_shell_assignments(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FSACCEPT_STATE_DIR", str(emulated_state(tmp_path)))
    assert cli.main(["system"]) == 0
    assert capsys.readouterr().out == "system=local\nemulated=1\n"
    forget_loaded_settings()
    assert cli.main(["system", "example-lustre"]) == 0
    assert capsys.readouterr().out == "system=example-lustre\nemulated=0\n"
    forget_loaded_settings()
    assert cli.main(["system", "nosuch"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fsaccept system: no system 'nosuch' in config/systems/*.py")
    assert "\n" not in err.rstrip("\n")


# --- A system, its file and its reference file share one name ---------------------------

def test_each_site_file_defines_the_system_of_its_name_and_has_its_reference_file():
    """`fsaccept system NAME`, `--system NAME`, reference/NAME.yaml and
    spack-env/systems/NAME.yaml all take the system's name: a site's file is named so too
    (example_lustre.py defined example-lustre, and `fsaccept system example_lustre` failed)."""
    files = sites.system_files()
    site_files = sorted(p for p in files if p.parent == SETTINGS.parent / "systems")
    # config/settings.py loads every file of config/systems/, and only those before the lab's.
    assert site_files == sorted((SETTINGS.parent / "systems").glob("*.py"))
    assert list(files)[:len(site_files)] == site_files
    for path in site_files:
        assert files[path] == [path.stem], (
            f"{path}: defines {files[path]}; name the file after its one system")
        reference = REPO / "reference" / f"{path.stem}.yaml"
        assert reference.is_file(), f"{path}: no reference file {reference}"
        assert path.stem in load_reference(reference).systems


def test_a_file_name_given_for_a_system_names_the_system_that_file_defines(tmp_path,
                                                                          monkeypatch,
                                                                          capsys):
    monkeypatch.setenv("FSACCEPT_STATE_DIR", str(emulated_state(tmp_path)))
    conf_dir = copy_of_config(tmp_path)
    site = (conf_dir / "systems" / "example-lustre.py").read_text()
    (conf_dir / "systems" / "zeus_site.py").write_text(site.replace("'example-lustre'",
                                                                    "'zeus'"))
    with pytest.raises(ValueError) as err:
        sites.selected("zeus_site", conf_dir / "settings.py")
    text = str(err.value)
    assert text.startswith("fsaccept system: no system 'zeus_site' in config/systems/*.py")
    assert "zeus" in text.split("(known: ")[1]
    assert text.endswith("; config/systems/zeus_site.py defines 'zeus': give that name")
    # The lab's files too: local_gluster.py defines local-gluster.
    forget_loaded_settings()
    assert cli.main(["system", "local_gluster"]) == 2
    assert capsys.readouterr().err.rstrip("\n").endswith(
        "; lab/systems/local_gluster.py defines 'local-gluster': give that name")


# --- The activation step --------------------------------------------------------------

def bash(script, **env):
    base = {"HOME": os.environ.get("HOME", "/root"), "PATH": "/usr/bin:/bin"}
    return subprocess.run(["bash", "-c", script], env={**base, **env}, capture_output=True,
                          text=True, check=True).stdout


@pytest.fixture
def venv_activate(tmp_path):
    """A fresh virtual environment's activation script with fsaccept's block added."""
    venv.EnvBuilder(with_pip=False, symlinks=True).create(tmp_path / "venv")
    activate = tmp_path / "venv" / "bin" / "activate"
    assert sites.install_activation(activate)
    assert not sites.install_activation(activate)  # set-up again: nothing changes
    assert activate.read_text().count(sites.BEGIN) == 1
    return activate


@pytest.mark.parametrize("before", [None, "", "/site/settings.py"])
def test_activation_sets_the_configuration_and_deactivate_restores_it(venv_activate, before):
    env = {} if before is None else {"RFM_CONFIG_FILES": before}
    out = bash(f'. {venv_activate}; echo "on=$RFM_CONFIG_FILES"; . {venv_activate}; '
               f'echo "again=$RFM_CONFIG_FILES"; deactivate; '
               'echo "off=${RFM_CONFIG_FILES-<unset>}"; echo "path=$PATH"; '
               'type deactivate >/dev/null 2>&1 || echo "no deactivate"', **env)
    assert f"on={SETTINGS}\n" in out and f"again={SETTINGS}\n" in out
    assert f"off={'<unset>' if before is None else before}\n" in out
    assert "path=/usr/bin:/bin\n" in out and "no deactivate" in out


def reframe_list(activate, state):
    """`reframe -c checks -l` in a fresh shell after the one documented step.  PYTHONPATH:
    this checkout's fsaccept, whichever checkout .venv was installed from."""
    return subprocess.run(
        ["env", "-i", f"HOME={os.environ.get('HOME', '/root')}", "PATH=/usr/bin:/bin",
         f"FSACCEPT_STATE_DIR={state}", f"PYTHONPATH={REPO}", "bash", "-c",
         f". {activate} && cd {REPO} && reframe -c checks -l"],
        capture_output=True, text=True, timeout=300)


def copy_of_this_activation(tmp_path):
    """This environment's own activation script (it activates this .venv) with the block."""
    own = Path(sys.prefix) / "bin" / "activate"
    if not own.is_file():
        pytest.skip(f"pytest runs outside a virtual environment ({sys.prefix}): run it "
                    "with .venv/bin/python (scripts/setup makes .venv)")
    activate = tmp_path / "activate"
    shutil.copy(own, activate)
    sites.install_activation(activate)
    return activate


def test_after_activating_reframe_lists_every_check_in_a_fresh_shell(tmp_path):
    proc = reframe_list(copy_of_this_activation(tmp_path), emulated_state(tmp_path))
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert f"settings files:    '<builtin>', '{SETTINGS}'" in out, out[:2000]
    assert "selected system:   'local'" in out
    names = re.findall(r"^@rfm\.simple_test\s+(?:@on_targets\s+)?class (\w+)", "\n".join(
        p.read_text() for p in (REPO / "checks").glob("*.py")), re.M)
    assert len(names) >= 10
    assert f"Found {len(names)} check(s)" in out
    for name in names:
        assert re.search(rf"^- {name} /", out, re.M), name


def test_reframe_with_no_matching_system_says_what_to_do_in_a_fresh_shell(tmp_path):
    proc = reframe_list(copy_of_this_activation(tmp_path),
                        emulated_state(tmp_path, cluster=False))
    out = proc.stdout + proc.stderr
    assert "Found 0 check(s)" in out
    assert re.search(r"WARNING: fsaccept: no system in config/systems/ matches this host "
                     r".*--system NAME \(", out), out[-3000:]


def test_one_more_emulated_system_is_one_file(tmp_path, monkeypatch):
    monkeypatch.setenv("FSACCEPT_STATE_DIR", str(emulated_state(tmp_path)))
    conf_dir = copy_of_config(tmp_path)
    (tmp_path / "lab" / "systems" / "local_gluster.py").write_text(
        "from lab.emulated import emulated_system\n"
        "site_configuration = {'systems': [emulated_system(\n"
        "    'local-gluster', 'Emulated cluster on GlusterFS', features=('gluster',))]}\n")
    settings = conf_dir / "settings.py"
    # This host keeps its default; the new one is chosen with --system, polled quickly.
    assert selected_by_host_name(settings)["name"] == "local"
    forget_loaded_settings()
    conf = config.load_config(str(settings))
    conf.select_subconfig("local-gluster")
    conf.validate()
    assert conf.get("general/0/poll_rate_min") >= 1
    assert "emulated" in conf.get("systems/0/partitions/0/features")


@pytest.mark.parametrize("recorded, backend, access", [
    (None, "slurm", ["--partition=compute", "--account=acceptance"]),
    ("slurmdbd", "slurm", ["--partition=compute", "--account=acceptance"]),
    ("none", "squeue", ["--partition=compute"]),
])
def test_the_lab_uses_the_slurm_backend_where_its_cluster_has_accounting(
        tmp_path, recorded, backend, access):
    """As a site: `slurm` (sacct) and its account with slurmdbd, `squeue` without."""
    if recorded:
        (tmp_path / "cluster").mkdir()
        (tmp_path / "cluster" / "accounting").write_text(recorded + "\n")
    partition = emulated.emulated_system("x", "x", state=tmp_path)["partitions"][0]
    assert (partition["scheduler"], partition["access"]) == (backend, access)


# --- Lmod modules (benchmarks: modules) ----------------------------------------------

def modules_state(tmp_path):
    """A state directory where set-up had Spack write the benchmarks' modules."""
    state = emulated_state(tmp_path, spack_view=True)
    core = state / "spack" / "modules" / "linux-debian12-x86_64" / "Core"
    for name in ("ior/4.0.0", "fio/3.37"):
        (core / name).parent.mkdir(parents=True, exist_ok=True)
        (core / f"{name}.lua").write_text("")
    return state, core


def test_local_gluster_loads_the_modules_set_up_generated_with_lmod(tmp_path, monkeypatch):
    state, core = modules_state(tmp_path)
    monkeypatch.setenv("FSACCEPT_STATE_DIR", str(state))
    conf = site("local-gluster")
    assert conf.get("systems/0/modules_system") == "lmod"
    assert conf.get("systems/0/partitions/0/extras")["benchmarks"] == "modules"
    assert [m["name"] for m in conf.get("systems/0/partitions/0/modules")] == [
        "ior/4.0.0", "fio/3.37"]
    # The jobs' shell is no login shell: each job sources Lmod's init first.
    assert conf.get("systems/0/partitions/0/prepare_cmds") == [f". {emulated.LMOD_INIT}"]
    env_vars = dict(conf.get("systems/0/env_vars"))
    assert env_vars["MODULEPATH"] == f"{core}:$MODULEPATH"
    assert env_vars["LMOD_CMD"] == emulated.LMOD_CMD
    # ReFrame writes `module load` into the jobs and loads nothing itself: fsaccept's
    # first step names a module that does not load (a SKIP, not a failed build).
    assert conf.get("general/0/resolve_module_conflicts") is False
    assert conf.get("general/0/poll_rate_min") >= 1  # the lab's own general entry kept
    # The other systems keep ReFrame's default, and no modules.
    conf = site("local-spack")
    assert conf.get("general/0/resolve_module_conflicts") is True
    assert conf.get("systems/0/modules_system") == "nomod"


def test_without_the_modules_local_gluster_takes_the_spack_build(tmp_path, monkeypatch):
    monkeypatch.setenv("FSACCEPT_STATE_DIR", str(emulated_state(tmp_path, spack_view=True)))
    conf = site("local-gluster")
    assert conf.get("systems/0/modules_system") == "nomod"
    assert conf.get("systems/0/partitions/0/extras")["benchmarks"] == "spack-build"
    assert conf.get("systems/0/partitions/0/modules") == []


def test_systems_taking_modules_are_the_ones_reframe_loads_nothing_for():
    modules = {"name": "a", "partitions": [{"extras": {"benchmarks": "modules"}}]}
    spack = {"name": "b", "partitions": [{"extras": {"benchmarks": "spack-build"}}, {}]}
    assert sites.takes_modules(modules) and not sites.takes_modules(spack)
    assert sites.modules_settings(["a"]) == [{"target_systems": ["a"],
                                              "resolve_module_conflicts": False}]
    assert sites.modules_settings([]) == []


def test_a_module_that_does_not_load_says_how_to_get_it_on_a_site_and_here():
    assert sites.modules_fix(False, "big", "compute").startswith(
        "check system big, partition compute in config/systems/<site>.py: each name in "
        "`modules` as `module avail` shows it")
    here = sites.modules_fix(True, "local-gluster", "compute")
    assert "scripts/setup --spack" in here and "--system local-spack" in here


@pytest.mark.parametrize("system", ["local-cephfs", "local-gluster-cephfs"])
def test_a_lab_system_on_the_cephfs_names_its_ceph_conf(system):
    # Ceph's server probe runs `ceph` on every node: the lab's ceph.conf is not in
    # /etc/ceph, and sbatch passes ReFrame's environment on to the jobs.
    env = dict(site(system).get("systems/0/env_vars"))
    assert env["CEPH_CONF"].endswith("/ceph/ceph.conf")
