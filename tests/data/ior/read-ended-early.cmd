mpirun --oversubscribe -np 4 ior -r -a POSIX -F -e -g -C -t 1m -b 1m -s 450 -D 3 -O stoneWallingStatusFile=/var/tmp/iorcap/sw.status -k -vv -o /var/tmp/iorcap/rd/testfile
exit=0
