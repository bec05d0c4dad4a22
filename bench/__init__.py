"""Benchmarks: the engine against the usual way of capturing attention (run with `make bench`)."""
