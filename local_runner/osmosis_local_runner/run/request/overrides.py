"""From what the user gave (an eval config, flags) to a :class:`RunSpec`.

One place decides precedence — flags over the TOML over built-in defaults — so
``eval run CONFIG``, the seed form and suite entries agree.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import SecretStr

from osmosis_client.errors import InvalidInputError
from osmosis_client.layout import Layout
from osmosis_client.llm.endpoints import Registry
from osmosis_client.llm.prices import PriceTable
from osmosis_client.llm.providers import ModelSpec
from osmosis_client.platform.eval.eval_config import EvalConfig
from osmosis_local_runner.run.execute.accounting import accounting, caching
from osmosis_local_runner.run.execute.dataset import find_dataset
from osmosis_local_runner.run.execute.discovery import (
    as_workflow,
    load_agent_loop,
    load_attr,
    load_eval_fn,
    load_mcp,
    load_rollout,
    object_digest,
)
from osmosis_local_runner.run.execute.eval_fns import EvalFn
from osmosis_local_runner.run.kinds import RolloutKind
from osmosis_local_runner.run.kinds.native import NativeRollout
from osmosis_local_runner.run.request.settings import RunSettings
from osmosis_local_runner.run.request.spec import RunSpec
from osmosis_local_runner.run.session.journal import run_dir
from osmosis_local_runner.server.detect import Detection, detect
from osmosis_local_runner.server.ports import Ports

if TYPE_CHECKING:  # the 0.2 agent-loop kind is imported when a run uses one
    from osmosis_local_runner.run.kinds.agent_loop import AgentLoopRollout


@dataclass(kw_only=True)
class Overrides(RunSettings):
    """The settings of one invocation and where it goes: what the rest of this module
    turns into a :class:`RunSpec` (one precedence: given settings over the TOML over
    built-in defaults)."""

    output: Path
    #: the run's directory (.osmosis/evals/NAME/); None: beside the results file
    run_dir: Path | None = None
    resume: bool = False
    retry_failed: bool = False  # resume, re-running errored/skipped attempts
    #: a live echo of the rollout server's output (-v)
    server_echo: Callable[[str], None] | None = None
    #: what else the journal keeps to resume with only a name: the seed form's source
    source: dict[str, Any] = field(default_factory=dict)
    #: the platform's published prices of some models (``prices = "platform"``): given
    #: by a logged-in caller
    price_source: Callable[[list[str]], PriceTable] | None = None
    #: the served weights' identity, when the caller knows it (recorded, not a setting)
    weights: dict[str, Any] | None = None
    #: the ``[secrets]`` values the request carries (None: the environment's)
    secrets: Mapping[str, str] | None = field(default=None, repr=False)

    def journal_settings(self) -> dict[str, Any]:
        """What the run's journal keeps (never a secret: :meth:`RunSettings.kept`)."""
        return {**self.kept(), **self.source}

    def invocation(self) -> dict[str, Any]:
        """The :class:`RunSpec` fields every form takes from these flags alike."""
        return {
            "resume": self.resume,
            "retry_failed": self.retry_failed,
            "rows": self.rows,
            "max_retries": self.max_retries or 0,
            "deadline": self.deadline,
            "transcripts": self.transcripts,
            "ca_bundle": self.ca_bundle,
            "settings": self.journal_settings(),
            "series": self.series,
            "step": self.step,
            "weights": self.weights,
            "max_same_errors": self.max_same_errors,
        }


def dataset_of(config: EvalConfig, given: Path | None) -> Path:
    """``--dataset``, else ``[local].dataset_file``, else ``data/<dataset>.*``."""
    root = config.root or Path.cwd()
    if given is not None:
        return given
    if config.local.dataset_file:
        return root / config.local.dataset_file
    return find_dataset(root, config.experiment.dataset)


def detect_mode(config: EvalConfig, flags: Overrides | None = None) -> Detection:
    """Server or native mode for the config's rollout: ``--rollout-mode``, else
    ``[local] mode``, else what the rollout's files say."""
    chosen, by = (flags.rollout_mode, "--rollout-mode") if flags else (None, "")
    if chosen is None and config.local.mode is not None:
        chosen, by = config.local.mode, "[local] mode"
    return detect(config.rollout_dir, config.entrypoint_path, chosen=chosen, chosen_by=by)


def describe_rollout(config: EvalConfig, detection: Detection) -> str:
    """``rollouts/x/main.py — server mode (why)``: the first words of the plan's rollout
    line, the same for ``eval run`` and ``eval submit``."""
    exp = config.experiment
    return f"rollouts/{exp.rollout}/{exp.entrypoint} — {detection.mode} mode ({detection.reason})"


