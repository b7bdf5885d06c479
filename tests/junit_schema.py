"""The JUnit XML schema our ``--junit`` output is validated against: Jenkins' junit-10.xsd
(MIT, by Gregory Boissinot), the schema pytest validates its own ``--junitxml`` with.

It is not copied into this repository: it is taken from the pytest source distribution on
the package index (the version installed here), once, into ``$OSMOSIS_CI_CACHE``
(default ``~/.cache/osmosis-ci``). Tests skip with the reason when that is impossible.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import pytest

from tests.published_sdk import CACHE

MEMBER = "testing/example_scripts/junit-10.xsd"


def junit_xsd() -> Path:
    version = pytest.__version__
    target = CACHE / "junit-xsd" / f"pytest-{version}" / "junit-10.xsd"
    if target.is_file():
        return target
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--no-binary",
                ":all:",
                "-d",
                tmp,
                f"pytest=={version}",
            ],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        archives = list(Path(tmp).glob("pytest-*.tar.gz"))
        if done.returncode != 0 or not archives:
            pytest.skip(
                f"cannot fetch the pytest {version} sdist for junit-10.xsd: "
                f"{(done.stderr or '').strip().splitlines()[-1:] or 'no archive'}"
            )
        with tarfile.open(archives[0]) as archive:
            member = archive.extractfile(f"pytest-{version}/{MEMBER}")
            if member is None:
                pytest.skip(f"pytest {version}'s sdist has no {MEMBER}")
            data = member.read()
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".{os.getpid()}.part")
    partial.write_bytes(data)
    partial.replace(target)
    return target


def validate(xml: Path | bytes) -> None:
    """Raise when ``xml`` is not valid against junit-10.xsd."""
    import xmlschema

    schema = xmlschema.XMLSchema(str(junit_xsd()))
    schema.validate(xml.decode() if isinstance(xml, bytes) else str(xml))
