srun -N1 -n1 --mpi=pmix md-workbench -P 100 -I 20 -D 1 -R 1 -o /var/tmp/mdwcap/single
exit=0
