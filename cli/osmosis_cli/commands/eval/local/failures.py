"""The end of a terminal run, pytest-style: the rows that failed, worst first — prompt,
expected, answer, error (FAILED and ERROR coloured on a terminal) — and the commands
that run them again: the errored attempts (``--retry-failed``), and every row that did
not pass (``--rows``: what a person runs after fixing the rollout)."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from osmosis_cli.terminal.output import Output
    from osmosis_local_runner.results.statistics.verdicts import RowVerdict

SHOWN = 5
SHOWN_VERBOSE = 20
#: flags whose value is a secret: never echoed in a suggested command
SECRET_FLAGS = ("--api-key", "--baseline-api-key")


def show_failures(out: Output, path: Path) -> tuple[list[int], set[int]]:
    """The worst rows that did not pass (more with ``-v``); (every such row's index, the
    rows shown)."""
    from osmosis_local_runner.results.documents.documents import ResultsFile
    from osmosis_local_runner.results.statistics.verdicts import worst_rows

    doc = ResultsFile(path)
    found = worst_rows(doc, SHOWN_VERBOSE if out.verbose else SHOWN)
    if not found.rows:
        return [], set()
    width = 400 if out.verbose else 100
    fn = doc.eval_fns[0]
    out.print(f"\n{found.failed:,} of {found.total:,} rows failed ({fn}), worst first:")
    for row, verdict in found.rows:
        out.print(_headline(row.index, verdict, color=out.color))
        for label, text in _fields(verdict):
            # an error is shown whole where it is read later (a CI log, a file): a
            # terminal keeps its excerpt
            whole = label == "error:" and not out.stdout_is_tty
            out.print(f"  {label:<9} {_cut(text, None if whole else width)}")
    more = found.failed - len(found.rows)
    if more > 0:
        hint = "every row is" if out.verbose else "-v shows more;"
        out.print(f"… {more:,} more failed rows ({hint} in {path})")
    return found.indices, {row.index for row, _ in found.rows}


#: SGR colours of a verdict on a terminal (NO_COLOR and pipes get none)
_COLOURS = {"ERROR ": "\x1b[1;31m", "FAILED": "\x1b[31m"}


def _headline(index: int, verdict: RowVerdict, *, color: bool = False) -> str:
    status = "ERROR " if verdict.status == "error" else "FAILED"
    shown = f"{_COLOURS[status]}{status}\x1b[0m" if color else status
    mean = "-" if verdict.mean is None else f"{verdict.mean:.2f}"
    return f"{shown} row {index}  {verdict.passing}/{verdict.attempts} passed, mean {mean}"


def adopted_args(form: Any, adopted: list[tuple[str, Any]]) -> list[str]:
    """What a continued run took from its journal, as this face's flags — so a command
    printed for some of its rows runs them as the run ran (its model, endpoint,
    effort, budget) — never its series or step (a rerun of some rows is not a
    checkpoint), nor its rows or headers."""
    import json

    words: list[str] = []
    for name, value in adopted:
        if name in ("series", "step", "rows", "headers") or value is None:
            continue
        flag = form.flag(name)
        if isinstance(value, bool):
            on = {"transcripts": "--transcripts", "think_tags": "--think-tags"}
            off = {"transcripts": "--no-transcripts", "think_tags": "--no-think-tags"}
            if value and name not in off:
                words.append(flag)
            elif name in off:
                words.append(on[name] if value else off[name])
            continue
        shown = json.dumps(value) if isinstance(value, dict) else str(value)
        words += [flag, shown]
    return words


#: flags a rerun of some rows leaves out: where it goes and which run it is, and its place
#: in a series (a rerun of some rows is not a checkpoint: never logged into a curve)
NOT_RERUN = (
    "-o",
    "--output",
    "--name",
    "--rows",
    "--resume",
    "--retry-failed",
    "--fresh",
    "--log-to",
    "--step",
    "--log-step",
    "--series",
)
#: of those, the ones that take no value
NO_VALUE = ("--resume", "--retry-failed", "--fresh")


def rows_command(out: Output, indices: list[int], adopted: Sequence[str] = ()) -> str | None:
    """``eval run`` or the seed form (``eval -m …``) typed again for just ``indices`` (a
    new run: no -o, --name or --rows of the old one, never its trackers or series step)
    with ``adopted`` (what a continued run took from its journal, as flags), or None when
    this is neither or nothing failed."""
    args = out.argv
    seed_form = args[:1] == ["eval"] and len(args) > 1 and args[1].startswith("-")
    if not indices or (args[:2] != ["eval", "run"] and not seed_form):
        return None
    kept: list[str] = []
    skip = False
    for arg in args:
        name = arg.split("=", 1)[0]
        if skip:
            skip = False
            continue
        if name in NOT_RERUN:
            skip = "=" not in arg and name not in NO_VALUE
            continue
        kept.append(arg)
    kept += adopted  # not given again: taken from the journal, so never typed twice
    from osmosis_local_runner.api.doors import rows_text

    return command_line(kept, [], f"--rows={rows_text(frozenset(indices))}")


def _fields(verdict: RowVerdict) -> list[tuple[str, str]]:
    fields = [("prompt:", verdict.prompt or "(not kept)")]
    fields.append(("expected:", "(none)" if verdict.expected is None else verdict.expected))
    fields.append(("answer:", verdict.answer or "(no answer)"))
    if verdict.error:
        fields.append(("error:", verdict.error))
    return fields


def _cut(text: str, width: int | None) -> str:
    from osmosis_client._redact import safe_text
    from osmosis_local_runner.results.documents.documents import excerpt

    return safe_text(text if width is None else excerpt(text, width))


def rerun_command(out: Output, output: Path, flag: str) -> str | None:
    """This invocation typed again with ``flag`` (``--retry-failed``, ``--resume``), and
    ``-o`` when the run chose its own path; None when the command line is not known."""
    args = out.argv
    if not args:
        return None
    named = any(a in ("-o", "--output") or a.startswith("--output=") for a in args)
    return command_line(args, [] if named else ["-o", str(output)], flag)


def command_line(args: list[str], extra: list[str], flag: str) -> str:
    """``osmosis`` + ``args`` + ``extra`` + ``flag``, printable: keys masked (``<KEY>``),
    header values masked (``Name: <VALUE>``), passwords in URLs masked (``***@``); an
    earlier ``--resume`` / ``--retry-failed`` left out."""
    from osmosis_client._redact import redact_urls_in

    shown: list[str] = []
    pending: str | None = None  # the flag whose value comes next
    for arg in args:
        name, eq, value = arg.partition("=")
        if pending is not None:
            shown.append(_masked(pending, arg))
            pending = None
        elif name in ("--resume", "--retry-failed"):
            continue
        elif name in MASKED_FLAGS and eq:
            shown.append(f"{name}={_masked(name, value)}")
        else:
            shown.append(redact_urls_in(arg))
            pending = name if name in MASKED_FLAGS else None
    return shlex.join(["osmosis", *shown, *extra, flag])


#: flags whose values are never printed as typed
MASKED_FLAGS = (*SECRET_FLAGS, "--header")


def _masked(flag: str, value: str) -> str:
    if flag == "--header":
        return f"{value.split(':', 1)[0].strip()}: <VALUE>"
    return "<KEY>"


def rerun_commands(out: Output, output: Path) -> dict[str, str]:
    """``resume_command`` / ``retry_command`` for a run written to ``output``."""
    found = {
        "resume_command": rerun_command(out, output, "--resume"),
        "retry_command": rerun_command(out, output, "--retry-failed"),
    }
    return {key: value for key, value in found.items() if value}
