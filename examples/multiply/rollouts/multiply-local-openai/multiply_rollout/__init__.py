"""The multiply rollout's pieces: the tool, the workflow, the grader."""
