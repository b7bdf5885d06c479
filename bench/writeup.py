"""docs/benchmarks.md from one run's measurements (``run_benchmarks.py`` measures;
this writes the page: every number beside its baseline, and what it means)."""

from __future__ import annotations

import os
import platform
import time
from pathlib import Path
from typing import Any

from bench.cpu_profile import section as cpu_section
from bench.large_window import section as large_window_section

ROOT = Path(__file__).resolve().parents[1]


def report_section(measured: dict[str, Any]) -> str:
    from bench.report import section

    return section(measured)


def server_mode_section(s: dict[str, Any]) -> str:
    if "skipped" in s:
        return f"## Published-SDK rollout servers\n\nNot measured: {s['skipped']}.\n"
    ours, theirs = s["ours"], s["published"]
    ceiling = 1000 / ours["server_cpu_ms_per_rollout"]
    return f"""## Published-SDK rollout servers (server mode vs the published CLI)

`bench/server_mode.py`: the same rollout server — the scaffold calculator written for
the published osmosis-ai {s["published_version"]} SDK, allowed {s["batch"]} rollouts at once
(`bench/published_rollout_main.py`) — and the same zero-latency model stub, driven by
`osmosis eval run` and by the published `osmosis eval run` over {s["rows"]} rows at
batch_size {s["batch"]}, both through `uv` on a project already in sync. The server
records each `POST /rollout` and each grade, so both are timed by one clock from outside;
throughput is the steady state (first POST → last grade).

| what | osmosis-client | published CLI | ratio | target |
|---|---:|---:|---:|---|
| time from command start to the first `POST /rollout` | {ours["first_dispatch_s"]:.2f} s | {theirs["first_dispatch_s"]:.2f} s | {s["first_dispatch_ratio"]:.2f} | <= 0.33 |
| rollouts/s (steady state) | {ours["rollouts_per_s"]:.1f} | {theirs["rollouts_per_s"]:.1f} | {s["throughput_ratio"]:.2f} | >= 3 |
| controller CPU per rollout (the CLI process, bridge included) | {ours["cpu_ms_per_rollout"]:.1f} ms | {theirs["cpu_ms_per_rollout"]:.1f} ms | {ours["cpu_ms_per_rollout"] / theirs["cpu_ms_per_rollout"]:.2f} | |
| result polls per rollout | {ours["polls_per_rollout"]:.2f} | {theirs["polls_per_rollout"]:.2f} | | |
| the rollout server's own CPU per rollout (same span) | {ours["server_cpu_ms_per_rollout"]:.1f} ms | {theirs["server_cpu_ms_per_rollout"]:.1f} ms | | |
| whole command (start-up, {s["rows"]} rollouts, shutdown) | {ours["total_s"]:.1f} s | {theirs["total_s"]:.1f} s | {ours["total_s"] / theirs["total_s"]:.2f} | |

**Time to first dispatch** meets its target: the published CLI pays a LiteLLM import and a
model preflight call before it starts the server; osmosis-client skips `uv sync` when
nothing changed, imports no LiteLLM, and the first wave's own model calls check the
endpoint. (Here every run starts its server cold, warm starts off, as the published CLI
always does; with them on — the default — every run after the first is faster still:
the next section measures the edit loop.)

**Throughput does not reach 3× here, and cannot on this machine: the rollout server is
the bottleneck, not the controller.** The server spends
{ours["server_cpu_ms_per_rollout"]:.0f} ms of CPU per rollout (FastAPI, the workflow's own
HTTP client, grading, writing the trajectory) in one process, which caps it near
{ceiling:.0f} rollouts/s whoever drives it; osmosis-client reaches
{ours["rollouts_per_s"] / ceiling:.0%} of that ceiling. Its controller — bridge included —
costs {ours["cpu_ms_per_rollout"]:.1f} ms of CPU per rollout, about
{theirs["cpu_ms_per_rollout"] / ours["cpu_ms_per_rollout"]:.0f}× less than the published CLI's
(LiteLLM in the bridge, a supervisor on top); that difference becomes throughput where
cores are scarce or the rollout server is lighter than this scaffold. The 3× goal
assumed the published CLI's own overhead limits it; with {os.cpu_count()} cores and this
server it does not (see the note on the issue).
"""


