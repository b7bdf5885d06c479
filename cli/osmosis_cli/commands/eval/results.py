"""The results commands on the ``eval`` group — compare, rescore, report, view, schema,
push, agreement, plan — each under its own name (main.py's table lists them)."""

from __future__ import annotations

from osmosis_cli.commands.eval.agreement import agreement
from osmosis_cli.commands.eval.compare import compare
from osmosis_cli.commands.eval.plan import plan
from osmosis_cli.commands.eval.report import report
from osmosis_cli.commands.eval.rescore import rescore
from osmosis_cli.commands.eval.schema import schema
from osmosis_cli.commands.eval.trackers import push
from osmosis_cli.commands.eval.view import view

__all__ = ["agreement", "compare", "plan", "push", "report", "rescore", "schema", "view"]
