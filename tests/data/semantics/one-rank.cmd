mpirun --allow-run-as-root --oversubscribe -np 1 /tmp/sem-build/fsaccept_semantics -d /tmp/semcap/d -t 5
exit=2
