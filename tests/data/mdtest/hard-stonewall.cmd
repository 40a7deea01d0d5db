srun -N4 -n8 --ntasks-per-node=2 --distribution=block --mpi=pmix mdtest -n 100000 -N 1 -F -P -v -w 3901 -e 3901 -W 2 -x /var/tmp/mdcap/hard.status -d /var/tmp/mdcap/hardsw
exit=0
