mpirun --oversubscribe -np 4 ior -w -z -t 4k -b 16m -s 64 -a POSIX --posix.odirect -F -e -g -C -D 3 -k -vv -o /var/tmp/iorcap/iops/testfile
exit=0
