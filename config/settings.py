"""ReFrame site configuration of fsaccept.

The common part lives in ``common.py``; each site's system has one file in
``systems/`` (the clusters emulated on this host, the lab's: ``../lab/systems/``) that
defines ``site_configuration = {'systems': [...], 'environments': [...], 'logging':
[...]}`` (environments and logging optional).  To add your site, copy
``systems/example-lustre.py`` to ``systems/<site>.py``, name the system ``<site>`` as the
file (and ``reference/<site>.yaml``), and adapt it; nothing else needs editing.

Use: ``. .venv/bin/activate`` (sets ``RFM_CONFIG_FILES`` to this file), then
``reframe -c checks -r [--system NAME]``; or ``reframe -C config/settings.py ...``.

ReFrame selects the first system whose ``hostnames`` match this host: the sites'
systems come first, then the clusters emulated on this host (of which only the
default one, ``lab/emulated.py``, claims this host's name).
"""

import importlib.util
import pathlib
import sys

from fsaccept.suite.sites import (is_emulated, modules_settings, quick_polling, sites_first,
                                  takes_modules)

_here = pathlib.Path(__file__).resolve().parent
#: The lab's emulated systems, beside this directory in a checkout (none elsewhere).
_lab = _here.parent / 'lab'


def _load(path):
    # ReFrame imports this file by path, so plain relative imports would not work.
    spec = importlib.util.spec_from_file_location(f'fsaccept_config_{path.stem}', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.site_configuration


def _lab_files():
    files = sorted((_lab / 'systems').glob('*.py'))
    if files and str(_lab.parent) not in sys.path:
        # Their files import the lab package, which the installed fsaccept does not
        # include, and ReFrame runs from any directory.  Appended: never ahead of fsaccept.
        sys.path.append(str(_lab.parent))
    return files


_common = _load(_here / 'common.py')
#: Each system file and its configuration, sites' first (``fsaccept system`` names the
#: file of a name given for a system; a unit test holds each site file to its name).
system_files = {p: _load(p) for p in sorted((_here / 'systems').glob('*.py')) + _lab_files()}
_systems = list(system_files.values())


_all = sites_first([s for conf in _systems for s in conf['systems']])

site_configuration = {
    # Sites first: on a login node set up for the emulated cluster too, the site wins.
    'systems': _all,
    'environments': (_common['environments'] +
                     [e for conf in _systems for e in conf.get('environments', [])]),
    # Each system file may add general options for its systems (e.g. a poll rate).
    # Clusters emulated on this host are polled quickly, and systems whose benchmarks
    # come from Lmod modules have ReFrame only write `module load` into the jobs
    # (fsaccept/suite/sites.py).
    'general': (_common.get('general', []) +
                [g for conf in _systems for g in conf.get('general', [])] +
                [quick_polling([s['name'] for s in _all if is_emulated(s)])] +
                modules_settings([s['name'] for s in _all if takes_modules(s)])),
    # Per-system logging (e.g. perflog handlers streaming figures to a site's
    # monitoring), each entry with its target_systems; other systems keep ReFrame's.
    'logging': [entry for conf in _systems for entry in conf.get('logging', [])],
}
