"""The single source of the package version (read by hatchling and the CLI)."""

__version__ = "0.1.0"
