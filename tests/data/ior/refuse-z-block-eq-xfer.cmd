mpirun --oversubscribe -np 4 ior -w -z -t 4k -b 4k -a POSIX -F -e -g -C -k -vv -o /var/tmp/iorcap/z/testfile
exit=255
