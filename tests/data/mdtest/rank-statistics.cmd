srun -N4 -n8 --ntasks-per-node=2 --distribution=block --mpi=pmix mdtest -n 200 -N 1 -F -P --showRankStatistics -d /var/tmp/mdcap/rs
exit=0
