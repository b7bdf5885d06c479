"""The ``osmosis`` command line: parse, call the SDK, render. Presentation only."""
