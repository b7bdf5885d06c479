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
        for example in sorted(p for p in examples.iterdir() if p.is_dir()):
            build_data["force_include"][str(example)] = f"osmosis_cli/_examples/{example.name}"
