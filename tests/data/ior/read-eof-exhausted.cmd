mpirun --oversubscribe -np 4 ior -r -a POSIX -F -e -g -C -t 1m -b 1m -s 100000 -D 10 -k -vv -o /var/tmp/iorcap/eof/testfile
exit=255
