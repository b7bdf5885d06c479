"""``osmosis test -i``: step through a row's model calls, as 0.2's interactive mode did
(rollout-protocol.md C): choose a row, see each model response before its tools run,
look at the messages or the tools, go on, run to the end, or abort the row."""

from __future__ import annotations

import json
import signal
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from osmosis_cli.terminal.output import Output
    from osmosis_local_runner.api.doors import CheckSession, Row, RowResult

QUIT = ("q", "quit", "exit")
PAUSE_PROMPT = "Commands: [n]ext, [c]ontinue, [m]essages, [t]ools, [q]uit"
HELP = (
    "  n, next, Enter  run the tools and make the next model call",
    "  c, continue     run the rest of this row without pausing",
    "  m, messages     the conversation as last sent to the model",
    "  t, tools        the tools the model can call",
    "  q, quit         abort this row",
)
ROLES = {"system": "System", "user": "User", "assistant": "Assistant", "tool": "Tool"}


class AbortRow(Exception):
    """The user stopped the row at a pause."""

    def __init__(self) -> None:
        super().__init__("Aborted by user")


def rule(title: str, width: int = 60) -> str:
    return f" {title} ".center(width, "─")


def role_line(message: Mapping[str, Any], names: Mapping[str, str] | None = None) -> str:
    role = str(message.get("role") or "?")
    label = ROLES.get(role, role.title())
    if role == "tool" and names is not None:
        label = f"Tool ({names.get(str(message.get('tool_call_id')), '?')})"
    content = message.get("content")
    text = content if isinstance(content, str) else json.dumps(content, default=str)
    return f"[{label}] {text}"


class Stepper:
    """The rollout's observer: pauses after every model response, before its tools run."""

    def __init__(self, out: Output, ask: Callable[[str], str | None], tools: Sequence[Any]) -> None:
        self.out = out
        self.ask = ask
        self.tools = tools
        self.turn = 0
        self.running = False  # "continue": no more pauses in this row
        self.aborted = False
        self.sent: list[dict[str, Any]] = []
        self.names: dict[str, str] = {}

    def before_call(self, messages: list[dict[str, Any]]) -> None:
        if self.aborted:
            raise AbortRow
        last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
        if last >= 0:
            for message in messages[last + 1 :]:
                if message.get("role") == "tool":
                    self.out.print(role_line(message, self.names))
        self.sent = [dict(m) for m in messages]

    def after_reply(self, message: dict[str, Any], finish_reason: str) -> None:
        self.turn += 1
        self.out.print(rule(f"Turn {self.turn}: LLM Response"))
        self.out.print(role_line({**message, "role": "assistant"}))
        calls = message.get("tool_calls") or []
        if calls:
            self.out.print("Tool calls:")
        for call in calls:
            function = call.get("function") or {}
            name = str(function.get("name") or "?")
            self.names[str(call.get("id"))] = name
            self.out.print(f"  • {name}({_pretty_args(function.get('arguments'))})")
        if finish_reason != "tool_calls":
            self.out.print(f"Finish reason: {finish_reason}")
        if not self.running:
            self._pause()

    def _pause(self) -> None:
        while True:
            answer = self.ask(PAUSE_PROMPT)
            command = None if answer is None else answer.strip().lower()
            if command in ("", "n", "next"):
                return
            if command in ("c", "continue"):
                self.out.print("Continuing to completion...")
                self.running = True
                return
            if command in ("m", "messages"):
                show_messages(self.out, self.sent)
            elif command in ("t", "tools"):
                show_tools(self.out, self.tools)
            elif command is None or command in QUIT:
                self.out.print("Aborting execution...")
                self.aborted = True
                raise AbortRow
            else:
                self.out.print(f"Unknown command: {answer}")
                for line in HELP:
                    self.out.print(line)


def show_messages(out: Output, messages: Sequence[Mapping[str, Any]]) -> None:
    out.print(rule("All Messages"))
    for i, message in enumerate(messages):
        out.print(f"[{i}] {role_line(message)}")


