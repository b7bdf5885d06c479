"""``mock/…``: an offline, deterministic model — a test double, not a model.

It answers chat-completions requests in-process (no network), so the bundled
example and the test suite run anywhere. Behaviours (``mock/<name>``):

- ``echo``: repeats the last user message;
- ``calculator``: evaluates the arithmetic expression in the last user message;
- ``flaky-calculator``: like ``calculator`` but wrong on ~30 % of (prompt, seed) pairs
  — pass ``seed`` (e.g. the run index) to get different attempts;
- ``judge``: answers a rubric prompt with ``{"score", "explanation"}`` JSON;
- ``thinking-calculator``: like ``flaky-calculator``, thinking first — the reasoning
  apart (``reasoning_content``), its tokens counted (more at a higher
  ``reasoning_effort``), a cached prompt prefix; an answer cut short (``finish_reason:
  "length"``, no answer) when ``max_tokens`` leaves no room after the thinking;
- ``tool-calculator``: for "What is A op B?" with calculator tools offered (``add``,
  ``subtract``, ``multiply``, ``divide`` taking ``a`` and ``b``), first calls the
  matching tool, then answers with the tool's result (an agent-loop test double); for
  "val1 = A / val2 = B" (the multiply template's rows) it calls ``multiply`` and
  answers ``#### <result>``.

A ``@<ms>`` suffix adds latency: ``mock/echo@200`` answers after 200 ms.
"""

from __future__ import annotations

import ast
import asyncio
import hashlib
import json
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from osmosis_client.errors import ModelNotFoundError

