mpirun --allow-run-as-root --oversubscribe -np 2 /tmp/sem-build/fsaccept_semantics -d /tmp/semcap/d -s 0
exit=2
