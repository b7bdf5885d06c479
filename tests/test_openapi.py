"""docs/openapi.yaml is valid, and the SDK's models and the loopback double agree with it."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate
from pydantic import BaseModel

from osmosis_client.platform import models
from osmosis_client.platform.eval_config import parse_config
from tests.e2e.platform_double import PlatformDouble
from tests.osmosis_client.platform.test_eval_runs import PAYLOAD

SPEC_PATH = Path(__file__).resolve().parents[1] / "docs" / "openapi.yaml"


@cache
def spec() -> dict[str, Any]:
    return yaml.safe_load(SPEC_PATH.read_text())  # type: ignore[no-any-return]


def check(payload: Any, schema: str) -> None:
    root = {"$ref": f"#/components/schemas/{schema}", "components": spec()["components"]}
    errors = sorted(Draft202012Validator(root).iter_errors(payload), key=str)
    assert not errors, [e.message for e in errors]


def test_spec_is_valid_openapi_3_1() -> None:
    assert spec()["openapi"] == "3.1.0"
    validate(spec())


def test_every_contract_route_is_described() -> None:
    routes = {(path, method) for path, item in spec()["paths"].items() for method in item}
    assert routes == {
        ("/api/cli/device/authorize", "post"),
        ("/api/cli/device/token", "post"),
        ("/api/cli/verify", "get"),
        ("/api/cli/tokens/{token_id}", "delete"),
        ("/api/cli/workspaces", "get"),
        ("/api/cli/eval-runs", "post"),
        ("/api/cli/eval-runs", "get"),
        ("/api/cli/eval-runs/{name_or_id}", "get"),
        ("/api/cli/eval-runs/{name_or_id}/metrics", "get"),
        ("/api/cli/eval-runs/{name_or_id}/logs", "get"),
        ("/api/cli/eval-runs/{name_or_id}/stop", "post"),
        ("/api/cli/rollout-server/register", "post"),
        ("/api/cli/rollouts", "get"),
    }


MODEL_SCHEMAS: list[tuple[type[BaseModel], str]] = [
    (models.User, "User"),
    (models.Workspace, "Workspace"),
    (models.WorkspaceList, "WorkspaceList"),
    (models.DeviceAuthorization, "DeviceAuthorization"),
    (models.TokenGrant, "TokenGrant"),
    (models.VerifyResult, "VerifyResult"),
    (models.CreatedRun, "CreatedRun"),
    (models._RunCore, "RunCore"),
    (models._Detail, "RunDetail"),
    (models.EvalResults, "Results"),
    (models.RewardStats, "RewardStats"),
    (models.RunConfig, "RunConfig"),
    (models.RunMetrics, "RunMetrics"),
    (models._RawPage, "EvalRunPage"),
    (models.RegisteredServer, "RegisteredServer"),
    (models.LogEntry, "LogEntry"),
    (models.LogPage, "LogPage"),
    (models.RolloutInfo, "RolloutInfo"),
    (models.RolloutPage, "RolloutPage"),
]


@pytest.mark.parametrize(("model", "name"), MODEL_SCHEMAS, ids=[n for _, n in MODEL_SCHEMAS])
def test_sdk_models_match_the_schemas(model: type[BaseModel], name: str) -> None:
    schema = spec()["components"]["schemas"][name]
    properties = set(schema.get("properties", {}))
    fields = set(model.model_fields)
    required = {n for n, f in model.model_fields.items() if f.is_required()}
    assert properties == fields, properties ^ fields
    assert required == set(schema.get("required", []))


def test_row_schema_matches_row_model() -> None:
    row = spec()["components"]["schemas"]["RunRow"]["allOf"][1]["properties"]
    assert set(row) | {
        "id",
        "name",
        "status",
        "created_at",
        "started_at",
        "completed_at",
        "creator_name",
        "creator_email",
        "platform_url",
    } == set(models._Row.model_fields)


@pytest.fixture(scope="module")
def double() -> Any:
    d = PlatformDouble()
    yield d
    d.server.server_close()


AUTH = {"Authorization": "Bearer tok-e2e-secret-7f3a", "X-Osmosis-Workspace": "acme"}
CREATE = {**PAYLOAD, "evaluation_config": {"n": 2}}


def test_double_answers_match_the_schemas(double: PlatformDouble) -> None:
    double.state.pending_s = 0.0
    double.state.running_s = 0.0
    check(
        double.route("POST", "/api/cli/device/authorize", {}, {"deviceName": "x"})[1],
        "DeviceAuthorization",
    )
    check(
        double.route("POST", "/api/cli/device/token", {}, {"device_code": "d"})[1],
        "DeviceTokenPending",
    )
    double.state.polls = 99
    check(double.route("POST", "/api/cli/device/token", {}, {"device_code": "d"})[1], "TokenGrant")
    check(double.route("GET", "/api/cli/verify", AUTH, None)[1], "VerifyResult")
    check(double.route("GET", "/api/cli/workspaces", AUTH, None)[1], "WorkspaceList")
    check(double.route("GET", "/api/cli/rollouts?limit=2", AUTH, None)[1], "RolloutPage")
    check(CREATE, "EvalRunCreate")
    status, created = double.route(
        "POST", "/api/cli/eval-runs", {**AUTH, "Idempotency-Key": "k"}, CREATE
    )
    assert status == 201
    check(created, "CreatedRun")
    check(double.route("GET", "/api/cli/eval-runs?limit=50&offset=0", AUTH, None)[1], "EvalRunPage")
    check(double.route("GET", f"/api/cli/eval-runs/{created['name']}", AUTH, None)[1], "RunDetail")
    check(
        double.route("GET", f"/api/cli/eval-runs/{created['id']}/metrics", AUTH, None)[1],
        "RunMetrics",
    )
    logs = double.route("GET", f"/api/cli/eval-runs/{created['id']}/logs?limit=2", AUTH, None)
    assert logs[0] == 200 and logs[1]["logs"]
    check(logs[1], "LogPage")
    check(double.route("POST", f"/api/cli/eval-runs/{created['id']}/stop", AUTH, {})[1], "Error")
    check(double.route("GET", "/api/cli/eval-runs/nope", AUTH, None)[1], "Error")
    register = {"host": "127.0.0.1", "port": 9, "agent_loop_name": "calculator"}
    check(register, "RolloutServerRegister")
    check(
        double.route("POST", "/api/cli/rollout-server/register", AUTH, register)[1],
        "RegisteredServer",
    )


def test_submit_payloads_match_the_create_schema(tmp_path: Path) -> None:
    (tmp_path / "rollouts" / "demo").mkdir(parents=True)
    (tmp_path / "rollouts" / "demo" / "main.py").write_text("")
    text = (
        '[experiment]\nrollout = "demo"\nentrypoint = "main.py"\nmodel_path = "m"\ndataset = "d"\n'
        '[evaluation]\nlimit = 5\npass_threshold = 0.5\n[env]\nMODE = "x"\n'
        '[secrets]\nrequired = ["KEY"]\n[advanced]\nfoo = 1\n'
    )
    config = parse_config(text, path=Path("c.toml"), root=tmp_path)
    check(config.to_submit_payload("b" * 40), "EvalRunCreate")
    bare = parse_config(text.split("[evaluation]")[0], path=Path("c.toml"), root=tmp_path)
    check(bare.to_submit_payload("b" * 40), "EvalRunCreate")
