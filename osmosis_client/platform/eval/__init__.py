"""Hosted eval runs: the eval config and suites, submitting them pinned to a commit, a
run's samples fetched, a local run imported."""