def edit_loop_section(e: dict[str, Any]) -> str:
    if "skipped" in e:
        return f"## The edit–eval loop on a published rollout\n\nNot measured: {e['skipped']}.\n"
    t = e["to_first_post_s"]
    return f"""## The edit–eval loop on a published rollout (warm starts)

`bench/edit_loop.py`: the template's OpenAI Agents rollout (openai-agents, LiteLLM, FastAPI;
published osmosis-ai {e["published_version"]}), {e["rows"]} rows against a loopback model stub,
through `uv` on a project in sync. Each run is timed from the command's start to the
first `POST /rollout` the rollout server receives (the server records it; one clock).
Medians of {e["trials"]}. The baseline is the published CLI's run, measured in the same run.

| run | osmosis-client | warm starts off | published CLI | ratio to published | target |
|---|---:|---:|---:|---:|---|
| first run (nothing warm) | {t["first"]:.2f} s | {t["cold_first"]:.2f} s | {t["published"]:.2f} s | {t["first"] / t["published"]:.2f} | unchanged |
| re-run, no change | {t["no_change"]:.2f} s | {t["cold_no_change"]:.2f} s | {t["published"]:.2f} s | {t["no_change"] / t["published"]:.2f} | <= 1.5 s |
| re-run after editing the rollout's code | {t["edited"]:.2f} s | {t["cold_edited"]:.2f} s | {t["published"]:.2f} s | {t["edited"] / t["published"]:.2f} | <= 3 s |
{venv_rows(t)}
How: the first run records which *installed* modules its server imported; a warm
interpreter then holds them imported and forks each next run's server, which imports the
rollout's own code afresh (an edit is always picked up) — see
[server-mode.md](server-mode.md#warm-starts). The published CLI has no warm path: every
run pays its imports (and a LiteLLM import and model preflight of its own) again.
"""


def venv_rows(t: dict[str, float]) -> str:
    """The same runs with the rollout's own ``rollouts/<name>/.venv`` (its site-packages
    inside the rollout's folder), when measured."""
    if "venv_first" not in t:
        return ""
    p = t["published"]
    return (
        f"| `.venv` in the rollout's folder: first run | {t['venv_first']:.2f} s | | {p:.2f} s "
        f"| {t['venv_first'] / p:.2f} | unchanged |\n"
        f"| `.venv` in the rollout's folder: re-run, no change | {t['venv_no_change']:.2f} s | "
        f"| {p:.2f} s | {t['venv_no_change'] / p:.2f} | <= 1.5 s |\n"
        f"| `.venv` in the rollout's folder: re-run after an edit | {t['venv_edited']:.2f} s | "
        f"| {p:.2f} s | {t['venv_edited'] / p:.2f} | <= 3 s |\n"
    )


