"""The options of the local forms — ``osmosis eval run`` and the seed form — declared
once as typed objects: parsing and behaviour test apart, and a flag is one field here
(plus the runner's ``Overrides``, when it is a setting of the run)."""

from __future__ import annotations

import json
from dataclasses import MISSING, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

import typer

if TYPE_CHECKING:
    from osmosis_cli.terminal.output import Output
    from osmosis_local_runner.run.overrides import Overrides

QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress output.")]
LimitOpt = Annotated[
    int | None, typer.Option("--limit", min=1, metavar="N", help="Only the first N rows.")
]
NOpt = Annotated[int | None, typer.Option("--n", min=1, metavar="N", help="Attempts per row.")]
BatchOpt = Annotated[
    int | None,
    typer.Option("--batch-size", min=1, metavar="N", help="Attempts in flight at once."),
]
ThresholdOpt = Annotated[
    float | None,
    typer.Option("--pass-threshold", metavar="X", help="An attempt passes when score >= X."),
]
ModelOpt = Annotated[
    str | None,
    typer.Option("--model", metavar="MODEL", help="provider/model, a served name, or mock/…"),
]
BaseUrlOpt = Annotated[
    str | None,
    typer.Option("--base-url", metavar="URL", help="OpenAI-compatible endpoint, e.g. vLLM."),
]
KeyEnvOpt = Annotated[
    str | None,
    typer.Option("--api-key-env", metavar="NAME", help="NAME of the env var holding the key."),
]
OutOpt = Annotated[
    Path | None,
    typer.Option("-o", "--output", metavar="PATH", help="Results file (journal beside it)."),
]
ResumeOpt = Annotated[bool, typer.Option("--resume", help="Continue the run recorded at -o PATH.")]
NoCompatOpt = Annotated[
    bool,
    typer.Option(
        "--no-compat",
        help="Do not serve `osmosis_ai` 0.2 imports from osmosis-client's compatibility layer.",
    ),
]
MaxErrorRateOpt = Annotated[
    float | None,
    typer.Option(
        "--max-error-rate",
        min=0.0,
        max=1.0,
        metavar="X",
        help="Exit 1 when more than this fraction of attempts errored (always: all of them).",
    ),
]


MaxRetriesOpt = Annotated[
    int | None,
    typer.Option(
        "--max-retries",
        min=0,
        metavar="N",
        help="Retry an attempt up to N times after a transient infrastructure error "
        "(a crashed rollout server, a lost connection); never after a wrong answer.",
    ),
]
RolloutModeOpt = Annotated[
    str | None,
    typer.Option(
        "--rollout-mode",
        metavar="server|native",
        help="server: run a published-SDK rollout as its own server (detected from the "
        "rollout's pyproject.toml / imports); native: in-process.",
    ),
]
RolloutPythonOpt = Annotated[
    Path | None,
    typer.Option(
        "--rollout-python",
        metavar="PATH",
        help="Server mode: the rollout's interpreter or virtualenv (default: uv, then "
        "rollouts/NAME/.venv).",
    ),
]


DeadlineOpt = Annotated[
    float | None,
    typer.Option(
        "--deadline",
        min=0.001,
        metavar="SECONDS",
        help="Stop the whole run after SECONDS (finished attempts kept; exit 1; resumable).",
    ),
]
NoTranscriptsOpt = Annotated[
    bool,
    typer.Option(
        "--no-transcripts",
        help="Do not keep each attempt's final messages in the results (smaller files; "
        "`eval rescore` and the report's transcripts need them).",
    ),
]
CaBundleOpt = Annotated[
    Path | None,
    typer.Option(
        "--ca-bundle",
        metavar="PATH",
        help="Also trust the certificates in this PEM file (a private gateway's CA); "
        "default: $OSMOSIS_CA_BUNDLE. Certificates are always verified.",
    ),
]
JunitOpt = Annotated[
    Path | None,
    typer.Option(
        "--junit",
        metavar="PATH",
        help="Also write JUnit XML: one test case per row, one suite per eval fn (per entry).",
    ),
]


