"""One folder per benchmark tool, each with the same files: ``spec.py`` (the tool and its
tests, declared once), ``parse.py`` (its output to a typed run), ``command.py`` (reference
entry to command line), ``validity.py`` (its INVALID rules), ``schema.json`` (its reference
entries). ``registry.py`` gathers them all."""
