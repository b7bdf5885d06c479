"""A training's checkpoints as one series: found on disk and made the served model."""
