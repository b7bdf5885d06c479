"""Results at the terminal: compare, rescore, report, view, schema, push, agreement,
plan — and CI artefacts."""
