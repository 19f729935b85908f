"""Package data of the substitution generators: word tables, read by the modules that use
them (``inflection_*.tsv``: :mod:`brittle.search.generators.inflection`)."""
