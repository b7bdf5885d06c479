"""``eval run CONFIG`` in a run directory (the published layout): ``--name`` resumes,
``--fresh`` starts over (archiving), ``--retry-failed`` runs the failures again, and a
finished run is never an error — it is shown again. ``-o DIR`` is the directory runs
live under (default ``.osmosis/evals``); ``-o PATH.json`` keeps the seed form's meaning
(one results document) and is handled by ``run.py``.

What a named run means — which invocation continues which run, what its published files
hold — is the runner's (``osmosis_local_runner.run.named``, shared with ``run_eval``);
this module picks the run from the flags and says what happened."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from osmosis_cli.commands.eval.run import RunOptions
    from osmosis_cli.terminal.output import Output
    from osmosis_client.platform.eval_config import EvalConfig
    from osmosis_local_runner.run.rundir import RunDirectory
    from osmosis_local_runner.run.runner import Runner

def run_named(
    out: Output, opts: RunOptions, config: EvalConfig, echo: dict[str, Any], upload: Any = None
) -> None:
    from osmosis_client.errors import InvalidInputError
    from osmosis_local_runner.run.named import check_root
    from osmosis_local_runner.run.rundir import (
        RunDirectory,
        check_name,
        generate_name,
        latest_unfinished,
    )

    root = opts.output or _relative((config.root or Path.cwd()) / ".osmosis" / "evals")
    check_root(root, config.rollout_dir)
    if opts.name is not None:
        run = RunDirectory(root, check_name(opts.name))
    elif opts.resume:
        from osmosis_local_runner.run.named import config_path

        found = latest_unfinished(root, config_path(config))
        if found is None:
            raise InvalidInputError(
                f"nothing to resume: no unfinished run of {config.name} under {root}",
                hint="name the run with --name NAME",
                code="NOTHING_TO_RESUME",
            )
        run = found
    else:
        run = RunDirectory(root, generate_name(root))
    if opts.dry_run:
        _dry_run(out, opts, config, echo, run)
        return
    with run.locked():
        if opts.fresh:
            archived = run.archive()
            if archived is not None:
                out.info(f"Archived the earlier run to {archived}")
        _run_locked(out, opts, config, echo, run, upload)


def _run_locked(
    out: Output,
    opts: RunOptions,
    config: EvalConfig,
    echo: dict[str, Any],
    run: RunDirectory,
    upload: Any = None,
) -> None:
    from osmosis_cli.commands.eval.execute import execute
    from osmosis_cli.commands.eval.options import adopt_saved
    from osmosis_local_runner.run.named import check_unchanged, open_run
    from osmosis_local_runner.run.overrides import config_spec

    opening = open_run(run, retry_failed=opts.retry_failed)
    if opening == "finished":
        check_unchanged(opts.run_overrides(run.results), run)
        _already_finished(out, opts, run)
        return
    resume = opening == "continue"
    if resume:
        adopt_saved(out, opts, run.results)
    flags = opts.run_overrides(
        run.results, run_dir=run.path, resume=resume, retry_failed=opts.retry_failed, **echo
    )
    facts = _Facts(run, config, out, resume)
    facts.upload = upload
    try:
        execute(
            lambda: config_spec(config, flags),
            out,
            quiet=opts.quiet,
            max_error_rate=opts.max_error_rate,
            junit=opts.junit,
            prepared=facts.prepared,
            resource=facts.resource,
        )
    finally:
        facts.finish()


def _dry_run(
    out: Output, opts: RunOptions, config: EvalConfig, echo: dict[str, Any], run: RunDirectory
) -> None:
    """The plan of this run (continued, when NAME is unfinished); nothing is written."""
    from osmosis_cli.commands.eval.execute import execute
    from osmosis_cli.commands.eval.options import adopt_saved
    from osmosis_local_runner.run.overrides import config_spec

    resume = run.state() == "unfinished"
    if resume:
        adopt_saved(out, opts, run.results)
    flags = opts.run_overrides(run.results, run_dir=run.path, resume=resume, **echo)
    execute(
        lambda: config_spec(config, flags),
        out,
        quiet=opts.quiet,
        max_error_rate=opts.max_error_rate,
        dry_run=True,
    )


def _relative(path: Path) -> Path:
    """``path`` relative to the current directory when it is below it (shorter to read)."""
    with contextlib.suppress(ValueError):
        return path.resolve().relative_to(Path.cwd().resolve())
    return path


def _already_finished(out: Output, opts: RunOptions, run: RunDirectory) -> None:
    """A finished run named again: nothing runs; its results are shown again."""
    from osmosis_cli.commands.eval.execute import report_document

    message = f"Run {run.name!r} was already complete; nothing ran: {run.path}"
    steps = [
        {"action": "eval_run", "description": "Start a new run beside it: drop --name"},
        {"action": "eval_run", "description": "Run it again from scratch: add --fresh"},
        {"action": "eval_run", "description": "Run its failures again: add --retry-failed"},
    ]
    report_document(out, run.results, message=message, next_steps=steps)


class _Facts:
    """The runner's published files of one invocation, plus the ``eval.run`` resource
    the CLI prints (and ``--upload``'s)."""

    def __init__(self, run: RunDirectory, config: EvalConfig, out: Output, resume: bool) -> None:
        from osmosis_local_runner.run.named import Identity, RunFiles

        self.run = run
        self.config = config
        self.out = out
        self.files = RunFiles(
            run, Identity.of(config), resume=resume, on_note=out.info, on_warning=out.warn
        )
        self.upload: Any = None  # --upload: (run dir, config path) → the upload's resource

    def prepared(self, runner: Runner) -> None:
        self.files.prepared(runner)

    def finish(self) -> None:
        self.files.finish()

    def resource(self) -> dict[str, Any]:
        """The published ``eval.run`` keys of a run directory (after its projections)."""
        from osmosis_local_runner.run.named import config_path

        self.finish()
        command = f"osmosis eval run {config_path(self.config) or self.config.name}"
        command += f" --name {self.run.name}"
        resource = {
            "run_name": self.run.name,
            "local_run_id": self.files.local_run_id,
            "output_path": str(self.run.path),
            "results_path": str(self.run.results),
            "metrics": self.files.metrics,
            "failed_rows": self.files.failed_rows[:100],
            "resume_command": command,
            "retry_command": f"{command} --retry-failed",
        }
        if self.upload is not None:
            from osmosis_cli.commands.eval.upload import after_run

            resource.update(
                after_run(
                    self.out, self.upload, self.run.path, self.files.metrics,
                    config_path(self.config),
                )
            )  # fmt: skip
        return resource
