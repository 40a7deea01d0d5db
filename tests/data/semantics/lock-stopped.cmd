mpirun --allow-run-as-root --oversubscribe -x FSACCEPT_TEST_LOCK_HOLDER=stop -np 1 env SLURMD_NODENAME=n1 /tmp/sem-build/fsaccept_semantics -d /tmp/semcap/d -t 4 -k 20 -r 20 -n 100 -m 50 -b 3 -a 120 -s 65534 -u 4242 : -np 1 env SLURMD_NODENAME=n2 /tmp/sem-build/fsaccept_semantics -d /tmp/semcap/d -t 4 -k 20 -r 20 -n 100 -m 50 -b 3 -a 120 -s 65534 -u 4242
exit=0
