"""The local runner: executes eval configs offline with the platform's semantics."""
