"""``seek watch``: keep the index current while files change."""

from __future__ import annotations

import threading

import click

from seek.cli import Context, cli
from seek.store.memory import limit_malloc_arenas
from seek.store.threads import bound_native_threads
from seek.store.warm import preload_lancedb
from seek.workspace import resolve_workspace


@cli.command("watch")
@click.argument("path", required=False, type=click.Path(file_okay=False))
@click.pass_obj
def watch_command(obj: Context, path: str | None) -> None:
    """Index the workspace, then follow every save, delete and rename (Ctrl-C stops)."""
    bound_native_threads()
    limit_malloc_arenas()
    preload_lancedb()
    from seek.workspace import watcher as watch

    root = resolve_workspace(obj.workspace(path))
    watcher = watch(root, obj.settings(root), click.echo)
    stop, ready = threading.Event(), threading.Event()
    click.echo(f"seek: watching {root} (Ctrl-C stops)", err=True)
    worker = threading.Thread(target=watcher.run, args=(stop, ready), daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(0.5)
    except KeyboardInterrupt:
        click.echo("seek: stopping", err=True)
    finally:
        stop.set()
        worker.join(30)
    if watcher.error is not None:
        raise SystemExit(1)
