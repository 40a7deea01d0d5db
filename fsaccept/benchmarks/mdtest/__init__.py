"""mdtest: metadata rates (create, stat, read, remove)."""
