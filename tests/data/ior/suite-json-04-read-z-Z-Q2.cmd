mpirun --oversubscribe -np 2 ior -a POSIX -r -z -Z -Q 2 -F -k -e -i1 -m -t 100k -b 200k -O summaryFormat=JSON -O summaryFile=/tmp/hior/caps/json-04-read-z-Z-Q2.json -o /tmp/hior/run/ior
exit=255
