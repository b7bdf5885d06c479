"""A Responses API stream (``response.*`` server-sent events) folded into the response
object it streams: what ``responses.to_completion`` then reads like a whole answer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from osmosis_client.errors import ProviderRequestError
from osmosis_client.llm.streaming import Event, event_object


class ResponsesAssembler:
    """Folds a Responses stream (``response.*`` events) into the final response object:
    the terminal event's, its output completed from ``output_item.done`` (the complete
    items, with their final ``encrypted_content``) when it has none."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.items: dict[int, dict[str, Any]] = {}
        self.final: dict[str, Any] | None = None
        self.done = False

    def add(self, event: Event) -> None:
        if self.done:
            return
        if event.data.strip() == "[DONE]":  # vLLM ends with it; OpenAI with a terminal event
            self.done = True
            return
        found = event_object(event, self.where)
        if found is None:
            return
        kind = found.get("type") or event.event
        if kind == "response.output_item.done" and isinstance(found.get("item"), dict):
            index = found.get("output_index")
            self.items[index if isinstance(index, int) else len(self.items)] = found["item"]
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            response = found.get("response")
            self.final = dict(response) if isinstance(response, Mapping) else {}
            self.done = True

    def result(self) -> dict[str, Any]:
        if self.final is None:
            raise ProviderRequestError(
                f"the model endpoint {self.where}'s stream ended before the response did"
            )
        if not self.final.get("output") and self.items:
            self.final["output"] = [self.items[i] for i in sorted(self.items)]
        return self.final


__all__ = ["ResponsesAssembler"]
