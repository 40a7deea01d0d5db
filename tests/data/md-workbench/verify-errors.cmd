srun -N4 -n8 --ntasks-per-node=2 --distribution=block --mpi=pmix md-workbench -2 -3 -G 2 -X -P 100 -I 20 -D 1 -O 2 -o /var/tmp/mdwcap/ve --run-info-file=/var/tmp/mdwcap/ve.status
exit=0
(after: srun -N4 -n8 --ntasks-per-node=2 --distribution=block --mpi=pmix md-workbench -1 -G 1 -P 100 -I 20 -D 1 -O 2 -o /var/tmp/mdwcap/ve --run-info-file=/var/tmp/mdwcap/ve.status)
