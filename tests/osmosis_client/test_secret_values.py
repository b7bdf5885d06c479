"""``resolve_secrets``: one order for every caller (a file, the environment, the stored
secrets, then whoever the caller asks), and no value in any error."""

from __future__ import annotations

from pathlib import Path

import pytest

from osmosis_client.errors import InvalidInputError
from osmosis_client.secret_values import resolve_secrets


def test_a_file_beats_the_environment_which_beats_the_stored_and_asking(tmp_path: Path) -> None:
    file = tmp_path / "s.env"
    file.write_text("A=from-file\nUNASKED=x\n")
    asked: list[str] = []

    def ask(name: str) -> str | None:
        asked.append(name)
        return "typed" if name == "D" else ""

    found = resolve_secrets(
        ["A", "B", "C", "D", "E"],
        file=file,
        environ={"A": "env-a", "B": "env-b", "C": ""},
        stored={"C": "workspace"},
        ask=ask,
    )
    assert found.provided == {"A": "from-file", "B": "env-b", "D": "typed"}
    assert found.source == {"A": "file", "B": "environment", "C": "stored", "D": "prompt"}
    assert found.missing == ["E"] and asked == ["D", "E"]  # only what is still missing
    assert "UNASKED" not in found.provided


def test_no_names_reads_nothing_and_a_missing_value_is_named_never_shown(tmp_path: Path) -> None:
    assert resolve_secrets([], file=tmp_path / "absent.env").provided == {}
    found = resolve_secrets(["KEY", "OTHER"], environ={"OTHER": "v4lue"})
    with pytest.raises(InvalidInputError) as refused:
        found.require()
    assert refused.value.code == "INTERACTIVE_REQUIRED"
    assert refused.value.data["missing"] == ["KEY"] and "v4lue" not in str(refused.value)
    assert resolve_secrets(["OTHER"], environ={"OTHER": "v4lue"}).require() == {"OTHER": "v4lue"}
