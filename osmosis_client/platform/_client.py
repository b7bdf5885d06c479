"""``Client`` and ``AsyncClient``: thin faces over the shared :class:`Transport`.

    with Client(token="…", workspace="acme") as client:
        client.workspaces.list()

Everything about a request — headers, scope, retries, error mapping — lives in
``_transport.py``; the faces only send bytes and sleep.
"""

from __future__ import annotations

import asyncio
import os
import ssl
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypedDict, TypeVar

import httpx
from pydantic import SecretStr
from typing_extensions import Unpack

from osmosis_client._plan import drive_async, drive_sync
from osmosis_client._retry import RetryPolicy
from osmosis_client._tls import ssl_context
from osmosis_client.platform._answers import Body, decode_json
from osmosis_client.platform._transport import DEFAULT_TIMEOUT, Transport
from osmosis_client.platform.resources._base import Call
from osmosis_client.platform.resources.auth import AsyncAuth, Auth
from osmosis_client.platform.resources.benchmark_runs import AsyncBenchmarkRuns, BenchmarkRuns
from osmosis_client.platform.resources.benchmarks import AsyncBenchmarks, Benchmarks
from osmosis_client.platform.resources.datasets import AsyncDatasets, Datasets
from osmosis_client.platform.resources.eval_runs import AsyncEvalRuns, EvalRuns
from osmosis_client.platform.resources.models import AsyncModels, Models
from osmosis_client.platform.resources.rollout_servers import AsyncRolloutServers, RolloutServers
from osmosis_client.platform.resources.rollouts import AsyncRollouts, Rollouts
from osmosis_client.platform.resources.secrets import AsyncSecrets, Secrets
from osmosis_client.platform.resources.training_runs import AsyncTrainingRuns, TrainingRuns
from osmosis_client.platform.resources.workspaces import AsyncWorkspaces, Workspaces
from osmosis_client.platform.settings import resolve_platform_url

T = TypeVar("T")


def _timeout(value: httpx.Timeout | float | None) -> httpx.Timeout:
    if value is None:
        return DEFAULT_TIMEOUT
    return value if isinstance(value, httpx.Timeout) else httpx.Timeout(value)


def _secret(token: str | SecretStr | None) -> SecretStr | None:
    if token is None or isinstance(token, SecretStr):
        return token
    return SecretStr(token)


class ClientSettings(TypedDict, total=False):
    """What a client is made with (``Client(**settings)``, ``AsyncClient(**settings)``)."""

    base_url: str | None  # default: OSMOSIS_PLATFORM_URL, else the hosted platform
    token: str | SecretStr | None
    workspace: str | None  # sent as X-Osmosis-Workspace on scoped calls
    git_repo: str | None  # X-Osmosis-Git when no workspace is selected
    timeout: httpx.Timeout | float | None
    max_retries: int  # default 4
    retry_policy: RetryPolicy | None
    ca_bundle: str | os.PathLike[str] | None  # trusted besides the process's roots


class _BaseClient:
    def __init__(self, settings: ClientSettings) -> None:
        #: the process's one TLS policy (osmosis_client._tls): downloads and uploads
        #: through this client reuse it
        self._verify: ssl.SSLContext = ssl_context(settings.get("ca_bundle"))
        retries = RetryPolicy(max_retries=settings.get("max_retries", 4))
        self._transport = Transport(
            base_url=resolve_platform_url(settings.get("base_url")),
            token=_secret(settings.get("token")),
            workspace=settings.get("workspace"),
            git_repo=settings.get("git_repo"),
            retry_policy=settings.get("retry_policy") or retries,
            timeout=_timeout(settings.get("timeout")),
        )

    @property
    def base_url(self) -> str:
        return self._transport.base_url

    @property
    def workspace(self) -> str | None:
        """The workspace sent as ``X-Osmosis-Workspace`` on scoped calls."""
        return self._transport.workspace

    @workspace.setter
    def workspace(self, name: str | None) -> None:
        self._transport.workspace = name

    @property
    def git_repo(self) -> str | None:
        """The repo path sent as ``X-Osmosis-Git`` when no workspace is selected."""
        return self._transport.git_repo

    @git_repo.setter
    def git_repo(self, repo: str | None) -> None:
        self._transport.git_repo = repo

    def set_token(self, token: str | SecretStr | None) -> None:
        self._transport.token = _secret(token)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self.base_url!r}, workspace={self.workspace!r})"

    def storage_http(self) -> httpx.Client:
        """A client for presigned storage URLs (downloads, uploads): the same TLS policy,
        no credentials, redirects followed by hand (each one checked)."""
        return httpx.Client(follow_redirects=False, verify=self._verify)


class Client(_BaseClient):
    """Synchronous client for the Osmosis platform."""

    def __init__(
        self,
        *,
        http_client: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
        **settings: Unpack[ClientSettings],
    ) -> None:
        super().__init__(settings)
        self._http = http_client or httpx.Client(
            timeout=self._transport.timeout, verify=self._verify
        )
        self._sleep = sleep
        self.auth = Auth(self)
        self.workspaces = Workspaces(self)
        self.eval_runs = EvalRuns(self)
        self.rollouts = Rollouts(self)
        self.datasets = Datasets(self)
        self.secrets = Secrets(self)
        self.rollout_servers = RolloutServers(self)
        self.models = Models(self)
        self.training_runs = TrainingRuns(self)
        self.benchmarks = Benchmarks(self)
        self.benchmark_runs = BenchmarkRuns(self)

    def _execute(self, call: Call[T]) -> T:
        response = drive_sync(
            self._transport.plan(call.options), self._send, self._sleep, httpx.TransportError
        )
        return call.parse(decode_json(response))

    def _send(self, request: httpx.Request) -> httpx.Response:
        streamed = self._http.send(request, stream=True)
        body = Body(request, self._transport.monotonic)
        try:
            for chunk in streamed.iter_bytes():
                body.add(chunk)
        finally:
            streamed.close()
        return body.response(streamed)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncClient(_BaseClient):
    """Asynchronous client for the Osmosis platform."""

    def __init__(
        self,
        *,
        http_client: httpx.AsyncClient | None = None,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        **settings: Unpack[ClientSettings],
    ) -> None:
        super().__init__(settings)
        self._http = http_client or httpx.AsyncClient(
            timeout=self._transport.timeout, verify=self._verify
        )
        self._sleep = sleep
        self.auth = AsyncAuth(self)
        self.workspaces = AsyncWorkspaces(self)
        self.eval_runs = AsyncEvalRuns(self)
        self.datasets = AsyncDatasets(self)
        self.secrets = AsyncSecrets(self)
        self.rollouts = AsyncRollouts(self)
        self.rollout_servers = AsyncRolloutServers(self)
        self.models = AsyncModels(self)
        self.training_runs = AsyncTrainingRuns(self)
        self.benchmarks = AsyncBenchmarks(self)
        self.benchmark_runs = AsyncBenchmarkRuns(self)

    async def _execute(self, call: Call[T]) -> T:
        response = await drive_async(
            self._transport.plan(call.options), self._send, self._sleep, httpx.TransportError
        )
        return call.parse(decode_json(response))

    async def _send(self, request: httpx.Request) -> httpx.Response:
        streamed = await self._http.send(request, stream=True)
        body = Body(request, self._transport.monotonic)
        try:
            async for chunk in streamed.aiter_bytes():
                body.add(chunk)
        finally:
            await streamed.aclose()
        return body.response(streamed)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
