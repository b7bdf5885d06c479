"""Which certificates to trust: one policy, built once, for every client in the process.

Certificates are always verified. Every client we make — the platform (httpx), model
endpoints (aiohttp), downloads and uploads to presigned URLs, the 0.2 agent-loop
server's calls to its trainer, template fetches — takes its context from
:func:`ssl_context`, so one process never trusts two different stores. The order:

1. the roots: ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` when set (they *replace* the default
   store, as OpenSSL, httpx and requests read them); otherwise **certifi**'s bundle —
   the same roots on every laptop, container and CI machine, already httpx's default
   (so the platform client trusted it before this policy) and the OpenAI SDK's;
2. besides those roots, a bundle named explicitly: the ``ca_bundle`` argument
   (``--ca-bundle``), else ``$OSMOSIS_CA_BUNDLE`` — a self-signed gateway works without
   losing the public roots.

Why certifi rather than the system store (``truststore``): it is already installed with
httpx, it behaves identically in a slim container with no CA package and on a laptop,
and a private CA is one variable away either way (docs/reliability.md).
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Mapping
from pathlib import Path

from osmosis_client.errors import InvalidInputError

ENV_CA_BUNDLE = "OSMOSIS_CA_BUNDLE"

_contexts: dict[tuple[object, ...], ssl.SSLContext] = {}


def ca_bundle_path(
    ca_bundle: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None
) -> Path | None:
    """The extra CA bundle to trust: the argument, else ``$OSMOSIS_CA_BUNDLE``, else None."""
    env = os.environ if env is None else env
    given = ca_bundle if ca_bundle not in (None, "") else env.get(ENV_CA_BUNDLE) or None
    if given is None:
        return None
    path = Path(given).expanduser()
    if not path.is_file():
        raise InvalidInputError(
            f"the CA bundle {str(path)!r} is not a file",
            hint="give the path of a PEM file with the certificates to trust",
            code="BAD_CA_BUNDLE",
        )
    return path


def _roots(env: Mapping[str, str]) -> tuple[str | None, str | None]:
    """(cafile, capath) of the roots: SSL_CERT_FILE / SSL_CERT_DIR, else certifi."""
    cafile = env.get("SSL_CERT_FILE") or None
    capath = env.get("SSL_CERT_DIR") or None
    if cafile is not None and not os.path.isfile(cafile):
        cafile = None  # as httpx: a variable naming nothing is ignored
    if capath is not None and not os.path.isdir(capath):
        capath = None
    if cafile is None and capath is None:
        import certifi

        cafile = certifi.where()
    return cafile, capath


def _stamp(path: str | None) -> float:
    try:
        return os.stat(path).st_mtime if path else 0.0
    except OSError:
        return 0.0


def ssl_context(ca_bundle: str | os.PathLike[str] | None = None) -> ssl.SSLContext:
    """The verifying client context of this process's policy (module docstring), cached
    per input (building one reads files); every client passes it to its HTTP library."""
    extra = ca_bundle_path(ca_bundle)
    cafile, capath = _roots(os.environ)
    key = (cafile, capath, _stamp(cafile), str(extra) if extra else None, _stamp(str(extra)))
    cached = _contexts.get(key)
    if cached is not None:
        return cached
    try:
        context = ssl.create_default_context(cafile=cafile, capath=capath)
    except (ssl.SSLError, OSError, ValueError) as exc:
        raise InvalidInputError(
            f"cannot read the certificates in SSL_CERT_FILE / SSL_CERT_DIR "
            f"({exc.__class__.__name__})",
            hint="point SSL_CERT_FILE at a PEM bundle, or unset it",
            code="BAD_CA_BUNDLE",
        ) from exc
    if extra is not None:
        try:
            context.load_verify_locations(cafile=str(extra))
        except (ssl.SSLError, OSError, ValueError) as exc:
            raise InvalidInputError(
                f"cannot read the CA bundle {str(extra)!r} ({exc.__class__.__name__})",
                hint="give a PEM file of certificates (-----BEGIN CERTIFICATE-----)",
                code="BAD_CA_BUNDLE",
            ) from exc
    _contexts[key] = context
    return context


def certificate_problem(exc: BaseException | None) -> str | None:
    """The reason when ``exc`` (or what caused it) is a failed certificate check."""
    seen = 0
    while exc is not None and seen < 10:
        certificate_error = getattr(exc, "certificate_error", None)  # aiohttp's wrapper
        if isinstance(certificate_error, BaseException) and certificate_error is not exc:
            exc = certificate_error
            continue
        if isinstance(exc, ssl.SSLCertVerificationError):
            return getattr(exc, "verify_message", None) or "certificate verify failed"
        if isinstance(exc, ssl.SSLError) and "CERTIFICATE_VERIFY_FAILED" in str(exc):
            return "certificate verify failed"
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return None
