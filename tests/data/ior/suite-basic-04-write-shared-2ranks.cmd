mpirun --oversubscribe -np 2 ior -a POSIX -w -C -k -e -i1 -m -t 100k -b 200k -o /tmp/hior/run/ior
exit=0
