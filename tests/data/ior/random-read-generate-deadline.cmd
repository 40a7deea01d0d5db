mpirun --oversubscribe -np 4 ior -w -t 4m -b 16m -s 16 -a POSIX --posix.odirect -F -e -g -C -k -vv -o /var/tmp/iorcap/riops/testfile
exit=0