EndpointsOpt = Annotated[
    Path | None,
    typer.Option(
        "--endpoints",
        metavar="PATH",
        help="Endpoint registry (default: configs/endpoints.toml); --model names a row.",
    ),
]
HeaderOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--header",
        metavar='"NAME: VALUE"',
        help="An extra HTTP header for model calls (repeatable; wins over the files).",
    ),
]
SamplingArgsOpt = Annotated[
    str | None,
    typer.Option(
        "--sampling-args",
        metavar="JSON",
        help='Chat-completions parameters, e.g. \'{"temperature": 0.7, "top_p": 0.9}\'.',
    ),
]
ByOpt = Annotated[
    str | None,
    typer.Option(
        "--by",
        metavar="COLUMN",
        help="Also break every statistic down by this dataset column (e.g. difficulty).",
    ),
]
TemperatureOpt = Annotated[
    float | None, typer.Option("--temperature", metavar="T", help="Sampling temperature.")
]


def sampling_args(text: str | None) -> dict[str, Any]:
    """``--sampling-args``: a JSON object of chat-completions parameters (finite numbers)."""
    if text is None:
        return {}
    from osmosis_client.errors import InvalidInputError

    def refuse(constant: str) -> Any:
        raise InvalidInputError(f"--sampling-args must hold finite numbers, not {constant}")

    try:
        value = json.loads(text, parse_constant=refuse)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(
            f"--sampling-args is not JSON ({exc.msg})", hint="""e.g. '{"temperature": 0.7}'"""
        ) from None
    if not isinstance(value, dict):
        raise InvalidInputError("--sampling-args must be a JSON object")
    return value


#: headings of ``--help`` (what to run, the model, how fast, what is kept)
WHAT, MODEL, PACE, OUTPUT, SERVER = (
    "What to run",
    "Model",
    "Concurrency and limits",
    "Output and results",
    "Server mode (published-SDK rollouts)",
)


