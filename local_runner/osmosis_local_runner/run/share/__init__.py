"""Where a run's results go besides its own files: the sinks (the platform, trackers),
the platform's import, a hosted run's outputs as a document."""
