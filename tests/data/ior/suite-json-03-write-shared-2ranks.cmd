mpirun --oversubscribe -np 2 ior -a POSIX -w -C -k -e -i1 -m -t 100k -b 200k -O summaryFormat=JSON -O summaryFile=/tmp/hior/caps/json-03-write-shared-2ranks.json -o /tmp/hior/run/ior
exit=0
