srun -N4 -n8 --ntasks-per-node=2 --distribution=block --mpi=pmix mdtest -n 200 -u -N 1 -F -P -v -d /var/tmp/mdcap/easyv
exit=0
