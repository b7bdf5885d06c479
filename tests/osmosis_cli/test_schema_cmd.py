"""``osmosis eval schema``: the results document's JSON Schema holds what runs write."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.osmosis_cli.conftest import Invoke


def test_a_real_runs_document_and_directory_match_the_printed_schema(
    invoke: Invoke, quickstart_project: Path
) -> None:
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema checks the schema itself")
    run = ["eval", "run", "configs/eval/thinking.toml", "-q", "--limit", "3", "--name", "s"]
    assert invoke(*run).exit_code == 0
    printed = invoke("eval", "schema")
    assert printed.exit_code == 0, printed.stderr
    document = json.loads(printed.stdout)
    assert document["schema_version"] == 1
    jsonschema.Draft202012Validator.check_schema(document["results"])
    results = json.loads((quickstart_project / ".osmosis/evals/s/results.json").read_text())
    jsonschema.validate(results, document["results"])  # with usage, calls, transcripts
    written = {p.name for p in (quickstart_project / ".osmosis/evals/s").iterdir()}
    assert written <= set(document["run_directory"])  # every file a run writes is named
    broken = {**results, "rows": [{"runs": []}]}  # a row without its index
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, document["results"])
    enveloped = invoke("--json", "eval", "schema").json()
    assert enveloped["data"]["results"]["title"] == "osmosis results document"
