"""Hosted runs at the terminal: submit, list, info, logs, stop, download, retry, upload."""
