mpirun --oversubscribe -np 4 ior -w -r -a POSIX -F -e -g -k -v -R -G 1234 -l random -C -t 64k -b 1m -s 1 -o /var/tmp/iorcap/dp/testfile
exit=0
