"""``server``: a rollout written for the published ``osmosis-ai`` 0.3 SDK, run the way
the platform runs it — the user's rollout server in the rollout's own environment,
driven over HTTP (rollout-protocol.md part B).

Per attempt: ``POST /rollout`` (the row's prompt, label and metadata; this
rollout's bridge URL and the run's bearer token; both timeouts), then long polls
of its result with the lease until a terminal status. The reward is
``sample.reward``; ``remove_sample`` skips the attempt; a failure keeps the server's
``err_category`` and message. The conversation is the ``trajectory.json`` it writes.

Unlike the published CLI, a supervisor deadline (agent + grader timeouts + slack) fails
only its own attempt (cancelled on the server), transient infrastructure errors are
retryable, and a server that dies mid-run is restarted (up to ``MAX_RESTARTS`` times).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import math
import os
import secrets
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from osmosis_client.errors import InvalidInputError, OsmosisError
from osmosis_client.llm.client import SESSION_ID
from osmosis_local_runner.run.execute.dataset import Row
from osmosis_local_runner.run.execute.discovery import source_digest
from osmosis_local_runner.run.execute.scheduler import deadline
from osmosis_local_runner.run.kinds import Outcome, RunEnv, server_drive as drive
from osmosis_local_runner.run.kinds.server_outcome import await_trajectory, messages_of, outcome_of
from osmosis_local_runner.server.bridge import Bridge
from osmosis_local_runner.server.environment import RolloutPython, resolve
from osmosis_local_runner.server.orphans import reap_orphans
from osmosis_local_runner.server.output import Redactor, rollout_environment
from osmosis_local_runner.server.ports import Ports
from osmosis_local_runner.server.process import ServerProcess, ServerStartError, check_reserved
from osmosis_local_runner.server.protocol import (
    Accepted,
    BadAnswer,
    Refused,
    Result,
    RolloutServerClient,
    rollout_request,
    trajectory_path,
)
from osmosis_local_runner.server.warm import Warm

if TYPE_CHECKING:
    import aiohttp

logger = logging.getLogger("osmosis_client.runner")

SUPERVISOR_SLACK = 30.0  # seconds beyond the agent + grader timeouts
MAX_RESTARTS = 3


class ServerRollout:
    name = "server"

    def __init__(
        self,
        rollout_dir: Path,
        entrypoint: Path,
        *,
        headline: str,
        run_dir: Path,
        results_dir: Path,
        registry: Path | None = None,
        env: Mapping[str, str] | None = None,
        secrets: Mapping[str, str] | None = None,
        python: Path | None = None,
        python_given_by: str = "[local] rollout_python",
        grader_timeout: float | None = None,
        echo: Callable[[str], None] | None = None,
        uv: str | bool | None = True,
        health_timeout: float | None = None,
        stop_grace: float | None = None,
        python_env: RolloutPython | None = None,
        slack: float = SUPERVISOR_SLACK,
        ports: Ports | None = None,
    ) -> None:
        self.rollout_dir = rollout_dir
        self.entrypoint = entrypoint
        self.headline = headline  # "rollouts/x/main.py — server mode (why)"
        self.run_dir = run_dir
        self.results_dir = results_dir
        self.registry = registry
        self.config_env = dict(env or {})
        self.secrets = dict(secrets or {})  # the [secrets] values: the server's env
        self.python_given = python
        self.python_given_by = python_given_by
        self.grader_timeout = grader_timeout
        self.echo = echo
        self.uv = uv
        self.health_timeout = health_timeout
        self.stop_grace = stop_grace
        self.python = python_env
        self.slack = slack
        self.ports = ports or Ports()
        self.capacity: int | None = None
        self.restarts = 0
        self._digest = ""
        self._redact = Redactor()
        self._bridge: Bridge | None = None
        self._session: aiohttp.ClientSession | None = None
        self._server: ServerProcess | None = None
        self._client: RolloutServerClient | None = None
        self._restart_lock = asyncio.Lock()
        self._tries: collections.Counter[tuple[int, int, str | None]] = collections.Counter()
        #: rollout id → (its server's client, its lease): what Ctrl-C and deadlines cancel
        self._in_flight: dict[str, tuple[RolloutServerClient, Accepted]] = {}
        self._interrupted: list[str] = []
        self._env: RunEnv | None = None
        self._warm: Warm | None = None  # the warm interpreter of this rollout's environment
        self._server_env: dict[str, str] = {}

    # ------------------------------------------------------------ before the run

    def prepare(self, note: Callable[[str], None] | None = None) -> None:
        """Everything checkable before a model call: names, secrets, the environment."""
        check_reserved(self.config_env)
        # what the platform would pass: [env], [secrets] and what a process needs to run
        self._server_env = rollout_environment(
            os.environ, self.config_env, self.secrets, self._redact
        )
        entry = self.entrypoint
        if not entry.is_file():
            raise InvalidInputError(
                f"{self._shown_entrypoint()} does not exist",
                hint="check [experiment] rollout and entrypoint",
                code="BAD_ROLLOUT",
            )
        self._digest = source_digest(self.rollout_dir)
        if self.python is None:
            self.python = resolve(
                self.rollout_dir,
                given=self.python_given,
                given_by=self.python_given_by,
                note=note,
                uv=self.uv,
            )
        python = self.python
        self._warm = Warm.of(python.executable, python.site_packages, self._server_env)

    def _shown_entrypoint(self) -> str:
        try:
            inside = self.entrypoint.relative_to(self.rollout_dir)
        except ValueError:
            inside = Path(self.entrypoint.name)
        return f"rollouts/{self.rollout_dir.name}/{inside}"

    def describe(self) -> str:
        python = f"; {self.python.describe()}" if self.python is not None else ""
        return f"{self.headline}{python}"

    def fingerprint(self) -> dict[str, Any]:
        return {"rollout": f"server:{self._digest or source_digest(self.rollout_dir)}"}

    # ------------------------------------------------------------ lifecycle

    async def start(self, env: RunEnv) -> None:
        import aiohttp

        if self.python is None:
            self.prepare()
        assert self.python is not None
        self._env = env
        refusal = self._warm.refusal(self._shown_entrypoint()) if self._warm else None
        if refusal is not None and env.note is not None:
            env.note(refusal)  # why this run starts cold (the first run promised otherwise)
        if env.api_key:
            self._redact.add(env.api_key)  # the model key never reaches the server; still
        if self.registry is not None:
            reaped = await asyncio.to_thread(reap_orphans, self.registry)
            if reaped and env.note is not None:
                env.note(f"stopped {len(reaped)} rollout server(s) left behind by a killed run")
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=0, force_close=False),
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=10),
        )
        self._bridge = Bridge(port=self.ports.listener, advertise_url=self.ports.advertise_url)
        await self._bridge.start()
        self._redact.add(self._bridge.token)
        self._server = self._new_server()
        try:
            health = await self._server.start(self._session)
        except BaseException:
            await self.stop()
            raise
        self.capacity = health.capacity
        self._client = RolloutServerClient(self._session, self._server.url)

    def _new_server(self) -> ServerProcess:
        assert self.python is not None
        timings = {"health_timeout": self.health_timeout, "stop_grace": self.stop_grace}
        extra: dict[str, Any] = {k: v for k, v in timings.items() if v is not None}
        return ServerProcess(
            self.python.executable,
            self.entrypoint,
            env=self._server_env,
            run_dir=self.run_dir,
            registry=self.registry,
            redact=self._redact,
            echo=self.echo,
            port=self.ports.rollout,
            warm=self._warm,
            **extra,
        )

    async def stop(self) -> None:
        client = self._client
        if client is not None and self._interrupted and self._server and not self._server.exited:
            await client.cancel(ids=self._interrupted)
        if self._server is not None:
            await self._server.stop()
            if self._warm is not None and self._warm.launched and self._env and self._env.note:
                kept = self._warm.kept(self._shown_entrypoint(), self._server.startup_seconds)
                self._env.note(kept)  # for the next runs
        if self._bridge is not None:
            await self._bridge.stop()
        if self._session is not None:
            await self._session.close()
        self._session = None
        self._bridge = None

    # ------------------------------------------------------------ attempts

    def _rollout_id(self, row: Row, run_index: int, tag: str | None) -> str:
        """32 lower-case hex, new for every try (the published run layout's form; the
        row and run travel in ``extra_fields``)."""
        self._tries[(row.index, run_index, tag)] += 1
        return secrets.token_hex(16)

    def _supervisor_timeout(self, env: RunEnv) -> float | None:
        parts = [t for t in (env.agent_timeout, self.grader_timeout) if t is not None]
        if not parts or not all(math.isfinite(t) for t in parts):
            return None
        return sum(parts) + self.slack

    async def run(self, row: Row, run_index: int, env: RunEnv) -> Outcome:
        assert self._bridge is not None and self._client is not None
        rollout_id = self._rollout_id(row, run_index, env.tag)
        route = self._bridge.register(rollout_id, env.complete, SESSION_ID.get())
        body = rollout_request(
            row,
            run_index,
            rollout_id=rollout_id,
            chat_completions_url=self._bridge.url_for(rollout_id),
            api_key=self._bridge.token,
            agent_timeout=env.agent_timeout,
            grader_timeout=self.grader_timeout,
        )
        extra: dict[str, Any] = {"rollout_id": rollout_id, "err_category": None, "trajectory": None}
        try:
            return await self._attempt(rollout_id, body, extra, env, lambda: route.tokens)
        except asyncio.CancelledError:
            if rollout_id in self._in_flight:
                self._interrupted.append(rollout_id)  # Ctrl-C: stop() cancels it
            raise
        finally:
            if self._bridge is not None:
                self._bridge.unregister(rollout_id)
            self._in_flight.pop(rollout_id, None)

    async def _attempt(
        self,
        rollout_id: str,
        body: dict[str, Any],
        extra: dict[str, Any],
        env: RunEnv,
        tokens: Callable[[], int],
    ) -> Outcome:
        """Drive one rollout; every way it can end becomes this attempt's outcome."""
        assert self._client is not None and self._server is not None
        client, server = self._client, self._server
        limit = self._supervisor_timeout(env)
        try:
            with deadline(limit) if limit is not None else contextlib.nullcontext():
                result = await self._drive(server, client, rollout_id, body)
        except TimeoutError:
            return await self._timed_out(server, rollout_id, body, extra, tokens(), limit)
        except drive.ServerGone:
            code = server.returncode
            await self._recover(server)
            extra["err_category"] = "internal_error"
            text = f"the rollout server exited (code {code}) during this attempt"
            return Outcome([], tokens(), text, transient=True, extra=extra)
        except drive.Transient as exc:
            extra["err_category"] = exc.category
            return Outcome([], tokens(), str(exc), transient=True, extra=extra)
        except Refused as exc:
            extra["err_category"] = "validation_error" if exc.status == 422 else "http_error"
            text = f"the rollout server refused the rollout ({exc})"
            return Outcome([], tokens(), text, extra=extra)
        except BadAnswer as exc:
            await client.cancel(ids=[rollout_id])  # it may still be running there
            extra["err_category"] = "http_error"
            return Outcome([], tokens(), f"the rollout server's {exc}", extra=extra)
        return await self._finished(result, rollout_id, body, extra, tokens())

    async def _timed_out(
        self,
        server: ServerProcess,
        rollout_id: str,
        body: dict[str, Any],
        extra: dict[str, Any],
        tokens: int,
        limit: float | None,
    ) -> Outcome:
        late = await self._cancel(server, rollout_id)
        if late is not None and late.status == "success":
            return await self._finished(late, rollout_id, body, extra, tokens)
        extra["err_category"] = "timeout"
        return Outcome(
            messages_of(self._trajectory(rollout_id), None, extra, self.results_dir),
            tokens,
            f"rollout timed out: no result after {limit:g}s (agent and grader "
            f"timeouts + {self.slack:g}s); cancelled on the server",
            extra=extra,
        )

    async def _finished(
        self,
        result: Result,
        rollout_id: str,
        body: dict[str, Any],
        extra: dict[str, Any],
        tokens: int,
    ) -> Outcome:
        path = self._trajectory(rollout_id)
        if result.status == "success":
            await await_trajectory(path)
        messages = messages_of(path, result, extra, self.results_dir)
        return outcome_of(result, body, tokens, messages, extra)

    def _trajectory(self, rollout_id: str) -> Path:
        assert self._server is not None
        return trajectory_path(self._server.artifact_root, rollout_id)

    async def _drive(
        self,
        server: ServerProcess,
        client: RolloutServerClient,
        rollout_id: str,
        body: dict[str, Any],
    ) -> Result:
        accepted = await drive.submit(server, client, body, self._abort)
        self._in_flight[rollout_id] = (client, accepted)
        return await drive.poll(server, client, rollout_id, accepted)

    async def _cancel(self, server: ServerProcess, rollout_id: str) -> Result | None:
        """Cancel one rollout, then poll (briefly) for its terminal state, so it stops
        holding a slot before the next attempt starts; a rollout that finished just in
        time comes back as its result."""
        held = self._in_flight.get(rollout_id)
        return None if held is None else await drive.cancel(server, *held, rollout_id)

    async def _recover(self, failed: ServerProcess) -> None:
        """Restart a server that died (once, whoever notices first)."""
        async with self._restart_lock:
            if self._server is not failed:
                return  # already restarted
            code = failed.returncode
            last = failed.last_output()
            await failed.stop()
            self.restarts += 1
            if self.restarts > MAX_RESTARTS:
                self._abort(
                    ServerStartError(
                        f"the rollout server exited {self.restarts} times (last: code {code})",
                        output=last,
                        log=failed.log_path,
                    )
                )
                return
            if self._env is not None and self._env.note is not None:
                self._env.note(f"the rollout server exited (code {code}); restarting it")
            assert self._session is not None
            server = self._new_server()
            try:
                await server.start(self._session)
            except ServerStartError as exc:
                await server.stop()
                self._abort(exc)
                return
            self._server = server
            self._client = RolloutServerClient(self._session, server.url)

    def _abort(self, error: OsmosisError) -> None:
        if self._env is not None and self._env.abort is not None:
            self._env.abort(error)
