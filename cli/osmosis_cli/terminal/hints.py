"""Flag-level hints: the SDK's errors carry a stable code and data (which variable,
which workspace, which run); this table says which command or flag fixes them.

``hint_for(error, command)`` is what the CLI prints after the error's message; an
error without an entry here keeps the SDK's own (flag-free) hint.
"""

from __future__ import annotations

from collections.abc import Callable

from osmosis_cli.terminal.commands import runnable
from osmosis_client.errors import OsmosisError

Hint = Callable[[OsmosisError, str], "str | None"]

LOGIN = "run `osmosis login`, or set OSMOSIS_TOKEN"
SWITCH = "`osmosis workspace switch NAME`"


def _resume_mismatch(error: OsmosisError, command: str) -> str | None:
    """What a continued run needs again (a withheld key or header, a damaged setting),
    else how to start it over."""
    data = error.data or {}
    withheld = data.get("withheld")
    if isinstance(withheld, list):
        flags = [
            f'--header "{n[8:]}: …"' if n.startswith("headers:") else "--" + n.replace("_", "-")
            for n in map(str, withheld)
        ]
        return "give them again: " + " ".join(flags)
    if isinstance(setting := data.get("setting"), str):
        return f"give --{setting.replace('_', '-')} again, or start the run over with --fresh"
    if data.get("shrinks"):  # a top-up that would drop attempts: what it needs instead
        return error.hint
    if data.get("grows"):  # more attempts or rows than a finished run had: a top-up
        return "add --resume to top it up (only the missing attempts run)"
    if command.endswith("eval run"):
        return "start it over with --fresh (the run is archived), or use another --name"
    return error.hint


def _not_authenticated(exc: OsmosisError, command: str) -> str:
    if command.endswith((" eval list", " eval info")):  # the local runs need no login
        return "log in (`osmosis login`), or see this project's local runs: add --local"
    if command.endswith(" serve"):  # registering needs a login; serving does not
        return (
            "log in to register the server (`osmosis login`), or serve without the platform: "
            "--skip-register (a key, no registration) or --local (local debugging, no key)"
        )
    workspace = exc.data.get("workspace")
    if workspace:
        login = runnable("osmosis", "login", "--workspace", workspace)
        return f"run `{login}` (see `osmosis workspace list`)"
    if exc.data.get("relogin"):
        return "run `osmosis login` again"
    return LOGIN


def _missing_key(exc: OsmosisError, command: str) -> str:
    var = exc.data.get("env_var") or "THE_VARIABLE"
    return f"export {var}=… (or name another variable with --api-key-env)"


def _provider_auth(exc: OsmosisError, command: str) -> str | None:
    var = exc.data.get("key_env")
    return f"check the key in {var}" if var else "pass --api-key-env NAME"


def _model_not_found(exc: OsmosisError, command: str) -> str | None:
    if "endpoint" not in exc.data:
        return exc.hint  # e.g. an unknown mock/… behaviour lists the known ones
    return "check --model against the models the endpoint serves, and --base-url"


def _rubric_config(exc: OsmosisError, command: str) -> str:
    if command.endswith("preview"):
        return "check --path"
    return "pass --config PATH"


def _resume(exc: OsmosisError, command: str, *more: str) -> str:
    """How to continue the run ``exc`` stopped: by name in a run directory, else by -o
    (``more``: flags the command needs besides, already quoted)."""
    import shlex
    from pathlib import Path

    results = Path(str(exc.data.get("results") or "results.json"))
    config = exc.data.get("config")
    if results.name == "results.json" and (results.parent / "manifest.json").exists():
        words = ["osmosis", "eval", "run", str(config or "CONFIG"), "--name", results.parent.name]
        return "resume it: " + " ".join([*map(shlex.quote, words), *more])
    return f"resume with --resume -o {' '.join([shlex.quote(str(results)), *more])}"


def _budget(exc: OsmosisError, command: str) -> str:
    """A run stopped at its budget: resumed with one that lets it finish."""
    from osmosis_cli.terminal.numbers import budget_to_finish

    spent, budget = exc.data.get("cost_usd"), exc.data.get("max_cost")
    done, total = exc.data.get("attempts_done"), exc.data.get("attempts_total")
    if not all(isinstance(v, int | float) for v in (spent, budget, done, total)):
        return _resume(exc, command, "--max-cost USD")
    higher = budget_to_finish(float(spent), int(done), int(total), float(budget))  # type: ignore[arg-type]
    return f"{_resume(exc, command, '--max-cost', higher)} (a budget to finish it at this rate)"


