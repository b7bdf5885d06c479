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

from osmosis_client.platform import model_models, models
from osmosis_client.platform.benchmark import benchmark_models
from osmosis_client.platform.dataset import dataset_models
from osmosis_client.platform.eval import run_import, sample_models
from osmosis_client.platform.eval.eval_config import parse_config
from osmosis_client.platform.resources import secrets
from osmosis_client.platform.training import training_models
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
        ("/api/cli/datasets", "get"),
        ("/api/cli/datasets", "post"),
        ("/api/cli/datasets/{name_or_id}", "get"),
        ("/api/cli/datasets/{name_or_id}/complete", "post"),
        ("/api/cli/datasets/{name_or_id}/abort", "post"),
        ("/api/cli/datasets/{name_or_id}/download", "get"),
        ("/api/cli/datasets/{name_or_id}/logs", "get"),
        ("/api/cli/environment-secrets", "get"),
        ("/api/cli/environment-secrets", "post"),
        ("/api/cli/environment-secrets", "delete"),
        ("/api/cli/eval-runs/{name_or_id}/samples/manifest", "get"),
        ("/api/cli/eval-runs/{name_or_id}/samples/download-urls", "post"),
        ("/api/cli/eval-runs/{name_or_id}/retry", "post"),
        ("/api/cli/eval-runs/imports", "post"),
        ("/api/cli/eval-runs/imports/{session_id}/uploads", "post"),
        ("/api/cli/eval-runs/imports/{session_id}/uploads/complete", "post"),
        ("/api/cli/eval-runs/imports/{session_id}/finalize", "post"),
        ("/api/cli/models/base", "get"),
        ("/api/cli/models/lora", "get"),
        ("/api/cli/models/base/{name}", "get"),
        ("/api/cli/models/{name}", "get"),
        ("/api/cli/models/{name}/deploy", "post"),
        ("/api/cli/models/{name}/undeploy", "post"),
        ("/api/cli/training-runs", "get"),
        ("/api/cli/training-runs", "post"),
        ("/api/cli/benchmarks", "get"),
        ("/api/cli/benchmarks/{key}", "get"),
        ("/api/cli/benchmark-runs", "get"),
        ("/api/cli/benchmark-runs", "post"),
        ("/api/cli/benchmark-runs/{name_or_id}", "get"),
        ("/api/cli/benchmark-runs/{name_or_id}/logs", "get"),
        ("/api/cli/benchmark-runs/{name_or_id}/stop", "post"),
        ("/api/cli/benchmark-runs/{name_or_id}/outputs/manifest", "get"),
        ("/api/cli/benchmark-runs/{name_or_id}/outputs/download-urls", "post"),
        ("/api/cli/training-runs/{name_or_id}", "get"),
        ("/api/cli/training-runs/{name_or_id}/checkpoints", "get"),
        ("/api/cli/training-runs/{name_or_id}/metrics", "get"),
        ("/api/cli/training-runs/{name_or_id}/logs", "get"),
        ("/api/cli/training-runs/{name_or_id}/stop", "post"),
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
    (dataset_models.PresignedPart, "PresignedPart"),
    (dataset_models.UploadInstructions, "UploadInstructions"),
    (dataset_models.Dataset, "Dataset"),
    (dataset_models.DatasetPage, "DatasetPage"),
    (dataset_models.DatasetDownload, "DatasetDownload"),
    (secrets.Secret, "Secret"),
    (secrets.SecretPage, "SecretPage"),
    (sample_models.SampleFile, "SampleFile"),
    (sample_models.SamplesManifest, "SamplesManifest"),
    (sample_models.SampleURL, "SampleURL"),
    (sample_models.SampleURLs, "SampleURLs"),
    (sample_models.RetriedRun, "RetriedRun"),
    (run_import.ImportedFile, "ImportedFile"),
    (run_import.ImportSession, "ImportSession"),
    (run_import.PendingUpload, "PendingUpload"),
    (run_import.PendingUploads, "PendingUploads"),
    (model_models.BaseModelInfo, "BaseModelInfo"),
    (model_models.BaseModelDetail, "BaseModelDetail"),
    (model_models.LoraModel, "LoraModel"),
    (model_models.LoraModelDetail, "LoraModelDetail"),
    (model_models.BaseModelPage, "BaseModelPage"),
    (model_models.LoraModelPage, "LoraModelPage"),
    (model_models.Deployment, "Deployment"),
    (training_models.Named, "Named"),
    (training_models.TrainingRun, "TrainingRun"),
    (training_models.TrainingRunPage, "TrainingRunPage"),
    (training_models.TrainingRunDetail, "TrainingRunDetail"),
    (training_models.Checkpoint, "Checkpoint"),
    (training_models.Checkpoints, "Checkpoints"),
    (training_models.TrainingMetrics, "TrainingMetrics"),
    (benchmark_models.TaskSet, "TaskSet"),
    (benchmark_models.Benchmark, "Benchmark"),
    (benchmark_models.BenchmarkPage, "BenchmarkPage"),
    (benchmark_models.BenchmarkInfo, "BenchmarkInfo"),
    (benchmark_models.BenchmarkDetail, "BenchmarkDetail"),
    (benchmark_models.BenchmarkRun, "BenchmarkRun"),
    (benchmark_models.BenchmarkRunPage, "BenchmarkRunPage"),
    (benchmark_models.BenchmarkRunDetail, "BenchmarkRunDetail"),
    (benchmark_models.CreatedBenchmarkRun, "CreatedBenchmarkRun"),
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


