"""``eval run CONFIG`` in a run directory (the published layout): ``--name`` resumes,
``--fresh`` starts over (archiving), ``--retry-failed`` runs the failures again, and a
finished run is never an error — it is shown again. ``-o DIR`` is the directory runs
live under (default ``.osmosis/evals``); ``-o PATH.json`` keeps the seed form's meaning
(one results document) and is handled by ``run.py``.

What a named run means — which run a call names, which invocation continues which run,
what its published files hold — is the runner's (``osmosis_local_runner.run.invocation``
and ``run.named``, shared with ``run_eval``); this module passes the flags and says what
happened."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from osmosis_cli.commands.eval.run import RunOptions
    from osmosis_cli.terminal.output import Output
    from osmosis_client.platform.eval_config import EvalConfig
    from osmosis_local_runner.run.invocation import Invocation
    from osmosis_local_runner.run.named import RunFiles
    from osmosis_local_runner.run.rundir import RunDirectory

def run_named(
    out: Output, opts: RunOptions, config: EvalConfig, echo: dict[str, Any], upload: Any = None
) -> None:
    from osmosis_local_runner.run.invocation import Invocation, pick_run
    from osmosis_local_runner.run.named import config_path

    root = opts.output or _relative((config.root or Path.cwd()) / ".osmosis" / "evals")
    run = pick_run(
        root, name=opts.name, resume=opts.resume, config_path=config_path(config),
        label=config.name, rollout_dir=config.rollout_dir,
    )  # fmt: skip
    if opts.dry_run:
        _dry_run(out, opts, config, echo, run)
        return
    with Invocation(
        run, fresh=opts.fresh, retry_failed=opts.retry_failed, on_note=out.info,
        on_warning=out.warn,
    ) as invocation:  # fmt: skip
        _run_locked(out, opts, config, echo, invocation, upload)


def _run_locked(
    out: Output,
    opts: RunOptions,
    config: EvalConfig,
    echo: dict[str, Any],
    invocation: Invocation,
    upload: Any = None,
) -> None:
    from osmosis_cli.commands.eval.execute import execute
    from osmosis_cli.commands.eval.options import adopt_saved
    from osmosis_local_runner.run.named import Identity, check_unchanged
    from osmosis_local_runner.run.overrides import config_spec

    run = invocation.run
    if invocation.opening == "finished":
        check_unchanged(opts.run_overrides(run.results), run)
        _already_finished(out, opts, run)
        return
    if invocation.resuming:
        adopt_saved(out, opts, run.results)
    flags = opts.run_overrides(
        run.results, run_dir=run.path, resume=invocation.resuming,
        retry_failed=opts.retry_failed, **echo,
    )  # fmt: skip
    facts = _Facts(run, config, out, invocation.files(Identity.of(config)), upload)
    execute(
        lambda: config_spec(config, flags),
        out,
        quiet=opts.quiet,
        max_error_rate=opts.max_error_rate,
        junit=opts.junit,
        prepared=facts.files.prepared,
        resource=facts.resource,
    )


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
    """The ``eval.run`` resource the CLI prints of a named run (and ``--upload``'s)."""

    def __init__(
        self, run: RunDirectory, config: EvalConfig, out: Output, files: RunFiles, upload: Any
    ) -> None:
        self.run = run
        self.config = config
        self.out = out
        self.files = files
        self.upload = upload  # --upload: (run dir, config path) → the upload's resource

    def resource(self) -> dict[str, Any]:
        """The published ``eval.run`` keys of a run directory (after its projections)."""
        from osmosis_local_runner.run.named import config_path

        self.files.finish()
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
