srun -N4 -n8 --ntasks-per-node=2 --mpi=pmix /work/main/.state/spack/env/local-spack/.spack-env/view/bin/ior -w -a POSIX -F -e -k -v -G 1026532387 -l random -C -t 4m -b 32m -s 1 -O saveRankPerformanceDetailsCSV=/tmp/rfm_ck/stage/local-spack/compute/openmpi/IORCheckpointWrite/ior-rank-times.csv --posix.odirect -o /var/tmp/fsaccept/IORCheckpointWrite.20261125T092258-4691/testfile
exit=0
