mpirun --oversubscribe -np 4 ior -w -z -t 4k -b 16m -a POSIX -F -e -g -C -D 3 -k -vv -o /var/tmp/iorcap/iops/testfile
exit=0
