"""The routes every kind of platform run shares — eval, training, benchmark runs: create,
list (one page), detail, a sub-resource (metrics, checkpoints), logs, stop, and the
outputs' manifest and download URLs — written once (:class:`RunRoutes`), each kind
naming its route, its wire models and its words. The faces (``eval_runs``,
``training_runs``, ``benchmark_runs``) execute these calls sync or async."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from osmosis_client.platform._transport import RequestOptions, encode_segment
from osmosis_client.platform.eval.sample_models import (
    SampleFile,
    SamplesManifest,
    SampleURL,
    SampleURLs,
)
from osmosis_client.platform.models import LogEntry, LogPage, parse
from osmosis_client.platform.resources._base import Call, log_page_call, page_call, reader

C = TypeVar("C")  # a created run
L = TypeVar("L")  # a page of runs
D = TypeVar("D")  # a run's detail
R = TypeVar("R")
#: at most this many paths per download-URLs request (the platform's limit)
DOWNLOAD_URL_BATCH = 500


@dataclass(frozen=True)
class RunRoutes(Generic[C, L, D]):
    """One kind of run's routes under ``route``; ``kind`` names it in errors ("training
    run"), ``ambiguous`` in what a lost answer to a create may have done."""

    route: str
    kind: str
    created: Callable[[Any], C]
    page: Callable[[Any], L]
    detail: Callable[[Any], D]
    ambiguous: str
    #: where a run's files are listed and fetched (``samples`` for eval runs)
    outputs: str = "outputs"

    def at(self, name_or_id: str, tail: str = "") -> str:
        return f"{self.route}/{encode_segment(name_or_id)}{tail}"

    def create(self, payload: Mapping[str, Any], idempotency_key: str) -> Call[C]:
        """``POST route``: one Idempotency-Key for every retry of it."""
        return Call(
            RequestOptions(
                "POST",
                self.route,
                json=dict(payload),
                scope="required",
                idempotency_key=idempotency_key,
                ambiguous=self.ambiguous,
            ),
            self.created,
        )

    def list(self, limit: int, offset: int, **filters: str | None) -> Call[L]:
        """One page, newest first; ``filters`` given are sent as query parameters."""
        return page_call(self.route, self.page, limit, offset, **filters)

    def get(self, name_or_id: str) -> Call[D]:
        return Call(RequestOptions("GET", self.at(name_or_id), scope="required"), self.detail)

    def part(self, name_or_id: str, tail: str, read: Callable[[Any], R]) -> Call[R]:
        """``GET route/NAME/tail`` (``/metrics``, ``/checkpoints``)."""
        return Call(RequestOptions("GET", self.at(name_or_id, tail), scope="required"), read)

    def logs(self, name_or_id: str, limit: int, cursor: str | None) -> Call[LogPage]:
        return log_page_call(self.route, name_or_id, limit, cursor, f"{self.kind} logs")

    def named(
        self, name_or_id: str, names: Callable[[L], Iterable[str | None]]
    ) -> Generator[Call[Any] | float, Any, D]:
        """The run; not found, with the nearest of the newest page's ``names`` said."""
        from osmosis_client.platform.resources._base import PAGE_LIMIT, named_plan

        return named_plan(name_or_id, self.get(name_or_id), self.list(PAGE_LIMIT, 0), names)

    def follow(
        self,
        name_or_id: str,
        limit: int,
        on_entries: Callable[[builtins.list[LogEntry]], None],
        ended: Callable[[D], bool],
    ) -> Generator[Call[Any] | float, Any, D]:
        """Tail the run's logs until ``ended`` says the run (read each poll) has ended."""
        from osmosis_client.platform.resources.log_follow import follow_plan

        return follow_plan(
            lambda: self.get(name_or_id),
            lambda count, cursor: self.logs(name_or_id, count, cursor),
            ended,
            limit,
            on_entries,
        )

    def stopped(
        self,
        name_or_id: str,
        names: Callable[[L], Iterable[str | None]],
        run_id: Callable[[D], str],
    ) -> Generator[Call[Any] | float, Any, D]:
        """Stop a run: looked up first (not found: nothing is sent), stopped by its id,
        and read again — the run as the platform has it afterwards (409 once ended)."""
        key = run_id((yield from self.named(name_or_id, names)))
        for call in (self.stop(key), self.get(key)):
            answer = yield call
            if isinstance(answer, BaseException):
                raise answer
        return answer  # type: ignore[no-any-return]

    def stop(self, name_or_id: str) -> Call[Any]:
        """``POST route/NAME/stop`` (its answer says nothing the run's state does not)."""
        options = RequestOptions("POST", self.at(name_or_id, "/stop"), json={}, scope="required")
        return Call(options, lambda data: data)

    def manifest(
        self, run_id: str, types: Sequence[str], **params: str | None
    ) -> Call[SamplesManifest]:
        """The files of a run's outputs of ``types`` (and the ``params`` given)."""
        query: dict[str, Any] = {"types": ",".join(types)}
        query.update({key: value for key, value in params.items() if value})
        return Call(
            RequestOptions(
                "GET", self.at(run_id, f"/{self.outputs}/manifest"), params=query, scope="required"
            ),
            lambda data: parse(SamplesManifest, data, what=f"{self.kind} outputs manifest"),
        )

    def download_urls(
        self, run_id: str, files: Sequence[SampleFile]
    ) -> Call[builtins.list[SampleURL]]:
        """Presigned URLs for up to :data:`DOWNLOAD_URL_BATCH` files of the manifest."""
        if len(files) > DOWNLOAD_URL_BATCH:
            raise ValueError(f"at most {DOWNLOAD_URL_BATCH} paths per request")
        items = [
            {"path": f.path, **({"token": f.token} if f.token is not None else {})} for f in files
        ]
        return Call(
            RequestOptions(
                "POST",
                self.at(run_id, f"/{self.outputs}/download-urls"),
                json={"items": items},
                scope="required",
            ),
            lambda data: parse(SampleURLs, data, what="download URLs").urls,
        )


MC = TypeVar("MC", bound=BaseModel)
ML = TypeVar("ML", bound=BaseModel)
MD = TypeVar("MD", bound=BaseModel)


def model_routes(
    route: str, kind: str, created: type[MC], page: type[ML], detail: type[MD]
) -> RunRoutes[MC, ML, MD]:
    """The routes of a kind whose answers are its wire models as they are, each read
    and named in errors by ``kind`` ("training run", "training run list" …)."""
    return RunRoutes(
        route,
        kind,
        created=reader(created, f"created {kind}"),
        page=reader(page, f"{kind} list"),
        detail=reader(detail, kind),
        ambiguous=kind.replace(" ", "_"),
    )


__all__ = ["DOWNLOAD_URL_BATCH", "RunRoutes", "model_routes"]
