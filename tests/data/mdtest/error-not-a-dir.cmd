srun -N4 -n8 --ntasks-per-node=2 --distribution=block --mpi=pmix mdtest -n 200 -u -N 1 -F -P -d /var/tmp/mdcap/notadir/easy
exit=255