def _connection(exc: OsmosisError, command: str) -> str:
    return "check your network and --platform-url / OSMOSIS_PLATFORM_URL"


_BY_CODE: dict[str, Hint] = {
    "TOKEN_MISSING": _not_authenticated,
    "KEYRING_UNAVAILABLE": lambda e, c: (
        "unlock the keyring, or log in again with `OSMOSIS_TOKEN_STORE=file osmosis login`"
    ),
    "TOKEN_NOT_STORED": lambda e, c: "run `osmosis login`",
    "TOKEN_INVALID": lambda e, c: "run `osmosis login` (or check OSMOSIS_TOKEN)",
    "TOKEN_EXPIRED": lambda e, c: "run `osmosis login` (or check OSMOSIS_TOKEN)",
    "TOKEN_REVOKED": lambda e, c: "run `osmosis login` (or check OSMOSIS_TOKEN)",
    "TOKEN_ALREADY_EXPIRED": lambda e, c: "check your clock, then run `osmosis login` again",
    "ACCESS_DENIED": lambda e, c: "run `osmosis login` again and approve the request",
    "EXPIRED_TOKEN": lambda e, c: "run `osmosis login` again and approve it sooner",
    "WORKSPACE_REQUIRED": lambda e, c: (
        f"pick a workspace with {SWITCH} (after `osmosis login`), or set OSMOSIS_WORKSPACE"
    ),
    "WORKSPACE_SCOPE_HEADER_ACCESS_DENIED": lambda e, c: (
        f"run `osmosis workspace list --remote` and {SWITCH}"
    ),
    "GIT_SCOPE_HEADER_REQUIRED": lambda e, c: f"run {SWITCH}, or set OSMOSIS_WORKSPACE",
    "GIT_REPOSITORY_NOT_CONNECTED": lambda e, c: (
        f"connect the repository on the platform, or pick a workspace with {SWITCH}"
    ),
    "CONNECTION": _connection,
    "UNPUSHED": lambda e, c: "push first (git push), or pass --allow-unpushed",
    "DIRTY_TREE": lambda e, c: "commit and push them, or pass --allow-dirty",
    "WAIT_TIMEOUT": lambda e, c: (
        "it keeps running; follow it with "
        f"`{runnable('osmosis', 'eval', 'info', e.data.get('run', 'NAME'), '--watch')}`"
    ),
    "CONFIG_NOT_FOUND": lambda e, c: "check the path, or create one with `osmosis eval init NAME`",
    "MISSING_API_KEY": _missing_key,
    "PROVIDER_AUTH": _provider_auth,
    "MODEL_NOT_FOUND": _model_not_found,
    "ENDPOINT_UNREACHABLE": lambda e, c: "check --base-url and that the server is running",
    "ENDPOINT_REFUSED": lambda e, c: "start the server, or check the port in --base-url",
    "ENDPOINT_DNS": lambda e, c: "check the host name in --base-url",
    "TLS_CERTIFICATE": lambda e, c: (
        "pass --ca-bundle PATH (a PEM file holding its CA), or set SSL_CERT_FILE"
        if "endpoint" in e.data
        else "set OSMOSIS_CA_BUNDLE or SSL_CERT_FILE to a PEM file holding its CA"
    ),
    "NO_MODEL": lambda e, c: "pass --model provider/model",
    "INTERACTIVE_REQUIRED": lambda e, c: (
        "export them or pass --secrets-file" if e.data.get("missing") else e.hint
    ),
    "ENDPOINT_PATH": lambda e, c: (
        f"{(e.hint or '').split(': try')[0]}: pass --base-url "
        f"{e.data.get('suggested_base_url', 'URL/v1')}"
    ),
    "UNKNOWN_MODEL_ROUTE": lambda e, c: (
        f"use provider/model ({e.data.get('providers', '…')}, mock) or pass --base-url "
        "for your server"
    ),
    "INVALID_KEY_ENV": lambda e, c: (
        "pass the variable's NAME to --api-key-env (e.g. OPENAI_API_KEY), never the key itself"
    ),
    "RUBRIC_CONFIG_NOT_FOUND": _rubric_config,
    "DATASET_EXISTS": lambda e, c: "pass --overwrite to replace it, or rename the file",
    "FILE_EXISTS": lambda e, c: "Use --overwrite to replace it.",
    "UPLOAD_FAILED": lambda e, c: (
        (
            "the upload was aborted (nothing is left half-registered); try again later"
            if e.data.get("aborted", True)
            else "the upload could not be aborted: the next `osmosis dataset upload` on this "
            "machine aborts it; try again later"
        )
        if c.endswith("dataset upload")
        else "run the same command again: what was sent is kept"
    ),
    "NOT_READY": lambda e, c: (
        f"watch it with `{runnable('osmosis', 'dataset', 'info', e.data.get('dataset', 'NAME'))}`"
        if "status" in e.data
        else e.hint
    ),
    "DATASET_NOT_FOUND": lambda e, c: (
        "set [local].dataset_file in the config, or pass --dataset FILE"
    ),
    "JOURNAL_WRITE_FAILED": lambda e, c: f"free space or fix permissions, then {_resume(e, c)}",
    "NOTHING_TO_RESUME": lambda e, c: (
        "name the run to continue with --name NAME (or -o FILE.json, the results it continues)"
        if "runs" in e.data
        else "--resume needs the -o of the run it continues"
    ),
    "RESULTS_EXIST": lambda e, c: (
        "start it over with --fresh (it is archived), or use another --name"
        if "run" in e.data
        else "pass --resume to continue it, or choose another -o"
    ),
    "RUN_FILE_CONFLICT": lambda e, c: (
        "drop -o (runs live in .osmosis/evals/NAME/), or -o a directory"
    ),
    "RESULTS_PATH": lambda e, c: f"{e.hint} (-o PATH)" if e.hint else "pass another -o PATH",
    "LIMIT_EXCEEDED": lambda e, c: (
        f"{e.hint} (--{str(e.data.get('setting', 'batch_size')).replace('_', '-')})"
    ),
    "DEADLINE": _resume,
    "BUDGET": _budget,
    "DEPLOY_REQUIRED": lambda e, c: (
        "add --deploy (each checkpoint the watch deploys is undeployed after its run)"
    ),
    "HUB_PUBLIC": lambda e, c: (
        "add --public only if everything it sends may be public, or name a private "
        "repository (a new one is created private)"
    ),
    "USAGE_UNKNOWN": lambda e, c: (
        _resume(e, c, "--unknown-usage", "free")
        + " (counts those calls as free), or run without --max-cost"
    ),
    "NO_PRICE": lambda e, c: f"{e.hint} (--prices FILE)" if e.hint else None,
    "RESUME_MISMATCH": lambda e, c: _resume_mismatch(e, c),
    "SCAFFOLD_MISSING": lambda e, c: "create them with `osmosis doctor --fix`",
    "RUN_LOCKED": lambda e, c: "wait for it to finish, or use another --name",
    "PORT_IN_USE": lambda e, c: "pick another --listener-port, or leave it out (any free port)",
    "ROWS_OUT_OF_RANGE": lambda e, c: f"{e.hint} (--rows)",
    "RESCORE_DATASET_NOT_FOUND": lambda e, c: (
        "pass --dataset FILE (the dataset the run used), or run from the run's directory"
    ),
    "NO_TRANSCRIPTS": lambda e, c: "rerun without --no-transcripts to keep them",
    "DATASET_CHANGED": lambda e, c: "pass --dataset FILE with the dataset the run used",
    "NOTHING_TO_COMPARE": lambda e, c: (
        f"{e.hint} (`osmosis eval rescore` grades a run again)" if e.hint else None
    ),
    "REPORT_PATH": lambda e, c: f"{e.hint} (-o PATH)" if e.hint else "pass another -o PATH",
    "BUNDLE_PATH": lambda e, c: (
        f"{e.hint} (--bundle DIR)" if e.hint else "pass another --bundle DIR"
    ),
}


