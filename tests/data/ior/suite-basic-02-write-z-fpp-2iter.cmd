mpirun --oversubscribe -np 1 ior -a POSIX -w -z -F -k -e -i2 -m -t 100k -b 200k -o /tmp/hior/run/ior
exit=0
