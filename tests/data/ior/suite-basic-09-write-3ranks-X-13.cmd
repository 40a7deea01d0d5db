mpirun --oversubscribe -np 3 ior -a POSIX -w -z -Z -Q 1 -X -13 -F -e -i1 -m -t 100k -b 200k -o /tmp/hior/run/ior
exit=0
