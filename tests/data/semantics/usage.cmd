mpirun --allow-run-as-root --oversubscribe -np 2 /tmp/sem-build/fsaccept_semantics -t 5
exit=2