def _rollout_python(exc: OsmosisError, command: str) -> str | None:
    return (
        f"{exc.hint} (or pass --rollout-python PATH)" if exc.hint else "pass --rollout-python PATH"
    )


for _code in (
    "ROLLOUT_ENVIRONMENT",
    "NO_ROLLOUT_PYTHON",
    "ROLLOUT_PYTHON_TOO_OLD",
    "ROLLOUT_SDK_MISSING",
    "ROLLOUT_SYNC_FAILED",
):
    _BY_CODE[_code] = _rollout_python

MAYBE_CREATED = "the run may have been created — check `osmosis eval list` before resubmitting"
#: after a failure that may have acted on the platform anyway, by what it may have done
MAYBE_DONE = {
    "run": MAYBE_CREATED,
    "dataset": "the dataset may have been registered — check `osmosis dataset list` (the next "
    "upload aborts an unfinished one this machine left)",
    "training_run": "the training run may have been created — check `osmosis train list` "
    "before resubmitting",
    "benchmark_run": "the benchmark run may have been created — check `osmosis benchmark runs "
    "list` before resubmitting",
}


def _store_secrets(exc: OsmosisError, command: str) -> str:
    names = exc.data.get("missing") or ["NAME"]
    commands = " / ".join(f"`{runnable('osmosis', 'secret', 'set', n)}`" for n in names)
    return f"{commands} (personal by default; --scope workspace shares them)"


