srun -N4 -n8 --ntasks-per-node=2 --distribution=block --mpi=pmix mdtest -n 200 -u -N 1 -F -P -i 3 -d /var/tmp/mdcap/mi
exit=0
