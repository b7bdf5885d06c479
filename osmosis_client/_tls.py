"""Which certificates to trust: decided once, for the platform and model endpoints.

Certificates are always verified. By default the trust store is the system's
(``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` honoured, as OpenSSL does) — what a private
gateway's users already configure. A CA bundle named explicitly (the ``ca_bundle``
argument, else ``OSMOSIS_CA_BUNDLE``) is trusted *in addition*: a self-signed
gateway works without losing the public roots.
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Mapping
from pathlib import Path

from osmosis_client.errors import InvalidInputError

ENV_CA_BUNDLE = "OSMOSIS_CA_BUNDLE"

_contexts: dict[tuple[str, float], ssl.SSLContext] = {}


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


def ssl_context(ca_bundle: str | os.PathLike[str] | None = None) -> ssl.SSLContext | None:
    """A verifying client context trusting the extra bundle besides the usual roots (the
    system's and, when installed, certifi's); None when no bundle is named: the HTTP
    library's own verifying default. Cached per bundle (building one reads files)."""
    path = ca_bundle_path(ca_bundle)
    if path is None:
        return None
    key = (str(path.resolve()), path.stat().st_mtime)
    cached = _contexts.get(key)
    if cached is not None:
        return cached
    context = ssl.create_default_context()
    try:
        import certifi

        context.load_verify_locations(cafile=certifi.where())
    except (ImportError, OSError, ssl.SSLError):
        pass
    try:
        context.load_verify_locations(cafile=str(path))
    except (ssl.SSLError, OSError, ValueError) as exc:
        raise InvalidInputError(
            f"cannot read the CA bundle {str(path)!r} ({exc.__class__.__name__})",
            hint="give a PEM file of certificates (-----BEGIN CERTIFICATE-----)",
            code="BAD_CA_BUNDLE",
        ) from None
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
