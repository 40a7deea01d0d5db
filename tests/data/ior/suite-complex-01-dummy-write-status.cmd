mpirun --oversubscribe -np 2 ior -a DUMMY -w -O stoneWallingStatusFile=/tmp/hior/run/stonewall.log -O stoneWallingWearOut=1 -D 1 -t 1000 -b 1000 -s 15 -k -o /tmp/hior/run/ior
exit=0
