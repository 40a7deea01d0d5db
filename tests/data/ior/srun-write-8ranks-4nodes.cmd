srun -N4 -n8 --ntasks-per-node=2 --distribution=block --mpi=pmix ior -w -a POSIX --posix.odirect -F -e -g -C -t 1m -b 1m -s 4096 -D 2 -O stoneWallingWearOut=1 -k -v -o /var/tmp/iorcap-vv/testfile
exit=0
