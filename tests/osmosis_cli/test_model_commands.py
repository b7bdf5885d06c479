"""``osmosis model`` and ``client.models`` (issue 37, the model group): every route on
respx, sync and async; the published envelopes and plain rows; better than published —
confirmation for deploy/undeploy, the quota named, a scope error never "not found"."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
import respx

from osmosis_client import AsyncClient, Client
from osmosis_client.errors import ConflictError, NotFoundError, PermissionDeniedError
from osmosis_client.platform.model_models import BaseModelDetail, LoraModelDetail
from tests.conftest import PLATFORM
from tests.osmosis_cli.conftest import Invoke

BASE = {
    "id": "bm_1",
    "model_name": "Qwen3.6-35B",
    "base_model": "Qwen/Qwen3.6-35B-A3B",
    "creator_name": "Osmosis",
    "created_at": "2026-11-01T10:00:00Z",
}
LORA = {
    "id": "lm_1",
    "model_name": "qwen-multiply-step-40",
    "base_model": "Qwen/Qwen3.6-35B-A3B",
    "training_run_name": "qwen-multiply-001",
    "checkpoint_step": 40,
    "reward": 0.8,
    "deployment_status": "active",
    "deployed_at": "2026-11-20T09:00:00Z",
    "deployed_by": "Ada",
    "created_at": "2026-11-19T09:00:00Z",
}


def page(key: str, items: list[dict[str, object]], more: bool = False, **extra: object) -> dict:
    return {
        key: items,
        "total_count": len(items) + (1 if more else 0),
        "has_more": more,
        "next_offset": len(items) if more else None,
        **extra,
    }


@pytest.fixture
def platform(monkeypatch: pytest.MonkeyPatch) -> respx.MockRouter:
    monkeypatch.setenv("OSMOSIS_TOKEN", "t")
    monkeypatch.setenv("OSMOSIS_WORKSPACE", "acme")
    with respx.mock(base_url=PLATFORM, assert_all_called=False) as router:
        router.get("/api/cli/models/base").respond(200, json=page("models", [BASE]))
        router.get("/api/cli/models/lora").respond(
            200, json=page("models", [LORA], active_deployments=1, max_active_deployments=2)
        )
        yield router


# ------------------------------------------------------------------ the SDK


@pytest.mark.parametrize("face", ["sync", "async"])
def test_get_falls_back_to_the_base_route_on_404_only(
    platform: respx.MockRouter, face: str
) -> None:
    platform.get("/api/cli/models/qwen-multiply-step-40").respond(200, json=LORA)
    platform.get("/api/cli/models/Qwen3.6-35B").respond(404, json={"error": "no such LoRA"})
    platform.get("/api/cli/models/base/Qwen3.6-35B").respond(200, json={**BASE, "parameters": 1})
    hf = platform.get("/api/cli/models/base/Qwen%2FQwen3.6-35B-A3B").respond(200, json=BASE)
    platform.get("/api/cli/models/secret").respond(403, json={"error": "not your workspace"})

    def calls(client: Client) -> list[object]:
        return [
            client.models.get(n)
            for n in ("qwen-multiply-step-40", "Qwen3.6-35B", "Qwen/Qwen3.6-35B-A3B")
        ]

    async def acalls(client: AsyncClient) -> list[object]:
        return [
            await client.models.get(n)
            for n in ("qwen-multiply-step-40", "Qwen3.6-35B", "Qwen/Qwen3.6-35B-A3B")
        ]

    if face == "sync":
        with Client(base_url=PLATFORM, token="t", workspace="acme", max_retries=0) as c:
            found = calls(c)
            with pytest.raises(PermissionDeniedError):  # never "not found"
                c.models.get("secret")
    else:

        async def go() -> list[object]:
            async with AsyncClient(
                base_url=PLATFORM, token="t", workspace="acme", max_retries=0
            ) as c:
                got = await acalls(c)
                with pytest.raises(PermissionDeniedError):
                    await c.models.get("secret")
                return got

        found = asyncio.run(go())
    lora, base, by_path = found
    assert isinstance(lora, LoraModelDetail) and lora.deployed and lora.has_deployment
    assert isinstance(base, BaseModelDetail) and base.parameters == 1
    assert isinstance(by_path, BaseModelDetail) and hf.called  # "/" encoded, base route only


def test_a_missing_model_is_not_found_and_a_quota_refusal_names_the_quota(
    platform: respx.MockRouter,
) -> None:
    platform.get("/api/cli/models/nope").respond(404, json={"error": "x"})
    platform.get("/api/cli/models/base/nope").respond(404, json={"error": "x"})
    platform.post("/api/cli/models/full/deploy").respond(
        409, json={"code": "DEPLOYMENT_LIMIT_REACHED", "message": "deployment limit reached"}
    )
    with Client(base_url=PLATFORM, token="t", workspace="acme", max_retries=0) as c:
        with pytest.raises(NotFoundError, match="model not found: nope"):
            c.models.get("nope")
        with pytest.raises(ConflictError) as refused:
            c.models.deploy("full")
    assert "1 of 2 inference deployments in use" in refused.value.message
    assert refused.value.data["max_active_deployments"] == 2


# ------------------------------------------------------------------ the CLI


def test_list_all_is_the_sectioned_envelope(invoke: Invoke, platform: respx.MockRouter) -> None:
    result = invoke("--json", "model", "list")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["schema_version"] == 1
    assert document["base_models"]["items"][0]["model_name"] == "Qwen3.6-35B"
    assert document["lora_models"]["items"][0]["deployment_status"] == "active"
    assert (document["active_deployments"], document["max_active_deployments"]) == (1, 2)
    assert document["workspace"] == {"name": "acme"}


def test_list_by_type_plain_rows_and_flags(invoke: Invoke, platform: respx.MockRouter) -> None:
    lora = invoke("--plain", "model", "list", "--type", "lora")
    assert lora.exit_code == 0, lora.stderr
    assert lora.stdout.splitlines() == [
        "qwen-multiply-step-40\tQwen/Qwen3.6-35B-A3B\tqwen-multiply-001\t40\t0.80\t"
        "2026-11-19 9:00 AM UTC\t[deployed]"
    ]
    items = invoke("--json", "model", "list", "--type", "base").items()
    assert [i["id"] for i in items] == ["bm_1"]
    wrong = invoke("model", "list", "--type", "LoRA")
    assert wrong.exit_code == 2 and "Type must be 'all', 'base', or 'lora'." in wrong.stderr
    both = invoke("model", "list", "--all", "--limit", "3")
    assert both.exit_code == 2 and "mutually exclusive" in both.stderr


def test_a_lora_without_inference_has_no_deployment_keys(
    invoke: Invoke, platform: respx.MockRouter
) -> None:
    bare = {k: v for k, v in LORA.items() if not k.startswith("deploy")}
    platform.get("/api/cli/models/lora").respond(200, json=page("models", [bare]))
    document = json.loads(invoke("--json", "model", "list").stdout)
    assert "deployment_status" not in document["lora_models"]["items"][0]
    assert "active_deployments" not in document


def test_info_prints_a_lora_and_a_base_model(invoke: Invoke, platform: respx.MockRouter) -> None:
    platform.get("/api/cli/models/qwen-multiply-step-40").respond(
        200, json={**LORA, "inference_model": "Qwen/Qwen3.6-35B-A3B:qwen-multiply-step-40"}
    )
    lora = invoke("--json", "model", "info", "qwen-multiply-step-40").data()
    assert lora["lora_model"]["inference_model"].endswith(":qwen-multiply-step-40")
    platform.get("/api/cli/models/base/Qwen%2FQwen3.6-35B-A3B").respond(
        200,
        json={
            **BASE,
            "parameters": 35_000_000_000,
            "context_window": 262_144,
            "inference_input_usd_per_million_tokens": 0.2,
            "inference_cached_input_usd_per_million_tokens": 0.015,
        },
    )
    plain = invoke("--plain", "model", "info", "Qwen/Qwen3.6-35B-A3B")
    assert plain.exit_code == 0, plain.stderr
    lines = plain.stdout.splitlines()
    assert "Parameters: 35B (35,000,000,000)" in lines
    assert "Context Window: 256K tokens (262,144)" in lines
    assert "  Input: $0.20 / 1M tokens" in lines and "  Cached Input: $0.0150 / 1M tokens" in lines
    assert "  Output: –" in lines
    platform.get("/api/cli/models/base/Qwen%2Fnone").respond(404, json={"error": "x"})
    missing = invoke("model", "info", "Qwen/none")
    assert missing.exit_code != 0 and "model not found: Qwen/none" in missing.stderr


def test_deploy_asks_first_and_says_what_the_platform_answered(
    invoke: Invoke, platform: respx.MockRouter
) -> None:
    route = platform.post("/api/cli/models/qwen-multiply-step-40/deploy").respond(
        200, json={"id": "lm_1", "model_name": "qwen-multiply-step-40", "status": "active"}
    )
    refused = invoke("model", "deploy", "qwen-multiply-step-40")  # no terminal, no --yes
    assert refused.exit_code != 0 and "--yes" in refused.stderr and not route.called
    done = invoke("--json", "model", "deploy", "qwen-multiply-step-40", "--yes")
    assert done.exit_code == 0, done.stderr
    assert done.resource()["status"] == "active"
    assert json.loads(route.calls.last.request.content) == {}
    stop = platform.post("/api/cli/models/qwen-multiply-step-40/undeploy").respond(
        200, json={"id": "lm_1", "model_name": "qwen-multiply-step-40", "status": "inactive"}
    )
    plain = invoke("--plain", "model", "undeploy", "qwen-multiply-step-40", "-y")
    assert plain.exit_code == 0 and stop.called
    assert "LoRA model undeployed: qwen-multiply-step-40" in plain.stdout


def test_a_deploy_over_the_quota_names_it(invoke: Invoke, platform: respx.MockRouter) -> None:
    platform.post("/api/cli/models/big/deploy").mock(
        return_value=httpx.Response(
            409, json={"code": "DEPLOYMENT_LIMIT_REACHED", "message": "deployment limit reached"}
        )
    )
    result = invoke("model", "deploy", "big", "--yes")
    assert result.exit_code != 0
    # what holds the quota, and the command that frees a slot
    assert "1 of 2 inference deployments in use: qwen-multiply-step-40" in result.stderr
    assert "`osmosis model undeploy qwen-multiply-step-40`" in result.stderr