def show_tools(out: Output, tools: Sequence[Any]) -> None:
    out.print(rule("Available Tools"))
    if not tools:
        out.print("  (none)")
    for tool in tools:
        function = tool.get("function", {}) if isinstance(tool, Mapping) else {}
        out.print(f"  • {function.get('name', '?')}")
        if function.get("description"):
            out.print(f"    {function['description']}")
        params = (function.get("parameters") or {}).get("properties") or {}
        if params:
            out.print(f"    Parameters: {', '.join(params)}")


def _pretty_args(raw: Any) -> str:
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return str(raw)
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _ask(prompt: str) -> str | None:
    """One line from the user; None for end of input or Ctrl-C."""
    print(prompt, flush=True)
    try:
        return input("> ")
    except (EOFError, KeyboardInterrupt):
        print()
        return None


async def step_through(
    out: Output,
    session: CheckSession,
    rows: list[Row],
    *,
    first: int | None = None,
    ask: Callable[[str], str | None] = _ask,
) -> None:
    """Choose rows and step through them until the user quits."""
    if not rows:
        out.print("No rows to test.")
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C at a prompt = quit
    by_index = {row.index: row for row in rows}
    low, high = rows[0].index, rows[-1].index
    if first is not None:
        if first in by_index:
            await run_row(out, session, by_index[first], ask)
        else:
            out.print(f"Invalid row index: {first}. Valid range: {low}-{high}")
    while True:
        answer = ask(f"Select a row to test [{low}-{high}] or 'q' to quit:")
        choice = None if answer is None else answer.strip().lower()
        if choice is None or choice in QUIT:
            out.print("Interactive session ended.")
            return
        if not choice.isdigit():
            out.print("Please enter a valid row number or 'q' to quit.")
        elif int(choice) not in by_index:
            out.print(f"Invalid row index. Valid range: {low}-{high}")
        else:
            await run_row(out, session, by_index[int(choice)], ask)


async def run_row(
    out: Output, session: CheckSession, row: Row, ask: Callable[[str], str | None]
) -> RowResult:
    rollout = session.rollout
    try:
        tools = rollout.loop.get_tools(rollout.request(row, 0))
        tool_dicts = [t if isinstance(t, Mapping) else _as_dict(t) for t in tools]
    except Exception:  # the row's own run reports what get_tools raised
        tool_dicts = []
    out.print(rule(f"Row {row.index}"))
    out.print(rule("Initial Messages"))
    for message in row.prompt():
        out.print(role_line(message))
    show_tools(out, tool_dicts)
    stepper = Stepper(out, ask, tool_dicts)
    rollout.observer = stepper
    try:
        result = await session.run_row(row)
    finally:
        rollout.observer = None
    if stepper.aborted:
        result.success, result.error = False, "Aborted by user"
    _show_result(out, result)
    _after(out, result, ask)
    return result


def _as_dict(tool: Any) -> dict[str, Any]:
    from osmosis_client.rollout.agent_loop.schemas import tool_to_dict

    return tool_to_dict(tool)


def _show_result(out: Output, result: RowResult) -> None:
    out.print(rule("Result"))
    out.print(f"Status: {'COMPLETED' if result.success else 'ERROR'}")
    if result.error:
        out.print(f"Error: {result.error}")
    if result.reward is not None:
        out.print(f"Reward: {result.reward}")
    if result.finish_reason:
        out.print(f"Finish reason: {result.finish_reason}")
    out.print(f"Duration: {result.duration_ms / 1000:.2f}s")
    usage = result.token_usage
    calls = usage.get("num_llm_calls")
    extra = f" ({calls} LLM calls)" if calls is not None else ""
    out.print(f"Tokens: {usage.get('total_tokens', 0):,}{extra}")


def _after(out: Output, result: RowResult, ask: Callable[[str], str | None]) -> None:
    while True:
        answer = ask("Commands: [m]essages, [Enter] continue")
        command = None if answer is None else answer.strip().lower()
        if command in ("m", "messages"):
            show_messages(out, result.messages)
        elif command is None or command in ("", "n", "c", *QUIT):
            return
        else:
            out.print(f"Unknown command: {answer}")
            out.print("  m, messages     the final conversation")
            out.print("  Enter           choose another row")