def test_benchmark_payloads_match_the_submit_schema() -> None:
    from osmosis_client.platform.benchmark.benchmark_config import parse_benchmark_config

    text = (
        '[experiment]\nbenchmark = "tb"\n[tasks]\ntask_set = "parity"\n[execution]\n'
        'attempts_per_task = 2\njudge_api_key_secret = "J"\n[verifier]\nrequired = ["V"]\n'
        '[secrets]\nrequired = ["S"]\n[env]\nMODE = "x"\n[[agents]]\nharness = "codex"\n'
        '[agents.model]\ntype = "hosted"\nbase_model = "b"\nlora_model_name = "l"\n'
    )
    config = parse_benchmark_config(text, path=Path("b.toml"))
    check(config.to_submit_payload(), "BenchmarkSubmit")


def test_training_payloads_match_the_submit_schema(tmp_path: Path) -> None:
    from osmosis_client.platform.training.training_config import parse_training_config

    (tmp_path / "rollouts" / "demo").mkdir(parents=True)
    (tmp_path / "rollouts" / "demo" / "main.py").write_text("")
    text = (
        '[experiment]\nrollout = "demo"\nentrypoint = "main.py"\nmodel_path = "m"\n'
        'dataset = "d"\n[training]\nlr = 1e-5\ntotal_epochs = 2\n[sampling]\n'
        'rollout_top_p = 1\n[checkpoints]\neval_interval = 10\n[env]\nMODE = "x"\n'
        '[secrets]\nrequired = ["KEY"]\n[advanced]\nfoo = 1\n'
    )
    config = parse_training_config(text, path=Path("c.toml"), root=tmp_path)
    check(config.to_submit_payload("b" * 40), "TrainingSubmit")
    bare = parse_training_config(text.split("[training]")[0], path=Path("c.toml"), root=tmp_path)
    assert bare.to_submit_payload(None) == {
        "experiment_config": {
            "rollout": "demo",
            "entrypoint": "main.py",
            "model_path": "m",
            "dataset": "d",
        }
    }
    check(bare.to_submit_payload(None), "TrainingSubmit")


