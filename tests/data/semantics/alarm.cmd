mpirun --allow-run-as-root --oversubscribe -np 2 /tmp/sem-build/fsaccept_semantics -d /tmp/semcap/d -t 200000 -b 5 -a 1
exit=3
