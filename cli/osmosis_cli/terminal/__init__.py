"""How the CLI talks to a person or a program, decided once: output modes (human,
``--json``, plain), tables, progress, prompts, errors → exit codes and hints, and how a
command is declared (typer classes, options objects). Never imports a command."""
