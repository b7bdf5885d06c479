"""``agent-loop``: a 0.2 ``RolloutAgentLoop`` run in-process, as the published
``osmosis eval -m server:agent_loop`` does (rollout-protocol.md part A).

Per attempt: a request built from the row (system + user prompt; metadata =
ground truth, row/run index, ``execution_mode: "eval"`` and every other column;
``rollout_id = eval-{row}-run-{k}``), then ``get_tools(request)``, then
``run(ctx)``. ``ctx.chat`` calls the configured model with the loop's tools
attached (null fields dropped), the sampling flags given, and every keyword the
loop passes; the assistant message comes back verbatim. ``success`` is status
``COMPLETED``; the loop's own reward is not used (eval fns score).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from osmosis_client.llm.client import parse_reply
from osmosis_client.rollout.agent_loop import (
    CompletionsResult,
    RolloutRequest,
    RolloutStatus,
)
from osmosis_client.rollout.agent_loop.loop import execute
from osmosis_client.rollout.agent_loop.schemas import tool_to_dict
from osmosis_client.rollout.mcp.schema import check_tool_schemas
from osmosis_local_runner.run.execute.dataset import Row
from osmosis_local_runner.run.execute.user_code import (
    UserCodeError,
    call_with_timeout,
    describe_escape,
    error_text,
    is_transient,
)
from osmosis_local_runner.run.kinds import Outcome, RunEnv

#: the request's server_url in local eval: nothing listens there (the model is called directly)
LOCAL_SERVER_URL = "http://127.0.0.1/local-eval"
LOCAL_MAX_TOKENS_TOTAL = 4096


class Observer(Protocol):
    """Watches an attempt's model calls (``osmosis test -i`` steps through them); either
    method may raise to stop the attempt."""

    def before_call(self, messages: list[dict[str, Any]]) -> None: ...

    def after_reply(self, message: dict[str, Any], finish_reason: str) -> None: ...


class _EvalLLM:
    """``ctx.llm`` in local eval: the configured model, tools attached, tokens counted."""

    def __init__(
        self,
        env: RunEnv,
        tools: list[dict[str, Any]],
        defaults: Mapping[str, Any],
        observer: Observer | None = None,
    ) -> None:
        self.env = env
        self.tools = tools
        self.defaults = defaults
        self.observer = observer
        self.tokens = 0
        self.usage = {"prompt_tokens": 0, "completion_tokens": 0, "num_llm_calls": 0}

    async def chat_completions(
        self, messages: list[dict[str, Any]], **params: Any
    ) -> CompletionsResult:
        payload = {**self.defaults, **params}
        if self.tools and "tools" not in payload:
            payload["tools"] = self.tools
        if self.observer is not None:
            self.observer.before_call(messages)
        response = await self.env.complete(messages, payload)
        message, tokens = parse_reply(response)
        self.tokens += tokens
        choice = response["choices"][0]
        usage = response.get("usage")
        self._count(usage if isinstance(usage, dict) else {})
        finish = str(choice.get("finish_reason") or "stop")
        if self.observer is not None:
            self.observer.after_reply(message, finish)
        return CompletionsResult(
            message=message,
            usage=usage if isinstance(usage, dict) else {},
            finish_reason=finish,
            logprobs=choice.get("logprobs"),
        )

    def _count(self, usage: Mapping[str, Any]) -> None:
        self.usage["num_llm_calls"] += 1
        for key in ("prompt_tokens", "completion_tokens"):
            value = usage.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                self.usage[key] += value

    def token_usage(self) -> dict[str, int]:
        """0.2 ``osmosis test``'s ``token_usage`` of the attempt."""
        return {**self.usage, "total_tokens": self.tokens}


