mpirun --oversubscribe -np 4 ior -r -a POSIX -F -e -g -C -t 1m -b 1m -s 10 -D 3 -O stoneWallingStatusFile=/var/tmp/iorcap/missing.status -k -vv -o /var/tmp/iorcap/sm/testfile
exit=0
