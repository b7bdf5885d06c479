"""A named run's life on disk: the session that opens, checks, resumes, executes and
finishes it, its directory, journal, top-ups and partial results."""
