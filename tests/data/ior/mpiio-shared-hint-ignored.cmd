env IOR_HINT__MPI__romio_cb_write=disable IOR_HINT__MPI__fsaccept_unknown_hint=yes srun -N4 -n8 --ntasks-per-node=2 --distribution=block --mpi=pmix ior -w -a MPIIO -e -g -k -v --mpiio.showHints -C -t 1m -b 1m -s 256 -D 2 -O stoneWallingWearOut=1 -o /var/tmp/iorcap-mpiio/testfile
exit=0
