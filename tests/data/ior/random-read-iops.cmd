mpirun --oversubscribe -np 4 ior -r -z -t 4k -b 16m -a POSIX -F -e -g -C -D 3 -k -vv -o /var/tmp/iorcap/riops/testfile
exit=0
