mpirun --oversubscribe -np 1 ior -a MMAP -r -z -F -k -e -i1 -m -t 100k -b 200k -o /tmp/hior/run/ior
exit=0
