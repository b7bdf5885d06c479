"""What a named run means (``.osmosis/evals/NAME/``, the published layout), whoever asks
— ``osmosis eval run CONFIG --name`` or ``run_eval(name=…)``:

- :func:`open_run` decides: a new run, an unfinished one continued, a finished one shown
  again (never re-run unless its failures are asked for), another tool's refused;
- :class:`RunFiles` writes the published files around one invocation: the manifest once
  the rows are chosen, the projections (summary, metrics, trajectories…) when it ends —
  however it ends.

Nothing here prints: notes and warnings go to the callbacks given.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from osmosis_client.errors import InvalidInputError, OsmosisError
from osmosis_local_runner.run.session.rundir import RunDirectory, utc_now

if TYPE_CHECKING:
    from osmosis_client.platform.eval.eval_config import EvalConfig
    from osmosis_local_runner.run.execute.runner import Runner

Note = Callable[[str], None]


@dataclass(frozen=True)
class Notes:
    """Where a run's notes and warnings go (a CLI's lines, a library's logger); either
    may be None: said to no one."""

    on_note: Note | None = None
    on_warning: Note | None = None

    def note(self, text: str) -> None:
        if self.on_note is not None:
            self.on_note(text)

    def warn(self, text: str) -> None:
        if self.on_warning is not None:
            self.on_warning(text)


Opening = Literal["new", "continue", "finished"]


@dataclass(frozen=True)
class Identity:
    """What the published files say a run is (from its eval config, or given by a
    program running an in-process workflow)."""

    dataset: str
    rollout: str
    entrypoint: str = ""
    rollout_dir: Path | None = None
    config_path: str | None = None
    branch: str | None = None
    commit_sha: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    secret_names: list[str] = field(default_factory=list)
    root: Path | None = None

    @classmethod
    def of(cls, config: EvalConfig) -> Identity:
        exp = config.experiment
        return cls(
            dataset=exp.dataset,
            rollout=exp.rollout,
            entrypoint=exp.entrypoint,
            rollout_dir=config.rollout_dir,
            config_path=config_path(config),
            branch=exp.branch,
            commit_sha=exp.commit_sha,
            env=dict(config.env),
            secret_names=list(config.secrets.required),
            root=config.root,
        )


def config_path(config: EvalConfig) -> str | None:
    """The config's path relative to its project (as the published files name it)."""
    if config.path is None:
        return None
    root = config.root or Path.cwd()
    with contextlib.suppress(ValueError):
        return config.path.resolve().relative_to(root.resolve()).as_posix()
    return str(config.path)


def check_root(root: Path, rollout_dir: Path | None) -> None:
    """Runs live in a directory: never a file, never inside the rollout (its sources)."""
    if root.exists() and not root.is_dir():
        raise InvalidInputError(
            f"{root} is a file, not the directory runs are kept in",
            hint="name a directory, or a FILE.json for one results document",
            code="RESULTS_PATH",
        )
    if rollout_dir is None:
        return
    rollout = rollout_dir.resolve()
    if root.resolve() == rollout or rollout in root.resolve().parents:
        raise InvalidInputError(
            f"{root} is inside the rollout {rollout_dir}: runs would mix with its sources",
            hint="name a directory outside rollouts/",
            code="RESULTS_PATH",
        )


def open_run(run: RunDirectory, *, retry_failed: bool = False) -> Opening:
    """What naming ``run`` means now: a ``new`` run, ``continue`` an unfinished one (or a
    finished one's failures, with ``retry_failed``), or show a ``finished`` one again."""
    state = run.state()
    if state == "foreign":
        raise InvalidInputError(
            f"{run.path} holds a run this version cannot continue (another tool's, or damaged)",
            hint="start it over (it is archived), or use another name",
            code="RESULTS_EXIST",
            data={"run": run.name},
        )
    if state == "finished" and not retry_failed:
        return "finished"
    return "new" if state == "absent" else "continue"


