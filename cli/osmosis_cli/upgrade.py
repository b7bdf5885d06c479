"""``osmosis upgrade``: this CLI's own package brought up to date where it is installed.

Two packages install an ``osmosis`` command: ours, ``osmosis-client``, and the published
``osmosis-ai``. An upgrade names only the one this command runs from — a workspace that
keeps ``osmosis-ai`` for its 0.3 rollouts keeps its version (pip's default upgrade
strategy touches a dependency only when the new version needs it, and ``osmosis-ai`` is
none of ours). The installer is the one that installed us, found from the interpreter's
path as the published CLI finds it: a uv tool, a pipx venv, else pip in this interpreter
(through ``uv pip`` when uv is on PATH). A checkout installed editable is never
"upgraded" from the index: it is updated with git.

The latest version comes from PyPI's JSON API over httpx (the environment's proxies and
CA settings apply); versions are compared by PEP 440 with ``packaging``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata

from osmosis_client.errors import InvalidInputError, OsmosisError

DIST = "osmosis-client"
#: the published package: never named by an upgrade of ours
PUBLISHED = "osmosis-ai"
INDEX = "https://pypi.org/pypi/{name}/json"
UPGRADE_TIMEOUT = 300.0


class UpgradeError(OsmosisError):
    """The index could not be read, or the installer failed."""


@dataclass(frozen=True)
class Installed:
    version: str
    editable: bool
    #: where an editable install points (a checkout), if it is one
    source: str | None = None


@dataclass
class UpgradePlan:
    installed: str
    latest: str
    method: str
    command: list[str] = field(default_factory=list)

    @property
    def needed(self) -> bool:
        from packaging.version import Version

        return Version(self.latest) > Version(self.installed)

    def resource(self) -> dict[str, object]:
        return {
            "installed_version": self.installed,
            "latest_version": self.latest,
            "update_available": self.needed,
            "method": self.method,
            "command": self.command,
            "package": DIST,
        }


def installed() -> Installed:
    """This package's version and whether it is an editable checkout (PEP 610)."""
    dist = metadata.distribution(DIST)
    raw = dist.read_text("direct_url.json")
    try:
        direct = json.loads(raw) if raw else {}
    except ValueError:
        direct = {}
    editable = bool((direct.get("dir_info") or {}).get("editable"))
    return Installed(dist.version, editable, direct.get("url") if editable else None)


def latest(get: Callable[[str], object] | None = None, name: str = DIST) -> str:
    """The newest release on the index (pre-releases left out, as pip leaves them out)."""
    import httpx
    from packaging.version import InvalidVersion, Version

    from osmosis_client._tls import ssl_context

    url = INDEX.format(name=name)
    try:
        with httpx.Client(timeout=15, verify=ssl_context(), follow_redirects=True) as http:
            response = http.get(url, headers={"Accept": "application/json"})
            response.raise_for_status()
            data = response.json()
    except httpx.HTTPStatusError as exc:  # the index answered: not a network problem
        status = exc.response.status_code
        said = f"PyPI has no package named {name}" if status == 404 else f"PyPI answered {status}"
        raise UpgradeError(
            f"cannot read the latest version of {name}: {said} ({url})",
            hint="try again later" if status >= 500 else "check PIP_INDEX_URL and the name",
            code="PLATFORM_ERROR",
        ) from exc
    except (httpx.HTTPError, ValueError) as exc:
        what = "its answer is not JSON" if isinstance(exc, ValueError) else type(exc).__name__
        raise UpgradeError(
            f"cannot read the latest version of {name} from PyPI ({what})",
            hint="check the network (or a proxy: HTTPS_PROXY), then run `osmosis upgrade` again",
            code="PLATFORM_ERROR",
        ) from exc
    releases = [v for v in (data.get("releases") or {}) if _final(v)]
    newest = max(releases, key=Version, default=None) if releases else None
    version = newest or (data.get("info") or {}).get("version")
    try:
        return str(Version(str(version)))
    except InvalidVersion as exc:
        raise UpgradeError(
            f"PyPI answered no usable version for {name}", code="PLATFORM_ERROR"
        ) from exc


def _final(text: str) -> bool:
    from packaging.version import InvalidVersion, Version

    try:
        return not Version(text).is_prerelease
    except InvalidVersion:
        return False


def method_of(executable: str) -> str:
    """How this interpreter's environment was made, by its path (as the published CLI)."""
    path = executable.replace("\\", "/")
    if "/uv/tools/" in path:
        return "uv_tool"
    if "/pipx/venvs/" in path:
        return "pipx"
    return "pip"


def command_for(
    method: str, executable: str, which: Callable[[str], str | None] | None = None
) -> list[str]:
    """The one command that upgrades ``osmosis-client`` where it is installed."""
    which = which or shutil.which
    if method == "uv_tool" and (uv := which("uv")):
        return [uv, "tool", "upgrade", DIST]
    if method == "pipx" and (pipx := which("pipx")):
        return [pipx, "upgrade", DIST]
    if uv := which("uv"):
        return [uv, "pip", "install", "--python", executable, "--upgrade", DIST]
    return [executable, "-m", "pip", "install", "--upgrade", DIST]


def plan(found: Installed | None = None, newest: str | None = None) -> UpgradePlan:
    """What ``osmosis upgrade`` would do (nothing is run). An editable checkout is
    refused: the index would replace the user's working copy."""
    found = found or installed()
    if found.editable:
        raise InvalidInputError(
            f"{DIST} is installed from a checkout ({found.source or 'editable'}): the index "
            "would replace it",
            hint="update the checkout with `git pull` (it is installed editable)",
            code="VALIDATION",
        )
    method = method_of(sys.executable)
    return UpgradePlan(
        found.version, newest or latest(), method, command_for(method, sys.executable)
    )


def run(upgrade: UpgradePlan) -> subprocess.CompletedProcess[str]:
    """Run the installer (its output captured); a failure says what to run by hand."""
    try:
        done = subprocess.run(
            upgrade.command, capture_output=True, text=True, timeout=UPGRADE_TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise _failed(upgrade, str(exc)) from exc
    if done.returncode != 0:
        last = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise _failed(upgrade, f"exit {done.returncode}: {last[0][:300]}")
    return done


def _failed(upgrade: UpgradePlan, why: str) -> UpgradeError:
    return UpgradeError(
        f"the upgrade of {DIST} failed ({why})",
        hint=f"run it yourself: {' '.join(upgrade.command)}",
        code="PLATFORM_ERROR",
        data=upgrade.resource(),
    )
