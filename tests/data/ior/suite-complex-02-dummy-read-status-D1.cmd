mpirun --oversubscribe -np 2 ior -a DUMMY -r -O stoneWallingStatusFile=/tmp/hior/run/stonewall.log -D 1 -t 1000 -b 1000 -s 30 -k -o /tmp/hior/run/ior
exit=0
