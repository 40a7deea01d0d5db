mpirun --allow-run-as-root --oversubscribe -np 1 env SLURMD_NODENAME=n1 /tmp/sem-build/fsaccept_semantics -d /tmp/semcap/d -t 20 -k 100 -r 200 -n 2000 -m 500 -b 5 -a 120 -s 65534 -u 4242 : -np 1 env SLURMD_NODENAME=n2 /tmp/sem-build/fsaccept_semantics -d /tmp/semcap/d -t 20 -k 100 -r 200 -n 2000 -m 500 -b 5 -a 120 -s 65534 -u 4242
exit=0
