"""Configuration shared by every system: programming environments that any
site can use, and general options.  Options for some systems only (e.g. the
emulated cluster's poll rate) are in those systems' files."""

site_configuration = {
    'environments': [
        {
            # MPI compilers from PATH (the local cluster: Debian's Open MPI).
            'name': 'openmpi',
            'cc': 'mpicc',
            'cxx': 'mpicxx',
            'ftn': 'mpif90',
            'features': ['mpi'],
        },
    ],
}
