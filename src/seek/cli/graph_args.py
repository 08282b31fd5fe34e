"""The code-graph commands' shared arguments (seek.md §2 `seek callers` / `seek map`; issue
28 deliver 2): ``PATH:LINE`` and ``--budget``, read alike by ``seek callers|callees|map`` and
``seek corpus callers|callees|map``, without either command loading the other's module."""

from __future__ import annotations

import click

from seek.untrusted import MAX_MAP_TOKENS


def split_location(location: str) -> tuple[str, int]:
    """``PATH:LINE`` as the path and the 1-based line; a usage error otherwise."""
    name, sep, line_text = location.rpartition(":")
    if not sep or not name or not line_text.isdigit() or int(line_text) < 1:
        raise click.BadParameter("expected PATH:LINE, e.g. src/app.py:42", param_hint="PATH:LINE")
    return name, int(line_text)


# the default is code_graph.DEFAULT_MAP_TOKENS, written out: importing that module would load
# the workspace facade for every `seek corpus` subcommand (search, list, ...)
budget_option = click.option(
    "--budget", type=click.IntRange(1, MAX_MAP_TOKENS), default=1024,
    show_default=True, metavar="TOKENS", help="Size of the map in tokens (about 4 characters "
    "each).",
)  # fmt: skip
"""``map``'s ``--budget TOKENS`` (a click decorator)."""
