"""The installed ``osmosis model`` against the loopback platform (issue 37): list both
kinds, look a LoRA and a base model up, deploy one LoRA, hit the quota with a second
(named in the error), undeploy, and deploy the second."""

from __future__ import annotations

import json

import pytest

from tests import envelopes
from tests.e2e.conftest import Run
from tests.e2e.platform_double import PlatformDouble

pytestmark = pytest.mark.slow


def test_models_listed_looked_up_deployed_and_the_quota_hit_once(
    run_osmosis: Run, platform: PlatformDouble
) -> None:
    env = {"OSMOSIS_TOKEN": platform.state.token, "OSMOSIS_WORKSPACE": "acme"}
    listed = run_osmosis("--json", "model", "list", "--limit", "1", extra_env=env)
    assert listed.returncode == 0, listed.stderr
    document = json.loads(listed.stdout)  # the sectioned document (published §3.2)
    assert document["base_models"]["has_more"] is True  # one per page, two models
    assert document["max_active_deployments"] == 1
    every = json.loads(run_osmosis("--json", "model", "list", "--all", extra_env=env).stdout)
    assert len(every["base_models"]["items"]) == 2 and len(every["lora_models"]["items"]) == 2

    base = run_osmosis("--plain", "model", "info", "Qwen/Qwen3.6-35B-A3B", extra_env=env)
    assert "Context Window: 256K tokens (262,144)" in base.stdout, base.stderr
    by_name = run_osmosis("--json", "model", "info", "Llama-4-8B", extra_env=env)  # LoRA 404 → base
    assert envelopes.data(by_name.stdout)["base_model"]["id"] == "bm_2"

    first = run_osmosis("--json", "model", "deploy", "step-40", "--yes", extra_env=env)
    assert envelopes.stdout_document(first.stdout)["resource"]["status"] == "active"
    again = run_osmosis("--json", "model", "deploy", "step-40", "--yes", extra_env=env)
    assert again.returncode == 0  # idempotent
    over = run_osmosis("model", "deploy", "step-80", "--yes", extra_env=env)
    assert over.returncode != 0
    assert "1 of 1 inference deployments in use" in over.stderr
    assert "Traceback" not in over.stderr and platform.state.token not in over.stderr
    assert run_osmosis("model", "undeploy", "step-40", "-y", extra_env=env).returncode == 0
    second = run_osmosis("--json", "model", "deploy", "step-80", "--yes", extra_env=env)
    assert second.returncode == 0, second.stderr
    shown = run_osmosis("--plain", "model", "info", "step-80", extra_env=env)
    assert "  Status: Deployed" in shown.stdout
    unasked = run_osmosis("model", "undeploy", "step-80", extra_env=env)  # no terminal, no -y
    assert unasked.returncode == 2 and "--yes" in unasked.stderr
