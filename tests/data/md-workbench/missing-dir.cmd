srun -N4 -n8 --ntasks-per-node=2 --distribution=block --mpi=pmix md-workbench -P 50 -I 10 -D 1 -R 1 -O 2 -o /proc/fsaccept-nonexistent/x
exit=255
