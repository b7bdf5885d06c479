"""Logging in and keeping credentials: the device flow, tokens per workspace in the
keyring or a private file."""
