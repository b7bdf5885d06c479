"""The model client's HTTP stack: one aiohttp session per endpoint, and its proxy.

aiohttp carries the protocol — keep-alive, chunked bodies, bounded streaming
decompression (a gzip bomb is inflated a window at a time, never whole), TLS, HTTP
and CONNECT proxies. It never replays a POST on a kept-alive connection the server
dropped (only idempotent methods are retried by it); a failed model call is retried by
our visible retry policy alone, counted and logged.

Proxies come from the environment as curl, requests and httpx read it (``HTTP_PROXY``,
``HTTPS_PROXY``, else ``ALL_PROXY``, and their lower-case forms; credentials in the proxy
URL). A SOCKS proxy (``socks5://…``, common in ``ALL_PROXY``) goes through aiohttp-socks,
the maintained connector for it (the ``socks`` extra), in a session of its own. ``NO_PROXY``
takes its usual forms — ``*``, ``localhost``, ``127.0.0.1``, ``.example.com`` or
``example.com`` (the domain and its hosts), and ``host:port`` — decided once per replica
by the standard library's ``proxy_bypass``, given the host with and without its port.
(aiohttp's own ``trust_env`` asks it with the host alone, so ``host:port`` entries would
be ignored, and it re-reads the environment in a thread for every request.)
"""

from __future__ import annotations

import ssl
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from osmosis_client._redact import redact_url

if TYPE_CHECKING:
    import aiohttp

CONNECT_TIMEOUT = 10.0  # seconds to open a connection (TCP and TLS)


def new_session(
    *, limit: int, ssl_context: ssl.SSLContext | None, timeout: float
) -> aiohttp.ClientSession:
    """A session for one endpoint: ``limit`` connections, the process's TLS policy, a
    deadline of ``timeout`` seconds on each whole request (connect to last byte)."""
    import aiohttp

    connector = aiohttp.TCPConnector(
        limit=limit,
        ttl_dns_cache=300,
        ssl=ssl_context if ssl_context is not None else True,
        # dual-stack hosts: every address raced (RFC 8305), not tried one by one
        happy_eyeballs_delay=0.25,
    )
    return aiohttp.ClientSession(
        connector=connector,
        timeout=aiohttp.ClientTimeout(total=timeout, sock_connect=CONNECT_TIMEOUT),
        trust_env=False,  # proxies are chosen per replica by proxy_for (module docstring)
        auto_decompress=True,
        raise_for_status=False,
    )


#: proxies spoken through aiohttp-socks (the ``socks`` extra), not aiohttp itself
SOCKS_SCHEMES = ("socks4", "socks4a", "socks5", "socks5h")


def proxy_for(url: str) -> str | None:
    """The proxy URL (credentials included) a request to ``url`` goes through, or None:
    ``HTTPS_PROXY`` / ``HTTP_PROXY`` by the URL's scheme, else ``ALL_PROXY`` (as curl,
    requests, httpx and the OpenAI SDK read them), unless ``NO_PROXY`` names the host."""
    from urllib.request import getproxies, proxy_bypass

    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return None
    proxies = getproxies()
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    if not proxy:
        return None
    host = parts.hostname or ""
    if proxy_bypass(host) or proxy_bypass(f"{host}:{port}"):
        return None
    return proxy if "://" in proxy else f"http://{proxy}"


def is_socks(proxy: str | None) -> bool:
    return bool(proxy) and str(proxy).split("://", 1)[0].lower() in SOCKS_SCHEMES


def socks_session(
    proxy: str, *, limit: int, ssl_context: ssl.SSLContext | None, timeout: float
) -> aiohttp.ClientSession:
    """A session whose connections go through a SOCKS proxy (aiohttp-socks: aiohttp
    speaks HTTP proxies only) — otherwise as :func:`new_session`."""
    import aiohttp

    try:
        from aiohttp_socks import ProxyConnector
    except ImportError as exc:
        from osmosis_client.errors import InvalidInputError

        raise InvalidInputError(
            f"the proxy {shown_proxy(proxy)} is a SOCKS proxy, which needs aiohttp-socks",
            hint="pip install 'osmosis-client[socks]' (or unset ALL_PROXY for this endpoint "
            "with NO_PROXY)",
            code="PROXY_UNSUPPORTED",
        ) from exc
    # socks5h / socks4a: the proxy resolves host names (curl's meaning); python-socks
    # takes that as a flag beside the plain scheme
    scheme, _, rest = proxy.partition("://")
    remote = scheme.lower() in ("socks5h", "socks4a")
    plain = {"socks5h": "socks5", "socks4a": "socks4"}.get(scheme.lower(), scheme.lower())
    connector = ProxyConnector.from_url(
        f"{plain}://{rest}",
        limit=limit,
        rdns=remote,
        ssl=ssl_context if ssl_context is not None else True,
    )
    return aiohttp.ClientSession(
        connector=connector,
        timeout=aiohttp.ClientTimeout(total=timeout, sock_connect=CONNECT_TIMEOUT),
        trust_env=False,
        auto_decompress=True,
        raise_for_status=False,
    )


def shown_proxy(proxy: str | None) -> str:
    """A proxy as it may be printed: never its credentials."""
    return redact_url(proxy) if proxy else ""
