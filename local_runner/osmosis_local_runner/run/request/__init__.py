"""What a run is asked for and what it is: the request, its settings and their fates,
flags over a config, the seed form's source, the spec."""
