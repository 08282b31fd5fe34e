"""``seek mcp``: the MCP server on stdio for coding agents."""

from __future__ import annotations

import os

import click

from seek.cli import Context, cli
from seek.store.memory import limit_malloc_arenas
from seek.store.threads import bound_native_threads
from seek.store.warm import preload_lancedb


@cli.command("mcp")
@click.option(
    "--corpus",
    default=None,
    metavar="URI",
    help="Answer from this corpus (`seek corpus`: a folder or s3:// URI) instead of workspaces.",
)
@click.pass_obj
def mcp_command(obj: Context, corpus: str | None) -> None:
    """Serve seek's tools over MCP on stdin/stdout (for Claude Code, Codex, Cursor...).

    With --corpus: search, repos, def, refs, callers and dependents over a corpus's
    repositories, refs and callers across the repositories that import one another."""
    bound_native_threads()
    limit_malloc_arenas()
    preload_lancedb()
    if corpus is not None:
        from seek.mcp.corpus_tools import run_corpus_stdio

        run_corpus_stdio(corpus, obj.overrides)
        return
    from seek.mcp import run_stdio

    run_stdio(obj.workspace(), obj.overrides)


@cli.command("serve")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to bind; anything but loopback needs SEEK_TOKEN.",
)
@click.option("--port", type=click.IntRange(0, 65535), default=7420, show_default=True)
@click.option(
    "--workspace",
    "workspaces",
    multiple=True,
    type=click.Path(file_okay=False),
    help="A workspace clients may search (repeatable; default: the current one).",
)
@click.option(
    "--corpus",
    default=None,
    metavar="URI",
    help="Serve this corpus (`seek corpus`: a folder or s3:// URI) instead of workspaces.",
)
@click.option(
    "--no-token",
    is_flag=True,
    help="Loopback only: answer without a token (any local user can then read the code).",
)
@click.pass_obj
def serve_command(
    obj: Context, host: str, port: int, workspaces: tuple[str, ...], corpus: str | None,
    no_token: bool,
) -> None:  # fmt: skip
    """Serve the HTTP JSON API (search, status, index) for editors and teams.

    Every request needs `Authorization: Bearer <token>`: SEEK_TOKEN when set, else a secret
    token made for this run, written to $SEEK_HOME/serve/PORT.token (readable by you alone)
    and named on the start line. --no-token turns that off on loopback, for scripts on a
    machine no one else uses."""
    bound_native_threads()
    limit_malloc_arenas()
    preload_lancedb()
    import contextlib
    import signal
    import sys

    import uvicorn

    from seek.serving import uvicorn_config
    from seek.serving.connections import listen
    from seek.serving.guard import address_name
    from seek.store.token_file import published
    from seek.web.api import TOKEN_ENV, create_app, serve_config
    from seek.workspace import resolve_workspace

    if corpus is not None:
        from seek.corpus.serve import create_corpus_app

        config = serve_config(host, (), obj.overrides, no_token=no_token)
        app = create_corpus_app(corpus, config)
        what = f"the corpus {corpus}"
    else:
        roots = tuple(resolve_workspace(w) for w in workspaces) or (
            resolve_workspace(obj.workspace()),
        )
        config = serve_config(host, roots, obj.overrides, no_token=no_token)
        app = create_app(config)
        what = ", ".join(map(str, roots))
    settings = uvicorn_config(app, host, port)
    sock = listen(host, port, settings.backlog)
    port = sock.getsockname()[1]
    where = f"http://{address_name(host)}:{port}"
    with contextlib.ExitStack() as stack:
        if no_token:
            how = "no token"
            warning = ("seek: warning: --no-token: any user or program on this machine can "
                       "read the code and start index runs through this server")  # fmt: skip
            click.echo(warning, err=True)
        elif os.environ.get(TOKEN_ENV):
            how = f"token: ${TOKEN_ENV}"
        else:
            token_file = published(obj.overrides, port, config.token)
            how = f"token in {stack.enter_context(token_file)}"
            # uvicorn re-raises SIGTERM once it has shut down: as an exit rather than the
            # default kill, it lets the token file be removed.
            signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
        click.echo(f"seek: serving {what} on {where} ({how})", err=True)
        uvicorn.Server(settings).run(sockets=[sock])


@cli.command("ui")
@click.argument("paths", nargs=-1, type=click.Path(file_okay=False, exists=True))
@click.option("--port", type=click.IntRange(0, 65535), default=7421, show_default=True)
@click.option("--no-open", is_flag=True, help="Print the address without opening a browser.")
@click.pass_obj
def ui_command(obj: Context, paths: tuple[str, ...], port: int, no_open: bool) -> None:
    """Open the browser page: index panel, settings, search and ask (loopback only).

    The address holds a secret token made for this run (or SEEK_TOKEN when set): only a
    browser given that address can use the page."""
    bound_native_threads()
    limit_malloc_arenas()
    preload_lancedb()
    import contextlib
    import signal
    import sys

    import uvicorn

    from seek.serving import uvicorn_config
    from seek.serving.connections import listen
    from seek.web.api import create_app, serve_config
    from seek.web.launch import open_in_browser, page_url, redirect_file
    from seek.workspace import resolve_workspace

    roots = tuple(resolve_workspace(p) for p in paths) or (resolve_workspace(obj.workspace()),)
    # On loopback serve_config always gives a token (SEEK_TOKEN or one made for this run).
    config = serve_config("127.0.0.1", roots, obj.overrides)
    config.ui = True
    # Bind first so the printed address (port 0 included) is the one that answers.
    sock = listen("127.0.0.1", port)
    url = page_url(sock.getsockname()[1], config.token)
    click.echo(f"seek: the page for {', '.join(map(str, roots))} is at {url}", err=True)
    with contextlib.ExitStack() as stack:
        if not no_open:
            open_in_browser(stack.enter_context(redirect_file(url)))
            # uvicorn re-raises SIGTERM once it has shut down: as an exit rather than the
            # default kill, it lets the file holding the token be removed.
            signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
        settings = uvicorn_config(create_app(config), "127.0.0.1", port)
        settings.timeout_graceful_shutdown = 2  # open pages hold progress streams: Ctrl-C ends them
        uvicorn.Server(settings).run(sockets=[sock])
