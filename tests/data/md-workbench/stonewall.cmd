srun -N4 -n8 --ntasks-per-node=2 --distribution=block --mpi=pmix md-workbench -P 2000 -I 2000 -D 2 -R 1 -O 2 -w 1 -W -o /var/tmp/mdwcap/sw
exit=0
