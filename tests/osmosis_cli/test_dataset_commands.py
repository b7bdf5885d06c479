"""`osmosis dataset …`: validate offline, with the published envelopes."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
import respx

from tests.conftest import PLATFORM
from tests.osmosis_cli.conftest import Invoke


def rows(path: Path, count: int, **extra: object) -> Path:
    path.write_text(
        "".join(
            json.dumps({"user_prompt": f"q{i}", "ground_truth": str(i), **extra}) + "\n"
            for i in range(count)
        )
    )
    return path


def test_validate_a_good_file_in_every_mode(invoke: Invoke, tmp_path: Path) -> None:
    path = rows(tmp_path / "good.jsonl", 5)
    human = invoke("dataset", "validate", str(path))
    assert human.exit_code == 0, human.stderr
    assert "Status: Valid jsonl file" in human.stdout and "Rows: 5" in human.stdout
    data = invoke("--json", "dataset", "validate", str(path)).data()
    assert data["valid"] is True and data["errors"] == [] and data["file_name"] == "good.jsonl"
    assert {"file", "extension", "file_size", "warnings"} <= set(data)
    plain = invoke("dataset", "validate", str(path), "--plain").stdout.splitlines()
    assert plain[0] == f"File: {path}" and plain[-1] == "Status: Valid jsonl file"


def test_validate_names_every_problem_by_line_and_exits_2(invoke: Invoke, tmp_path: Path) -> None:
    path = rows(tmp_path / "bad.jsonl", 4)
    with path.open("a") as handle:
        handle.write('{"user_prompt": "x"}\nnot json\n')
    result = invoke("dataset", "validate", str(path))
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert lines[0].startswith("error: validation failed: bad.jsonl has 2 problems")
    assert f"{path}:5: missing ground_truth" in lines[1]
    assert f"{path}:6: not JSON" in lines[2]
    error = invoke("--json", "dataset", "validate", str(path)).error()
    assert error["code"] == "VALIDATION" and error["details"]["valid"] is False
    assert error["details"]["errors"][0].startswith("line 5: missing ground_truth")


def test_validate_needs_no_login_and_refuses_odd_files(invoke: Invoke, tmp_path: Path) -> None:
    missing = invoke("dataset", "validate", str(tmp_path / "nope.jsonl"))
    assert missing.exit_code == 2 and "file not found" in missing.stderr
    (tmp_path / "notes.txt").write_text("hi")
    odd = invoke("dataset", "validate", str(tmp_path / "notes.txt"))
    assert odd.exit_code == 2 and "unsupported file type '.txt'" in odd.stderr


# ------------------------------------------------------------------ the platform

RECORD = {
    "id": "ds1",
    "file_name": "qa",
    "file_size": 4,
    "status": "uploaded",
    "row_count": 5,
    "data_preview": [{"user_prompt": "q0"}],
    "created_at": "2026-11-20T10:00:00Z",
    "creator_name": "Ada",
}


@pytest.fixture
def logged_in(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OSMOSIS_TOKEN", "tok")
    monkeypatch.setenv("OSMOSIS_WORKSPACE", "acme")


def test_upload_validates_confirms_sends_and_completes(
    invoke: Invoke, tmp_path: Path, router: respx.MockRouter, logged_in: None
) -> None:
    path = rows(tmp_path / "qa.jsonl", 5)
    upload = {"method": "simple", "presigned_url": f"{PLATFORM}/storage/put"}
    create = router.post("/api/cli/datasets").respond(
        201, json={**RECORD, "status": "pending", "upload": upload}
    )
    put = router.put("/storage/put").respond(200)
    complete = router.post("/api/cli/datasets/ds1/complete").respond(200, json={})
    refused = invoke("--json", "dataset", "upload", str(path))
    assert refused.exit_code == 2 and refused.error()["code"] == "INTERACTIVE_REQUIRED"
    assert not create.called  # confirmation first, nothing sent
    done = invoke("--json", "dataset", "upload", str(path), "--yes")
    assert done.exit_code == 0, done.stderr
    document = done.json()
    assert (document["operation"], document["message"]) == (
        "dataset.upload",
        "Dataset uploaded: qa",
    )
    assert "upload" not in document["resource"] and "data_preview" not in document["resource"]
    assert json.loads(create.calls.last.request.content)["file_name"] == "qa"
    assert put.calls.last.request.content == path.read_bytes()
    assert complete.called


def test_upload_refuses_an_invalid_file_before_any_call(
    invoke: Invoke, tmp_path: Path, router: respx.MockRouter, logged_in: None
) -> None:
    path = rows(tmp_path / "few.jsonl", 2)
    create = router.post("/api/cli/datasets").respond(500)
    result = invoke("dataset", "upload", str(path), "--yes")
    assert result.exit_code == 2 and "file validation failed" in result.stderr
    assert not create.called


def test_upload_of_a_taken_name_says_overwrite(
    invoke: Invoke, tmp_path: Path, router: respx.MockRouter, logged_in: None
) -> None:
    path = rows(tmp_path / "qa.jsonl", 5)
    router.post("/api/cli/datasets").respond(409, json={"existing_dataset_id": "old"})
    result = invoke("dataset", "upload", str(path), "--yes")
    assert result.exit_code == 1
    assert "already exists" in result.stderr and "--overwrite" in result.stderr


@pytest.mark.parametrize("failure", ["refused", "5xx", "abort fails"])
def test_upload_failures_carry_hints_that_are_true(
    invoke: Invoke, tmp_path: Path, router: respx.MockRouter, logged_in: None, failure: str
) -> None:
    """Issue 33: a refused connection or a 5xx on create said "the run may have been
    created — check `osmosis eval list`"; a failed abort still said it was aborted."""
    path = rows(tmp_path / "qa.jsonl", 5)
    router.get("/api/cli/datasets/qa").respond(404, json={"message": "none"})
    if failure == "refused":
        router.post("/api/cli/datasets").mock(side_effect=httpx.ConnectError("refused"))
    elif failure == "5xx":
        router.post("/api/cli/datasets").respond(503, json={"message": "busy"})
    else:
        upload = {"method": "simple", "presigned_url": f"{PLATFORM}/storage/put"}
        router.post("/api/cli/datasets").respond(201, json={**RECORD, "upload": upload})
        router.put("/storage/put").respond(403)
        router.post("/api/cli/datasets/ds1/abort").respond(500, json={})
    result = invoke("dataset", "upload", str(path), "--yes")
    assert result.exit_code == 1, result.stderr
    text = result.stderr
    assert "eval list" not in text and "run may have been created" not in text
    if failure == "refused":
        assert "may have been" not in text
    elif failure == "5xx":
        assert "dataset may have been registered" in text and "dataset list" in text
    else:
        assert "could not be aborted" in text and "was aborted" not in text


