"""The options of the local forms — ``osmosis eval run`` and the seed form — declared
once as typed objects: parsing and behaviour test apart, and a flag is one field here
(plus the runner's ``Overrides``, when it is a setting of the run)."""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

from osmosis_cli.terminal.declare import flag, option

if TYPE_CHECKING:
    from osmosis_local_runner.api.doors import RunSettings

NoCompatOpt = Annotated[
    bool,
    option(
        "--no-compat",
        "Do not serve `osmosis_ai` 0.2 imports from osmosis-client's compatibility layer.",
    ),
]


RowsOpt = Annotated[
    str | None, option("--rows SPEC", 'Only these source rows, e.g. "3,7,10-20" (beats limit).')
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

    limit: int | None = flag("--limit N", "Only the first N rows.", min=1)
    n: int | None = flag("--n N", "Attempts per row.", min=1)
    batch_size: int | None = flag("--batch-size N", "Attempts in flight at once.", min=1)
    pass_threshold: float | None = flag("--pass-threshold X", "An attempt passes when score >= X.")
    model: str | None = flag("--model MODEL", "provider/model, a served name, or mock/…")
    base_url: str | None = flag("--base-url URL", "OpenAI-compatible endpoint, e.g. vLLM.")
    api_key_env: str | None = flag("--api-key-env NAME", "NAME of the env var holding the key.")
    output: Path | None = flag("-o --output PATH", "Results file (journal beside it).")
    resume: bool = flag("--resume", "Continue the run recorded at -o PATH.", default=False)
    endpoints: Path | None = flag(
        "--endpoints PATH",
        "Endpoint registry (default: configs/endpoints.toml); --model names a row.",
    )
    header: list[str] | None = flag(
        '--header "NAME: VALUE"',
        "An extra HTTP header for model calls (repeatable; wins over the files).",
    )
    sampling_args_json: str | None = flag(
        "--sampling-args JSON",
        'Chat-completions parameters, e.g. \'{"temperature": 0.7, "top_p": 0.9}\'.',
    )
    temperature: float | None = flag("--temperature T", "Sampling temperature.")
    reasoning_effort: str | None = flag(
        "--reasoning-effort LEVEL",
        "How hard a reasoning model thinks: none, minimal, low, medium, high, xhigh, "
        "max (OpenAI effort, Anthropic thinking budget, Qwen3 enable_thinking…).",
    )
    think_tags: bool | None = flag(
        "--think-tags/--no-think-tags",
        "Move the thinking a server writes into the answer (think tags: no reasoning "
        "parser) out of it; default: the endpoint row's, else on.",
        show_default=False,
    )
    raw_answers: bool = flag(
        "--raw-answers",
        "Eval fns get the reasoning too, in think tags before the answer.",
        default=False,
    )
    prices: Path | None = flag(
        "--prices FILE",
        'A price table (TOML: [models."NAME"] input, output, cache_read, cache_write '
        "in USD per million tokens), or `platform` (the platform's published prices; "
        "logged in): the run's cost.",
    )
    max_cost: float | None = flag(
        "--max-cost USD",
        "Stop the run once its model calls have cost this much (status stopped; "
        "resumable). Needs a price for the model.",
        min=0.000001,
    )
    unknown_usage: str | None = flag(
        "--unknown-usage unknown|free",
        "A model call whose answer carries no usage: its cost is unknown (default: "
        "with --max-cost the run stops), or counted as free.",
    )
    max_attempt_tokens: int | None = flag(
        "--max-attempt-tokens N",
        "An attempt's rollout gets no more model calls once it has used N tokens "
        "(the attempt ends, truncated).",
        min=1,
    )
    max_same_errors: int | None = flag(
        "--max-same-errors K",
        "Stop when the run's first K model calls are refused alike (one 4xx, one "
        "message: a broken request); default 5, 0: never.",
        min=0,
    )
    cache: bool = flag(
        "--cache",
        "Answer model calls from the call cache when everything that decides the "
        "answer is the same (the weights, the whole request, the row and attempt).",
        default=False,
    )
    cache_scope: str | None = flag(
        "--cache-scope NAME",
        "Name the weights behind an endpoint that cannot say which they are "
        "(no root in its /models): its calls are cached under NAME.",
    )
    replay: str | None = flag(
        "--replay RUN",
        "Answer each call a previous run recorded (same row, attempt, place and "
        "request) with its recorded answer; call the model for the rest.",
    )
    max_retries: int | None = flag(
        "--max-retries N",
        "Retry an attempt up to N times after a transient infrastructure error "
        "(a crashed rollout server, a lost connection); never after a wrong answer.",
        min=0,
    )
    max_error_rate: float | None = flag(
        "--max-error-rate X",
        "Exit 1 when more than this fraction of attempts errored (always: all of them).",
        min=0.0,
        max=1.0,
    )
    deadline: float | None = flag(
        "--deadline SECONDS",
        "Stop the whole run after SECONDS (finished attempts kept; exit 1; resumable).",
        min=0.001,
    )
    no_transcripts: bool = flag(
        "--no-transcripts",
        "Do not keep each attempt's final messages in the results (smaller files; "
        "`eval rescore` and the report's transcripts need them).",
        default=False,
    )
    junit: Path | None = flag(
        "--junit PATH",
        "Also write JUnit XML: one test case per row, one suite per eval fn (per entry).",
    )
    ca_bundle: Path | None = flag(
        "--ca-bundle PATH",
        "Also trust the certificates in this PEM file (a private gateway's CA); "
        "default: $OSMOSIS_CA_BUNDLE. Certificates are always verified.",
    )
    by: str | None = flag(
        "--by COLUMN", "Also break every statistic down by this dataset column (e.g. difficulty)."
    )
    cluster_by: str | None = flag(
        "--cluster-by COLUMN",
        "Rows sharing this column's value share a context (metadata.KEY): one cluster "
        "of the mean's interval.",
    )
    quiet: bool = flag("--quiet -q", "No progress output.", default=False)
    log_to: list[str] | None = flag(
        "--log-to TRACKER",
        "When the run finishes, log it to mlflow[:URI], wandb[:PROJECT], "
        "trackio[:PROJECT] or hf:ORG/NAME (repeatable; bare: the active run).",
    )
    series: str | None = flag(
        "--series NAME",
        "The series (a training's checkpoints) the run belongs to: its runs make one "
        "curve in the viewer and in trackers.",
    )
    step: int | None = flag(
        "--step --log-step STEP",
        "The run's step in its series (a training step): recorded with the run, and "
        "where trackers log its metrics.",
        min=0,
    )

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