def scale_section(s: dict[str, Any]) -> str:
    read, compare, report = s["read"], s["compare"], s["report"]
    fast_read = s.get("read_orjson")
    extra = ""
    if fast_read:
        extra = (
            f"| reading both documents with orjson | {fast_read['s']:.1f} s | "
            f"{fast_read['s'] / read['s']:.2f} | {fast_read['rss_mb']:.0f} MB | |\n"
        )
    return f"""## Results commands at a million rows

`bench/scale.py`: two synthetic runs of {s["rows"]:,} rows ({s["doc_mb"]:.0f} MB each: a
three-message transcript per attempt, a metadata column), each command in its own process;
peak memory is the process tree's. The baseline reads both documents' lines with
`json.loads` and nothing else. `eval compare` and `compare_runs()` are one code path; the
figure is the CLI's.

| what | time | ratio to reading | peak RSS | target |
|---|---:|---:|---:|---|
| reading both documents (baseline) | {read["s"]:.1f} s | 1.0 | {read["rss_mb"]:.0f} MB | |
{extra}| `eval compare A B --json` | {compare["s"]:.1f} s | {compare["s"] / read["s"]:.1f} | {compare["rss_mb"]:.0f} MB | <= 10 s, <= 500 MB |
| `eval report A B` ({s["report_html_mb"]:.1f} MB of HTML) | {report["s"]:.1f} s | {report["s"] / read["s"]:.1f} | {report["rss_mb"]:.0f} MB | <= 1 GB, a page that opens |

What made compare fit (from 19–21 s): decoding row lines is most of a scan, and orjson
does it in a quarter of the standard library's time (with the same strictness: no NaN or
Infinity, no number beyond a double, bounded nesting — tests hold it to the standard
library's strict loader); the transcripts are parsed rather than cut out (cheaper than
the cut). A row of the usual shape (one attempt) takes a short path to its statistics;
rows pair by one dictionary look-up each when neither side repeats a row; and the rows a comparison shows are read back
from where their lines start (recorded during the scan) instead of a third and fourth pass
over both documents. The two documents are still scanned at once (B in a second process).
orjson is a dependency since issue 33 (it was the optional `fast` extra). Before: 73 s
and 2.6 GB (the issue's figures).

The report reads the documents three times (statistics, the listed rows, the slices) and
never holds a transcript it does not list: 5,000 rows and 1,000 transcripts at most, every
statistic over every row.
"""


def fixed_cost_section(f: dict[str, Any]) -> str:
    this, before = f["this"], f["before"]

    def row(label: str, key: str, unit: str = "s", digits: int = 3) -> str:
        ratio = this[key] / before[key] if before[key] else float("nan")
        return f"| {label} | {this[key]:.{digits}f} {unit} | {before[key]:.{digits}f} {unit} | {ratio:.2f} |"

    return f"""## A run's fixed cost ({f["rows"]:,} rows, the stub answers at once)

`osmosis eval run` on the quickstart with a {f["rows"]:,}-row dataset, in a child process,
beside the same command of the commit before model calls moved to aiohttp
(`{f["before_commit"]}`, installed the same way; `bench/fixed_cost.py`, medians of
{f["trials"]} interleaved runs after a warm one). One clock, from outside: a loopback stub
notes the first request and the last answer; the fixed time is (first request − spawn) +
(exit − last answer) — interpreter start-up, imports, the config and dataset checks and
the plan; then the results document, the published files and the exit. Peak memory is
the child's own high-water mark (`VmHWM`), read as it exits.

| what | this checkout | before aiohttp | ratio |
|---|---:|---:|---:|
{row("fixed time outside the dispatch window (target < 0.4 s)", "fixed_s")}
{row("of which spawn → first request", "start_s")}
{row("of which last answer → exit", "end_s")}
{row("the dispatch window itself (the runner's own work)", "window_s")}
{row("peak RSS", "peak_mb", "MB", 0)}

What brought the fixed time down (issue 43): start-up objects are frozen out of the
garbage collector at the console script's exit as well as its start; the CI-gate,
agent-loop and TLS modules load only when a run needs them (a TLS context is built only
when a route is HTTPS); the config check parses TOML with the standard library's
`tomllib`; a verdict that passed everywhere is not recomputed per row. The floor under
both measures is aiohttp itself: importing it costs ~110–170 ms here (about half of it
the TLS contexts it builds at import) and ~11 MB on top of what a run imports anyway
(measured with asyncio, ssl and pydantic already loaded), which the old commit's own HTTP
client did not pay — and which bought everything its section above lists. The issue's figures
(0.68 s vs 0.51 s) were taken with `PYTHONDONTWRITEBYTECODE=1`, which makes every
start compile our modules from source; an installed CLI loads bytecode, and so does this
measure.
"""


