srun -N4 -n8 --ntasks-per-node=2 --distribution=block --mpi=pmix mdtest -n 100000 -u -N 1 -F -P -v -W 2 -x /var/tmp/mdcap/stonewall.status -d /var/tmp/mdcap/sw
exit=0