class RunFiles:
    """The published files around one invocation of a named run."""

    def __init__(
        self, run: RunDirectory, identity: Identity, *, resume: bool, notes: Notes = Notes()
    ) -> None:
        self.run = run
        self.identity = identity
        self.resume = resume
        self.notes = notes
        self.metrics: dict[str, Any] | None = None
        self.failed_rows: list[dict[str, Any]] = []
        self.done = False
        self.local_run_id = run.local_run_id()
        self.started_at = ""
        self.selection: list[int] = []
        self.total_rows = 0
        self.n = 1
        self.threshold = 1.0
        self.model = ""  # the model that ran (a given model, else the config's)

    def prepared(self, runner: Runner) -> None:
        """The rows are chosen: the manifest, and the run marked running."""
        from osmosis_local_runner.results.documents.published import write_running
        from osmosis_local_runner.run.session.rundir import write_manifest

        self.notes.note(f"  run:     {self.run.name}" + (" (continued)" if self.resume else ""))
        self.selection, info = runner.selection()
        self.total_rows, self.n, self.threshold = (
            info.total_rows,
            runner.spec.n,
            runner.spec.pass_threshold,
        )
        self.started_at = utc_now()
        plan = runner.prepare()
        self.model = plan.model_path
        provenance = {**self._provenance(), **_as_run(runner.spec, plan)}
        write_manifest(self.run, self.local_run_id, self._inputs(runner, info), provenance)
        write_running(self.run.path, self._facts("running", None, 0))

    def finish(self) -> None:
        """Project the results document (when one was written) into the published files."""
        if self.done:
            return
        self.done = True
        from osmosis_local_runner.results.documents.documents import ResultsFile
        from osmosis_local_runner.results.documents.published import write_projections
        from osmosis_local_runner.results.documents.records import AttemptRecord

        if not self.run.results.is_file():
            self._forget_empty()
            return
        if not self.started_at:
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
            ended = utc_now() if status == "finished" else None
            facts = self._facts(status, ended, int(summary.get("total_duration_ms", 0)))
            self.metrics = write_projections(self.run.path, records, self.selection, facts)
        except (OsmosisError, OSError, ValueError, KeyError, TypeError) as exc:
            self.notes.warn(f"could not write the published run files in {self.run.path}: {exc}")
            return
        self.failed_rows = [
            {"row_index": r.row_index, "run_index": r.run_index, "error": r.error}
            for attempts in records.values()
            for r in attempts
            if not r.success
        ]

    def _forget_empty(self) -> None:
        """A new run that never finished an attempt (an unreachable endpoint, a bad key)
        leaves nothing behind: its directory held only what this invocation wrote."""
        from osmosis_local_runner.run.session.journal import journal_path

        if self.resume or journal_path(self.run.results).exists() or not self.run.path.is_dir():
            return
        import shutil

        shutil.rmtree(self.run.path, ignore_errors=True)

    def _facts(self, status: str, completed: str | None, duration_ms: int) -> Any:
        from osmosis_local_runner.results.documents.published import RunFacts

        who = self.identity
        return RunFacts(
            run_name=self.run.name,
            local_run_id=self.local_run_id,
            dataset_name=who.dataset,
            model_name=self.model,
            rollout_name=who.rollout,
            started_at=self.started_at,
            completed_at=completed,
            status=status,
            duration_ms=duration_ms,
            pass_threshold=self.threshold,
            n=self.n,
            total_dataset_rows=self.total_rows,
        )

    def _inputs(self, runner: Runner, info: Any) -> Any:
        from osmosis_local_runner.run.execute.dataset import compact_rows
        from osmosis_local_runner.run.execute.discovery import source_digest
        from osmosis_local_runner.run.session.rundir import ManifestInputs

        who, spec = self.identity, runner.spec
        return ManifestInputs(
            model_path=self.model,
            dataset_sha256=info.fingerprint,
            selected_source_rows=compact_rows(set(self.selection), info.total_rows),
            n=spec.n,
            rollout=who.rollout,
            entrypoint=who.entrypoint,
            source_digest=source_digest(who.rollout_dir) if who.rollout_dir else "",
            env=dict(who.env),
            secret_names=list(who.secret_names),
            agent_timeout_sec=spec.agent_workflow_timeout_s,
            grader_timeout_sec=spec.grader_timeout_s,
            series=spec.series,
            step=spec.step,
            weights=spec.weights,
        )

    def _provenance(self) -> dict[str, Any]:
        """Where the run came from; git facts best effort (a run needs no repository)."""
        from osmosis_client._version import __version__

        who = self.identity
        found: dict[str, Any] = {
            "sdk_version": f"osmosis-client {__version__}",
            "config_path": who.config_path,
            "config_branch": who.branch,
            "config_commit_sha": who.commit_sha,
        }
        with contextlib.suppress(OsmosisError, OSError, ValueError):
            from osmosis_client.platform.git import inspect_repo

            state = inspect_repo(who.root or Path.cwd())
            found.update(git_head=state.head_sha, git_branch=state.branch)
            found["git_dirty"] = bool(state.dirty_files)
        return found


def _as_run(spec: Any, plan: Any) -> dict[str, Any]:
    """What ran, beside where it came from: the endpoint (no credentials), the sampling
    parameters sent, and the settings given (as the journal keeps them: no secret)."""
    found: dict[str, Any] = {"endpoint": plan.endpoint}
    if spec.sampling:
        found["sampling"] = dict(spec.sampling)
    if spec.settings:
        found["settings"] = dict(spec.settings)
    return found