@dataclass(kw_only=True)
class LocalRunOptions:
    """What both local forms take."""

    PANELS: ClassVar[dict[str, str]] = {
        **dict.fromkeys(("limit", "n", "pass_threshold", "resume", "by"), WHAT),
        **dict.fromkeys(
            ("model", "base_url", "api_key_env", "endpoints", "header", "sampling_args_json",
             "temperature", "ca_bundle"),
            MODEL,
        ),
        **dict.fromkeys(("batch_size", "max_retries", "max_error_rate", "deadline"), PACE),
        **dict.fromkeys(("output", "no_transcripts", "junit", "quiet"), OUTPUT),
    }

    limit: LimitOpt = None
    n: NOpt = None
    batch_size: BatchOpt = None
    pass_threshold: ThresholdOpt = None
    model: ModelOpt = None
    base_url: BaseUrlOpt = None
    api_key_env: KeyEnvOpt = None
    output: OutOpt = None
    resume: ResumeOpt = False
    endpoints: EndpointsOpt = None
    header: HeaderOpt = None
    sampling_args_json: SamplingArgsOpt = None
    temperature: TemperatureOpt = None
    max_retries: MaxRetriesOpt = None
    max_error_rate: MaxErrorRateOpt = None
    deadline: DeadlineOpt = None
    no_transcripts: NoTranscriptsOpt = False
    junit: JunitOpt = None
    ca_bundle: CaBundleOpt = None
    by: ByOpt = None
    quiet: QuietOpt = False

    def overrides(self, output: Path, **more: Any) -> Overrides:
        """The runner's flags: every field ``Overrides`` shares by name, the few renamed
        ones (``--header``, ``--sampling-args``, ``--no-transcripts``), then ``more``."""
        from osmosis_local_runner.run.overrides import Overrides

        shared = {f.name for f in fields(Overrides)} & {f.name for f in fields(self)}
        values: dict[str, Any] = {name: getattr(self, name) for name in shared}
        values.update(
            output=output,
            headers=list(self.header or []),
            sampling_args=sampling_args(self.sampling_args_json),
            transcripts=not self.no_transcripts,
            settings=self.given(),
        )
        values.update(more)
        return Overrides(**values)

    def given(self) -> dict[str, Any]:
        """The flags given (not at their defaults) that make the run what it is, as its
        journal keeps them for ``--resume``: never a key, a header's value, a URL's
        password, where the run goes or how it is shown. What was given but cannot be
        kept is named under ``withheld`` (``--header NAME``, ``--base-url``)."""
        from osmosis_client._redact import redact_url

        kept: dict[str, Any] = {}
        withheld: list[str] = []
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in NOT_KEPT or value is None or value == _default(f):
                continue
            if isinstance(value, str) and redact_url(value) != value:
                withheld.append(_flag(f.name))  # a URL with a password in it
                continue
            if isinstance(value, list | tuple):
                value = [str(v) if isinstance(v, Path) else v for v in value]
            kept[f.name] = str(value) if isinstance(value, Path) else value
        withheld += sorted({f"--header {name}" for name in _header_names(self.header)})
        if withheld:
            kept["withheld"] = withheld
        return kept

    def adopt(self, saved: dict[str, Any]) -> list[str]:
        """A resumed run: every flag not given again takes the value its run was started
        with (a flag given wins, and the journal's fingerprint judges whether it changes
        the run). Returns the flags taken, as ``--name value``."""
        import typing

        from osmosis_cli.commands.eval.saved import checked

        hints = typing.get_type_hints(type(self), include_extras=True)
        plain = typing.get_type_hints(type(self))
        taken = []
        for f in fields(self):
            if f.name in NOT_KEPT or f.name not in saved or getattr(self, f.name) != _default(f):
                continue
            value = checked(f.name, plain[f.name], saved[f.name], _holds_paths(hints[f.name]))
            setattr(self, f.name, value)
            taken.append(f"{_flag(f.name)} {_shown(value)}")
        given = {_flag(f.name) for f in fields(self) if getattr(self, f.name) != _default(f)}
        given |= {f"--header {name}" for name in _header_names(self.header)}
        missing = [flag for flag in saved.get("withheld") or () if flag not in given]
        if missing:
            from osmosis_client.errors import InvalidInputError

            raise InvalidInputError(
                f"the run was started with {', '.join(missing)}, whose values are never kept "
                "(they may hold keys)",
                hint="give them again",
                code="RESUME_MISMATCH",
            )
        return taken


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _header_names(headers: list[str] | None) -> set[str]:
    return {h.split(":", 1)[0].strip() for h in headers or ()}


#: never kept for --resume: where the run goes and how it is resumed, keys (never
#: written anywhere), headers (their values may be keys), this invocation's own budget
#: (--deadline) and how the run is shown
NOT_KEPT = frozenset(
    {
        "output",
        "resume",
        "retry_failed",
        "api_key",
        "baseline_api_key",
        "header",
        "quiet",
        "junit",
        "name",
        "fresh",
        "dry_run",
        "yes",
        "upload",
        "stray",
        "config_path",
        "parallel",
        "abbreviated_summary",
        "debug",
        "log_samples",
        "secrets_file",
        "deadline",
    }
)


def _default(f: Any) -> Any:
    if f.default is not MISSING:
        return f.default
    return f.default_factory() if f.default_factory is not MISSING else None


def _holds_paths(hint: Any) -> bool:
    """Whether a field's type holds ``Path`` (``Annotated[Path | None, …]``, lists of…)."""
    import typing

    if hint is Path:
        return True
    return any(_holds_paths(arg) for arg in typing.get_args(hint))


def _shown(value: Any) -> str:
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    return str(value)


def adopt_saved(out: Output, opts: LocalRunOptions, results: Path) -> None:
    """``--resume`` / ``--retry-failed``: the flags not given again are the run's own,
    from its journal (said once, so nobody wonders what ran)."""
    from osmosis_local_runner.run.journal import saved_settings

    taken = opts.adopt(saved_settings(results))
    if taken:
        out.info("Resuming with the run's own settings: " + ", ".join(taken))