def reused_note(r: dict[str, Any]) -> str:
    if not r.get("reused"):
        return ""
    names = ", ".join(f"`{name}`" for name in r["reused"])
    return (
        f"\nThe sections {names} are carried over from the previous full run (unchanged code\n"
        "paths; `run_benchmarks.py --reuse` re-measures everything else).\n"
    )


def met(value: float, target: float) -> str:
    return "met" if value >= target else "not met"


def slowest_help(r: dict[str, Any]) -> tuple[str, float]:
    pages = r.get("group_help_ms") or {"eval": r["eval_help_ms"]}
    return max(pages.items(), key=lambda item: item[1])


def write_report(r: dict[str, Any], *, trials: int, concurrency: int) -> None:
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    text = f"""# Benchmarks

Measured by `python bench/run_benchmarks.py` on {machine}, {time.strftime("%Y-%m-%d")}.
Every number is paired with a baseline measured in the same run; the ratios
are what we track (medians of {trials} interleaved trials, so drift on a shared
machine hits every variant alike). Nothing here is asserted in tests.
{reused_note(r)}
## Local runner throughput (zero model latency, batch_size {concurrency})

A loopback OpenAI-compatible stub (aiohttp, its own process) answers at once.
The baseline is a bare aiohttp loop posting the same request at the same
concurrency. The runner does everything a real run does: streams the
dataset, builds contexts, calls the model, grades, journals every attempt,
and writes the results document.

| what | attempts/s | ratio | target |
|---|---:|---:|---|
| bare aiohttp loop (baseline) | {r["raw_aiohttp"]:.0f} | 1.00 | |
| osmosis local runner (steady state) | {r["runner"]:.0f} | {r["runner_ratio"]:.2f} | >= 0.45 ({met(r["runner_ratio"], 0.45)}) |
| osmosis local runner, end to end (validation, start-up, final write included) | {r["runner_e2e"]:.0f} | {r["runner_e2e"] / r["raw_aiohttp"]:.2f} | |
| runner without journal writes | {r["runner_no_journal"]:.0f} | {r["runner_no_journal"] / r["raw_aiohttp"]:.2f} | |
| journal cost | | {r["journal_cost"]:.1%} | <= 10 % |
| our model client alone (request encoded, answer read and decoded) | {r.get("model_client", 0):.0f} | {r.get("model_client", 0) / r["raw_aiohttp"]:.2f} | |
| bare httpx AsyncClient loop | {r["raw_httpx"]:.0f} | {r["raw_httpx"] / r["raw_aiohttp"]:.2f} | (stack choice) |

**Model calls are on aiohttp**, the one maintained stack the servers already use: a
session per endpoint, proxies from the environment, the process's TLS policy, bounded
decompression. An own HTTP/1.1 client once took the ratio to ~0.8 against this
instant stub and was removed (docs/models.md, issue 33): it spun for ever on a negative
chunk size, inflated a gzip bomb whole, ignored proxies and replayed POSTs — and at a
realistic 200 ms per call it bought nothing (the latency-bound table below). At zero
latency the bare loop is bound by its own CPU, and the runner adds its own work on top of
the same client: the next section shows where that goes. What took the runner from 0.39
to the figure above (issue 33): JSON — encoding requests, records and journal lines,
decoding answers and dataset rows — had been the largest share of that work, and is now
orjson's (a maintained library; `osmosis_client/_json.py` keeps the standard library's
verdicts where the two differ); deadlines are entered in place rather than through a
wrapping coroutine, and a model call runs one coroutine fewer.

Peers on this kind of work (from the issue): osmosis-ai 0.3.8 ~7.8 rollouts/s,
Inspect ~30, verifiers ~42.

**HTTP stacks.** httpx's async transport collapses under concurrency (encode/httpx#3215):
in this same run it reached {r["raw_httpx"]:.0f} requests/s against aiohttp's
{r["raw_aiohttp"]:.0f}. The platform client stays on httpx, where respx mocks it and a
handful of requests per command make speed irrelevant; aiohttp serves the LLM bridge, the
0.2 agent-loop server and the rollout-server protocol. All share one `RetryPolicy`.

## Agent loops (zero model latency, batch_size {concurrency})

A 0.2 `RolloutAgentLoop` run in-process, as `osmosis eval -m server:agent_loop` runs it:
each rollout makes one tool call, so two model calls (the stub answers a request that
offers tools with a tool call, then repeats the tool's result). The ceiling is half the
bare loop's request rate.

| what | rollouts/s | ratio | target |
|---|---:|---:|---|
| ceiling: bare aiohttp requests/s / 2 | {r["raw_aiohttp"] / 2:.0f} | 1.00 | |
| osmosis agent-loop rollouts (steady state) | {r["agent_loop"]:.0f} | {r["agent_loop_ratio"]:.2f} | >= 0.60 ({met(r["agent_loop_ratio"], 0.6)}) |

The 0.60 target was set when model calls went through an HTTP client of our own (issue 25);
on aiohttp (issue 33) each of a rollout's two calls costs what the bare loop's does, plus
the loop's own turn handling, so at zero latency the ratio sits near the runner's. It is a
yardstick: at any real model latency agent loops are latency-bound, as the runner is below.

{cpu_section(r["cpu"]) if "cpu" in r else ""}
{fixed_cost_section(r["fixed_cost"]) if "fixed_cost" in r else ""}
{edit_loop_section(r["edit_loop"])}
{server_mode_section(r["server_mode"])}
{large_window_section(r["large_window"]) if "large_window" in r else ""}
## Latency-bound runs (200 ms per model call, batch_size {concurrency})

| what | attempts/s | ratio | target |
|---|---:|---:|---|
| ideal: batch_size / latency | {r["ideal_200ms"]:.0f} | 1.00 | |
| bare aiohttp loop against the same stub | {r["raw_200ms"]:.0f} | {r["raw_200ms"] / r["ideal_200ms"]:.2f} | |
| osmosis local runner (steady state) | {r["runner_200ms"]:.0f} | {r["runner_200ms"] / r["ideal_200ms"]:.2f} | >= 0.95 |
| osmosis local runner, end to end ({concurrency * 20} rows) | {r["runner_200ms_e2e"]:.0f} | {r["runner_200ms_e2e"] / r["ideal_200ms"]:.2f} | |
| bare aiohttp loop, one cold {concurrency * 10}-request job | {r["cold_short"]:.0f} | {r["cold_short"] / r["ideal_200ms"]:.2f} | |
| osmosis local runner, end to end, short run ({concurrency * 10} rows) | {r["runner_short_e2e"]:.0f} | {r["runner_short_e2e"] / r["ideal_200ms"]:.2f} | |
| **the short run against the bare loop doing the same job cold** | | **{r["runner_short_e2e"] / r["cold_short"]:.2f}** | >= 0.95 ({met(r["runner_short_e2e"] / r["cold_short"], 0.95)}) |

Against a bare aiohttp loop at the same latency the runner reaches
{r["runner_200ms"] / r["raw_200ms"]:.2f} (steady state) and, on the short run measured end to
end, {r["runner_short_e2e"] / r["cold_short"]:.2f} of a bare loop doing the same job cold. The stub
answers each request after exactly 200 ms, so a window's attempts finish together: every
wave pays the loopback round trip and the stub's own handling (~5 ms), and the first wave
also opens {concurrency} connections — a bare loop pays the same, so its ratio is the ceiling
on this machine.

What brought the short run from 0.83 to this: the endpoint is checked by the first wave's
own model calls — no probe request holding a window slot (it made 640 attempts at batch 64
eleven waves instead of ten), and a failing endpoint still abandons the run before
anything is kept; per-stage `asyncio.timeout`s were replaced by one shared deadline checker; a model
call that succeeds at the first try skips the retry plan's machinery; an attempt's
bookkeeping (journal line, progress) is deferred so the next requests leave first; rows
are parsed ahead while the loop is idle; the results document is written one row per line
by the C JSON encoder; the CLI freezes start-up objects out of the garbage collector.

Against the ideal, the short run reaches {r["runner_short_e2e"] / r["ideal_200ms"]:.2f} where the target is
0.95; a bare loop doing the same job cold reaches {r["cold_short"] / r["ideal_200ms"]:.2f} on this machine,
so that is the ceiling, and the runner's remaining gap to it is work a bare loop
skips: decoding each reply, grading, journaling and keeping the transcript.

## Memory at 100 k rows (mock model, batch_size 64, n = 1)

| what | peak RSS (MB) |
|---|---:|
| interpreter + runner imports (baseline) | {r["rss_baseline_mb"]:.0f} |
| full run over 100,000 rows, results kept | {r["rss_100k_mb"]:.0f} (target <= 250) |

The dataset is streamed (validated in one pass, executed in a second) and
attempts are pulled lazily by a fixed pool of `batch_size` workers; what grows
is the results themselves: one compact record per attempt, whose transcript is
kept as compact JSON text and spliced into the journal line and the results
document without being parsed again. The document is streamed to disk row by row,
and `--json` copies the file to stdout, so a large run is never held whole.

## CLI start-up

| what | median ms |
|---|---:|
| `python -c pass` (baseline) | {r["python_startup_ms"]:.0f} |
| of which the `osmosis_ai` start-up hook (any interpreter; `site` in all: {r["site_ms"]:.1f}) | {r["osmosis_ai_hook_ms"]:.2f} |
| `osmosis --help` | {r["help_ms"]:.0f} ({r["help_ms"] / r["python_startup_ms"]:.1f}× `python -c pass`; target <= 120) |
| `osmosis eval --help` | {r["eval_help_ms"]:.0f} ({r["eval_help_ms"] / r["python_startup_ms"]:.1f}× `python -c pass`; target <= 120) |
| the slowest other help page: `osmosis {slowest_help(r)[0]} --help` (of {len(r["group_help_ms"])}: every group's, `eval run`'s, `submit`'s, `compare`'s) | {slowest_help(r)[1]:.0f} (target <= 120) |
| importing httpx + pydantic + rich.console (avoided at start-up) | {r["import_httpx_ms"]:.0f} |

Command groups are lazy: `osmosis --help` and `osmosis eval --help` list one-line summaries
from a table in `main.py` and import no command at all; a command's module (and its
group's) is imported the first time it is looked up — when it runs or shows its own help
(`cli/osmosis_cli/terminal/lazy.py`). Before, every help page imported every group's
commands (~65 ms of our own imports on this machine: the 0.2 test command, suites, slices,
the hosted workflow) and `osmosis --help` took 190 ms. Help pages are timed with our
packages byte-compiled, as a wheel install leaves them: this checkout is an editable
install on a machine with `PYTHONDONTWRITEBYTECODE=1`, where every start would otherwise
compile our modules from source (~30 ms) — no installed CLI pays that. Tests assert which modules a help
page imports, that the table names every registered command, and that no help page imports
httpx, pydantic, rich, aiohttp, asyncio or ssl.

Typer coerces every non-flag option through pydantic, including its own `--help`
flag (which defaults to `None`): `osmosis eval --help` used to import pydantic for
that reason alone. Our command classes give `--help` a `False` default, and the one
global option that takes a value (`--platform-url`) is read by the entry point before
typer parses, so help pages and usage errors import neither pydantic nor anything heavy
(a test asserts it for every help page).

{scale_section(r["scale"])}
{report_section(r["html_report"])}
"""
    (ROOT / "docs" / "benchmarks.md").write_text(text)
