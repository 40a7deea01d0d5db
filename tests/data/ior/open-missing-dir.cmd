mpirun --oversubscribe -np 4 ior -w -a POSIX -F -e -g -C -t 1m -b 1m -s 100 -k -vv -o /var/tmp/iorcap/missing/testfile
exit=255