def test_double_answers_of_the_hosted_workflow_match_the_schemas(double: PlatformDouble) -> None:
    import hashlib

    row = b'{"user_prompt":"q","ground_truth":"2"}\n'
    create = {"file_name": "qa", "file_size": len(row), "extension": "jsonl"}
    check(create, "DatasetCreate")
    status, made = double.route("POST", "/api/cli/datasets", AUTH, create)
    assert status == 201
    check(made, "Dataset")
    double.hosted.put(f"datasets/{made['id']}", row)
    check({"file_extension": "jsonl"}, "DatasetComplete")
    assert (
        double.route(
            "POST", f"/api/cli/datasets/{made['id']}/complete", AUTH, {"file_extension": "jsonl"}
        )[0]
        == 200
    )
    check(double.route("GET", "/api/cli/datasets?limit=2", AUTH, None)[1], "DatasetPage")
    link = double.route("GET", "/api/cli/datasets/qa/download", AUTH, None)[1]
    dataset_models.DatasetDownload.model_validate(link)  # camelCase, as the platform sends
    check(double.route("GET", "/api/cli/datasets/qa/logs?limit=5", AUTH, None)[1], "LogPage")
    secret = {"name": "KEY", "value": "v", "scope": "user"}
    check(secret, "SecretSet")
    check(double.route("POST", "/api/cli/environment-secrets", AUTH, secret)[1], "Secret")
    check(
        double.route("GET", "/api/cli/environment-secrets?scope=all", AUTH, None)[1], "SecretPage"
    )
    check({"name": "KEY", "scope": "user"}, "SecretDelete")
    double.state.pending_s = double.state.running_s = 0.0
    run_id = double.route(
        "POST",
        "/api/cli/eval-runs",
        {**AUTH, "Idempotency-Key": "h"},
        {**CREATE, "experiment_config": {**CREATE["experiment_config"], "dataset": "qa"}},
    )[1]["id"]
    manifest = double.route(
        "GET", f"/api/cli/eval-runs/{run_id}/samples/manifest?types=metrics", AUTH, None
    )[1]
    check(manifest, "SamplesManifest")
    urls = double.route(
        "POST",
        f"/api/cli/eval-runs/{run_id}/samples/download-urls",
        AUTH,
        {"items": [{"path": "metrics.json"}]},
    )[1]
    sample_models.SampleURLs.model_validate(urls)
    check(double.route("POST", f"/api/cli/eval-runs/{run_id}/retry", AUTH, {})[1], "RetriedRun")
    data = b"{}"
    body = {
        "schema_version": 1,
        "local_run_id": "a" * 32,
        "manifest_digest": "d",
        "run": {"name": "x"},
        "files": [{"path": "index.jsonl", "size": 2, "sha256": hashlib.sha256(data).hexdigest()}],
        "reimport": False,
    }
    check(body, "ImportCreate")
    session = double.route("POST", "/api/cli/eval-runs/imports", AUTH, body)[1]
    check(session, "ImportSession")
    sid = session["session_id"]
    pending = double.route(
        "POST", f"/api/cli/eval-runs/imports/{sid}/uploads", AUTH, {"paths": ["index.jsonl"]}
    )[1]
    check(pending, "PendingUploads")
    double.hosted.put(f"imports/{sid}/index.jsonl", data)
    check(
        double.route("POST", f"/api/cli/eval-runs/imports/{sid}/finalize", AUTH, {})[1],
        "ImportSession",
    )


def test_double_answers_of_training_and_benchmarks_match_the_schemas(
    double: PlatformDouble,
) -> None:
    double.training.pending_s = double.training.running_s = 0.0
    double.benchmarks.pending_s = double.benchmarks.running_s = 0.0
    body = {
        "experiment_config": {
            "rollout": "r",
            "entrypoint": "m.py",
            "model_path": "m",
            "dataset": "d",
        },
        "training_config": {"lr": 1e-5},
    }
    check(body, "TrainingSubmit")
    status, created = double.route("POST", "/api/cli/training-runs", AUTH, body)
    assert status == 201
    check(created, "CreatedRun")
    name, run_id = created["name"], created["id"]
    check(double.route("GET", "/api/cli/training-runs", AUTH, None)[1], "TrainingRunPage")
    check(double.route("GET", f"/api/cli/training-runs/{name}", AUTH, None)[1], "TrainingRunDetail")
    check(
        double.route("GET", f"/api/cli/training-runs/{name}/checkpoints", AUTH, None)[1],
        "Checkpoints",
    )
    check(
        double.route("GET", f"/api/cli/training-runs/{run_id}/metrics", AUTH, None)[1],
        "TrainingMetrics",
    )
    check(double.route("GET", "/api/cli/benchmarks", AUTH, None)[1], "BenchmarkPage")
    check(
        double.route("GET", "/api/cli/benchmarks/terminal-bench-2-1", AUTH, None)[1],
        "BenchmarkDetail",
    )
    submit = {
        "experiment_config": {"benchmark": "terminal-bench-2-1"},
        "agents": [
            {"env": {}, "model": {"type": "hosted", "base_model": "b", "lora_model_name": "l"}}
        ],
    }
    check(submit, "BenchmarkSubmit")
    status, run = double.route("POST", "/api/cli/benchmark-runs", AUTH, submit)
    assert status == 201
    check(run, "CreatedBenchmarkRun")
    check(double.route("GET", "/api/cli/benchmark-runs", AUTH, None)[1], "BenchmarkRunPage")
    check(
        double.route("GET", f"/api/cli/benchmark-runs/{run['name']}", AUTH, None)[1],
        "BenchmarkRunDetail",
    )
    manifest = double.route(
        "GET",
        f"/api/cli/benchmark-runs/{run['id']}/outputs/manifest?types=summary,results",
        AUTH,
        None,
    )[1]
    check(manifest, "SamplesManifest")
    urls = double.route(
        "POST",
        f"/api/cli/benchmark-runs/{run['id']}/outputs/download-urls",
        AUTH,
        {"items": [{"path": f["path"]} for f in manifest["files"]]},
    )[1]
    # sent under the alternate keys 0.3.8 accepts (items, presignedUrl): the SDK reads them
    assert len(sample_models.SampleURLs.model_validate(urls).urls) == len(manifest["files"])
