"""``osmosis benchmark submit CONFIG``: a benchmark run (published-cli-0.3.8-train.md
§4.9). What is checked and sent is ``osmosis_client.platform.benchmark.benchmark_submission``'s;
this asks and renders."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from osmosis_cli import submitting
from osmosis_cli.context import result_scope, state
from osmosis_cli.terminal.commands import runnable
from osmosis_cli.terminal.declare import arg
from osmosis_cli.terminal.errors import current_output, handle_errors

if TYPE_CHECKING:
    from osmosis_cli.terminal.output import Output
    from osmosis_client.platform.benchmark.benchmark_models import CreatedBenchmarkRun
    from osmosis_client.platform.benchmark.benchmark_submission import BenchmarkPlan


@dataclass(kw_only=True)
class SubmitOptions(submitting.Submit):
    config_path: Path = arg(metavar="CONFIG", help="configs/benchmark/NAME.toml (or anywhere)")


@handle_errors
def submit(ctx: typer.Context, opts: SubmitOptions) -> None:
    """Submit a benchmark run: the config's agents on the benchmark's tasks."""
    from osmosis_client.platform.benchmark.benchmark_submission import (
        plan_benchmark,
        require_stored,
        submit_planned_benchmark,
    )

    out = current_output()
    submitting.refuse_unconfirmed(out, opts.yes)
    client, workspace = state(ctx).scoped_client()
    with client:
        plan = plan_benchmark(client, opts.config_path.expanduser())  # the file checked first
        for code, warning in plan.warnings:
            out.warn(warning, code=code)
        created = submitting.confirm_and_send(
            out,
            client,
            opts,
            names=plan.config.secrets.required,
            summary=lambda: _summary(out, plan, workspace),
            question="Submit this benchmark run?",
            operation="benchmark.submit",
            send=lambda values: submit_planned_benchmark(client, plan, secrets=values),
            before=lambda stored: require_stored(client, plan.config, set(stored) or None),
        )
    if created is not None:
        _report(out, created, plan, result_scope(workspace))


def _summary(out: Output, plan: BenchmarkPlan, workspace: str | None) -> None:
    from osmosis_client.platform.benchmark.benchmark_config import SHOWN_DEFAULTS

    config, execution = plan.config, plan.config.execution
    out.info(f"Workspace:  {workspace or 'the one connected to this repository'}")
    out.info(f"Benchmark:  {plan.benchmark.name} ({plan.benchmark.key})")
    out.info(f"Tasks:      {config.tasks_label}")
    attempts = execution.attempts_per_task or SHOWN_DEFAULTS["attempts_per_task"]
    concurrent = execution.max_concurrent_attempts or SHOWN_DEFAULTS["max_concurrent_attempts"]
    out.info(f"Attempts per task: {attempts} · max concurrent attempts: {concurrent}")
    for index, agent in enumerate(config.agents, 1):
        out.info(f"Agent {index}:    {agent.label} → {agent.model_label}")
        for name in sorted(agent.env):
            note = " (overrides global)" if name in config.env else ""
            out.info(f"  env {name}{note}")
    for name in sorted(config.env):
        out.info(f"Env:        {name}")


def _report(
    out: Output, created: CreatedBenchmarkRun, plan: BenchmarkPlan, scope: dict[str, Any]
) -> None:
    payload = plan.config.to_submit_payload()
    resource = {
        "id": created.id,
        "name": created.name,
        "status": created.status,
        "benchmark_name": plan.config.experiment.benchmark,
        "workflow_id": created.workflow_id,
        "task_count": created.task_count,
        "created_at": created.created_at,
        "platform_url": created.platform_url,
        **scope,
        "config": {
            "experiment": payload["experiment_config"],
            "tasks": payload.get("tasks_config", {}),
            "agents": payload["agents"],
            "execution": payload.get("execution_config", {}),
        },
    }
    steps = [
        {"action": "benchmark_run_info", "name": created.name},
        {"action": "benchmark_info", "name": plan.benchmark.key},
        {"action": "benchmark_list"},
    ]
    lines = [
        f"Status: {created.status}",
        f"Benchmark: {plan.benchmark.name}",
        "Check status with: " + runnable("osmosis", "benchmark", "runs", "info", created.name),
    ]
    submitting.report_submitted(
        out,
        "benchmark.submit",
        resource=resource,
        steps=steps,
        lines=lines,
        message=f"Benchmark run submitted: {created.name}",
        url=created.platform_url,
    )
