"""Fuzzing support: field maps and the load property (structure.py), the atheris harness
(fuzz_load.py) and its runner (run.py). See tests/corpus/README.md."""
