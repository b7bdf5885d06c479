"""``python -m osmosis_cli``: the CLI, whichever ``osmosis`` is first on PATH."""

from osmosis_cli.main import main

main()
