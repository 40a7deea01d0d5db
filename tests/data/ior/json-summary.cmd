mpirun --oversubscribe -np 4 ior -w -r -a POSIX -F -e -g -C -t 1m -b 16m -s 4 -O summaryFormat=JSON -O summaryFile=/var/tmp/iorcap/s.json -o /var/tmp/iorcap/js/testfile
exit=0
