srun -N4 -n8 --ntasks-per-node=2 --distribution=block --mpi=pmix mdtest -n 100 -u -N 1 -P -d /var/tmp/mdcap/dirs
exit=0
