"""``osmosis eval view --bundle DIR``: the viewer as a static site — every run (or the
ones named), each group's sweep and consecutive pairs compared, and every suite — that
opens from ``file://`` and from any static host (GitHub Pages, S3, a Hugging Face Space)
with no server. Each page is the viewer's own (``results/reports/report.py``: one codebase),
its data embedded, so a page loads only its own run's data; the home is a plain table
of links. The pages keep the report's content-security policy (no connection at all)
and its deep links (``runs/NAME.html#row=17&attempt=2``)."""

from __future__ import annotations

import html
import io
import itertools
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from osmosis_client._times import when
from osmosis_client.errors import InvalidInputError
from osmosis_client.layout import EVALS
from osmosis_local_runner.api.history import RunInfo, list_runs
from osmosis_local_runner.results.documents.sources import unique_labels
from osmosis_local_runner.results.reports.report import read_page, render, write_page
from osmosis_local_runner.trackers.hub_repo import hub_api
from osmosis_local_runner.viewer.partial import run_source
from osmosis_local_runner.viewer.suites import list_suites, suite_sources

POLICY = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"


@dataclass
class Bundle:
    """What was written: the site's folder and its pages by kind."""

    path: Path
    runs: list[str] = field(default_factory=list)
    comparisons: list[str] = field(default_factory=list)
    sweeps: list[str] = field(default_factory=list)
    suites: list[str] = field(default_factory=list)
    bytes: int = 0
    url: str | None = None  # where it was published (a Space), if it was
    #: every file this build wrote, relative to ``path``: exactly what is published
    files: list[str] = field(default_factory=list)

    def write(self, relative: str, page: str) -> None:
        """One page of the site written (never through a link) and counted."""
        self.bytes += write_page(self.path / relative, page, code="BUNDLE_PATH")
        self.files.append(relative)


def write_bundle(
    root: Path,
    into: Path,
    names: Sequence[str] = (),
    *,
    to: str | None = None,
    public: bool = False,
) -> Bundle:
    """The site of the project's runs under ``root`` (``names``: only these runs) in
    ``into`` (created; an existing site there is replaced page by page); ``to``: then
    published as a static Space (``hf-space:ORG/NAME``, checked before anything is
    written; private unless ``public``)."""
    if to is not None:  # the Space's name, the extra and the token: before anything is made
        space_repo(to)
        hub_api()
    if into.exists() and not into.is_dir():
        raise InvalidInputError(
            f"{into} is a file", hint="name a folder for the site", code="BUNDLE_PATH"
        )
    runs = [r for r in list_runs(root) if not names or r.name in names]
    missing = sorted(set(names) - {r.name for r in runs})
    if missing:
        raise InvalidInputError(
            f"no local run named {missing[0]!r}",
            hint="a run is a folder of .osmosis/evals",
            code="RUN_NOT_FOUND",
        )
    bundle = Bundle(into)
    with tempfile.TemporaryDirectory(prefix="osmosis-bundle-") as scratch:
        for run in runs:
            bundle.write(f"runs/{run.name}.html", _page(root, [run.name], Path(scratch)))
            bundle.runs.append(run.name)
        for series, group in _groups(runs):
            for older, newer in itertools.pairwise(group):
                name = f"{older}--{newer}"
                bundle.write(f"compare/{name}.html", _page(root, [older, newer], Path(scratch)))
                bundle.comparisons.append(name)
            bundle.write(f"sweeps/{series}.html", _sweep(root / EVALS, group, Path(scratch)))
            bundle.sweeps.append(series)
    if not names:
        for suite in list_suites(root):
            sources = suite_sources(root, suite["name"])
            page, _ = render(sources, home="../index.html", relative_to=root)
            bundle.write(f"suites/{suite['name']}.html", page)
            bundle.suites.append(suite["name"])
    bundle.write("index.html", _home(runs, bundle))
    if to is not None:
        bundle.url = publish_bundle(bundle, to, public=public)
    return bundle


def _page(root: Path, names: list[str], scratch: Path) -> str:
    """A run's page, or two runs compared: paths in it relative to the project."""
    sources = unique_labels([run_source(root / EVALS, name, scratch) for name in names])
    page, _ = render(sources, home="../index.html", relative_to=root)
    return page


def _sweep(runs: Path, names: list[str], scratch: Path) -> str:
    from osmosis_local_runner.results.statistics.sweep import sweep
    from osmosis_local_runner.viewer.sweep_page import sweep_page

    found = [(n, run_source(runs, n, scratch).results.path) for n in names]
    return sweep_page(sweep(found), home="../index.html", link=lambda n: f"../runs/{n}.html")


def _groups(runs: list[RunInfo]) -> list[tuple[str, list[str]]]:
    """Each series of two steps or more, by its recorded steps (one run a step: the newest
    one, should a step have been run twice): a sweep, its neighbours compared. Runs with
    no series are never joined."""
    by_step: dict[str, dict[int, RunInfo]] = defaultdict(dict)
    for run in sorted(runs, key=lambda r: (r.started or "", r.name)):
        if run.series is not None and run.step is not None:
            by_step[run.series][run.step] = run  # the newest of a step wins
    return [
        (series, [steps[s].name for s in sorted(steps)])
        for series, steps in sorted(by_step.items())
        if len(steps) > 1
    ]


