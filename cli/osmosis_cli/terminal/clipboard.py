"""The device code copied to the clipboard of a local desktop, as the published CLI
copies it: never over SSH (the clipboard there is the remote machine's, or none), never
for more than 3 seconds, never failing the login — and "copied" is said only when a
clipboard tool took the text (no OSC 52 guess, which the published CLI reports as
copied whether or not a terminal honoured it).

Why not pyperclip: it finds the same tools, but waits on them without a bound (a hung
``xclip`` would hang the login) and knows nothing of SSH; what is needed is this lookup.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import Any

TIMEOUT = 3.0
SSH = ("SSH_CONNECTION", "SSH_TTY", "SSH_CLIENT")


def copy(
    text: str,
    env: Mapping[str, str] | None = None,
    which: Callable[[str], str | None] | None = None,
    run: Callable[..., Any] = subprocess.run,
) -> bool:
    """True when a local clipboard tool took ``text``; False otherwise (nothing said)."""
    env = os.environ if env is None else env
    if any(env.get(name) for name in SSH):
        return False
    for command in _tools(env, which or shutil.which):
        try:
            run(
                command,
                input=text,
                text=True,
                timeout=TIMEOUT,
                check=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        except (OSError, subprocess.SubprocessError):
            continue
        return True
    return False


def _tools(env: Mapping[str, str], which: Callable[[str], str | None]) -> Iterator[list[str]]:
    """The clipboard tools this desktop has, most native first."""
    wanted: list[list[str]] = []
    if sys.platform == "darwin":
        wanted.append(["pbcopy"])
    if sys.platform == "win32":
        wanted.append(["clip"])
    if env.get("WAYLAND_DISPLAY"):
        wanted.append(["wl-copy"])
    if env.get("WSL_DISTRO_NAME"):
        wanted.append(["clip.exe"])
    if env.get("DISPLAY"):
        wanted += [["xclip", "-selection", "clipboard"], ["xsel", "--clipboard", "--input"]]
    for command in wanted:
        found = which(command[0])
        if found:
            yield [found, *command[1:]]
