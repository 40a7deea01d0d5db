srun -N4 -n8 --ntasks-per-node=2 --distribution=block --mpi=pmix mdtest -C -n 50 -u -N 1 -F -P -w 4096 -G 1 -d /var/tmp/mdcap/split
exit=0
