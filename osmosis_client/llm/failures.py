"""A model call that got no answer, named once: what failed underneath — the port refused,
the name did not resolve, the connection or the answer timed out, the certificate was
not trusted, the proxy refused or wanted other credentials, the server hung up — each
with its own code and a hint that fits it (never "cannot reach" for everything). The
exception beneath is kept as the error's ``__cause__``: a library user's traceback shows
aiohttp's, the socket's or OpenSSL's own words.

Every error here is an :class:`~osmosis_client.errors.EndpointUnreachableError` (the
endpoint is unusable, not this one prompt); ``retryable`` says whether trying again can
help (a refused certificate or a proxy's 407 cannot)."""

from __future__ import annotations

import asyncio
import errno
import socket
from dataclasses import dataclass

from osmosis_client._redact import redact_url
from osmosis_client._tls import certificate_problem
from osmosis_client.errors import EndpointUnreachableError
from osmosis_client.llm.routing import Route


@dataclass(frozen=True)
class Named:
    """One kind of failure: its code, what happened (completing "the model endpoint X
    …"), and what to do."""

    code: str
    what: str
    hint: str
    retryable: bool = True
    through_proxy: bool = False


def name_failure(exc: BaseException, route: Route) -> tuple[EndpointUnreachableError, bool]:
    """The error for ``exc`` met calling ``route``, and whether a retry can help."""
    named = _named(exc, route)
    where = route.shown
    data: dict[str, str] = {"endpoint": where, "failure": named.code}
    message = f"the model endpoint {where} {named.what}"
    if route.proxy is not None:
        proxy = data["proxy"] = redact_url(route.proxy)  # never its credentials
        if named.through_proxy:
            message = f"cannot reach the model endpoint {where} through the proxy {proxy}: "
            message += f"the proxy {named.what}"
        else:
            message += f" (through the proxy {proxy})"
    if named.code == "TLS_CERTIFICATE":
        data["problem"] = certificate_problem(exc) or "certificate verify failed"
    error = EndpointUnreachableError(message, hint=named.hint, code=named.code, data=data)
    error.__cause__ = exc
    return error, named.retryable


def _named(exc: BaseException, route: Route) -> Named:
    problem = certificate_problem(exc)
    if problem is not None:
        return Named(
            "TLS_CERTIFICATE",
            f"presented a certificate that is not trusted ({problem})",
            "trust its CA: set SSL_CERT_FILE or OSMOSIS_CA_BUNDLE to a PEM bundle holding it",
            retryable=False,
        )
    proxied = _proxy_failure(exc)
    if proxied is not None:
        return proxied
    if _dns(exc):
        host = route.url.split("://", 1)[-1].split("/", 1)[0].rsplit(":", 1)[0]
        return Named(
            "ENDPOINT_DNS",
            f"could not be found: the name {host!r} does not resolve",
            "check the host name in the base URL (and the network's DNS)",
        )
    return _socket_failure(exc) or Named(
        "ENDPOINT_UNREACHABLE",
        f"cannot be reached ({type(exc).__name__}: {exc})"[:300],
        "check the base URL and that the server is running",
    )


def _proxy_failure(exc: BaseException) -> Named | None:
    """A failure of the proxy itself (aiohttp's HTTP proxies, aiohttp-socks' SOCKS ones)."""
    import aiohttp

    hint = "check the proxy (HTTPS_PROXY / HTTP_PROXY / ALL_PROXY), or name the endpoint's host "
    hint += "in NO_PROXY to reach it directly"
    status = getattr(exc, "status", None)
    if isinstance(exc, aiohttp.ClientHttpProxyError) or (
        type(exc).__module__.startswith("python_socks") and "auth" in str(exc).lower()
    ):
        if status == 407 or "auth" in str(exc).lower():
            return Named(
                "PROXY_AUTH",
                "refused the credentials (407)",
                "check the user and password in the proxy's URL",
                retryable=False,
                through_proxy=True,
            )
        return Named(
            "PROXY_ERROR",
            f"answered {status} instead of opening a tunnel",
            hint,
            through_proxy=True,
        )
    if isinstance(exc, aiohttp.ClientProxyConnectionError) or (
        type(exc).__module__.startswith("python_socks")
    ):
        return Named(
            "PROXY_REFUSED", f"cannot be reached ({_reason(exc)})", hint, through_proxy=True
        )
    return None


def _dns(exc: BaseException) -> bool:
    import aiohttp

    dns_error = getattr(aiohttp, "ClientConnectorDNSError", ())
    return isinstance(exc, dns_error) or isinstance(_os_error(exc), socket.gaierror)


def _socket_failure(exc: BaseException) -> Named | None:
    import aiohttp

    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        return Named(
            "ENDPOINT_CONNECT_TIMEOUT",
            "did not accept a connection in time",
            "check that the host is reachable from here (firewall, VPN) and the port",
        )
    if isinstance(exc, aiohttp.SocketTimeoutError | asyncio.TimeoutError):
        return Named(
            "ENDPOINT_READ_TIMEOUT",
            "accepted the request but did not answer in time",
            "the server may be overloaded or stuck: fewer attempts in flight, or a longer "
            "request timeout",
        )
    os_error = _os_error(exc)
    number = os_error.errno if os_error is not None else None
    if number == errno.ECONNREFUSED:
        return Named(
            "ENDPOINT_REFUSED",
            "refused the connection (nothing listens on that port)",
            "start the server, or check the host and port in the base URL",
        )
    if isinstance(exc, aiohttp.ServerDisconnectedError | aiohttp.ClientPayloadError) or number in (
        errno.ECONNRESET,
        errno.EPIPE,
    ):
        return Named(
            "ENDPOINT_DISCONNECTED",
            "closed the connection before answering",
            "the server may have crashed or restarted: check its log",
        )
    return None


def _os_error(exc: BaseException) -> OSError | None:
    """The socket's own error beneath aiohttp's wrapper, if any."""
    found = getattr(exc, "os_error", None)
    if isinstance(found, OSError):
        return found
    cause = exc.__cause__ or exc.__context__
    if isinstance(cause, OSError):
        return cause
    return exc if isinstance(exc, OSError) and exc.errno is not None else None


def _reason(exc: BaseException) -> str:
    found = _os_error(exc)
    return found.strerror if found is not None and found.strerror else type(exc).__name__


__all__ = ["name_failure"]
