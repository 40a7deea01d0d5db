mpirun --oversubscribe -np 4 ior -w -r -a DUMMY --dummy.delay-xfer=1000 -F -e -g -C -t 1m -b 1m -s 100000 -D 2 -O stoneWallingWearOut=1 -vv -o /var/tmp/iorcap/dummy/testfile
exit=0
