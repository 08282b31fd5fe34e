"""``seek models list|pull|remove``: optional public cross-encoders (see :mod:`seek.rerank.hub`).

``pull`` is the only seek command that goes online, and only for the model named. It shows
a progress bar per file on stderr (when stderr is a terminal), then says where the model went,
that it loaded and scored, and prints the one settings line that makes it the reranker.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click

from seek.cli import Context, cli
from seek.rerank.hub import KNOWN, known_model, models_dir, pulled_models, read_source
from seek.settings import Settings, user_config_path

if TYPE_CHECKING:  # the hub client (httpx) and rich load when a command runs, not for --help
    from seek.rerank.pull import ProgressFn


@cli.group("models")
def models_group() -> None:
    """Optional cross-encoder rerankers from the Hugging Face hub (needs internet to pull)."""


@models_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
@click.pass_obj
def list_command(obj: Context, as_json: bool) -> None:
    """Known models, which are pulled (and where), and which one reranks."""
    settings = obj.settings(obj.workspace())
    rows = _rows(settings)
    if as_json:
        click.echo(json.dumps({"models_dir": str(models_dir(settings)), "models": rows}, indent=2))
        return
    width = max(len(r["name"]) for r in [*rows, {"name": "NAME"}])
    click.echo(f"  {'NAME':<{width}}  {'SIZE':>7}  {'LICENCE':<10}  {'REPOSITORY':<38}  PULLED")
    for r in rows:
        mark = "*" if r["in_use"] else " "
        size = f"~{r['size_mb']} MB" if r["size_mb"] else ""
        where = r["folder"] or "no"
        click.echo(
            f"{mark} {r['name']:<{width}}  {size:>7}  {r['licence']:<10}  {r['repo']:<38}  {where}"
        )
    value = settings.reranker_model.strip()
    if value:
        click.echo(f"reranker_model = {value!r} ({settings.source_of('reranker_model')})")
    else:
        click.echo("reranker_model is not set: context scores are retrieval order")


def _rows(settings: Settings) -> list[dict]:
    pulled = pulled_models(settings)
    rows = []
    for name in [*KNOWN, *(n for n in pulled if n not in KNOWN)]:
        model, folder = KNOWN.get(name), pulled.get(name)
        source = read_source(folder) if folder else {}
        rows.append(
            {
                "name": name,
                "repo": model.repo if model else source.get("repo", "(local folder)"),
                "licence": model.licence if model else source.get("licence", "?"),
                "size_mb": model.size_mb if model else None,
                "about": model.about if model else "",
                "folder": str(folder) if folder else None,
                "pulled_at": source.get("pulled_at"),
                "in_use": settings.reranker_model.strip() == name,
            }
        )
    return rows


@models_group.command("pull")
@click.argument("name")
@click.option("--force", is_flag=True, help="Download again even if the model is there.")
@click.pass_obj
def pull_command(obj: Context, name: str, force: bool) -> None:
    """Download model NAME into seek's models folder and check that it loads.

    The hub is https://huggingface.co, or $SEEK_HUB_URL (or $HF_ENDPOINT) for a mirror;
    $HF_TOKEN is sent when set. `seek models list` shows the names.
    """
    from seek.rerank.pull import hub_url, pull

    model = known_model(name)
    settings = obj.settings(obj.workspace())
    heading = f"{model.name} ({model.repo}, {model.licence}, ~{model.size_mb} MB) from {hub_url()}"
    with _progress_bar(heading) as progress:
        pulled = pull(model, models_dir(settings), force=force, progress=progress)
    if pulled.fresh:
        size = sum(f.get("bytes", 0) for f in pulled.source.get("files", {}).values())
        commit = (pulled.source.get("commit") or "")[:12]
        at = f" at {commit}" if commit else ""
        click.echo(f"Pulled {model.name}{at} ({size / 1e6:.1f} MB) into {pulled.folder}.")
        click.echo("It loads and scores.")
    else:
        click.echo(f"{model.name} is already in {pulled.folder} (--force downloads it again).")
    if settings.reranker_model.strip() == model.name:
        click.echo(f"It is the reranker (from {settings.source_of('reranker_model')}).")
        return
    click.echo(
        f"To rerank with it, put this line in {_tilde(user_config_path())} "
        "(or a .seek.toml you then `seek trust`):"
    )
    click.echo(f'reranker_model = "{model.name}"')


@models_group.command("remove")
@click.argument("name")
@click.pass_obj
def remove_command(obj: Context, name: str) -> None:
    """Delete the pulled model NAME."""
    from seek.rerank.pull import remove

    settings = obj.settings(obj.workspace())
    folder = remove(models_dir(settings), name)
    click.echo(f"Removed {folder}.")
    if settings.reranker_model.strip() == name:
        click.echo(
            f"reranker_model still names it ({settings.source_of('reranker_model')}): "
            "context scores fall back to retrieval order until it is pulled again."
        )


@contextmanager
def _progress_bar(heading: str) -> Iterator[ProgressFn]:
    """What is pulled from where, and a download bar per file, on stderr; nothing when stderr
    is not a terminal, so that a failed pull in a script prints its one error line only."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    console = Console(stderr=True)
    if not console.is_terminal:
        yield lambda name, done, total: None
        return
    console.print(f"Pulling {heading}", highlight=False, markup=False)
    bar = Progress(
        TextColumn("{task.description:<15}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    )
    tasks: dict[str, int] = {}

    def update(name: str, done: int, total: int | None) -> None:
        if name not in tasks:
            tasks[name] = bar.add_task(name, total=total)
        bar.update(tasks[name], completed=done, total=total)

    with bar:
        yield update


def _tilde(path: Path) -> str:
    home = os.path.expanduser("~")
    text = str(path)
    return "~" + text[len(home) :] if home != "/" and text.startswith(home + os.sep) else text
