"""Cross-node semantics: does the file system behave as one shared file system?

fsaccept's own program (``src/fsaccept_semantics.c``), built here with ReFrame's
SingleSource build system, runs one rank per node in blocks, so rank r and rank r+1 are
on different nodes.  Each case's writer and reader are such a pair: close-to-open
visibility (p50 and max over ``trials``), size after an append and a truncate, flock and
fcntl locks, O_APPEND from every rank, rename over a name, unlink while open, O_EXCL and
mkdir races, hard and symbolic links and a user xattr.  Delays are judged against
``max_visibility_s`` and violations against 0 (``reference/<system>.yaml``:
``semantics``); what each case answers is in ``docs/user/semantics.md``.
"""

import os

import reframe as rfm
import reframe.utility.sanity as sn

from fsaccept.benchmarks.semantics import command
from fsaccept.rfm.catalogued import CataloguedTest
from fsaccept.rfm.logged import Logged
from fsaccept.rfm.semantics import SemanticsTest


class SemanticsProgram(rfm.CompileOnlyRegressionTest, CataloguedTest, Logged):
    """The semantics program, built with the environment's MPI compiler."""

    valid_systems = ['+mpi']
    valid_prog_environs = ['+mpi']
    build_system = 'SingleSource'
    sourcepath = command.SOURCE
    executable = command.EXECUTABLE

    @run_before('compile')
    def set_output(self):
        self.build_system.executable = command.EXECUTABLE
        self.build_system.cflags = ['-O2']

    @sanity_function
    def built(self):
        return sn.assert_true(os.path.isfile(os.path.join(self.stagedir, self.executable)),
                              msg=f'{command.SOURCE} did not build: see {self.stagedir}')


@rfm.simple_test
class CrossNodeSemantics(SemanticsTest):
    """Each case's writer and reader on different nodes (block placement, 1 rank each)."""

    program = fixture(SemanticsProgram, scope='environment')