def server_rollout(config: EvalConfig, flags: Overrides, detection: Detection) -> RolloutKind:
    """The ``server`` kind for a config's rollout (nothing is started yet)."""
    from osmosis_local_runner.run.kinds.server import ServerRollout

    root = config.root or Path.cwd()
    python, by = flags.rollout_python, "--rollout-python"
    if python is None and config.local.rollout_python:
        python, by = root / Path(config.local.rollout_python).expanduser(), "[local] rollout_python"
    return ServerRollout(
        config.rollout_dir,
        config.entrypoint_path,
        headline=describe_rollout(config, detection),
        run_dir=flags.run_dir or run_dir(flags.output),
        results_dir=flags.output.parent,
        registry=Layout(root).servers,
        env=config.env,
        secrets=secrets_for(config, flags.secrets),
        python=python,
        python_given_by=by,
        grader_timeout=float(config.evaluation.grader_timeout_s),
        echo=flags.server_echo,
        ports=Ports(
            listener=flags.listener_port or 0,
            advertise_url=flags.advertise_url,
            rollout=flags.rollout_port or 0,
        ),
    )


def secrets_for(config: EvalConfig, given: Mapping[str, str] | None) -> dict[str, str]:
    """The values of the config's ``[secrets]`` names: from the request, else this
    process's environment — every one required, refused as the CLI refuses a name it
    finds no value for (``INTERACTIVE_REQUIRED``, naming them: the SDK's one rule)."""
    from osmosis_client.secret_values import resolve_secrets

    names = list(config.secrets.required)
    return resolve_secrets(names, environ=os.environ if given is None else given).require()


def registry_of(config: EvalConfig | None, given: Path | None) -> Registry:
    """``--endpoints``, else ``[local] endpoints_path``, else ``configs/endpoints.toml``
    under the project root (absent: no registry)."""
    from osmosis_client.llm.endpoints import DEFAULT_PATH, load_registry

    if given is not None:
        return load_registry(given, required=True)
    root = (config.root if config else None) or Path.cwd()
    if config is not None and config.local.endpoints_path:
        return load_registry(root / config.local.endpoints_path, required=True)
    return load_registry(root / DEFAULT_PATH)


def run_headers(tables: list[dict[str, str]], lines: list[str]) -> dict[str, str]:
    """A ``headers`` table, then ``header`` lines, then ``--header`` flags: later wins."""
    from osmosis_client.llm.endpoints import merge_headers, parse_header

    return merge_headers(*tables, *({k: v} for k, v in (parse_header(x) for x in lines)))


def config_spec(
    config: EvalConfig, flags: Overrides, *, workflow_config: Mapping[str, Any] | None = None
) -> RunSpec:
    """The run of an eval config, the platform's semantics: no limit → a 10 % sample.
    ``workflow_config``: a suite entry's ``config`` table, given to the rollout as
    ``ctx.config`` (beside ``env``, ``advanced`` and ``sampling``)."""
    exp, ev, local = config.experiment, config.evaluation, config.local
    dataset = dataset_of(config, flags.dataset)
    effort = {"reasoning_effort": local.reasoning_effort} if local.reasoning_effort else {}
    sampling = {**local.sampling, **effort, **flags.sampling()}
    if flags.series is None:  # the config's series, kept like one given
        flags.series = local.series
    rollout, eval_fns = _config_rollout(config, flags)
    return RunSpec(
        model=ModelSpec(
            flags.model or exp.model_path,
            base_url=flags.base_url or local.base_url,
            api_key_env=flags.api_key_env or local.api_key_env,
            api_key=SecretStr(flags.api_key) if flags.api_key else None,
            registry=registry_of(config, flags.endpoints),
            endpoint_id=None if flags.model else local.endpoint_id,
            headers=run_headers([dict(local.headers)], [*local.header, *flags.headers]),
            think_tags=local.think_tags if flags.think_tags is None else flags.think_tags,
        ),
        dataset=dataset,
        rollout=rollout,
        eval_fns=eval_fns,
        output=flags.output,
        n=flags.n or ev.n,
        batch_size=flags.batch_size or ev.batch_size,
        pass_threshold=ev.pass_threshold if flags.pass_threshold is None else flags.pass_threshold,
        limit=flags.limit if flags.limit is not None else ev.limit,
        sample=True,
        seed=local.seed if flags.seed is None else flags.seed,
        agent_workflow_timeout_s=float(ev.agent_workflow_timeout_s),
        grader_timeout_s=float(ev.grader_timeout_s),
        sampling=sampling,
        workflow_config={
            **(workflow_config or {}),
            "env": dict(config.env),
            "advanced": dict(config.advanced),
            "sampling": sampling,
        },
        inputs=_inputs(config),
        slice_by=flags.by or local.slice_by,
        cluster_by=flags.cluster_by or local.cluster_by,
        **accounting(flags, [flags.model or exp.model_path], config),
        **flags.invocation(),
        **caching(flags, config),
    )


def _config_rollout(config: EvalConfig, flags: Overrides) -> tuple[RolloutKind, list[EvalFn]]:
    """The config's rollout in its mode, and the eval fns run here (none in server mode:
    it grades inside the server)."""
    detection = detect_mode(config, flags)
    if detection.mode == "server":
        return server_rollout(config, flags, detection), []
    # an in-process rollout reads [env] and [secrets] as on the platform — from its
    # process's environment, which is this one (a server gets its own instead)
    os.environ.update({**config.env, **secrets_for(config, flags.secrets)})
    native, grader = load_rollout(config.entrypoint_path, config.root or Path.cwd())
    native.headline = describe_rollout(config, detection)
    return native, [grader]


