"""A hosted run as a person reads it (the details of one run, the cells of a list) and
as ``--json`` carries it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from osmosis_cli.terminal.times import when

if TYPE_CHECKING:
    from osmosis_cli.terminal.output import Output
    from osmosis_client.platform.models import EvalRun


def render_run(out: Output, run: EvalRun) -> None:
    rows: list[tuple[str, str]] = [
        ("Name", run.name),
        ("ID", run.id),
        ("Status", run.status),
        ("Model", run.model or ""),
        ("Dataset", run.dataset or ""),
        ("Rollout", f"{run.rollout or ''}/{run.entrypoint or ''}".strip("/")),
        ("Commit", run.commit_sha or (f"branch {run.branch}" if run.branch else "")),
        ("Created", when(run.created_at)),
        ("Completed", when(run.completed_at)),
        ("URL", run.platform_url or ""),
    ]
    if run.config:
        settings = run.config.model_dump(exclude={"model_path"}, exclude_none=True)
        if settings:
            rows.append(("Config", " ".join(f"{k}={v}" for k, v in settings.items())))
    results = run.results
    if results:
        rate = pct(results.pass_rate)
        if results.graded is not None:
            rate += f" ({results.passed}/{results.graded} graded, {results.skipped or 0} skipped)"
        rows += [("Score", num(results.score)), ("Pass rate", rate)]
        if results.sampled_rows is not None:
            total = results.total_dataset_rows
            rows.append(("Rows", f"{results.sampled_rows}" + (f" of {total}" if total else "")))
        if results.total_tokens is not None:
            rows.append(("Tokens", f"{results.total_tokens:,}"))
        stats = results.reward_stats
        if stats and stats.pass_at_k:
            ks = sorted(stats.pass_at_k.items(), key=lambda kv: int(kv[0]))
            rows.append(("pass@k", "  ".join(f"@{k}={num(v)}" for k, v in ks)))
        if stats:
            parts = [
                f"{label} {num(value)}"
                for label, value in (
                    ("mean", stats.mean),
                    ("std", stats.std),
                    ("min", stats.min),
                    ("median", stats.median),
                    ("max", stats.max),
                )
                if value is not None
            ]
            if parts:
                rows.append(("Reward", " ".join(parts)))
    for label, value in rows:
        if value:
            out.print(f"{label + ':':<11} {value}")


def num(value: float | None) -> str:
    from osmosis_local_runner.results.statistics.scoring import score_text

    return score_text(value, "")


def pct(value: float | None) -> str:
    return "" if value is None else f"{value:.1%}"


# ------------------------------------------------------------------ --json documents

_SUMMARY_KEYS = (
    ("avg_reward", "score"),
    ("pass_rate", "pass_rate"),
    ("graded", "graded"),
    ("passed", "passed"),
    ("failed", "failed"),
    ("skipped", "skipped"),
    ("pass_threshold", "pass_threshold"),
    ("total_tokens", "total_tokens"),
    ("dataset_rows", "total_dataset_rows"),
)


def run_item(run: EvalRun) -> dict[str, Any]:
    """A run for ``--json``: cli.md's flat ``<run>`` plus the published CLI's list-item
    keys (``creator_name``, ``summary``) — a superset of both."""
    document = run.to_json()
    document["creator_name"] = run.creator_name
    results = run.results
    summary: dict[str, Any] = {}
    if results is not None:
        for key, attribute in _SUMMARY_KEYS:
            value = getattr(results, attribute)
            if value is not None:
                summary[key] = value
    document["summary"] = summary
    return document


def run_detail(run: EvalRun) -> dict[str, Any]:
    """``eval info``'s ``data``: the item, and the published ``eval_run`` object."""
    document = run_item(run)
    document["eval_run"] = {
        key: document.get(key)
        for key in (
            "id",
            "name",
            "status",
            "created_at",
            "started_at",
            "completed_at",
            "creator_name",
            "creator_email",
            "platform_url",
        )
    }
    return document