_EXPR = re.compile(r"[-+*/().\d\s]{3,}")
_OPS: dict[type, Callable[..., Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}


def _eval(node: ast.AST) -> float:
    if isinstance(node, ast.Expression):
        return _eval(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return float(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return float(_OPS[type(node.op)](_eval(node.left), _eval(node.right)))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
        return float(_OPS[type(node.op)](_eval(node.operand)))
    raise ValueError("not arithmetic")


def _format(value: float) -> str:
    return str(int(value)) if value == int(value) else f"{value:.6g}"


def calculate(text: str) -> str | None:
    """The value of the longest arithmetic expression in ``text``, or None."""
    candidates = sorted((m.group().strip() for m in _EXPR.finditer(text)), key=len, reverse=True)
    for candidate in candidates:
        try:
            return _format(_eval(ast.parse(candidate, mode="eval")))
        except (SyntaxError, ValueError, ZeroDivisionError, OverflowError):
            continue
    return None


def _last_user(messages: Sequence[Mapping[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):  # content parts: their text
                texts = [p.get("text") for p in content if isinstance(p, Mapping)]
                if all(isinstance(t, str) for t in texts):
                    return "".join(texts)  # type: ignore[arg-type]
            return content if isinstance(content, str) else json.dumps(content)
    return ""


def _digest(*parts: Any) -> int:
    raw = json.dumps(parts, sort_keys=True, default=str).encode()
    return int.from_bytes(hashlib.sha256(raw).digest()[:8], "big")


def _echo(messages: Sequence[Mapping[str, Any]], params: Mapping[str, Any]) -> str:
    return _last_user(messages)


def _calculator(messages: Sequence[Mapping[str, Any]], params: Mapping[str, Any]) -> str:
    return calculate(_last_user(messages)) or "I don't know."


def _flaky(messages: Sequence[Mapping[str, Any]], params: Mapping[str, Any]) -> str:
    text = _last_user(messages)
    answer = calculate(text)
    if answer is None:
        return "I don't know."
    if _digest(text, params.get("seed")) % 10 < 3:
        return _format(float(answer) + 1)
    return answer


def _judge(messages: Sequence[Mapping[str, Any]], params: Mapping[str, Any]) -> str:
    text = "".join(str(m.get("content", "")) for m in messages)
    score = (_digest(text, params.get("seed")) % 101) / 100
    return json.dumps({"score": score, "explanation": "mock judge: deterministic score"})


_BINARY = re.compile(r"(-?\d+(?:\.\d+)?)\s*([-+*/])\s*(-?\d+(?:\.\d+)?)")
_TOOLS = {"+": "add", "-": "subtract", "*": "multiply", "/": "divide"}
_VALUES = re.compile(r"val1\s*=\s*(-?\d+(?:\.\d+)?)\s+val2\s*=\s*(-?\d+(?:\.\d+)?)")


def _tool_calculator(
    messages: Sequence[Mapping[str, Any]], params: Mapping[str, Any]
) -> str | dict[str, Any]:
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    results = [m for m in messages[last_user + 1 :] if m.get("role") == "tool"]
    question = _last_user(messages)
    values = _VALUES.search(question)
    if results:
        result = str(results[-1].get("content", ""))
        return f"#### {result}" if values else result
    offered = {
        (tool.get("function") or {}).get("name")
        for tool in params.get("tools") or []
        if isinstance(tool, Mapping)
    }
    match = _BINARY.search(question)
    if values is not None:
        a, op, b = values.group(1), "*", values.group(2)
    elif match is not None:
        a, op, b = match.groups()
    if (values is None and match is None) or _TOOLS[op] not in offered:
        return _calculator(messages, params)
    arguments = {"a": float(a) if "." in a else int(a), "b": float(b) if "." in b else int(b)}
    call_id = f"call_{_digest(messages, params.get('seed')) % 10**12:012d}"
    return {
        "content": None,
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": _TOOLS[op], "arguments": json.dumps(arguments)},
            }
        ],
    }


#: words of thinking per effort (mock/thinking-calculator)
_THINKING = {"none": 0, "minimal": 8, "low": 16, "medium": 32, "high": 64, "xhigh": 96, "max": 128}


def _thinking(messages: Sequence[Mapping[str, Any]], params: Mapping[str, Any]) -> dict[str, Any]:
    text = _last_user(messages)
    size = _THINKING.get(str(params.get("reasoning_effort") or "medium"), 32)
    size += _digest(text) % 16  # some questions take longer
    steps = " ".join(["hmm,"] * max(0, size - 6))
    thought = f"Let me work it out: {steps} checking the arithmetic." if size else ""
    answer = _flaky(messages, params)
    return {"content": answer, **({"reasoning_content": thought} if thought else {})}


Behaviour = Callable[[Sequence[Mapping[str, Any]], Mapping[str, Any]], "str | dict[str, Any]"]

BEHAVIOURS: dict[str, Behaviour] = {
    "echo": _echo,
    "calculator": _calculator,
    "flaky-calculator": _flaky,
    "judge": _judge,
    "thinking-calculator": _thinking,
    "tool-calculator": _tool_calculator,
}


def parse_mock_model(name: str) -> tuple[str, float]:
    """``"echo@200"`` → ``("echo", 0.2)``; unknown behaviours raise ``ModelNotFoundError``."""
    behaviour, _, latency = name.partition("@")
    if behaviour not in BEHAVIOURS:
        raise ModelNotFoundError(
            f"unknown mock model mock/{behaviour}",
            hint="mock models: " + ", ".join(f"mock/{b}" for b in BEHAVIOURS),
        )
    try:
        seconds = float(latency) / 1000 if latency else 0.0
    except ValueError as exc:
        raise ModelNotFoundError(
            f"invalid mock latency {latency!r}", hint="use mock/echo@200"
        ) from exc
    return behaviour, seconds


def _words(text: str) -> int:
    return len(text.split())


async def complete(name: str, payload: Mapping[str, Any]) -> dict[str, Any]:
    """An OpenAI-style chat-completions response for ``payload``."""
    behaviour, latency = parse_mock_model(name)
    if latency:
        await asyncio.sleep(latency)
    messages = payload.get("messages") or []
    answer = BEHAVIOURS[behaviour](messages, payload)
    message: dict[str, Any] = {"role": "assistant"}
    if isinstance(answer, dict):
        message.update(answer)
    else:
        message["content"] = answer
    prompt_tokens = sum(_words(str(m.get("content", ""))) for m in messages) + 1
    thinking = _words(str(message.get("reasoning_content") or ""))
    shown = {k: v for k, v in message.items() if k != "reasoning_content"}
    completion_tokens = (
        thinking + _words(json.dumps(shown) if isinstance(answer, dict) else answer) + 1
    )
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    limit = payload.get("max_tokens") or payload.get("max_completion_tokens")
    if thinking and isinstance(limit, int) and completion_tokens > limit:  # cut mid-thought
        message["content"], finish, completion_tokens = None, "length", limit
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    if thinking:  # a reasoning model's usage: its thinking counted, its prompt prefix cached
        usage["completion_tokens_details"] = {"reasoning_tokens": min(thinking, completion_tokens)}
        usage["prompt_tokens_details"] = {"cached_tokens": prompt_tokens // 2}
    return {
        "id": f"mock-{_digest(messages, payload.get('seed')):x}",
        "object": "chat.completion",
        "model": f"mock/{name}",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage,
    }
