"""Property tests: loaders and the HTTP layer either succeed or raise our typed errors."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import httpx
import tomlkit
from hypothesis import HealthCheck, given, settings, strategies as st

from osmosis_client.errors import (
    APIStatusError,
    ConfigError,
    InvalidInputError,
    OsmosisError,
    ProtocolError,
)
from osmosis_client.platform._transport import decode_json, error_from_response
from osmosis_client.platform.eval.eval_config import parse_config
from osmosis_local_runner.run.execute.dataset import Dataset

KEYS = [
    "rollout",
    "entrypoint",
    "model_path",
    "dataset",
    "commit_sha",
    "branch",
    "limit",
    "n",
    "batch_size",
    "pass_threshold",
    "agent_workflow_timeout_s",
    "grader_timeout_s",
    "required",
    "seed",
    "base_url",
    "api_key_env",
    "dataset_file",
    "rollot",
    "N",
    "OSMOSIS_X",
    "MODE",
    "sampling",
]
SECTIONS = ["experiment", "evaluation", "env", "secrets", "local", "advanced", "experimnt", "extra"]
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.sampled_from(["demo", "main.py", "../x", "a/b", "openai/gpt", "abcdef1", "A_KEY"]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=3)
    ),
    max_leaves=6,
)
DOCS = st.dictionaries(
    st.sampled_from(SECTIONS),
    st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=6) | SCALARS,
    max_size=6,
)


def to_toml(doc: dict[str, Any]) -> str | None:
    def clean(value: Any) -> Any:
        if value is None:
            return "null"
        if isinstance(value, list):
            return [clean(v) for v in value]
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        return value

    try:
        return tomlkit.dumps(clean(doc))
    except Exception:
        return None


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(DOCS)
def test_eval_config_accepts_or_raises_config_error(tmp_path: Path, doc: dict[str, Any]) -> None:
    (tmp_path / "rollouts" / "demo").mkdir(parents=True, exist_ok=True)
    (tmp_path / "rollouts" / "demo" / "main.py").write_text("")
    text = to_toml(doc)
    if text is None:
        return
    try:
        parse_config(text, path=Path("f.toml"), root=tmp_path)
    except ConfigError as exc:
        assert exc.problems
        assert all(str(p).startswith("f.toml") for p in exc.problems)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_arbitrary_text_is_never_a_crash(text: str) -> None:
    with contextlib.suppress(ConfigError):
        parse_config(text, path=Path("f.toml"), root=Path("/nonexistent"))


ROW_VALUES = st.one_of(
    SCALARS,
    st.lists(SCALARS, max_size=2),
    st.dictionaries(st.text(max_size=5), SCALARS, max_size=2),
)
ROWS = st.one_of(
    st.dictionaries(
        st.sampled_from(["user_prompt", "system_prompt", "ground_truth", "x"]),
        ROW_VALUES,
        max_size=4,
    ),
    ROW_VALUES,
)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(st.one_of(ROWS.map(json.dumps), st.text(max_size=30)), min_size=0, max_size=6),
    st.sampled_from([".jsonl", ".json", ".csv"]),
)
def test_dataset_loader_accepts_or_raises_typed_errors(
    tmp_path: Path, lines: list[str], suffix: str
) -> None:
    path = tmp_path / f"d{suffix}"
    path.write_text("\n".join(lines) if suffix != ".json" else "[" + ",".join(lines) + "]")
    try:
        info = Dataset(path).validate()
    except (ConfigError, InvalidInputError):
        return
    rows = list(Dataset(path).rows())
    assert len(rows) == info.total_rows
    assert all(r.user_prompt.strip() for r in rows)


BODIES = st.one_of(
    st.binary(max_size=300),
    st.builds(
        lambda v: json.dumps(v).encode(),
        st.recursive(
            SCALARS.filter(lambda v: not (isinstance(v, float) and v != v)),
            lambda inner: (
                st.lists(inner, max_size=3)
                | st.dictionaries(
                    st.sampled_from(["code", "message", "error", "issues", "status", "key"]),
                    inner,
                    max_size=4,
                )
            ),
            max_leaves=8,
        ),
    ),
)


@settings(max_examples=400, deadline=None)
@given(st.integers(100, 599), BODIES, st.one_of(st.none(), st.text(max_size=20)))
def test_any_error_response_maps_to_the_hierarchy(
    status: int, body: bytes, retry_after: str | None
) -> None:
    headers = (
        {"Retry-After": retry_after}
        if retry_after and retry_after.isprintable() and retry_after.isascii()
        else {}
    )
    response = httpx.Response(status, content=body, headers=headers)
    error = error_from_response(response)
    assert isinstance(error, APIStatusError)
    assert error.status_code == status
    assert isinstance(error.message, str) and len(error.message) < 2000
    assert isinstance(error.to_dict(), dict)


@settings(max_examples=300, deadline=None)
@given(BODIES)
def test_any_success_body_decodes_or_is_a_protocol_error(body: bytes) -> None:
    with contextlib.suppress(ProtocolError):
        decode_json(httpx.Response(200, content=body))


@settings(max_examples=200, deadline=None)
@given(st.integers(200, 599), BODIES)
def test_client_calls_end_in_a_result_or_an_osmosis_error(status: int, body: bytes) -> None:
    import respx

    from osmosis_client import Client

    with respx.mock(base_url="https://p.test") as router:
        router.get("/api/cli/workspaces").respond(status, content=body)
        with (
            Client(base_url="https://p.test", token="t", sleep=lambda s: None) as client,
            contextlib.suppress(OsmosisError),
        ):
            client.workspaces.list()
