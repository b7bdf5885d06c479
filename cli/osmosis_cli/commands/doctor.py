"""``osmosis doctor``: what is installed, configured and reachable — the check a user or
their coding agent runs first (``osmosis --json doctor``). Lands with the published
command surface."""
