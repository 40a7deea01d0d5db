mpirun --oversubscribe -np 4 ior -w -a POSIX -F -e -g -C -t 1m -b 1m -s 10 -k -vv -o /var/tmp/iorcap/sm/testfile
exit=0
