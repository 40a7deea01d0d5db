mpirun --oversubscribe -np 2 ior -a DUMMY -e -F -t 1m -b 1m -A 328883 -O summaryFormat=JSON -O summaryFile=/tmp/hior/caps/basic-11-dummy-json.json -o /tmp/hior/run/ior
exit=0
