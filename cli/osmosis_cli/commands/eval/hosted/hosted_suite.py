"""``osmosis eval submit SUITE.toml`` rendered: the plan's table, the created runs, and
(``--wait``) every run's verdict. Submitting — pins, one Idempotency-Key per entry, the
suite named in each run's ``advanced_config``, the record ``eval list --suite`` reads —
is the SDK's (``osmosis_client.platform.eval.submission``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from osmosis_cli.commands.eval.hosted.render import run_item
from osmosis_cli.terminal.errors import EvaluationNotPassed

if TYPE_CHECKING:
    from osmosis_cli.commands.eval.hosted.submit import SubmitOptions
    from osmosis_cli.terminal.output import Output
    from osmosis_client import Client
    from osmosis_client.platform.eval.submission import SubmissionPlan, SubmittedRun
    from osmosis_client.platform.models import EvalRun


def summary(out: Output, plan: SubmissionPlan, where: str) -> None:
    out.info(f"Workspace:  {where}")
    out.info(f"Suite:      {plan.suite} ({plan.path}), {len(plan.runs)} entries")
    out.info(f"Commit:     {', '.join(plan.commits)}")
    rows = [
        [
            str(r.entry),
            f"{r.config.experiment.rollout}/{r.config.experiment.entrypoint}",
            str(r.config.experiment.model_path),
            str(r.config.experiment.dataset),
        ]
        for r in plan.runs
    ]
    if not out.json_mode:
        out.table(["entry", "rollout", "model", "dataset"], rows, keep=["entry"])


def finish(
    out: Output, suite: str, submitted: list[SubmittedRun], client: Client, opts: SubmitOptions
) -> None:
    """The created runs; with ``--wait``, every run waited for and gated."""
    if not opts.waits:
        _report_created(out, suite, submitted)
        return
    finals = [(s, client.eval_runs.wait(s.run.name, timeout=opts.timeout)) for s in submitted]
    _gate_all(out, suite, finals, opts.min_pass_rate, opts.junit)


def _report_created(out: Output, suite: str, submitted: list[SubmittedRun]) -> None:
    runs: list[dict[str, Any]] = [
        {
            "entry": s.entry,
            "id": s.run.id,
            "name": s.run.name,
            "status": s.run.status,
            "platform_url": s.run.platform_url,
            "commit_sha": s.pin.commit_sha,
        }
        for s in submitted
    ]
    if out.operation_result(
        "eval.submit",
        resource={"suite": suite, "runs": runs},
        message=f"Submitted {len(runs)} runs of suite {suite}",
    ):
        return
    out.table(
        ["entry", "run", "url"],
        [[str(r["entry"]), str(r["name"]), str(r["platform_url"] or "")] for r in runs],
        keep=["entry", "run", "url"],
    )


def _gate_all(
    out: Output,
    suite: str,
    finals: list[tuple[SubmittedRun, EvalRun]],
    min_pass_rate: float | None,
    junit: Path | None = None,
) -> None:
    """Every run must pass: exit 4 when any ended failed/stopped or below the gate."""
    from osmosis_cli.commands.eval.results.ci import after_hosted, hosted_cases

    cases = hosted_cases([(str(s.entry), run) for s, run in finals], min_pass_rate)
    failures = [f"{c.label} ({c.name}) {c.verdict}" for c in cases if c.verdict is not None]
    rows = [
        [
            c.label,
            c.name,
            c.status,
            "" if c.pass_rate is None else f"{c.pass_rate:.1%}",
            c.verdict or "ok",
        ]
        for c in cases
    ]
    resource = {
        "suite": suite,
        "runs": [{"entry": s.entry, **run_item(run)} for s, run in finals],
    }
    if not out.operation_result("eval.submit", resource=resource, message=f"Suite {suite}"):
        out.table(["entry", "run", "status", "pass rate", "verdict"], rows, keep=["entry", "run"])
    after_hosted(out, junit, cases)
    if failures:
        raise EvaluationNotPassed(
            f"{len(failures)} of {len(finals)} runs did not pass: {'; '.join(failures)}"
        )
