mpirun --oversubscribe -np 4 ior -w -a POSIX --posix.odirect -F -e -g -C -t 1m -b 1m -s 450 -D 3 -O stoneWallingWearOut=1 -k -vv -o /var/tmp/iorcap/bw/testfile
exit=0
