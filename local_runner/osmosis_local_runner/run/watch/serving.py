"""Making a checkpoint the served model, two ways:

- :class:`LoraServing`: vLLM's runtime LoRA loading — ``POST {base}/load_lora_adapter``
  with ``{"lora_name", "lora_path"}``, the adapter then addressed by that name, unloaded
  after (``POST {base}/unload_lora_adapter``) unless kept. A name already loaded (vLLM
  refuses it, or replaces it, by version) is unloaded and loaded again once.
- :class:`CommandServing`: a command of the user's that serves full weights (``{path}``
  and ``{step}`` replaced, quoted), waited on until ``GET {base}/models`` answers — the
  portable way for weights a server cannot load at run time — and stopped after.

Either way the served model's entry in ``GET {base}/models`` (``root``: the weights'
path or repository, ``parent``: an adapter's base) is recorded beside the checkpoint's own
identity: which weights answered is a fact of the run, not the name it was served under.
HTTP by httpx with the process's one TLS policy."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import httpx

from osmosis_client._redact import redact_url
from osmosis_client.errors import OsmosisError
from osmosis_local_runner.run.watch.checkpoints import Checkpoint, identity

Sleep = Callable[[float], Awaitable[None]]
#: how long one control request (load, unload, models) may take
TIMEOUT = 60.0


def _client(headers: Mapping[str, str]) -> httpx.AsyncClient:
    from osmosis_client._tls import ssl_context

    return httpx.AsyncClient(timeout=TIMEOUT, verify=ssl_context(), headers=dict(headers))


async def served_entry(client: httpx.AsyncClient, base: str, model: str) -> dict[str, Any]:
    """``model``'s entry in ``GET {base}/models``: its ``root`` and ``parent`` (empty when
    the server does not list it)."""
    from osmosis_client.llm.identity import listed_weights

    try:
        answer = await client.get(f"{base}/models")
        return listed_weights(answer.json(), model) if answer.status_code == 200 else {}
    except (httpx.HTTPError, ValueError):
        return {}


class LoraServing:
    """Checkpoints as runtime LoRA adapters of one vLLM server (see the module)."""

    def __init__(
        self, base_url: str, headers: Mapping[str, str] | None = None, keep_loaded: bool = False
    ) -> None:
        self.base = base_url.rstrip("/")
        self.headers = dict(headers or {})
        self.keep_loaded = keep_loaded

    async def serve(self, checkpoint: Checkpoint, name: str) -> dict[str, Any]:
        """Load ``checkpoint`` as ``name``; the weights' identity as recorded."""
        body = {"lora_name": name, "lora_path": str(checkpoint.path)}
        async with _client(self.headers) as client:
            answer = await self._post(client, "load_lora_adapter", body)
            if answer.status_code == 404:
                raise OsmosisError(
                    f"{redact_url(self.base)}/load_lora_adapter is not served (404): the "
                    "server cannot load adapters at run time",
                    hint="start vLLM with VLLM_ALLOW_RUNTIME_LORA_UPDATING=True and "
                    "--enable-lora, or serve each checkpoint with a command of your own",
                    code="LORA_NOT_ENABLED",
                )
            if answer.status_code >= 400:  # loaded before (a restart): unloaded, loaded again
                await self._post(client, "unload_lora_adapter", {"lora_name": name})
                answer = await self._post(client, "load_lora_adapter", body)
            if answer.status_code >= 400:
                raise OsmosisError(
                    f"the server refused to load {checkpoint.path} as {name} "
                    f"(HTTP {answer.status_code}): {' '.join(answer.text.split())[:300]}",
                    code="LORA_LOAD_FAILED",
                )
            served = await served_entry(client, self.base, name)
        return {**identity(checkpoint), "served_as": name, **served}

    async def release(self, name: str) -> None:
        """Unload ``name`` (unless kept): a failure is not the run's."""
        if self.keep_loaded:
            return
        async with _client(self.headers) as client:
            with contextlib.suppress(httpx.HTTPError):
                await self._post(client, "unload_lora_adapter", {"lora_name": name})

    async def _post(
        self, client: httpx.AsyncClient, route: str, body: dict[str, str]
    ) -> httpx.Response:
        try:
            return await client.post(f"{self.base}/{route}", json=body)
        except httpx.HTTPError as exc:
            raise OsmosisError(
                f"cannot reach {redact_url(self.base)} to load a checkpoint ({type(exc).__name__})",
                hint="start the server (or check its base URL), then watch again",
                code="ENDPOINT_UNREACHABLE",
            ) from exc


class CommandServing:
    """Each checkpoint served by a command of the user's (see the module): started with
    ``{path}`` and ``{step}`` filled in, waited on until the endpoint lists ``model``
    (at most ``timeout`` seconds), stopped — its whole process group — after."""

    def __init__(
        self,
        template: str,
        base_url: str,
        model: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: float = 600.0,
        logs: Path,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.template = template
        self.base = base_url.rstrip("/")
        self.model = model
        self.headers = dict(headers or {})
        self.timeout = timeout
        self.logs = logs
        self.sleep = sleep
        self._process: asyncio.subprocess.Process | None = None

    def command(self, checkpoint: Checkpoint) -> str:
        """The command line for ``checkpoint`` (its path and step quoted)."""
        return self.template.replace("{path}", shlex.quote(str(checkpoint.path))).replace(
            "{step}", str(checkpoint.step)
        )

    async def serve(self, checkpoint: Checkpoint, name: str) -> dict[str, Any]:
        self.logs.mkdir(parents=True, exist_ok=True)
        log = self.logs / f"serve-step-{checkpoint.step}.log"
        with open(log, "wb") as out:
            self._process = await asyncio.create_subprocess_shell(
                self.command(checkpoint),
                stdout=out,
                stderr=out,
                stdin=asyncio.subprocess.DEVNULL,
                start_new_session=True,
            )
        served = await self._wait(log)
        return {**identity(checkpoint), "served_as": self.model, **served}

    async def _wait(self, log: Path) -> dict[str, Any]:
        """Until the endpoint answers for the model; the command's death or the timeout
        is an error naming its log's last lines."""
        assert self._process is not None
        started = time.monotonic()
        async with _client(self.headers) as client:
            while True:
                if self._process.returncode is not None:
                    raise self._failed(f"exited ({self._process.returncode})", log)
                with contextlib.suppress(httpx.HTTPError):
                    answer = await client.get(f"{self.base}/models", timeout=5)
                    if answer.status_code == 200:
                        return await served_entry(client, self.base, self.model)
                if time.monotonic() - started > self.timeout:
                    raise self._failed(f"did not serve within {self.timeout:g}s", log)
                await self.sleep(1.0)

    def _failed(self, what: str, log: Path) -> OsmosisError:
        tail = " | ".join(log.read_text(errors="replace").splitlines()[-5:])[-500:]
        return OsmosisError(
            f"the serve command {what}; its last lines: {tail or '(none)'}",
            hint=f"its whole output is in {log}",
            code="SERVE_FAILED",
        )

    async def release(self, name: str) -> None:
        """Stop the command's whole process group (SIGKILL after 10 s)."""
        process, self._process = self._process, None
        if process is None or process.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), 10)
        except asyncio.TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            await process.wait()


__all__ = ["CommandServing", "LoraServing", "served_entry"]
