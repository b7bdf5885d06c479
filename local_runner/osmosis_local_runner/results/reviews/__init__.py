"""People's review of a run and the grader checked against them."""
