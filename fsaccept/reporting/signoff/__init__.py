"""The sign-off's re-judging of each test case's recorded evidence, one module per owner:
the rules every test shares (``common``), each benchmark's, each fio kind's and each
condition's; :mod:`fsaccept.reporting.evidence` runs them, by one table."""
