srun -N4 -n8 --ntasks-per-node=2 --distribution=block --mpi=pmix mdtest -n 200 -N 1 -F -P -w 3901 -e 3901 -d /var/tmp/mdcap/hard
exit=0
