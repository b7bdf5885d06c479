"""Server mode: rollouts written for the published ``osmosis-ai`` 0.3 SDK (an
``AgentWorkflow`` + ``Grader`` behind ``create_rollout_server``), run the way the
platform runs them — the user's rollout server in the rollout's own environment,
driven over HTTP (rollout-protocol.md part B). Nothing here imports user code.

- :mod:`.detect`: which mode a rollout runs in, and why (a static look, never an import);
- :mod:`.environment`: the rollout's Python (``--rollout-python``, ``uv``, ``.venv``),
  synced and checked;
- :mod:`.process`: the server process — start, readiness, output log, stop, orphans;
- :mod:`.protocol`: the rollout server's routes, the request built from a dataset row,
  and the conversation read back from ``trajectory.json``;
- :mod:`.bridge`: the loopback LLM endpoint the rollouts call, forwarding to the
  run's :class:`~osmosis_client.llm.client.ModelClient`.

The controller that ties them together is the ``server`` rollout kind
(:mod:`osmosis_local_runner.run.kinds.server`).
"""
