"""NAME=value files (.env, --env-file, --secrets-file): one reader, never echoing a line."""

from __future__ import annotations

from pathlib import Path

import pytest

from osmosis_client.envfile import parse_env_text, read_env_file
from osmosis_client.errors import InvalidInputError


def test_the_forms_people_write() -> None:
    text = (
        "# a comment\n"
        "\n"
        "PLAIN=value\n"
        "export EXPORTED = spaced \n"
        "SINGLE='it''s # kept'\n"
        'DOUBLE="line\\nnext \\"q\\" \\\\ done"\n'
        "COMMENTED=abc # trailing\n"
        "HASH=abc#def\n"
        "EMPTY=\n"
        "EQUALS=a=b=c\n"
        "PLAIN=later wins\n"
    )
    assert parse_env_text(text, "x.env") == {
        "PLAIN": "later wins",
        "EXPORTED": "spaced",
        "SINGLE": "it''s # kept",
        "DOUBLE": 'line\nnext "q" \\ done',
        "COMMENTED": "abc",
        "HASH": "abc#def",
        "EMPTY": "",
        "EQUALS": "a=b=c",
    }


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("OK=1\nsk-live-s3cr3t\n", 2),
        ("OK=1\n\n1BAD=s3cr3t\n", 3),
        ('A="s3cr3t never closed\n', 1),
        ("NAME WITH SPACE=s3cr3t\n", 1),
        ("=s3cr3t\n", 1),
        ("ÜBER=s3cr3t\n", 1),
    ],
)
def test_a_bad_line_is_named_by_number_and_never_shown(text: str, line: int) -> None:
    with pytest.raises(InvalidInputError) as caught:
        parse_env_text(text, "secrets.env")
    assert f"line {line} in secrets.env" in caught.value.message
    assert "s3cr3t" not in caught.value.message + str(caught.value.hint)
    assert caught.value.data == {"file": "secrets.env", "line": line}


def test_reading_files(tmp_path: Path) -> None:
    path = tmp_path / "a.env"
    path.write_bytes("\ufeffKEY=v\r\nOTHER=w\r\n".encode())  # a BOM and CRLF, as editors write
    assert read_env_file(path) == {"KEY": "v", "OTHER": "w"}
    with pytest.raises(InvalidInputError, match="does not exist"):
        read_env_file(tmp_path / "missing.env")
    path.write_bytes(b"KEY=\xff\xfe\n")
    with pytest.raises(InvalidInputError, match="not UTF-8"):
        read_env_file(path)
