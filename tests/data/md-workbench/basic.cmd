srun -N4 -n8 --ntasks-per-node=2 --distribution=block --mpi=pmix md-workbench -P 200 -I 50 -D 2 -R 2 -O 2 -o /var/tmp/mdwcap/basic
exit=0
