"""A suite: its entries run as ordinary runs, their settings and where they go."""
