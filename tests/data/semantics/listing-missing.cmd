/tmp/sem-build/fsaccept_semantics -L /tmp/semcap/nonexistent
exit=2