def _home(runs: list[RunInfo], bundle: Bundle) -> str:
    esc = html.escape

    def num(value: float | None) -> str:
        return "–" if value is None else f"{value:.3f}"

    rows = "".join(
        f'<tr><td><a href="runs/{esc(r.name)}.html">{esc(r.name)}</a>'
        f"{''.join(f' <span class=tag>{esc(t)}</span>' for t in r.tags)}</td>"
        f"<td>{esc(r.status)}</td><td>{esc(r.model or '')}</td><td>{r.rows or 0}</td>"
        f"<td>{r.attempts or 0}</td><td>{num(r.mean)}</td><td>{num(r.pass_at_1)}</td>"
        f"<td>{esc(when(r.started))}</td></tr>"
        for r in runs
    )
    links = "".join(
        f'<li>{label}: <a href="{kind}/{esc(name)}.html">{esc(name.replace("--", join))}</a></li>'
        for kind, label, join, names in (
            ("compare", "compared", " vs ", bundle.comparisons),
            ("sweeps", "sweep", " … ", bundle.sweeps),
            ("suites", "suite", "", bundle.suites),
        )
        for name in names
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{POLICY}">
<title>osmosis — runs</title>
<style>
body {{ font: 14px system-ui, sans-serif; margin: 2em; color: #1d2330; }}
table {{ border-collapse: collapse; }} th, td {{ padding: 4px 10px; text-align: left;
border-bottom: 1px solid #e3e6ec; }} .tag {{ font-size: 11px; background: #eef0f4;
border-radius: 3px; padding: 0 4px; }} .muted {{ color: #667; }}
</style></head><body>
<h1>runs</h1>
<p class="muted">a static copy of <code>osmosis eval view</code>: {len(runs)} runs; each
page holds its own data and opens with no server</p>
<table data-testid="runs"><thead><tr><th>run</th><th>status</th><th>model</th><th>rows</th>
<th>attempts</th><th>mean</th><th>pass@1</th><th>started</th></tr></thead>
<tbody>{rows}</tbody></table>
<h2>Comparisons, sweeps and suites</h2><ul data-testid="pages">{links}</ul>
</body></html>
"""


#: a static Space's card: the site's own index is its page
SPACE_CARD = """---
title: osmosis eval runs
sdk: static
app_file: index.html
pinned: false
---

Evaluation runs published by `osmosis eval view --bundle … --to hf-space:…`.
"""


def space_repo(to: str) -> str:
    """``hf-space:ORG/NAME``'s repository id, checked (and its extra installed) before
    anything is written or sent."""
    from osmosis_local_runner.trackers import check_available, parse_destination

    kind, _, repo = to.partition(":")
    if kind != "hf-space":
        raise InvalidInputError(
            f"{to!r} is not a Space", hint="write hf-space:ORG/NAME", code="USAGE"
        )
    check_available([parse_destination(f"hf:{repo}")])  # the Hub's repository id rules
    return repo


def publish_bundle(bundle: Bundle, to: str, *, public: bool = False) -> str:
    """A written site published as a static Hugging Face Space (``hf-space:ORG/NAME``;
    private unless ``public``, an existing public Space refused otherwise): one commit of
    exactly the files the build wrote — never the folder's other files, never what a link
    in it points to — and the card, removing what an older site left there; then each
    file checked against the Space's listing. Its URL."""
    from osmosis_local_runner.trackers.hub_repo import hub_failure

    repo = space_repo(to)
    api = hub_api()  # HF_ENDPOINT and the token as the user set them; checked first
    files = {relative: read_page(bundle.path / relative) for relative in bundle.files}
    files["README.md"] = SPACE_CARD.encode()
    try:
        _send_site(api, repo, files, public)
    except Exception as exc:
        raise hub_failure(exc, repo, api.endpoint) from exc
    return f"{api.endpoint}/spaces/{repo}"


def _send_site(api: Any, repo: str, files: dict[str, bytes], public: bool) -> None:
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete

    from osmosis_local_runner.trackers.hub_repo import ready_repo
    from osmosis_local_runner.trackers.hub_sink import verify_uploaded

    ready_repo(api, repo, "space", public=public, space_sdk="static")
    stale = set(api.list_repo_files(repo, repo_type="space")) - set(files) - {".gitattributes"}
    operations: list[Any] = [CommitOperationDelete(path) for path in sorted(stale)]
    operations += [CommitOperationAdd(path, io.BytesIO(data)) for path, data in files.items()]
    api.create_commit(
        repo,
        repo_type="space",
        operations=operations,
        commit_message="osmosis eval view --bundle",
    )
    verify_uploaded(api, repo, {path: len(data) for path, data in files.items()}, "space")
