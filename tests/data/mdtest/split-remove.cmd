srun -N4 -n8 --ntasks-per-node=2 --distribution=block --mpi=pmix mdtest -r -n 50 -u -N 1 -F -P -d /var/tmp/mdcap/split
exit=0
