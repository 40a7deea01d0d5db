mpirun --oversubscribe -np 4 ior -r -z -t 4k -b 16m -s 16 -a POSIX --posix.odirect -F -e -g -C -D 3 -k -vv -o /var/tmp/iorcap/riops/testfile
exit=0
