"""``eval run CONFIG`` in a run directory (the published layout): ``--name`` resumes,
``--fresh`` starts over (archiving), ``--retry-failed`` runs the failures again, and a
finished run is never an error — it is shown again. ``-o DIR`` is the directory runs
live under (default ``.osmosis/evals``); ``-o PATH.json`` keeps the seed form's meaning
(one results document) and is handled by ``run.py``."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from osmosis_cli.commands.eval.run import RunOptions
    from osmosis_cli.terminal.output import Output
    from osmosis_client.platform.eval_config import EvalConfig
    from osmosis_local_runner.run.overrides import Overrides
    from osmosis_local_runner.run.rundir import RunDirectory
    from osmosis_local_runner.run.runner import Runner

#: the settings a finished run named again may not change (Overrides names)
ADOPTED = ("n", "limit", "seed", "pass_threshold", "rows")


def run_named(
    out: Output, opts: RunOptions, config: EvalConfig, echo: dict[str, Any], upload: Any = None
) -> None:
    from osmosis_client.errors import InvalidInputError
    from osmosis_local_runner.run.rundir import (
        RunDirectory,
        check_name,
        generate_name,
        latest_unfinished,
    )

    root = opts.output or _relative((config.root or Path.cwd()) / ".osmosis" / "evals")
    _check_root(root, config)
    if opts.name is not None:
        run = RunDirectory(root, check_name(opts.name))
    elif opts.resume:
        found = latest_unfinished(root, _config_path(config))
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
    from osmosis_client.errors import InvalidInputError
    from osmosis_local_runner.run.overrides import config_spec

    state = run.state()
    if state == "foreign":
        raise InvalidInputError(
            f"{run.path} holds a run this version cannot continue (another tool's, or damaged)",
            hint="start it over with --fresh (it is archived), or use another --name",
            code="RESULTS_EXIST",
        )
    if state == "finished" and not opts.retry_failed:
        _check_flags(opts.run_overrides(run.results), run)
        _already_finished(out, opts, run)
        return
    resume = state != "absent"
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


def _check_root(root: Path, config: EvalConfig) -> None:
    """Runs live in a directory: never a file, never inside the rollout (its sources)."""
    from osmosis_client.errors import InvalidInputError

    if root.exists() and not root.is_dir():
        raise InvalidInputError(
            f"{root} is a file, not the directory runs are kept in",
            hint="name a directory, or a FILE.json for one results document",
            code="RESULTS_PATH",
        )
    rollout = config.rollout_dir.resolve()
    if root.resolve() == rollout or rollout in root.resolve().parents:
        raise InvalidInputError(
            f"{root} is inside the rollout {config.rollout_dir}: runs would mix with its sources",
            hint="name a directory outside rollouts/",
            code="RESULTS_PATH",
        )


def _relative(path: Path) -> Path:
    """``path`` relative to the current directory when it is below it (shorter to read)."""
    with contextlib.suppress(ValueError):
        return path.resolve().relative_to(Path.cwd().resolve())
    return path


def _config_path(config: EvalConfig) -> str | None:
    if config.path is None:
        return None
    root = config.root or Path.cwd()
    with contextlib.suppress(ValueError):
        return config.path.resolve().relative_to(root.resolve()).as_posix()
    return str(config.path)


def _check_flags(flags: Overrides, run: RunDirectory) -> None:
    """A finished run named again with flags that would make it another run: refused
    (re-showing its results as if they answered the new flags would mislead)."""
    from osmosis_client.errors import InvalidInputError
    from osmosis_local_runner.run.journal import journal_path, read_journal
    from osmosis_local_runner.run.spec import rows_text

    recorded = read_journal(journal_path(run.results)).fingerprint
    given = {name: getattr(flags, name) for name in ADOPTED if getattr(flags, name) is not None}
    if "rows" in given:
        given["rows"] = rows_text(given["rows"])
    if flags.model is not None:
        given["model"] = flags.model
    changed = [
        f"{k}: {recorded.get(k)!r} → {v!r}" for k, v in given.items() if recorded.get(k) != v
    ]
    if changed:
        raise InvalidInputError(
            f"run {run.name!r} is complete with other settings (" + "; ".join(changed) + ")",
            hint="start it over with --fresh (the run is archived), or use another --name",
            code="RESUME_MISMATCH",
        )


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
    """The published files around one invocation: the manifest once the rows are
    chosen, the projections when it ends (however it ends)."""

    def __init__(self, run: RunDirectory, config: EvalConfig, out: Output, resume: bool) -> None:
        self.resume = resume
        self.run = run
        self.config = config
        self.out = out
        self.metrics: dict[str, Any] | None = None
        self.failed_rows: list[dict[str, Any]] = []
        self.done = False
        self.local_run_id = run.local_run_id()
        self.started_at = ""
        self.selection: list[int] = []
        self.total_rows = 0
        self.spec_n = 1
        self.threshold = 1.0
        self.info: Any = None
        self.upload: Any = None  # --upload: (run dir, config path) → the upload's resource

    def prepared(self, runner: Runner) -> None:
        from osmosis_local_runner.results.published import write_running
        from osmosis_local_runner.run.rundir import utc_now, write_manifest

        spec = runner.spec
        self.out.info(f"  run:     {self.run.name}" + (" (continued)" if self.resume else ""))
        self.selection, self.info = runner.selection()
        self.total_rows, self.spec_n, self.threshold = (
            self.info.total_rows,
            spec.n,
            spec.pass_threshold,
        )
        self.started_at = utc_now()
        write_manifest(self.run, self.local_run_id, _inputs(self, runner), _provenance(self))
        write_running(self.run.path, self._facts("running", None, 0))

    def resource(self) -> dict[str, Any]:
        """The published ``eval.run`` keys of a run directory (after its projections)."""
        self.finish()
        command = f"osmosis eval run {_config_path(self.config) or self.config.name}"
        command += f" --name {self.run.name}"
        resource = {
            "run_name": self.run.name,
            "local_run_id": self.local_run_id,
            "output_path": str(self.run.path),
            "results_path": str(self.run.results),
            "metrics": self.metrics,
            "failed_rows": self.failed_rows[:100],
            "resume_command": command,
            "retry_command": f"{command} --retry-failed",
        }
        if self.upload is not None:
            from osmosis_cli.commands.eval.upload import after_run

            resource.update(
                after_run(
                    self.out, self.upload, self.run.path, self.metrics, _config_path(self.config)
                )
            )
        return resource

    def finish(self) -> None:
        """Project the results document (when one was written) into the published files."""
        if self.done:
            return
        self.done = True
        from osmosis_client.errors import OsmosisError
        from osmosis_local_runner.results.documents import ResultsFile
        from osmosis_local_runner.results.published import write_projections
        from osmosis_local_runner.results.records import AttemptRecord

        if not self.started_at or not self.run.results.is_file():
            return
        try:
            results = ResultsFile(self.run.results)
            records: dict[int, list[AttemptRecord]] = {}
            for row in results.raw_rows():
                records[row["row_index"]] = [
                    AttemptRecord.from_json({**attempt, "row_index": row["row_index"]})
                    for attempt in row["runs"]
                ]
            summary = results.summary
            status = "finished" if summary.get("status") == "finished" else "incomplete"
            facts = self._facts(status, _now_if(status), int(summary.get("total_duration_ms", 0)))
            self.metrics = write_projections(self.run.path, records, self.selection, facts)
        except (OsmosisError, OSError, ValueError, KeyError, TypeError) as exc:
            self.out.warn(f"could not write the published run files in {self.run.path}: {exc}")
            return
        self.failed_rows = [
            {"row_index": r.row_index, "run_index": r.run_index, "error": r.error}
            for attempts in records.values()
            for r in attempts
            if not r.success
        ]

    def _facts(self, status: str, completed: str | None, duration_ms: int) -> Any:
        from osmosis_local_runner.results.published import RunFacts

        exp = self.config.experiment
        return RunFacts(
            run_name=self.run.name,
            local_run_id=self.local_run_id,
            dataset_name=exp.dataset,
            model_name=exp.model_path,
            rollout_name=exp.rollout,
            started_at=self.started_at,
            completed_at=completed,
            status=status,
            duration_ms=duration_ms,
            pass_threshold=self.threshold,
            n=self.spec_n,
            total_dataset_rows=self.total_rows,
        )


def _now_if(status: str) -> str | None:
    from osmosis_local_runner.run.rundir import utc_now

    return utc_now() if status == "finished" else None


def _inputs(facts: _Facts, runner: Runner) -> Any:
    from osmosis_local_runner.run.dataset import compact_rows
    from osmosis_local_runner.run.discovery import source_digest
    from osmosis_local_runner.run.rundir import ManifestInputs

    config, spec, info = facts.config, runner.spec, facts.info
    return ManifestInputs(
        model_path=config.experiment.model_path,
        dataset_sha256=info.fingerprint,
        selected_source_rows=compact_rows(set(facts.selection), info.total_rows),
        n=spec.n,
        rollout=config.experiment.rollout,
        entrypoint=config.experiment.entrypoint,
        source_digest=source_digest(config.rollout_dir),
        env=dict(config.env),
        secret_names=list(config.secrets.required),
        agent_timeout_sec=spec.agent_workflow_timeout_s,
        grader_timeout_sec=spec.grader_timeout_s,
    )


def _provenance(facts: _Facts) -> dict[str, Any]:
    """Where the run came from; git facts best effort (a run needs no repository)."""
    from osmosis_client._version import __version__
    from osmosis_client.errors import OsmosisError

    config = facts.config
    found: dict[str, Any] = {
        "sdk_version": f"osmosis-client {__version__}",
        "config_path": _config_path(config),
        "config_branch": config.experiment.branch,
        "config_commit_sha": config.experiment.commit_sha,
    }
    with contextlib.suppress(OsmosisError, OSError, ValueError):
        from osmosis_client.platform.git import inspect_repo

        state = inspect_repo(config.root or Path.cwd())
        found.update(git_head=state.head_sha, git_branch=state.branch)
        found["git_dirty"] = bool(state.dirty_files)
    return found
