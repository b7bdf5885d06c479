"""Keeping secrets and terminal escapes out of output, logs, errors and files.

``redact_url`` hides the ``user:password@`` part of a URL; ``safe_text`` strips
terminal control sequences (e.g. an OSC 52 clipboard write) from text a server
or model sent before anyone prints it.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@]*@")
# ESC-introduced sequences (CSI, OSC … BEL/ST, two-byte), then any other C0/C1 control
_ANSI = re.compile(
    r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC … (BEL or ST)
    r"|\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS, SOS, PM, APC
    r"|\x1b[@-Z\\-_]?"  # other two-byte escapes (or a lone ESC)
    r"|\x9b[0-?]*[ -/]*[@-~]"  # 8-bit CSI
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"  # remaining controls (keeps \t and \n)
)


def redact_url(url: str) -> str:
    """``https://user:pw@host/v1`` → ``https://***@host/v1`` (other URLs unchanged)."""
    if "@" not in url:
        return url
    try:
        parts = urlsplit(url)
    except ValueError:
        return _USERINFO.sub(r"\1***@", url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, f"***@{host}", parts.path, parts.query, parts.fragment))


def redact_urls_in(text: str) -> str:
    """Every ``scheme://user:pw@`` inside free text, redacted."""
    return _USERINFO.sub(r"\1***@", text)


_C1 = re.compile("[\x7f-\x9f\u2028\u2029]")


def safe_json(text: str) -> str:
    """JSON text (``ensure_ascii=False``) with DEL, the C1 controls (U+0080–U+009F: a
    terminal may act on U+009B as CSI) and the line separators written as ``\\uXXXX``
    escapes — still the same JSON, now inert on a terminal. Those characters can only
    occur inside strings, where the escape means the same character."""
    return _C1.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def safe_text(text: str) -> str:
    """Text with terminal control sequences removed (safe to print)."""
    return _ANSI.sub("", text)
