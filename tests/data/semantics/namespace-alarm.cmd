mpirun --allow-run-as-root --oversubscribe -np 1 env SLURMD_NODENAME=n1 /tmp/sem-build/fsaccept_semantics -d /tmp/semcap/d -t 5 -n 5000000 -b 5 -a 4 : -np 1 env SLURMD_NODENAME=n2 /tmp/sem-build/fsaccept_semantics -d /tmp/semcap/d -t 5 -n 5000000 -b 5 -a 4
exit=3
