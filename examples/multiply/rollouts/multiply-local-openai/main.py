"""The multiply rollout on the OpenAI Agents integration of the osmosis-ai 0.3 SDK: an
agent with a multiply tool, graded on the '#### <product>' line it ends with.

    osmosis eval run configs/eval/multiply-local-openai.toml          # a real model
    osmosis eval run configs/eval/multiply-local-openai.toml --model mock/tool-calculator

The platform (and `osmosis eval run`) starts this file as a rollout server.
"""

from __future__ import annotations

import os

import uvicorn
from multiply_rollout.grader import ProductGrader
from multiply_rollout.workflow import MultiplyWorkflow, workflow_config
from osmosis_ai.rollout.backend.local import LocalBackend
from osmosis_ai.rollout.server import create_rollout_server


def main() -> None:
    backend = LocalBackend(
        workflow=MultiplyWorkflow, workflow_config=workflow_config, grader=ProductGrader
    )
    app = create_rollout_server(backend=backend)
    port = int(os.environ.get("_OSMOSIS_ROLLOUT_PORT", "8000"))
    uvicorn.run(app, host="127.0.0.1", port=port)


if __name__ == "__main__":
    main()
