"""What ships with the package: the example workspaces (``eval init --example``) and the
rollout templates drawn from them (``template apply``).

In a standard wheel the examples are copied into ``osmosis_cli/_examples`` (the build
hook); an editable install or a checkout reads the repository's ``examples/``.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def example_root() -> Path:
    package = Path(str(resources.files("osmosis_cli")))
    packaged = package / "_examples"
    if packaged.is_dir():
        return packaged
    return package.resolve().parents[1] / "examples"  # cli/osmosis_cli → the checkout


def examples() -> list[str]:
    root = example_root()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
