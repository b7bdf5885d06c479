"""Executing a run: the runner, its sliding window, model clients and calls, costs, the
cache, the stops, user code, grading and the records it writes."""
