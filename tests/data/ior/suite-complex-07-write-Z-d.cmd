mpirun --oversubscribe -np 2 ior -a POSIX -w -Z -i1 -m -t 100k -b 100k -d 0.1 -o /tmp/hior/run/ior
exit=0