class AgentLoopRollout:
    capacity: int | None = None
    name = "agent-loop"

    def __init__(
        self,
        loop: Any,
        *,
        source: str = "",
        digest: str = "",
        max_turns: int = 10,
        max_tokens_total: int = LOCAL_MAX_TOKENS_TOTAL,
        completion_params: Mapping[str, Any] | None = None,
        debug_dir: Path | None = None,
        mode: str = "eval",
        observer: Observer | None = None,
    ) -> None:
        self.loop = loop
        self.source = source
        self.digest = digest
        self.max_turns = max_turns
        self.max_tokens_total = max_tokens_total
        self.completion_params = dict(completion_params or {})
        self.debug_dir = debug_dir
        #: "eval" (``osmosis eval``) or "test" (``osmosis test``: ids ``test-<row>``)
        self.mode = mode
        self.observer = observer

    def describe(self) -> str:
        where = f" from {self.source}" if self.source else ""
        tools = getattr(self.loop, "tool_names", None)
        if isinstance(tools, list):  # --mcp DIR
            return f"MCP tools{where} ({len(tools)}: {', '.join(tools)}), in-process"
        name = getattr(self.loop, "name", "?")
        return f"agent loop {name!r} ({type(self.loop).__name__}{where}), in-process"

    def fingerprint(self) -> dict[str, Any]:
        return {
            "rollout": f"agent-loop:{self.digest}",
            "max_turns": self.max_turns,
            "completion_params": self.completion_params,
        }

    def prepare(self, note: Callable[[str], None] | None = None) -> None:
        return None

    async def start(self, env: RunEnv) -> None:
        return None

    async def stop(self) -> None:
        return None

    def request(self, row: Row, run_index: int) -> RolloutRequest:
        others = {k: v for k, v in row.data.items() if k not in ("system_prompt", "user_prompt")}
        if self.mode == "test":  # 0.2's osmosis test: one run per row, no run index
            head = {"ground_truth": row.ground_truth, "row_index": row.index}
            metadata = {**head, **others, "execution_mode": "test", "test_mode": True}
            rollout_id = f"test-{row.index}"
        else:
            head = {"ground_truth": row.ground_truth, "row_index": row.index}
            metadata = {**head, "run_index": run_index, "execution_mode": "eval", **others}
            rollout_id = f"eval-{row.index}-run-{run_index}"
        metadata["ground_truth"] = row.ground_truth  # the `label` alias resolved
        return RolloutRequest(
            rollout_id=rollout_id,
            server_url=LOCAL_SERVER_URL,
            messages=row.prompt(),
            completion_params=dict(self.completion_params),
            max_turns=self.max_turns,
            max_tokens_total=self.max_tokens_total,
            metadata=metadata,
        )

    async def run(self, row: Row, run_index: int, env: RunEnv) -> Outcome:
        request = self.request(row, run_index)
        llm = _EvalLLM(env, [], request.completion_params, self.observer)
        try:
            llm.tools = self._tools(request)
            problem = check_tool_schemas(llm.tools)
            if problem is not None:  # 0.2 checked the tools before every row
                return Outcome([], 0, problem)
            result = await call_with_timeout(
                execute,
                self.loop,
                request,
                llm,
                is_async=True,
                timeout=env.agent_timeout,
                tools=llm.tools,
                debug_dir=self.debug_dir,
            )
        except TimeoutError:
            return Outcome([], llm.tokens, f"agent loop timed out after {env.agent_timeout:g}s")
        except Exception as exc:
            return Outcome(
                [], llm.tokens, error_text("agent loop", exc), transient=is_transient(exc)
            )
        extra: dict[str, Any] = {"finish_reason": result.finish_reason}
        if self.mode == "test":
            extra.update(reward=result.reward, token_usage=llm.token_usage())
        if result.status != RolloutStatus.COMPLETED:
            message = result.error_message or "the agent loop returned status ERROR"
            return Outcome(
                result.final_messages, llm.tokens, f"agent loop: {message}"[:1000], extra=extra
            )
        return Outcome(result.final_messages, llm.tokens, extra=extra)

    def _tools(self, request: RolloutRequest) -> list[dict[str, Any]]:
        try:
            return [tool_to_dict(t) for t in self.loop.get_tools(request)]
        except (SystemExit, KeyboardInterrupt, GeneratorExit) as exc:
            raise UserCodeError(describe_escape(exc)) from exc
