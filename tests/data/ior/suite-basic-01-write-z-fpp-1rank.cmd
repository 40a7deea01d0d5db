mpirun --oversubscribe -np 1 ior -a POSIX -w -z -F -Y -e -i1 -m -t 100k -b 2000k -o /tmp/hior/run/ior
exit=0