def test_list_and_info(invoke: Invoke, router: respx.MockRouter, logged_in: None) -> None:
    router.get("/api/cli/datasets").respond(
        200, json={"datasets": [RECORD], "total_count": 1, "has_more": False}
    )
    listed = invoke("--json", "dataset", "list")
    assert [i["id"] for i in listed.items()] == ["ds1"]
    assert "data_preview" not in listed.items()[0]
    plain = invoke("--plain", "dataset", "list").stdout.splitlines()
    assert plain[0].split("\t")[:3] == ["qa", "uploaded", "4 B"]
    router.get("/api/cli/datasets/qa").respond(200, json=RECORD)
    assert invoke("--json", "dataset", "info", "qa").data()["row_count"] == 5
    router.get("/api/cli/datasets/gone").respond(404, json={"code": "NOT_FOUND"})
    missing = invoke("--json", "dataset", "info", "gone")
    assert missing.exit_code == 1 and missing.error()["code"] == "NOT_FOUND"


def test_preview_slices_the_platforms_preview(
    invoke: Invoke, router: respx.MockRouter, logged_in: None
) -> None:
    rows_ = [{"user_prompt": f"q{i}"} for i in range(8)]
    router.get("/api/cli/datasets/qa").respond(200, json={**RECORD, "data_preview": rows_})
    data = invoke("--json", "dataset", "preview", "qa", "--rows", "3").data()
    assert data["rows"] == rows_[:3] and (data["requested_rows"], data["returned_rows"]) == (3, 3)
    assert data["available"] is True and data["dataset"]["id"] == "ds1"
    human = invoke("dataset", "preview", "qa", "--rows", "2")
    assert human.stdout.splitlines() == ['{"user_prompt": "q0"}', '{"user_prompt": "q1"}']
    router.get("/api/cli/datasets/busy").respond(
        200, json={**RECORD, "status": "processing", "data_preview": None}
    )
    busy = invoke("--json", "dataset", "preview", "busy").data()
    assert busy["available"] is False and busy["rows"] is None
    assert busy["message"] == "Dataset is still processing (status: processing)."


