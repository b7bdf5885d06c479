"""Commands the CLI prints or plans for a person or an agent to run as printed: every
word quoted (``shlex``), so a name that came from the platform, a config or a file is
data, never shell (``osmosis eval upload 'a b'``)."""

from __future__ import annotations

import shlex


def runnable(*words: object) -> str:
    """``runnable("osmosis", "train", "logs", name)``: one line a shell runs as meant."""
    return shlex.join(str(word) for word in words)


__all__ = ["runnable"]
