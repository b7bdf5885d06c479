"""The loopback HTTP server our test peers share never wedges its serve loop."""

from __future__ import annotations

import http.client
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from tests.loopback_http import LoopbackHTTPServer, SerialHTTPServer

BODY = b"x" * (4 << 20)  # larger than any socket buffer: a non-blocking write would fail


class _Big(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)

    def log_message(self, *args: object) -> None:
        return None


@pytest.mark.parametrize("kind", [LoopbackHTTPServer, SerialHTTPServer])
def test_an_accept_with_nothing_pending_returns_at_once(kind: type[HTTPServer]) -> None:
    # What a connection reset between select() and accept() leaves behind: a blocking
    # listener would wait here for the next connection, and shutdown() behind it.
    server = kind(("127.0.0.1", 0), _Big)
    try:
        done = threading.Event()

        def once() -> None:
            server._handle_request_noblock()  # type: ignore[attr-defined]
            done.set()

        threading.Thread(target=once, daemon=True).start()
        assert done.wait(10), f"{kind.__name__}: accept() blocked with nothing pending"
    finally:
        server.server_close()


def test_accepted_connections_stay_blocking_and_serve_whole_answers() -> None:
    server = LoopbackHTTPServer(("127.0.0.1", 0), _Big)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        connection = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=30)
        connection.request("GET", "/")
        answer = connection.getresponse()
        assert answer.status == 200
        assert answer.read() == BODY
        connection.close()
    finally:
        server.shutdown()
        server.server_close()
