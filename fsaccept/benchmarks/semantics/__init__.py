"""fsaccept's cross-node semantics check (``checks/src/fsaccept_semantics.c``)."""
