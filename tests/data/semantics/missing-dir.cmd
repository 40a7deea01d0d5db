mpirun --allow-run-as-root --oversubscribe -np 2 /tmp/sem-build/fsaccept_semantics -d /tmp/semcap/nonexistent -t 5
exit=2
