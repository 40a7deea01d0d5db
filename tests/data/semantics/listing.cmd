/tmp/sem-build/fsaccept_semantics -L /tmp/semcap/list
exit=0
