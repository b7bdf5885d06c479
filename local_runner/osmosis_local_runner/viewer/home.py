"""The viewer's home page: a shell whose one script (allowed by its hash, as the report's
is) draws the runs from ``api/runs``."""

from __future__ import annotations

import base64
import functools
import hashlib
from pathlib import Path

ASSETS = Path(__file__).parent / "assets"

_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{policy}">
<title>osmosis runs</title>
<style>
body {{ font: 14px system-ui, sans-serif; margin: 2em; color: #1d2330; }}
table {{ border-collapse: collapse; }}
th {{ cursor: pointer; text-align: left; user-select: none; }}
th, td {{ padding: 4px 10px; border-bottom: 1px solid #e3e6ec; }}
tr[data-status=running] .status {{ color: #b26b00; }}
tr[data-status=stopped] .status {{ color: #b00020; }}
#bar {{ display: flex; gap: 1em; align-items: center; margin-bottom: 1em; }}
.muted {{ color: #667; }}
.tag {{ font-size: 11px; background: #efe7f6; color: #6a3d9a; padding: 0 5px; border-radius: 3px; }}
</style>
</head>
<body>
<h1>Runs</h1>
<div id="bar">
<input id="filter" type="search"
 placeholder="filter by name, model, status, config, tag or reviewed">
<span id="count" data-testid="count"></span>
<a id="compare" hidden></a>
</div>
<table><thead><tr id="head"></tr></thead><tbody id="body"></tbody></table>
<h2>Across runs <select id="stat" aria-label="statistic">
<option value="mean">mean</option><option value="pass_at_1">pass@1</option>
<option value="attempts">attempts</option><option value="duration_ms">duration</option>
<option value="output_tokens">output tokens per attempt</option>
<option value="reasoning_tokens">reasoning tokens per attempt</option>
<option value="truncation_rate">truncated</option>
<option value="cost_usd">cost per attempt</option>
</select></h2>
<p><label>series <select id="group" aria-label="which series to plot"></select></label>
<span id="group-note" class="muted"></span> <a id="sweep" data-testid="sweep" hidden></a></p>
<svg id="chart" data-testid="chart" width="640" height="190" role="img"
 aria-label="the chosen statistic along one series, by the step each run recorded"></svg>
<section id="suites-section" hidden>
<h2>Suites</h2>
<table><thead><tr><th>suite run</th><th>suite</th><th>status</th><th>entries finished</th>
</tr></thead><tbody id="suites"></tbody></table>
</section>
<script>{script}</script>
</body>
</html>
"""


@functools.cache
def home_page() -> str:
    script = (ASSETS / "home.js").read_text(encoding="utf-8")
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    policy = (
        f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{digest}'; "
        "connect-src 'self'; base-uri 'none'; form-action 'none'"
    )
    return _PAGE.format(policy=policy, script=script)
