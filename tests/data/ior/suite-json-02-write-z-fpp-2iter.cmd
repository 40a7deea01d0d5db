mpirun --oversubscribe -np 1 ior -a POSIX -w -z -F -k -e -i2 -m -t 100k -b 200k -O summaryFormat=JSON -O summaryFile=/tmp/hior/caps/json-02-write-z-fpp-2iter.json -o /tmp/hior/run/ior
exit=0
