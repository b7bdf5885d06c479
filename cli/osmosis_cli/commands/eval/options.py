"""The options of the local forms — ``osmosis eval run`` and the seed form — declared
once as typed objects: parsing and behaviour test apart, and a flag is one field here
(plus the runner's ``Overrides``, when it is a setting of the run)."""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

import typer

from osmosis_cli.commands.eval.caching import CacheOpt, CacheScopeOpt, ReplayOpt
from osmosis_cli.commands.eval.limits import (
    MaxAttemptTokensOpt,
    MaxCostOpt,
    MaxSameErrorsOpt,
    UnknownUsageOpt,
)
from osmosis_cli.commands.eval.slicing import ByOpt, ClusterByOpt
from osmosis_cli.commands.eval.trackers import LogToOpt, SeriesOpt, StepOpt

if TYPE_CHECKING:
    from osmosis_local_runner.api.doors import RunSettings

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
RowsOpt = Annotated[
    str | None,
    typer.Option(
        "--rows", metavar="SPEC", help='Only these source rows, e.g. "3,7,10-20" (beats limit).'
    ),
]
TemperatureOpt = Annotated[
    float | None, typer.Option("--temperature", metavar="T", help="Sampling temperature.")
]
EffortOpt = Annotated[
    str | None,
    typer.Option(
        "--reasoning-effort",
        metavar="LEVEL",
        help="How hard a reasoning model thinks: none, minimal, low, medium, high, xhigh, "
        "max (OpenAI effort, Anthropic thinking budget, Qwen3 enable_thinking…).",
    ),
]
ThinkTagsOpt = Annotated[
    bool | None,
    typer.Option(
        "--think-tags/--no-think-tags",
        help="Move the thinking a server writes into the answer (think tags: no reasoning "
        "parser) out of it; default: the endpoint row's, else on.",
        show_default=False,
    ),
]
RawAnswersOpt = Annotated[
    bool,
    typer.Option(
        "--raw-answers",
        help="Eval fns get the reasoning too, in think tags before the answer.",
    ),
]
PricesOpt = Annotated[
    Path | None,
    typer.Option(
        "--prices",
        metavar="FILE",
        help='A price table (TOML: [models."NAME"] input, output, cache_read, cache_write '
        "in USD per million tokens), or `platform` (the platform's published prices; "
        "logged in): the run's cost.",
    ),
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
        ) from exc
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
        **dict.fromkeys(
            ("limit", "n", "pass_threshold", "resume", "by", "cluster_by", "raw_answers"), WHAT
        ),
        **dict.fromkeys(
            (
                "model",
                "base_url",
                "api_key_env",
                "endpoints",
                "header",
                "sampling_args_json",
                "temperature",
                "reasoning_effort",
                "think_tags",
                "ca_bundle",
                "cache",
                "cache_scope",
                "replay",
            ),
            MODEL,
        ),
        **dict.fromkeys(
            (
                "batch_size",
                "max_retries",
                "max_error_rate",
                "deadline",
                "max_cost",
                "unknown_usage",
                "max_attempt_tokens",
                "max_same_errors",
            ),
            PACE,
        ),
        **dict.fromkeys(
            ("output", "no_transcripts", "junit", "quiet", "prices", "log_to", "series", "step"),
            OUTPUT,
        ),
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
    reasoning_effort: EffortOpt = None
    think_tags: ThinkTagsOpt = None
    raw_answers: RawAnswersOpt = False
    prices: PricesOpt = None
    max_cost: MaxCostOpt = None
    unknown_usage: UnknownUsageOpt = None
    max_attempt_tokens: MaxAttemptTokensOpt = None
    max_same_errors: MaxSameErrorsOpt = None
    cache: CacheOpt = False
    cache_scope: CacheScopeOpt = None
    replay: ReplayOpt = None
    max_retries: MaxRetriesOpt = None
    max_error_rate: MaxErrorRateOpt = None
    deadline: DeadlineOpt = None
    no_transcripts: NoTranscriptsOpt = False
    junit: JunitOpt = None
    ca_bundle: CaBundleOpt = None
    by: ByOpt = None
    cluster_by: ClusterByOpt = None
    quiet: QuietOpt = False
    log_to: LogToOpt = None
    series: SeriesOpt = None
    step: StepOpt = None

    #: this face's names of run settings (option → RunSettings field)
    RENAMED: ClassVar[dict[str, str]] = {
        "header": "headers",
        "sampling_args_json": "sampling_args",
        "no_transcripts": "transcripts",
    }
    #: options that are not settings of the run: where it goes, which run, what runs,
    #: how it is shown (tests/osmosis_local_runner/test_settings.py holds both lists)
    PRESENTATION: ClassVar[frozenset[str]] = frozenset(
        {"output", "resume", "quiet", "junit", "max_error_rate", "log_to"}
    )

    def run_settings(self) -> RunSettings:
        """The run's settings: every field :class:`RunSettings` has by name, and those
        this face names otherwise (``RENAMED``)."""
        from osmosis_local_runner.api.doors import RunSettings

        names = {f.name for f in fields(RunSettings)} & {f.name for f in fields(self)}
        values: dict[str, Any] = {name: getattr(self, name) for name in names}
        values.update(
            headers=list(self.header or []),
            sampling_args=sampling_args(self.sampling_args_json),
            transcripts=not self.no_transcripts,
        )
        values.update(self.renamed_settings())
        return RunSettings(**{k: v for k, v in values.items() if v is not None})

    def renamed_settings(self) -> dict[str, Any]:
        """A form's own renamed options, as settings (none here)."""
        return {}

    def sharing(self) -> dict[str, Any]:
        """Where the results go when the run ends (``RunRequest.log_to``), checked."""
        from osmosis_local_runner.api.keywords import destinations_of

        return {"log_to": destinations_of(self.log_to)}

    @classmethod
    def flag(cls, name: str) -> str:
        """A run setting as this face's flag (``headers`` → ``--header``)."""
        option = {v: k for k, v in cls.RENAMED.items()}.get(name, name)
        return _FLAGS.get(option, "--" + option.replace("_", "-"))

    @classmethod
    def adopted_line(cls, adopted: list[tuple[str, Any]]) -> str | None:
        """``Resuming with the run's own settings: --limit 40, --model X`` (what a
        continued run took from its journal), or None."""
        if not adopted:
            return None
        from osmosis_local_runner.api.doors import rows_text

        shown = []
        for name, value in adopted:
            if name == "transcripts":
                shown.append("--no-transcripts" if not value else "--transcripts")
                continue
            if name == "rows":
                value = rows_text(value)
            if isinstance(value, list):
                value = " ".join(str(v) for v in value)
            shown.append(f"{cls.flag(name)} {value}")
        return "Resuming with the run's own settings: " + ", ".join(shown)


#: options whose flag is not their name with dashes
_FLAGS = {
    "sampling_args_json": "--sampling-args",
    "rows_spec": "--rows",
    "eval_fns": "--eval-fn",
    "module": "-m",
}
