srun -N4 -n8 --ntasks-per-node=2 --distribution=block --mpi=pmix mdtest -E -n 50 -u -N 1 -F -P -e 4096 -X -G 2 -d /var/tmp/mdcap/split
exit=0
