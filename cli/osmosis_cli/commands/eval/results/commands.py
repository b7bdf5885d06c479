"""The results commands on the ``eval`` group — compare, rescore, report, view, schema,
push, agreement, plan — each under its own name (main.py's table lists them)."""

from __future__ import annotations

from osmosis_cli.commands.eval.results.agreement import agreement
from osmosis_cli.commands.eval.results.compare import compare
from osmosis_cli.commands.eval.results.plan import plan
from osmosis_cli.commands.eval.results.report import report
from osmosis_cli.commands.eval.results.rescore import rescore
from osmosis_cli.commands.eval.results.schema import schema
from osmosis_cli.commands.eval.results.trackers import push
from osmosis_cli.commands.eval.results.view import view

__all__ = ["agreement", "compare", "plan", "push", "report", "rescore", "schema", "view"]
