"""One folder per benchmark tool, each with the same files: ``parse.py`` (its output to a
typed run), ``command.py`` (reference entry to command line), ``validity.py`` (its INVALID
rules), ``schema.json`` (its reference entries). ``registry.py`` lists them all."""
