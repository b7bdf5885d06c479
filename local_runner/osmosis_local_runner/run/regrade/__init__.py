"""Grading again and judging apart from a run: rescore, the rubric judge over a file,
and 0.2's `osmosis test`."""
