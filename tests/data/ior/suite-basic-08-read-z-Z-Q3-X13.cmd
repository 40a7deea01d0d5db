mpirun --oversubscribe -np 2 ior -a POSIX -r -z -Z -Q 3 -X 13 -F -k -e -i1 -m -t 100k -b 200k -o /tmp/hior/run/ior
exit=0
