srun -N4 -n8 --ntasks-per-node=2 --distribution=block --mpi=pmix mdtest -n 100 -N 1 -F -P -v -W 5 -x /var/tmp/mdcap/nothit.status -d /var/tmp/mdcap/nothit
exit=0
