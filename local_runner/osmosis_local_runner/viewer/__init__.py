"""``osmosis eval view``: a local, read-only viewer of a project's runs.

It serves the same pages ``eval report`` writes (one codebase: ``results/reports/report.py``), a
home listing every run (``api/history.py``) that updates live, and a JSON feed of it. The
server is aiohttp's (already our model-call client's dependency): nothing hand-written
speaks HTTP. Access needs the random token printed with the URL, as Jupyter's does.
"""
