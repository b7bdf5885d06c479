"""W&B's offline run file (``run-ID.wandb``) read back: its records, decoded with W&B's
own protobuf messages (``wandb.proto.wandb_internal_pb2.Record``). The framing is
LevelDB's log format under a W&B header (``:W&B`` + version): 32 KiB blocks of records,
each with a 7-byte header (CRC, length, type: full / first / middle / last). W&B 0.31
ships no Python reader of its own, hence these lines."""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

BLOCK = 32 * 1024
HEADER = 7


def records(path: Path) -> Iterator[Any]:
    from wandb.proto import wandb_internal_pb2

    data = path.read_bytes()
    assert data[:4] == b":W&B", "not a W&B run file"
    position, pending = 7, b""
    while position + HEADER <= len(data):
        left = BLOCK - position % BLOCK
        if left < HEADER:  # a block's tail too short for a header: padding
            position += left
            continue
        _, length, kind = struct.unpack("<IHB", data[position : position + HEADER])
        body = data[position + HEADER : position + HEADER + length]
        position += HEADER + length
        if kind == 1:
            chunk = body
        elif kind == 2:
            pending = body
            continue
        elif kind == 3:
            pending += body
            continue
        elif kind == 4:
            chunk, pending = pending + body, b""
        else:
            continue
        record = wandb_internal_pb2.Record()
        record.ParseFromString(chunk)
        yield record


def history(path: Path) -> list[dict[str, Any]]:
    """Each ``run.log`` row as a dict: ``{"_step": …, "key": value, …}``."""
    rows = []
    for record in records(path):
        if record.WhichOneof("record_type") != "history":
            continue
        row: dict[str, Any] = {}
        for item in record.history.item:
            key = item.key or "/".join(item.nested_key)
            row[key] = json.loads(item.value_json)
        if record.history.HasField("step"):
            row["_step"] = record.history.step.num
        rows.append(row)
    return rows


def config(path: Path) -> dict[str, Any]:
    """The run's config as its first run record holds it."""
    for record in records(path):
        if record.WhichOneof("record_type") == "run":
            return {i.key: json.loads(i.value_json) for i in record.run.config.update}
    return {}
