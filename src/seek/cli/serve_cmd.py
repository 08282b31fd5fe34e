"""``seek mcp``: the MCP server on stdio for coding agents."""

from __future__ import annotations

import click

from seek.cli import Context, cli
from seek.store.memory import limit_malloc_arenas
from seek.store.threads import bound_native_threads
from seek.store.warm import preload_lancedb


@cli.command("mcp")
@click.pass_obj
def mcp_command(obj: Context) -> None:
    """Serve seek's tools over MCP on stdin/stdout (for Claude Code, Codex, Cursor...)."""
    bound_native_threads()
    limit_malloc_arenas()
    preload_lancedb()
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
@click.pass_obj
def serve_command(
    obj: Context, host: str, port: int, workspaces: tuple[str, ...], corpus: str | None
) -> None:
    """Serve the HTTP JSON API (search, status, index) for editors and teams."""
    bound_native_threads()
    limit_malloc_arenas()
    preload_lancedb()
    import uvicorn

    from seek.serving import uvicorn_config
    from seek.serving.guard import address_name
    from seek.web.api import create_app, serve_config
    from seek.workspace import resolve_workspace

    if corpus is not None:
        from seek.corpus.serve import create_corpus_app

        app = create_corpus_app(corpus, serve_config(host, (), obj.overrides))
        click.echo(f"seek: serving the corpus {corpus} on http://{address_name(host)}:{port}",
                   err=True)  # fmt: skip
        uvicorn.Server(uvicorn_config(app, host, port)).run()
        return
    roots = tuple(resolve_workspace(w) for w in workspaces) or (resolve_workspace(obj.workspace()),)
    config = serve_config(host, roots, obj.overrides)
    where = f"http://{address_name(host)}:{port}"
    click.echo(f"seek: serving {', '.join(map(str, roots))} on {where}", err=True)
    uvicorn.Server(uvicorn_config(create_app(config), host, port)).run()


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
    import socket
    import sys

    import uvicorn

    from seek.serving import uvicorn_config
    from seek.web.api import create_app, serve_config
    from seek.web.launch import new_token, open_in_browser, page_url, redirect_file
    from seek.workspace import resolve_workspace

    roots = tuple(resolve_workspace(p) for p in paths) or (resolve_workspace(obj.workspace()),)
    config = serve_config("127.0.0.1", roots, obj.overrides)
    config.ui = True
    config.token = config.token or new_token()  # loopback is shared by every local user
    # Bind first so the printed address (port 0 included) is the one that answers.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
        # Listening before the address is printed: a browser (or test) that connects while
        # the app is still being built waits in the backlog instead of being refused.
        sock.listen(128)
    except OSError as exc:
        raise click.ClickException(f"cannot listen on 127.0.0.1:{port} ({exc.strerror})") from exc
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
