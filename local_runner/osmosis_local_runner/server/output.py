"""What a rollout server gets from our environment, and what of its output we write.

The server gets what the platform would give it: ``[env]``, ``[secrets]`` and what a
process needs to run — nothing else of the shell, never the model key. Everything it
prints goes to ``server.log`` (0600) line by line, however the pipe cuts it, with every
secret we know of redacted over the whole line (and a live echo with ``-v``).
"""

from __future__ import annotations

import collections
import contextlib
import os
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING

from osmosis_client._fs import open_nofollow
from osmosis_client._redact import redact_urls_in, safe_text

if TYPE_CHECKING:
    import asyncio

LAST_LINES = 20
MAX_LINE_BYTES = 1 << 20  # of one output line kept in server.log
MAX_ECHO = 8192  # characters of a line echoed live (-v)

#: what a rollout server gets from our environment: what a process needs to run (paths,
#: locale, temporary files, certificates, proxies, caches) — as the platform passes it
#: [env] and [secrets] and nothing of the user's shell. Never the model key or tokens.
PASSED = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "LANG",
        "LANGUAGE",
        "TZ",
        "TMPDIR",
        "TMP",
        "TEMP",
        "LD_LIBRARY_PATH",
        "DYLD_LIBRARY_PATH",
        "SYSTEMROOT",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "REQUESTS_CA_BUNDLE",
        "CURL_CA_BUNDLE",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "NO_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "no_proxy",
        "all_proxy",
        "XDG_CACHE_HOME",
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "XDG_RUNTIME_DIR",
        "HF_HOME",
        "HF_HUB_CACHE",
        "HF_HUB_OFFLINE",
        "TIKTOKEN_CACHE_DIR",
        "PYTHONIOENCODING",
        "PYTHONUTF8",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONPYCACHEPREFIX",
        "NO_COLOR",
    }
)
PASSED_PREFIXES = ("LC_",)
#: names whose values are treated as secrets wherever they appear in the server's output
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE", re.I)


def server_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The part of our environment a rollout server inherits (see :data:`PASSED`)."""
    return {k: v for k, v in environ.items() if k in PASSED or k.startswith(PASSED_PREFIXES)}


def rollout_environment(
    environ: Mapping[str, str],
    config_env: Mapping[str, str],
    secrets: Mapping[str, str],
    redact: Redactor,
) -> dict[str, str]:
    """The server's environment: what a process needs, ``[env]``, the ``[secrets]``
    values the run was given — nothing else of the shell, never the model key. Every
    secret value, and every value of ``environ`` named like one, is redacted."""
    base = server_env(environ)
    base.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # offline: no pricing fetch
    base.update(config_env)
    for name, value in secrets.items():
        base[name] = value
        redact.add(value)
    for value in secret_values(environ):  # whatever the rollout reads and prints
        redact.add(value)
    return base


def secret_values(environ: Mapping[str, str]) -> list[str]:
    """Values of variables named like secrets (``*_API_KEY``, ``*TOKEN*``…), to redact."""
    return [v for k, v in environ.items() if SECRET_NAME.search(k) and len(v) >= 8]


class Redactor:
    """Replaces secret values (and URL credentials) in text."""

    def __init__(self, values: Iterable[str] = ()) -> None:
        self._values = sorted({v for v in values if v and len(v) >= 4}, key=len, reverse=True)

    def add(self, value: str) -> None:
        if value and len(value) >= 4 and value not in self._values:
            self._values = sorted([*self._values, value], key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for value in self._values:
            if value in text:
                text = text.replace(value, "***")
        return redact_urls_in(text)

    def head(self, text: str, limit: int) -> str:
        """The first ``limit`` characters of a line whose rest is dropped: redacted over
        what is kept, then with a trailing word that may be the start of a secret (or
        of a URL's credentials) cut away."""
        kept = self(text)[:limit]
        word = max(kept.rfind(" "), kept.rfind("\t"))
        tail = kept[word + 1 :]
        if "://" in tail or any(
            value.startswith(tail[-n:])
            for value in self._values
            for n in range(1, len(tail) + 1)
            if n <= len(value)
        ):
            kept = kept[: word + 1]
        return kept


class ServerOutput:
    """The server's log file, its last lines (for error messages) and the live echo."""

    def __init__(
        self, run_dir: Path, redact: Redactor, echo: Callable[[str], None] | None = None
    ) -> None:
        self.run_dir = run_dir
        self.redact = redact
        self.echo = echo
        self.lines: collections.deque[str] = collections.deque(maxlen=LAST_LINES)
        self._log: IO[str] | None = None

    @property
    def log_path(self) -> Path:
        return self.run_dir / "server.log"

    def open(self) -> None:
        if self._log is None:
            self.run_dir.mkdir(parents=True, exist_ok=True)
            path = self.log_path
            fd = open_nofollow(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            self._log = os.fdopen(fd, "a", encoding="utf-8", buffering=1)

    def write(self, line: str) -> None:
        if self._log is not None:
            with contextlib.suppress(OSError, ValueError):
                self._log.write(line + "\n")

    def line(self, raw: bytes, dropped: int = 0) -> None:
        text = safe_text(raw.decode("utf-8", "replace").rstrip("\r\n"))
        if dropped:
            text = self.redact.head(text, MAX_LINE_BYTES) + f" … [{dropped:,} bytes not shown]"
        else:
            text = self.redact(text)
        self.lines.append(text[:500])  # already redacted whole: any cut is safe now
        self.write(text)
        if self.echo is not None:
            self.echo(text if len(text) <= MAX_ECHO else text[:MAX_ECHO] + " …")

    async def read(self, stream: asyncio.StreamReader) -> None:
        """Lines, however the pipe cuts them. A line longer than MAX_LINE_BYTES is kept
        up to that length (redacted with the whole kept part in view, a half-seen secret
        cut away) and the rest of it dropped: no piece of a line is ever written on its
        own, so a secret can never be split across two written lines."""
        pending = bytearray()
        dropping = 0  # bytes dropped of the current overlong line
        while True:
            chunk = await stream.read(65536)
            if not chunk:
                break
            start = 0
            while start < len(chunk):
                end = chunk.find(b"\n", start)
                piece = chunk[start:] if end < 0 else chunk[start:end]
                if dropping:
                    dropping += len(piece)
                else:
                    pending += piece
                    if len(pending) > MAX_LINE_BYTES:
                        dropping = len(pending) - MAX_LINE_BYTES
                        del pending[MAX_LINE_BYTES:]
                if end < 0:
                    break
                self.line(bytes(pending), dropped=dropping)
                pending.clear()
                dropping = 0
                start = end + 1
        if pending or dropping:
            self.line(bytes(pending), dropped=dropping)

    def close(self) -> None:
        if self._log is not None:
            with contextlib.suppress(OSError):
                self._log.close()
            self._log = None
