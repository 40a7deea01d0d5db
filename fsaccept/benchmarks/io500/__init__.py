"""IO500: the site's own io500 binary, its results read and judged (never built here)."""
