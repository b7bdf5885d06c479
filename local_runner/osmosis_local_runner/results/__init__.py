"""The results document and everything that reads it back: records, the document,
pass@k and summary statistics, paired comparison statistics, ``eval compare``, the
HTML report, JUnit and Markdown summaries, suite documents — in rooms by subject:
``documents/``, ``statistics/``, ``compare/``, ``reviews/``, ``reports/``.

Imports nothing of ``run`` or ``server``: showing a results file never depends on how
runs execute.
"""
