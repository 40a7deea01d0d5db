mpirun --oversubscribe -np 2 ior -a POSIX -w -r -e -i1 -m -t 100k -b 200k -O summaryFormat=JSON -O summaryFile=/tmp/hior/caps/json-05-wr-shared.json -o /tmp/hior/run/ior
exit=0
