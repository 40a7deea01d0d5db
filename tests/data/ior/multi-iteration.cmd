mpirun --oversubscribe -np 4 ior -w -r -i 3 -a POSIX -F -e -g -C -t 1m -b 16m -s 4 -vv -o /var/tmp/iorcap/mi/testfile
exit=0
