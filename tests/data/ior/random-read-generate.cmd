mpirun --oversubscribe -np 4 ior -w -t 4m -b 16m -a POSIX -F -e -g -C -k -vv -o /var/tmp/iorcap/riops/testfile
exit=0
