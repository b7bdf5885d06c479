"""The viewer's application: routes, the token check, and the run pages.

Every route is read-only (GET); a run is found by its name only (``check_name``: no path
separators), and a run directory that resolves outside the runs root (a symlink) is
refused — no request reads anything but the runs' results documents.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import secrets
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from aiohttp import web

from osmosis_client.errors import InvalidInputError, OsmosisError
from osmosis_local_runner.api.history import list_runs
from osmosis_local_runner.api.results import RUNS
from osmosis_local_runner.results.documents.sources import Source, unique_labels
from osmosis_local_runner.results.reports.report import live_update, render
from osmosis_local_runner.run.session.rundir import RunDirectory, check_name
from osmosis_local_runner.viewer import api
from osmosis_local_runner.viewer.home import home_page
from osmosis_local_runner.viewer.partial import run_source
from osmosis_local_runner.viewer.suites import list_suites, suite_sources

#: the cookie a browser keeps once it came with the token (so links need no token),
#: named by the viewer's port — a browser keeps cookies per host, not per port, so two
#: viewers on 127.0.0.1 would otherwise overwrite each other's — and holding a value
#: derived from the token, not the token
COOKIE = "osmosis_view_{port}"
#: sent with every answer: nothing cached, nothing framed, nothing sniffed
HEADERS = {
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


#: the tab's icon (a browser asks for it on every page: without one, a 404 each time)
FAVICON = (
    b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16">'
    b'<circle cx="8" cy="8" r="7" fill="#3b6fd4"/></svg>'
)


#: the largest request body read (a review), in bytes
REVIEW_MAX = 64 << 10


@dataclass(frozen=True)
class Viewer:
    """What one viewer serves: the project's runs, to whoever holds ``token``."""

    root: Path
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))

    @property
    def runs(self) -> Path:
        return self.root / RUNS

    def app(self, *outer: Any) -> web.Application:
        """The routes behind the token check (``outer``: middlewares that see every
        request first — the slow-client guard)."""
        # a body is read whole (in whatever pieces it arrives) up to this size: only a
        # review is ever posted
        app = web.Application(middlewares=[*outer, self._guard], client_max_size=REVIEW_MAX)
        app.add_routes(
            [
                web.get("/", self._home),
                web.get("/api/runs", self._runs_json),
                web.get("/runs/{name}", self._run),
                web.get("/runs/{name}/live", self._run_live),
                web.post("/runs/{name}/reviews", self._review),
                web.get("/compare/{a}/{b}", self._compare),
                web.get("/compare/{a}/{b}/live", self._compare_live),
                web.get("/api/suites", self._suites_json),
                web.get("/sweep", self._sweep),
                web.get("/api/runs/{name}", self._api_run),
                web.get("/api/runs/{name}/rows", self._api_rows),
                web.get("/api/runs/{name}/rows/{index}", self._api_row),
                web.get("/api/compare/{a}/{b}", self._api_compare),
                web.get("/suites/{name}", self._suite),
            ]
        )
        return app

    @property
    def _session(self) -> str:
        return hmac.new(self.token.encode(), b"osmosis-view-cookie", "sha256").hexdigest()

    @property
    def write_key(self) -> str:
        """What a write must carry in ``X-Osmosis-Key`` besides the cookie: given only to
        the viewer's own pages (another site can send the cookie, never read the key)."""
        return hmac.new(self.token.encode(), b"osmosis-view-write", "sha256").hexdigest()

    @web.middleware
    async def _guard(self, request: web.Request, handler: Any) -> web.StreamResponse:
        if request.path == "/favicon.ico":  # asked by every browser tab, token or not
            return web.Response(body=FAVICON, content_type="image/svg+xml", headers=HEADERS)
        given = request.query.get("token")
        cookie = COOKIE.format(port=request.url.port or 0)
        if given is not None and hmac.compare_digest(given, self.token):
            # the token in the URL once: keep it as a cookie and drop it from the address
            # (the rest of the query stays: /sweep?runs=… still names its runs)
            kept = request.rel_url.query.copy()
            kept.popall("token")
            answer: web.StreamResponse = web.Response(
                status=302, headers={"Location": str(request.rel_url.with_query(kept))}
            )
            answer.set_cookie(cookie, self._session, httponly=True, samesite="Strict")
        elif hmac.compare_digest(request.cookies.get(cookie, ""), self._session):
            answer = await handler(request)
        else:
            answer = web.Response(
                status=403, text="open the URL `osmosis eval view` printed (it carries a token)\n"
            )
        answer.headers.update(HEADERS)
        return answer

    async def _home(self, request: web.Request) -> web.Response:
        return web.Response(text=home_page(), content_type="text/html")

    async def _runs_json(self, request: web.Request) -> web.Response:
        # reading run directories (and rendering, below) is file I/O: off the loop, so a
        # big report being built never stalls the home's refreshes
        runs = [r.to_json() for r in await asyncio.to_thread(list_runs, self.root)]
        for run in runs:
            run.pop("path", None)  # the page needs names, never the machine's paths
        return web.Response(text=json.dumps({"runs": runs}), content_type="application/json")

    async def _suites_json(self, request: web.Request) -> web.Response:
        suites = await asyncio.to_thread(list_suites, self.root)
        return web.Response(text=json.dumps({"suites": suites}), content_type="application/json")

    async def _suite(self, request: web.Request) -> web.Response:
        return await asyncio.to_thread(self._suite_page, request.match_info["name"])

    def _suite_page(self, name: str) -> web.Response:
        try:
            page, _ = render(suite_sources(self.root, name), home="/")
        except OsmosisError as exc:
            return web.Response(status=404, text=f"{exc}\n")
        return web.Response(text=page, content_type="text/html")

    async def _run(self, request: web.Request) -> web.Response:
        return await asyncio.to_thread(self._page, [request.match_info["name"]], _reviewed(request))

    async def _compare(self, request: web.Request) -> web.Response:
        names = [request.match_info["a"], request.match_info["b"]]
        return await asyncio.to_thread(self._page, names, _reviewed(request))

    async def _run_live(self, request: web.Request) -> web.Response:
        names = [request.match_info["name"]]
        return await asyncio.to_thread(self._live, names, _reviewed(request))

    async def _compare_live(self, request: web.Request) -> web.Response:
        names = [request.match_info["a"], request.match_info["b"]]
        return await asyncio.to_thread(self._live, names, _reviewed(request))

    def _page(self, names: list[str], reviewed: bool) -> web.Response:
        """A run's page or a pair's (``reviewed``: people's verdicts in place of the
        grader's, ``?reviewed=1``)."""
        with tempfile.TemporaryDirectory(prefix="osmosis-view-") as scratch:
            try:
                sources = self._sources(names, Path(scratch), reviewed)
                running = any(s.results.summary.get("status") == "running" for s in sources)
                path = "/".join(["", "runs" if len(names) == 1 else "compare", *map(quote, names)])
                mode = "?reviewed=1" if reviewed else ""
                # a running run's page follows it in place (a written report is static)
                live = f"{path}/live{mode}" if running else None
                # one run's page takes reviews (the key for its writes, this page only)
                review = (
                    {"url": f"/runs/{quote(names[0])}/reviews", "key": self.write_key}
                    if len(names) == 1
                    else None
                )
                toggle = path if reviewed else f"{path}?reviewed=1"
                page, _ = render(sources, live=live, home="/", review=review, toggle=toggle)
            except OsmosisError as exc:
                return web.Response(status=404, text=f"{exc}\n")
        return web.Response(text=page, content_type="text/html")

    async def _review(self, request: web.Request) -> web.Response:
        """A review from a run's page: the key in a header, a small JSON body, appended
        beside the run (``results.reviews``); the results are never written."""
        if not hmac.compare_digest(request.headers.get("X-Osmosis-Key", ""), self.write_key):
            return web.Response(status=403, text="a write needs the page's key\n")
        try:
            body = json.loads(await asyncio.wait_for(request.read(), 10))
            if not isinstance(body, dict):
                raise ValueError("not an object")
        except web.HTTPRequestEntityTooLarge:
            return web.Response(status=413, text=f"a review is at most {REVIEW_MAX:,} bytes\n")
        except (ValueError, asyncio.TimeoutError):
            return web.Response(status=400, text="a review is a JSON object\n")
        return await asyncio.to_thread(self._add_review, request.match_info["name"], body)

    def _add_review(self, name: str, body: dict[str, Any]) -> web.Response:
        from osmosis_local_runner.results.reviews.reviews import add_review, make_review

        with tempfile.TemporaryDirectory(prefix="osmosis-view-") as scratch:
            try:
                self._source(name, Path(scratch))  # a run of ours, by name, inside the root
                fields = (
                    "row",
                    "attempt",
                    "verdict",
                    "score",
                    "reason",
                    "comment",
                    "tag",
                    "author",
                )
                review = make_review(**{k: body.get(k) for k in fields})
                add_review(RunDirectory(self.runs, check_name(name)).results, review)
            except OsmosisError as exc:
                return web.Response(status=400, text=f"{exc}\n")
            except OSError as exc:
                return web.Response(status=500, text=f"cannot write the review ({exc.strerror})\n")
        return web.Response(text=json.dumps(review.to_json()), content_type="application/json")

    # ------------------------------------------------------------ the JSON API (api.py)

    async def _api_run(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        return await asyncio.to_thread(
            self._read,
            [name],
            lambda s: api.run_json(s[0].results, name, RunDirectory(self.runs, name).results),
        )

    async def _api_rows(self, request: web.Request) -> web.Response:
        query = request.query
        try:
            offset, limit = int(query.get("offset", 0)), int(query.get("limit", 50))
        except ValueError:
            return web.Response(status=400, text="offset and limit are whole numbers\n")
        status = query.get("status")
        if (status is not None and status not in api.STATUSES) or offset < 0:
            return web.Response(status=400, text=f"offset >= 0; status one of {api.STATUSES}\n")
        return await asyncio.to_thread(
            self._read,
            [request.match_info["name"]],
            lambda s: api.rows_json(
                s[0].results, offset=offset, limit=limit, status=status, query=query.get("q")
            ),
        )

    async def _api_row(self, request: web.Request) -> web.Response:
        try:
            index = int(request.match_info["index"])
        except ValueError:
            return web.Response(status=400, text="a row's index is a whole number\n")
        return await asyncio.to_thread(
            self._read, [request.match_info["name"]], lambda s: api.row_json(s[0].results, index)
        )

    async def _api_compare(self, request: web.Request) -> web.Response:
        names = [request.match_info["a"], request.match_info["b"]]
        return await asyncio.to_thread(
            self._read, names, lambda s: api.compare_json(s[0].results.path, s[1].results.path)
        )

    def _read(self, names: list[str], answer: Callable[[list[Source]], Any]) -> web.Response:
        """``answer`` of the runs by name (an unfinished one as its journal holds), as
        JSON; a run not found, or nothing to answer, is 404."""
        with tempfile.TemporaryDirectory(prefix="osmosis-view-") as scratch:
            try:
                found = answer([self._source(name, Path(scratch)) for name in names])
            except OsmosisError as exc:
                return web.Response(status=404, text=f"{exc}\n")
        if found is None:
            return web.Response(status=404, text="no such row\n")
        return web.Response(text=api.dumps(found), content_type="application/json")

    async def _sweep(self, request: web.Request) -> web.Response:
        names = [n for n in request.query.get("runs", "").split(",") if n][:50]
        baseline = request.query.get("baseline") or None
        return await asyncio.to_thread(self._sweep_page, names, baseline)

    def _sweep_page(self, names: list[str], baseline: str | None) -> web.Response:
        """Runs along training (``results.sweep``), each by name as its own page reads it."""
        from osmosis_local_runner.results.statistics.sweep import sweep
        from osmosis_local_runner.viewer.sweep_page import sweep_page

        with tempfile.TemporaryDirectory(prefix="osmosis-view-") as scratch:
            try:
                found = [(n, self._source(n, Path(scratch)).results.path) for n in names]
                page = sweep_page(sweep(found, baseline))
            except OsmosisError as exc:
                return web.Response(status=404, text=f"{exc}\n")
        return web.Response(text=page, content_type="text/html")

    def _live(self, names: list[str], reviewed: bool) -> web.Response:
        """A live page's update: its rows and cards now (``results.report.live_update``)."""
        with tempfile.TemporaryDirectory(prefix="osmosis-view-") as scratch:
            try:
                sources = self._sources(names, Path(scratch), reviewed)
                update = live_update(sources)
            except OsmosisError as exc:
                return web.Response(status=404, text=f"{exc}\n")
        return web.Response(text=json.dumps(update), content_type="application/json")

    def _sources(self, names: list[str], scratch: Path, reviewed: bool) -> list[Source]:
        sources = unique_labels([self._source(name, scratch) for name in names])
        if reviewed:  # the reviews live beside the run, not beside a running run's copy
            for name, source in zip(names, sources, strict=True):
                source.results.use_reviews(RunDirectory(self.runs, name).results)
        return sources

    def _source(self, name: str, scratch: Path) -> Source:
        """A run by name: its document, or — while it runs — what its journal holds."""
        return run_source(self.runs, name, scratch)


def _reviewed(request: web.Request) -> bool:
    return request.query.get("reviewed") in ("1", "true", "yes")


#: a viewer is for one person's browser: a request whose headers take longer, or a
#: kept-alive connection with nothing to say for longer, is closed (half-sent requests
#: held open by the hundred would make the viewer unreachable)
HEADER_TIMEOUT = 5.0
IDLE_TIMEOUT = 15.0


async def serve(
    viewer: Viewer,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    ready: Callable[[str], None] | None = None,
) -> None:
    """Serve until cancelled. ``ready(url)`` is called once listening, with the URL that
    carries the token (``port=0``: a free port). An address that cannot be served on is
    :class:`InvalidInputError` (``ADDRESS_IN_USE`` or ``BAD_ADDRESS``), said in words."""
    from osmosis_client._serving import SlowClientGuard

    guard = SlowClientGuard(header_timeout=HEADER_TIMEOUT, idle_timeout=IDLE_TIMEOUT)
    runner = web.AppRunner(viewer.app(guard.middleware()), access_log=None, handle_signals=False)
    await runner.setup()
    assert runner.server is not None
    try:
        listener = await asyncio.get_running_loop().create_server(
            guard.wrap(runner.server), host, port
        )
    except OSError as exc:
        await runner.cleanup()
        raise _address_error(host, port, exc) from exc
    guard.start()
    try:
        bound = int(next(iter(listener.sockets)).getsockname()[1])  # the port chosen when 0
        shown = f"[{host}]" if ":" in host else host
        if ready is not None:
            ready(f"http://{shown}:{bound}/?token={viewer.token}")
        await asyncio.Event().wait()
    finally:
        listener.close()
        await guard.stop()
        await runner.cleanup()


def _address_error(host: str, port: int, exc: OSError) -> InvalidInputError:
    import errno

    if exc.errno == errno.EADDRINUSE:
        return InvalidInputError(
            f"port {port} on {host} is in use",
            hint="choose another port, or a free one (0)",
            code="ADDRESS_IN_USE",
            data={"port": port},
        )
    why = exc.strerror or str(exc)
    return InvalidInputError(
        f"cannot serve on {host}:{port} ({why})",
        hint="use an address of this machine (127.0.0.1, ::1, or 0.0.0.0 for every one)",
        code="BAD_ADDRESS",
        data={"host": host},
    )
