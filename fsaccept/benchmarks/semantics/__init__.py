"""fsaccept's cross-node semantics check (``checks/semantics/src/fsaccept_semantics.c``)."""
