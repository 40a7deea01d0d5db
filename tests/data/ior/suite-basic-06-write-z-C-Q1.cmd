mpirun --oversubscribe -np 2 ior -a POSIX -w -z -C -Q 1 -F -k -e -i1 -m -t 100k -b 200k -o /tmp/hior/run/ior
exit=0
