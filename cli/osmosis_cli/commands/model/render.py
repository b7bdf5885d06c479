"""How ``model list`` and ``model info`` print: the published envelopes (a sectioned one
for ``--type all``), plain rows and ``Label: value`` lines, and tables for people."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from osmosis_cli.terminal.commands import runnable
from osmosis_cli.terminal.times import when

if TYPE_CHECKING:
    from osmosis_cli.terminal.output import Output
    from osmosis_cli.terminal.pages import Collected
    from osmosis_client.platform.model_models import (
        BaseModelDetail,
        BaseModelInfo,
        LoraModel,
        LoraModelDetail,
        LoraModelPage,
    )

DASH = "–"


def _section(found: Collected[Any]) -> dict[str, Any]:
    return {
        "items": [m.model_dump(mode="json") for m in found.items],
        "total_count": found.total_count,
        "has_more": found.next_offset is not None,
        "next_offset": found.next_offset,
    }


def _lora_item(model: LoraModel) -> dict[str, Any]:
    item = model.model_dump(mode="json")
    if not model.has_deployment:  # no inference here: no deployment keys
        for key in ("deployment_status", "deployed_at", "deployed_by"):
            item.pop(key, None)
    return item


def _quota(page: LoraModelPage | None) -> dict[str, Any]:
    if page is None or "active_deployments" not in page.model_fields_set:
        return {}
    return {
        "active_deployments": page.active_deployments,
        "max_active_deployments": page.max_active_deployments,
    }


def _reward(value: float | None) -> str:
    return DASH if value is None else f"{value:.2f}"


def _base_row(m: BaseModelInfo) -> list[str]:
    # the path configs, LoRA models and `model info` use: Qwen/Qwen3.6-35B-A3B
    return [m.base_model or m.model_name or DASH, when(m.created_at), m.creator_name or DASH]


def _lora_row(m: LoraModel) -> list[str]:
    row = [
        m.model_name or DASH,
        m.base_model or DASH,
        m.training_run_name or DASH,
        DASH if m.checkpoint_step is None else str(m.checkpoint_step),
        _reward(m.reward),
        when(m.created_at),
    ]
    if m.has_deployment:
        row.append("[deployed]" if m.deployed else DASH)
    return row


def list_models(
    out: Output,
    base: Collected[Any] | None,
    lora: Collected[Any] | None,
    first_lora: LoraModelPage | None,
    scope: dict[str, Any],
) -> None:
    quota = _quota(first_lora)
    if out.json_mode:
        if base is not None and lora is not None:
            lora_section = _section(lora) | {"items": [_lora_item(m) for m in lora.items]}
            out.emit_json(
                {
                    "schema_version": 1,
                    "base_models": _section(base),
                    "lora_models": lora_section,
                    **scope,
                    **quota,
                }
            )
            return
        found = base if base is not None else lora
        assert found is not None
        items = (
            [_lora_item(m) for m in found.items] if lora is not None else _section(found)["items"]
        )
        out.list_result(
            items,
            total_count=found.total_count,
            has_more=found.next_offset is not None,
            next_offset=found.next_offset,
            extra={**scope, **quota},
        )
        return
    if out.plain:
        _plain(out, base, lora)
        return
    _tables(out, base, lora, quota)


def _plain(out: Output, base: Collected[Any] | None, lora: Collected[Any] | None) -> None:
    both = base is not None and lora is not None
    if base is not None:
        if both:
            out.print("Base Models:")
        for m in base.items:
            out.print("\t".join(_base_row(m)))
    if lora is not None:
        if both:
            out.print("LoRA Models:")
        for m in lora.items:
            out.print("\t".join(_lora_row(m)))


def _tables(
    out: Output, base: Collected[Any] | None, lora: Collected[Any] | None, quota: dict[str, Any]
) -> None:
    if base is not None:
        out.info("Base Models")
        out.table(
            ["Name", "Created", "Created By"], [_base_row(m) for m in base.items], keep=("Name",)
        )
    if lora is not None:
        out.info("LoRA Models")
        head = [
            "Name",
            "Base Model",
            "Training Run",
            "Checkpoint Step",
            "Training Reward",
            "Created",
        ]
        if any(m.has_deployment for m in lora.items):
            head.append("Deployment Status")
        rows = [_lora_row(m) for m in lora.items]
        out.table(head, [r + [DASH] * (len(head) - len(r)) for r in rows], keep=("Name",))
        if quota.get("max_active_deployments"):
            out.info(
                f"{quota['active_deployments'] or 0} of {quota['max_active_deployments']} "
                "inference deployments used"
            )
        if lora.items:
            out.info("Use osmosis model info <lora-model-name> for details.")
    for found in (base, lora):
        if found is not None and found.next_offset is not None:
            out.info("Showing the first page. Use --all to show all, or --limit to adjust.")
            break


def show_model(
    out: Output, found: LoraModelDetail | BaseModelDetail, scope: dict[str, Any]
) -> None:
    from osmosis_client.platform.model_models import LoraModelDetail

    lora = isinstance(found, LoraModelDetail)
    key = "lora_model" if lora else "base_model"
    drop = {"platform_url", "is_internal_user"}
    item = {k: v for k, v in found.model_dump(mode="json").items() if k not in drop}
    if lora and not found.has_deployment:  # type: ignore[union-attr]
        for name in ("deployment_status", "deployed_at", "deployed_by"):
            item.pop(name, None)
    data = {key: item, "platform_url": found.platform_url, **scope}
    lines = _lora_lines(found) if lora else _base_lines(found)  # type: ignore[arg-type]
    if out.detail_result(data, lines=lines):
        return
    for line in lines:
        out.print(line)


def _lora_lines(m: LoraModelDetail) -> list[str]:
    lines = [f"Name: {m.model_name or DASH}"]
    if m.is_internal_user:
        lines.append(f"ID: {m.id}")
    lines += [
        f"Base Model: {m.base_model or DASH}",
        f"Training Run: {m.training_run_name or DASH}",
        f"Checkpoint Step: {DASH if m.checkpoint_step is None else m.checkpoint_step}",
        f"Training Reward: {_reward(m.reward)}",
        f"Created: {when(m.created_at)}",
        "Hugging Face:",
        f"  Upload Status: {(m.hf_upload_status or DASH).title()}",
    ]
    lines += [f"  URL: {m.hf_url}"] if m.hf_url else []
    lines += [f"  Uploaded By: {m.uploaded_by}"] if m.uploaded_by else []
    if m.has_deployment:
        lines += ["Deployment:", f"  Status: {'Deployed' if m.deployed else 'Not deployed'}"]
        lines += [f"  Deployed: {when(m.deployed_at)}"] if m.deployed_at else []
        lines += [f"  Deployed By: {m.deployed_by}"] if m.deployed_by else []
    lines += [f"View: {m.platform_url}"] if m.platform_url else []
    name = m.model_name or m.id
    if m.has_deployment:
        verb = "Undeploy" if m.deployed else "Deploy"
        lines.append(f"{verb} with: " + runnable("osmosis", "model", verb.lower(), name))
    if m.inference_model:
        lines.append(f"Inference model: {m.inference_model}")
    return lines


def _price(value: float | None) -> str:
    if value is None:
        return DASH
    return f"${value:.4f} / 1M tokens" if value < 0.10 else f"${value:.2f} / 1M tokens"


def _base_lines(m: BaseModelDetail) -> list[str]:
    lines = [f"Name: {m.base_model or m.model_name or DASH}"]
    if m.is_internal_user:
        lines.append(f"ID: {m.id}")
    lines += [f"Namespace: {m.namespace}"] if m.namespace else []
    if m.parameters:
        lines.append(f"Parameters: {_count(m.parameters, 1000, 'KMBT')} ({m.parameters:,})")
    if m.context_window:
        lines.append(
            f"Context Window: {_count(m.context_window, 1024, 'KM')} tokens ({m.context_window:,})"
        )
    lines += [
        f"Created: {when(m.created_at)}",
        f"Created By: {m.creator_name or DASH}",
        "Inference Pricing:",
        f"  Input: {_price(m.inference_input_usd_per_million_tokens)}",
        f"  Cached Input: {_price(m.inference_cached_input_usd_per_million_tokens)}",
        f"  Output: {_price(m.inference_output_usd_per_million_tokens)}",
    ]
    lines += ["Hugging Face:", f"  URL: {m.hf_url}"] if m.hf_url else []
    lines += [f"View: {m.platform_url}"] if m.platform_url else []
    return lines


def _count(value: int, base: int, units: str) -> str:
    """35000000000 → 35B; 262144 tokens (base 1024) → 256K."""
    shown, unit = float(value), ""
    for step in units:
        if shown < base:
            break
        shown, unit = shown / base, step
    return f"{shown:.0f}{unit}" if shown == int(shown) else f"{shown:.1f}{unit}"
