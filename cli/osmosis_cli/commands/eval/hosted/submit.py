"""``osmosis eval submit CONFIG``: a hosted eval run pinned to the pushed commit (a suite:
one run per entry), optionally waited for and gated."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from osmosis_cli import submitting
from osmosis_cli.commands.eval.hosted.platform import wait_for_run
from osmosis_cli.commands.eval.hosted.render import render_run, run_detail
from osmosis_cli.context import state
from osmosis_cli.terminal.declare import arg, flag
from osmosis_cli.terminal.errors import EvaluationNotPassed, current_output, handle_errors
from osmosis_client.errors import InvalidInputError

if TYPE_CHECKING:
    from osmosis_cli.terminal.output import Output
    from osmosis_client.platform.eval.submission import SubmissionPlan, SubmittedRun
    from osmosis_client.platform.models import EvalRun


@dataclass(kw_only=True)
class SubmitOptions(submitting.PinnedSubmit):
    config_path: Path = arg(metavar="CONFIG", help="configs/eval/NAME.toml")
    wait: bool = flag("--wait", "Wait for the run to finish.", default=False)
    timeout: float | None = flag(
        "--timeout SECONDS", "Stop waiting after SECONDS (the run goes on).", min=0
    )
    min_pass_rate: float | None = flag(
        "--min-pass-rate X", "Exit 4 below this pass rate (implies --wait).", min=0.0, max=1.0
    )
    junit: Path | None = flag(
        "--junit PATH", "With --wait: JUnit XML with one test case per run (its verdict)."
    )

    @property
    def waits(self) -> bool:
        return self.wait or self.min_pass_rate is not None


@handle_errors
def submit(ctx: typer.Context, opts: SubmitOptions) -> None:
    """Submit a hosted eval run pinned to your pushed commit (a suite: one run per entry)."""
    from osmosis_cli.commands.eval.results.ci import check_junit_path
    from osmosis_client.platform.eval.submission import (
        plan_submission,
        submit_planned,
    )

    out = current_output()
    if opts.junit is not None and not opts.waits:
        raise InvalidInputError(
            "--junit needs --wait: the verdicts exist once the runs end",
            hint="add --wait (or --min-pass-rate)",
            code="USAGE",
        )
    check_junit_path(opts.junit)
    planned = partial(plan_submission, opts.config_path, opts.rules())
    with submitting.pinned_scope(state(ctx), out, opts, planned) as pinned:
        plan, client, workspace = pinned.plan, pinned.client, pinned.workspace
        several = plan.suite is not None
        submitted = pinned.send(
            lambda values: submit_planned(
                client, plan, secrets=values, on_submitted=lambda s: _submitted(out, s)
            ),
            summary=lambda: _summary_of(out, plan, pinned.where),
            each_secret=not several,
            question=f"Submit {len(plan.runs)} eval runs?" if several else "Submit this eval run?",
            operation="eval.submit",
        )
        if submitted is None:
            return
        if plan.suite is not None:
            from osmosis_cli.commands.eval.hosted import hosted_suite

            hosted_suite.finish(out, plan.suite, submitted, client, opts)
            return
        if not opts.waits:
            _report_created(out, submitted[0], workspace)
            return
        final = wait_for_run(client, out, submitted[0].run.name, opts.timeout)
    gate(out, final, opts.min_pass_rate, opts.junit)


def _summary_of(out: Output, plan: SubmissionPlan, where: str) -> None:
    if plan.suite is not None:
        from osmosis_cli.commands.eval.hosted import hosted_suite

        hosted_suite.summary(out, plan, where)
    else:
        _summary(out, plan, where)


def _submitted(out: Output, submitted: SubmittedRun) -> None:
    run = submitted.run
    label = f"{submitted.entry}: " if submitted.entry else ""
    out.info(f"Submitted {label}{run.name} ({run.id})")
    if run.platform_url and not submitted.entry:
        out.info(f"  {run.platform_url}")


def _report_created(out: Output, submitted: SubmittedRun, workspace: str | None) -> None:
    created, pin = submitted.run, submitted.pin
    exp = submitted.config.experiment
    resource = {
        "id": created.id,
        "name": created.name,
        "status": created.status,
        "platform_url": created.platform_url,
        "commit_sha": pin.commit_sha,
        "workspace": workspace,
        # the published CLI's keys
        "created_at": created.created_at,
        "url": created.platform_url,
        "model_name": exp.model_path,
        "dataset_name": exp.dataset,
        "config": submitting.config_keys(exp, pin),
    }
    steps = [
        {"action": "eval_info", "name": created.name},
        {"action": "eval_list"},
    ]
    if created.platform_url:
        steps.append({"action": "open_url", "url": created.platform_url})
    message = f"Submitted eval run {created.name}"
    if not out.operation_result(
        "eval.submit", resource=resource, message=message, next_steps=steps
    ):
        out.print(created.name)


def _summary(out: Output, plan: SubmissionPlan, where: str) -> None:
    config, pin = plan.runs[0].config, plan.runs[0].pin
    exp = config.experiment
    out.info(f"Workspace:  {where}")
    out.info(f"Config:     {plan.path}")
    from osmosis_local_runner.api.doors import describe_rollout, detect_mode

    out.info(f"Rollout:    {describe_rollout(config, detect_mode(config))}")
    out.info(f"Model:      {exp.model_path}")
    out.info(f"Dataset:    {exp.dataset}")
    out.info(f"Commit:     {pin.commit_sha or f'branch {pin.branch}'}")
    if config.secrets.required:
        out.info(f"Secrets:    {', '.join(config.secrets.required)}")


def gate(out: Output, run: EvalRun, min_pass_rate: float | None, junit: Path | None = None) -> None:
    """Print the final run (and the CI artefacts); exit 4 when it failed, stopped or
    scored below the gate."""
    from osmosis_cli.commands.eval.results.ci import after_hosted, hosted_cases

    if not out.operation_result(
        "eval.submit", resource=run_detail(run), message=f"Run {run.name} {run.status}"
    ):
        render_run(out, run)
    cases = hosted_cases([(run.name, run)], min_pass_rate)
    after_hosted(out, junit, cases)
    if cases[0].verdict is not None:
        raise EvaluationNotPassed(f"run {run.name} {cases[0].verdict}")