def test_download_writes_the_file_whole_where_o_says(
    invoke: Invoke, tmp_path: Path, router: respx.MockRouter, logged_in: None
) -> None:
    body = b'{"a":1}\n'
    router.get("/api/cli/datasets/qa").respond(200, json={**RECORD, "file_size": len(body)})
    router.get("/api/cli/datasets/qa/download").respond(
        200, json={"presignedUrl": f"{PLATFORM}/storage/qa-file.jsonl", "fileName": "qa"}
    )
    fetch = router.get("/storage/qa-file.jsonl").respond(200, content=body)
    result = invoke("--json", "dataset", "download", "qa", "-o", str(tmp_path))
    assert result.exit_code == 0, result.stderr
    target = tmp_path / "qa.jsonl"  # no extension in the name: the URL's is appended
    assert target.read_bytes() == body
    assert result.json()["resource"]["output_path"] == str(target)
    assert "authorization" not in fetch.calls.last.request.headers  # the URL is the credential
    again = invoke("--json", "dataset", "download", "qa", "-o", str(target))
    assert again.exit_code == 2 and again.error()["message"].startswith("File already exists")
    assert invoke("dataset", "download", "qa", "-o", str(target), "--overwrite").exit_code == 0
    absent = invoke("dataset", "download", "qa", "-o", str(tmp_path / "new") + "/")
    assert absent.exit_code == 2 and "Output directory not found" in absent.stderr
    assert not list(tmp_path.glob(".*partial"))


def test_download_refuses_a_file_of_the_wrong_size_and_keeps_nothing(
    invoke: Invoke, tmp_path: Path, router: respx.MockRouter, logged_in: None
) -> None:
    router.get("/api/cli/datasets/qa").respond(200, json={**RECORD, "file_size": 100})
    router.get("/api/cli/datasets/qa/download").respond(
        200, json={"presigned_url": f"{PLATFORM}/storage/qa.jsonl"}
    )
    router.get("/storage/qa.jsonl").respond(200, content=b"x" * 120)
    result = invoke("dataset", "download", "qa", "-o", str(tmp_path / "qa.jsonl"))
    assert result.exit_code == 1 and "size 120 bytes, the platform said 100" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_download_waits_for_a_finished_upload(
    invoke: Invoke, tmp_path: Path, router: respx.MockRouter, logged_in: None
) -> None:
    router.get("/api/cli/datasets/qa").respond(200, json={**RECORD, "status": "uploading"})
    link = router.get("/api/cli/datasets/qa/download").respond(500)
    result = invoke("--json", "dataset", "download", "qa", "-o", str(tmp_path))
    assert result.exit_code == 2
    assert "still processing (status: uploading)" in result.error()["message"]
    assert json.loads(result.stderr)["command"] == "dataset download"
    assert not link.called


def test_logs_pages_with_a_cursor(
    invoke: Invoke, router: respx.MockRouter, logged_in: None
) -> None:
    entry = {
        "timestamp": "2026-11-20T10:00:00Z",
        "level": "error",
        "step": "parse",
        "message": "row 3: bad",
    }
    route = router.get("/api/cli/datasets/qa/logs").respond(
        200, json={"logs": [entry], "next_cursor": "c2"}
    )
    listed = invoke("--json", "dataset", "logs", "qa", "--limit", "10", "--cursor", "c1")
    assert listed.exit_code == 0, listed.stderr
    assert listed.items()[0]["message"] == "row 3: bad" and listed.json()["has_more"] is True
    assert listed.json()["next_cursor"] == "c2"
    query = route.calls.last.request.url.params
    assert (query["limit"], query["direction"], query["cursor"]) == ("10", "older", "c1")
    human = invoke("dataset", "logs", "qa")
    assert "ERROR" in human.stdout and "--cursor c2" in human.stderr
