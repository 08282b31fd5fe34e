"""The only place seek's version is written (pyproject.toml reads it as a dynamic field)."""

__version__ = "0.2.0"
