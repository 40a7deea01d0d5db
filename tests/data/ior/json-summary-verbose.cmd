mpirun --oversubscribe -np 4 ior -w -a POSIX -F -e -g -C -t 1m -b 4m -s 1 -v -O summaryFormat=JSON -O summaryFile=/var/tmp/iorcap/s.json -o /var/tmp/iorcap/js/testfile
exit=0
