"""``mock/…``: an offline, deterministic model — a test double, not a model.

It answers chat-completions requests in-process (no network), so the bundled
example and the test suite run anywhere. Behaviours (``mock/<name>``):

- ``echo``: repeats the last user message;
- ``calculator``: evaluates the arithmetic expression in the last user message;
- ``flaky-calculator``: like ``calculator`` but wrong on ~30 % of (prompt, seed) pairs
  — pass ``seed`` (e.g. the run index) to get different attempts;
- ``judge``: answers a rubric prompt with ``{"score", "explanation"}`` JSON.

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


BEHAVIOURS: dict[str, Callable[[Sequence[Mapping[str, Any]], Mapping[str, Any]], str]] = {
    "echo": _echo,
    "calculator": _calculator,
    "flaky-calculator": _flaky,
    "judge": _judge,
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
    except ValueError:
        raise ModelNotFoundError(
            f"invalid mock latency {latency!r}", hint="use mock/echo@200"
        ) from None
    return behaviour, seconds


def _words(text: str) -> int:
    return len(text.split())


async def complete(name: str, payload: Mapping[str, Any]) -> dict[str, Any]:
    """An OpenAI-style chat-completions response for ``payload``."""
    behaviour, latency = parse_mock_model(name)
    if latency:
        await asyncio.sleep(latency)
    messages = payload.get("messages") or []
    content = BEHAVIOURS[behaviour](messages, payload)
    prompt_tokens = sum(_words(str(m.get("content", ""))) for m in messages) + 1
    completion_tokens = _words(content) + 1
    return {
        "id": f"mock-{_digest(messages, payload.get('seed')):x}",
        "object": "chat.completion",
        "model": f"mock/{name}",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }
