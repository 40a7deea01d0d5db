mpirun --oversubscribe -np 1 ior -a POSIX -w -z -F -Y -e -i1 -m -t 100k -b 2000k -O summaryFormat=JSON -O summaryFile=/tmp/hior/caps/json-01-write-z-fpp.json -o /tmp/hior/run/ior
exit=0
