mpirun --oversubscribe -np 4 ior -w -a POSIX -F -e -C -t 1m -b 4m -s 1 -G 1 -k -vv -o /var/tmp/iorcap/ck/testfile
exit=0
