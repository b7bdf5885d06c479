"""The installed `osmosis` over a network that behaves like a real one: a model endpoint
and the platform behind TLS with a private CA, chunked, gzipped, in small delayed pieces
(tests/realwire.py in front of the independent doubles)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import envelopes
from tests.e2e.conftest import Run, osmosis_command
from tests.e2e.model_double import ModelDouble
from tests.e2e.platform_double import PlatformDouble
from tests.gitrepo import make_project
from tests.realwire import Proxy, Wire, private_ca

pytestmark = pytest.mark.slow

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "quickstart"
WIRE = Wire(piece=1448, delay=0.001, chunked=True, encoding="gzip")


@pytest.fixture
def gateway(tmp_path: Path) -> Iterator[tuple[Proxy, Path, ModelDouble]]:
    """A model endpoint behind a TLS gateway with a private CA: (proxy, CA file, model)."""
    server_tls, pem = private_ca(tmp_path)
    with ModelDouble(pad=3000) as model, Proxy(model.url, WIRE, tls=server_tls) as proxy:
        yield proxy, pem, model


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    target = tmp_path / "ws"
    shutil.copytree(EXAMPLE, target)
    return target


def local_run(
    workspace: Path, url: str, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    import os

    base = {k: v for k, v in os.environ.items() if not k.startswith(("OSMOSIS_", "SSL_CERT"))} | {
        "OSMOSIS_WARM": "0"
    }
    base["OSMOSIS_CONFIG_DIR"] = str(workspace / ".cfg")
    return subprocess.run(
        [
            *osmosis_command(),
            "eval",
            "run",
            "configs/eval/quickstart.toml",
            "--model",
            "Qwen/Qwen3-8B",
            "--base-url",
            url,
            "--limit",
            "6",
            "--n",
            "2",
            "--json",
            *args,
        ],
        cwd=workspace,
        capture_output=True,
        text=True,
        env={**base, **(env or {})},
        timeout=120,
        check=False,
    )


def test_eval_run_through_a_tls_gateway_with_its_ca_bundle(
    gateway: tuple[Proxy, Path, ModelDouble], workspace: Path
) -> None:
    proxy, pem, model = gateway
    result = local_run(workspace, proxy.url, "--ca-bundle", str(pem))
    assert result.returncode == 0, result.stderr
    document = envelopes.resource(result.stdout)
    assert document["summary"]["errored_runs"] == 0
    assert document["summary"]["eval_fns"]["grader"]["mean"] == 1.0
    assert len(model.requests) >= 12  # every attempt crossed the gateway


def test_eval_run_trusts_ssl_cert_file(
    gateway: tuple[Proxy, Path, ModelDouble], workspace: Path
) -> None:
    proxy, pem, _ = gateway
    result = local_run(workspace, proxy.url, env={"SSL_CERT_FILE": str(pem)})
    assert result.returncode == 0, result.stderr
    assert envelopes.resource(result.stdout)["summary"]["eval_fns"]["grader"]["mean"] == 1.0


def test_an_untrusted_gateway_is_one_clear_error_before_any_attempt(
    gateway: tuple[Proxy, Path, ModelDouble], workspace: Path
) -> None:
    proxy, _, model = gateway
    result = local_run(workspace, proxy.url)
    assert result.returncode != 0
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert "Traceback" not in result.stderr
    error = json.loads(lines[-1])["error"]
    assert "not trusted" in error["message"] and error["reason"] == "TLS_CERTIFICATE"
    assert error["code"] == "NETWORK"
    assert "--ca-bundle" in error["hint"]
    assert proxy.requests == 0 and model.requests == []  # refused at the handshake, never sent


def test_the_platform_through_a_tls_gateway(
    run_osmosis: Run, platform: PlatformDouble, tmp_path: Path
) -> None:
    server_tls, pem = private_ca(tmp_path)
    project = make_project(tmp_path / "repo")
    wire = Wire(piece=97, delay=0.001, chunked=True, encoding="gzip")
    with Proxy(platform.url, wire, tls=server_tls) as proxy:
        env = {"OSMOSIS_PLATFORM_URL": proxy.url, "OSMOSIS_CA_BUNDLE": str(pem)}
        refused = run_osmosis(
            "login", "--workspace", "acme", extra_env={"OSMOSIS_PLATFORM_URL": proxy.url}
        )
        assert refused.returncode != 0 and proxy.requests == 0  # no retries: it cannot help
        assert "presented a certificate that is not trusted" in refused.stderr
        assert "OSMOSIS_CA_BUNDLE" in refused.stderr and "Traceback" not in refused.stderr

        login = run_osmosis("login", "--workspace", "acme", extra_env=env)
        assert login.returncode == 0, login.stderr
        submit = run_osmosis(
            "eval",
            "submit",
            str(project / "configs" / "eval" / "demo.toml"),
            "--yes",
            "--wait",
            "--json",
            extra_env=env,
            timeout=60,
        )
        assert submit.returncode == 0, submit.stderr
        assert envelopes.resource(submit.stdout)["status"] == "finished"
        listed = run_osmosis("eval", "list", "--json", extra_env=env)
        assert listed.returncode == 0, listed.stderr
        assert envelopes.items(listed.stdout)
        cert_file = run_osmosis(
            "whoami",
            "--json",
            extra_env={"OSMOSIS_PLATFORM_URL": proxy.url, "SSL_CERT_FILE": str(pem)},
        )
        assert cert_file.returncode == 0, cert_file.stderr
    assert proxy.reused > 0 or proxy.connections > 0
