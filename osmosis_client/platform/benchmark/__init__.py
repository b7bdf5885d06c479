"""Benchmarks and their runs: the benchmark config and its rules, a starter, submitting
one, its outputs fetched."""
