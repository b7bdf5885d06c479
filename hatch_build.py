"""Build hook: ship ``examples/`` inside ``osmosis_cli`` for ``osmosis eval init --example``.

Only standard wheels get the copy; an editable install reads the checkout's
``examples/`` directly (a copy under site-packages would shadow the editable
package redirect).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class ExamplesHook(BuildHookInterface):  # type: ignore[misc]
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version != "standard":
            return
        examples = Path(self.root) / "examples"
        for file in sorted(examples.rglob("*")):
            inside = file.relative_to(examples)
            if not file.is_file() or len(inside.parts) < 2 or _skipped(inside):
                continue
            build_data["force_include"][str(file)] = f"osmosis_cli/_examples/{inside}"


def _skipped(path: Path) -> bool:
    """Local state a developer's runs leave in a checkout's examples: never shipped."""
    return path.suffix == ".pyc" or any(
        part.startswith(".") or part == "__pycache__" or part.endswith(".run")
        for part in path.parts
    )
