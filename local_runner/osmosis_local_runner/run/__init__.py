"""Executing a run: a spec from flags and configs, the dataset, user code, the rollout
kinds, the sliding window, grading, the journal — and runs of runs (suites), runs
without a model (rescore) and an LLM judge over a file (rubric) — in rooms by subject:
``request/``, ``session/``, ``execute/``, ``kinds/``, ``suite/``, ``watch/``, ``share/``,
``regrade/``.

Imports ``results`` (to write and read documents) and ``server`` (published rollout
servers); neither imports this room.
"""
