srun -N4 -n8 --ntasks-per-node=2 --distribution=block --mpi=pmix md-workbench -P 200 -I 50 -D 2 -R 1 -O 2 -X -o /var/tmp/mdwcap/verify
exit=0
