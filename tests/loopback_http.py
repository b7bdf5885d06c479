"""A loopback HTTP server for test peers that cannot wedge.

``socketserver`` selects on the listening socket, then calls ``accept()``. When a
client connects and resets before that ``accept()`` (a process killed mid-test, a
starved machine), select has said "readable", the pending connection is gone, and a
blocking ``accept()`` waits for the *next* connection: ``serve_forever`` stops
serving and ``shutdown()`` in a fixture's teardown waits for it forever. A
non-blocking listening socket makes that ``accept()`` raise ``BlockingIOError``,
which socketserver already treats as "nothing to do". Accepted connections stay
blocking: Python gives them the default timeout (None), not the listener's.
"""

from __future__ import annotations

from http.server import HTTPServer, ThreadingHTTPServer


class LoopbackHTTPServer(ThreadingHTTPServer):
    """One thread per connection; threads never outlive the test process."""

    daemon_threads = True

    def server_activate(self) -> None:
        super().server_activate()
        self.socket.setblocking(False)


class SerialHTTPServer(HTTPServer):
    """One connection at a time (for peers that count on serial handling)."""

    def server_activate(self) -> None:
        super().server_activate()
        self.socket.setblocking(False)
