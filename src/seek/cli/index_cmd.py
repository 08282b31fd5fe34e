"""``seek index`` and ``seek status``."""

from __future__ import annotations

import json
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import click

from seek.cli import Context, cli
from seek.untrusted import printable
from seek.workspace import resolve_workspace

if TYPE_CHECKING:  # rich and the indexer load when a command needs them (`seek --help`)
    from rich.console import Console

    from seek.index.report import Progress as ProgressEvent

EXIT_CANCELLED = 130


@contextmanager
def cancel_on_sigint() -> Iterator[threading.Event]:
    """First Ctrl-C asks the run to stop after the files in hand; a second one aborts."""
    cancel = threading.Event()

    def handler(signum: int, frame: object) -> None:
        if cancel.is_set():
            raise KeyboardInterrupt
        cancel.set()
        click.echo("\nseek: stopping after the current files (Ctrl-C again to abort)", err=True)

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield cancel
    finally:
        signal.signal(signal.SIGINT, previous)


class ProgressView:
    """A rich progress bar on stderr: phase, files done/total, the current file names."""

    def __init__(self, console: Console) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self.bar = Progress(
            TextColumn("{task.description:<10}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("files"),
            TimeElapsedColumn(),
            TextColumn("[dim]{task.fields[current]}"),
            console=console,
            transient=True,
        )
        self.task = self.bar.add_task("scanning", total=None, current="")

    def __call__(self, event: ProgressEvent) -> None:
        fields: dict[str, object] = {"description": event.phase}
        if event.total:
            fields.update(total=event.total, completed=event.done)
        if event.current:
            names = ", ".join(path.rsplit("/", 1)[-1] for path in event.current)
            fields["current"] = names if len(names) <= 60 else names[:59] + "…"
        self.bar.update(self.task, **fields)


@cli.command("index")
@click.argument("path", required=False, type=click.Path(file_okay=False))
@click.option("--rebuild", is_flag=True, help="Drop the index and embed everything again.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar, only the summary line.")
@click.option("--json", "as_json", is_flag=True, help="Print the run's report as JSON.")
@click.pass_obj
def index_command(
    obj: Context, path: str | None, rebuild: bool, quiet: bool, as_json: bool
) -> None:
    """Create or update the index of a workspace (incremental)."""
    from rich.console import Console

    from seek.workspace import index

    root = resolve_workspace(obj.workspace(path))
    settings = obj.settings(root)
    console = Console(stderr=True)
    show_progress = console.is_terminal and not quiet and not as_json
    with cancel_on_sigint() as cancel:
        view = ProgressView(console) if show_progress else None
        if view is not None:
            view.bar.start()
        try:
            report = index(root, settings, rebuild=rebuild, progress=view, cancel=cancel)
        finally:
            if view is not None:
                view.bar.stop()
    if as_json:
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        if report.rebuild_reason:
            click.echo(f"Rebuilt the index: {report.rebuild_reason}.", err=True)
        for path_ in report.unreadable:
            click.echo(
                f"seek: warning: cannot read {printable(path_)} (skipped, will retry)", err=True
            )
        click.echo(report.summary())
    if report.cancelled:
        sys.exit(EXIT_CANCELLED)


def _when(epoch_ms: int | None) -> str:
    if not epoch_ms:
        return "never"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(epoch_ms / 1000))


def _size(num: int) -> str:
    value = float(num)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{num} B"


@cli.command("status")
@click.argument("path", required=False, type=click.Path(file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@click.pass_obj
def status_command(obj: Context, path: str | None, as_json: bool) -> None:
    """Show what the index holds and whether it matches the settings."""
    from seek.settings.trust import describe_line
    from seek.workspace import status as workspace_status

    root = resolve_workspace(obj.workspace(path))
    status = workspace_status(root, obj.settings(root))
    if as_json:
        click.echo(json.dumps(status.to_json(), indent=2))
        return
    lines = [
        f"workspace   {status.workspace}",
        f"index       {status.index_dir}" + ("" if status.exists else "  (not built yet)"),
        f"files       {status.files}",
        f"chunks      {status.chunks}",
        f"model       {status.model or '-'} (configured: {status.configured_model})",
        f"updated     {_when(status.updated_at)}",
        f"size        {_size(status.size_bytes)}",
        f"writer      {status.writer or 'none'}",
        f"config      {describe_line(status.workspace_config)}",
    ]
    if status.rebuild_reason:
        lines.append(f"rebuild     needed: {status.rebuild_reason} (run `seek index`)")
    if status.interrupted:
        lines.append("repair      the last run was interrupted; `seek index` finishes it")
    if status.stale:  # searches answer from the last complete index meanwhile
        lines.append(f"stale       {status.stale}")
    skipped = (
        ", ".join(
            f"{reason.replace('_', ' ')} {count}"
            for reason, count in sorted(status.skipped.items())
        )
        or "none"
    )
    lines.append(f"skipped     {skipped}")
    for reason, examples in sorted(status.skipped_examples.items()):
        if reason in ("unreadable", "binary", "too_big"):
            lines.append(f"  {reason.replace('_', ' ')}: " + ", ".join(map(printable, examples)))
    click.echo("\n".join(lines))