def _inputs(config: EvalConfig) -> dict[str, Path]:
    """The files an eval config's run reads (never its results path)."""
    found = (("config", config.path), ("rollout", config.entrypoint_path))
    return {what: path for what, path in found if path is not None}


def seed_rollout(module: str, flags: Overrides) -> RolloutKind:
    """``-m MODULE:ATTR``: a 0.2 ``RolloutAgentLoop`` (class or instance) or a native
    ``AgentWorkflow`` / ``run(ctx)`` function."""
    value, where = load_attr(module)
    return object_rollout(value, where, flags)


def object_rollout(value: Any, where: str, flags: Overrides) -> RolloutKind:
    """A loaded object as a rollout: a 0.2 agent loop (class or instance; ``--max-turns``,
    the sampling flags and ``--debug-dir`` apply) or a native workflow (class, instance
    or ``run(ctx)`` function). ``where`` names it in errors and the run's record."""
    from osmosis_client.rollout.agent_loop import is_agent_loop

    if is_agent_loop(value):
        from osmosis_local_runner.run.kinds.agent_loop import AgentLoopRollout

        return AgentLoopRollout(
            load_agent_loop(value, where),
            source=where,
            digest=object_digest(value),
            max_turns=flags.max_turns or 10,
            completion_params=flags.sampling(),
            debug_dir=flags.debug_dir,
        )
    return NativeRollout(as_workflow(value, where), source=where, digest=object_digest(value))


def mcp_rollout(directory: Path, flags: Overrides, **kind: Any) -> AgentLoopRollout:
    """``--mcp DIR``: 0.2's MCP agent loop over the FastMCP server of ``DIR/main.py``."""
    from osmosis_local_runner.run.kinds.agent_loop import AgentLoopRollout

    loop, digest = load_mcp(directory)
    return AgentLoopRollout(
        loop,
        source=str(directory),
        digest=digest,
        max_turns=flags.max_turns or 10,
        completion_params=flags.sampling(),
        debug_dir=flags.debug_dir,
        **kind,
    )


def _seed_model(
    flags: Overrides, model: str, base_url: str | None, key_env: str | None, key: str | None
) -> ModelSpec:
    return ModelSpec(
        model,
        base_url=base_url,
        api_key_env=key_env,
        api_key=SecretStr(key) if key else None,
        registry=registry_of(None, flags.endpoints),
        headers=run_headers([], flags.headers),
        think_tags=flags.think_tags,
    )


def seed_spec(
    module: str | None,
    dataset: Path,
    eval_fns: list[str],
    flags: Overrides,
    *,
    mcp: Path | None = None,
) -> RunSpec:
    """The seed form: every row (unless a limit), scored by the eval fns; the rollout is
    ``-m MODULE:ATTR`` or ``--mcp DIR``."""

    if mcp is not None:
        rollout: RolloutKind = mcp_rollout(mcp, flags)
    elif module is not None:
        rollout = seed_rollout(module, flags)
    else:
        raise InvalidInputError("give -m MODULE:ATTR or --mcp DIR", code="USAGE")
    return seed_run_spec(rollout, dataset, [load_eval_fn(spec) for spec in eval_fns], flags)


def seed_run_spec(
    rollout: RolloutKind, dataset: Path, fns: list[EvalFn], flags: Overrides
) -> RunSpec:
    """The seed form's run of a rollout already loaded (the CLI's ``-m`` / ``--mcp``,
    or an object a program passes): every row unless a limit, scored by ``fns``."""

    names = [fn.name for fn in fns]
    if len(set(names)) != len(names):
        raise InvalidInputError("the same --eval-fn is given twice")
    if flags.model is None:
        raise InvalidInputError("no model given", code="NO_MODEL")
    baseline = None
    if flags.baseline_model:
        baseline = _seed_model(
            flags,
            flags.baseline_model,
            flags.baseline_base_url,
            flags.baseline_api_key_env,
            flags.baseline_api_key,
        )
    return RunSpec(
        model=_seed_model(flags, flags.model, flags.base_url, flags.api_key_env, flags.api_key),
        dataset=dataset,
        rollout=rollout,
        eval_fns=fns,
        output=flags.output,
        n=flags.n or 1,
        batch_size=flags.batch_size or 1,
        pass_threshold=1.0 if flags.pass_threshold is None else flags.pass_threshold,
        limit=flags.limit,
        offset=flags.offset,
        sample=False,
        sampling=flags.sampling(),
        baseline=baseline,
        fingerprint_extra={"eval_fn_sources": [object_digest(fn.fn) for fn in fns]},
        slice_by=flags.by,
        cluster_by=flags.cluster_by,
        **accounting(flags, [m for m in (flags.model, flags.baseline_model) if m]),
        **flags.invocation(),
        **caching(flags),
    )