_BY_CODE["SECRETS_NOT_STORED"] = _store_secrets
_BY_CODE["SYMLINK_REFUSED"] = lambda e, c: (
    "remove the link, or download elsewhere with -o DIR"
    if c.endswith("download")
    else "remove the link, or choose another place with -o PATH"
)

#: the command that lists what a command of each group looks up (most specific first)
LISTS = (
    ("benchmark runs", "osmosis benchmark runs list"),
    ("benchmark", "osmosis benchmark list"),
    ("train", "osmosis train list"),
    ("model", "osmosis model list"),
    ("dataset", "osmosis dataset list"),
    ("secret", "osmosis secret list"),
    ("eval", "osmosis eval list"),
)


def _not_found(exc: OsmosisError, command: str) -> str | None:
    """Something looked up does not exist: the command that lists what does (after the
    library's own did-you-mean, when it has one)."""
    listing = next((cmd for group, cmd in LISTS if f" {group} " in f"{command} "), None)
    if listing is None or "osmosis " in (exc.hint or ""):  # a command already named
        return exc.hint
    close = exc.data.get("did_you_mean")
    mean = f"did you mean {close!r}? " if isinstance(close, str) else ""
    return f"{mean}see what exists with `{listing}`"


def _quota(exc: OsmosisError, command: str) -> str | None:
    """A deploy refused by the deployment quota: the command that frees a slot."""
    deployed = exc.data.get("deployed")
    if not isinstance(deployed, list) or not deployed:
        return exc.hint or "undeploy a LoRA model first (`osmosis model list` shows them)"
    return f"free a slot: `{runnable('osmosis', 'model', 'undeploy', deployed[0])}`" + (
        f" (deployed: {', '.join(map(str, deployed))})" if len(deployed) > 1 else ""
    )


_BY_CODE["DEPLOYMENT_LIMIT_REACHED"] = _quota
_BY_CODE["ADDRESS_IN_USE"] = lambda e, c: "pick another --port, or leave it out (a free one)"
_BY_CODE["BAD_ADDRESS"] = lambda e, c: (
    "pass --host 127.0.0.1 (this machine only), or 0.0.0.0 to serve every address"
)
_BY_CODE["NOT_FOUND"] = _not_found
_BY_CODE["RUN_NOT_FOUND"] = lambda e, c: (
    (
        f"did you mean {e.data['did_you_mean']!r}? "
        if isinstance(e.data.get("did_you_mean"), str)
        else ""
    )
    + "see the local runs with `osmosis eval list --local`"
)


def hint_for(exc: OsmosisError, command: str = "osmosis") -> str | None:
    """The hint to print after ``exc``'s message when it ends ``command``."""
    done = exc.data.get("maybe_created")
    if done:
        return MAYBE_DONE.get("run" if done is True else str(done), exc.hint)
    if exc.data.get("not_json"):
        return "check --platform-url / OSMOSIS_PLATFORM_URL points at the Osmosis platform"
    if "max_active_deployments" in exc.data:  # the quota, whatever code carried it
        return _quota(exc, command)
    fn = _BY_CODE.get(exc.code)
    if fn is None:
        return exc.hint
    return fn(exc, command)
