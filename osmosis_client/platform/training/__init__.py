"""Training runs: the training config, its wire models, submitting one, its metrics exported."""
