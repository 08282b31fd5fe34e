"""``seek corpus``: many repositories in one index at a folder or ``s3://`` URI (see
:mod:`seek.corpus`)."""

from __future__ import annotations

import json

import click

from seek.cli import Context, cli
from seek.cli.graph_args import budget_option, split_location
from seek.settings import load_settings
from seek.untrusted import CLI_MAX_K, MAX_ROWS, printable

URI = click.argument("uri", metavar="URI")


@cli.group("corpus")
def corpus_group() -> None:
    """An organisation's repositories in one index (a folder or s3://bucket/prefix).

    S3 settings come from the AWS_* environment variables (AWS_ENDPOINT_URL for an
    S3-compatible server); s3:// and Ray need `pip install 'seek-code[scale]'`."""


@corpus_group.command("add")
@URI
@click.argument("sources", nargs=-1, required=True, metavar="FOLDER_OR_GIT_URL...")
@click.option("--name", default=None, help="The repository's name (one source only; "
              "default: the folder's or URL's last part).")  # fmt: skip
def add_command(uri: str, sources: tuple[str, ...], name: str | None) -> None:
    """Add repositories to the corpus (they are indexed by `seek corpus index`)."""
    from seek.corpus.catalog import Catalog
    from seek.corpus.location import CorpusError, CorpusLocation

    if name and len(sources) > 1:
        raise CorpusError("--name names one repository: give one source with it")
    location = CorpusLocation(uri)
    catalog = Catalog(location)
    for source in sources:
        entry = catalog.add(source, name)
        click.echo(f"{entry.name}\t{printable(entry.source)}")
        if location.is_s3 and not entry.is_git:
            hint = f"seek corpus index {location.uri} --folder {entry.source}"
            click.echo(f"note: a folder of this machine: index it with `{hint}`", err=True)


@corpus_group.command("remove")
@URI
@click.argument("names", nargs=-1, required=True)
def remove_command(uri: str, names: tuple[str, ...]) -> None:
    """Remove repositories and their rows from the corpus."""
    from seek.corpus.build import remove_repos
    from seek.corpus.location import CorpusLocation

    remove_repos(CorpusLocation(uri), names)


@corpus_group.command("list")
@URI
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_command(uri: str, as_json: bool) -> None:
    """The repositories: name, files, chunks, source."""
    from seek.corpus.catalog import Catalog
    from seek.corpus.location import CorpusLocation

    catalog = Catalog(CorpusLocation(uri))
    rows = []
    for name, entry in catalog.repos().items():
        manifest = catalog.load_manifest(name)
        chunks = sum(s.chunks for s in manifest.files.values())
        rows.append({"name": name, "source": entry.source, "files": len(manifest.files),
                     "chunks": chunks})  # fmt: skip
    if as_json:
        click.echo(json.dumps({"repos": rows}, indent=2))
        return
    for row in rows:
        click.echo(f"{row['name']}\t{row['files']} files\t{row['chunks']} chunks\t"
                   f"{printable(row['source'])}")  # fmt: skip


@corpus_group.command("index")
@URI
@click.argument("names", nargs=-1)
@click.option(
    "--ray",
    "address",
    default=None,
    metavar="ADDRESS",
    help="Join this Ray cluster (default: start a local one when Ray is installed).",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 1024),
    default=2,
    show_default=True,
    help="CPUs of the local Ray (ignored with --ray).",
)
@click.option(
    "--writers",
    type=click.IntRange(1, 64),
    default=1,
    show_default=True,
    help="Threads committing rows to LanceDB.",
)
@click.option("--in-process", is_flag=True, help="Do not use Ray even when it is installed.")
@click.option(
    "--folder",
    "folders",
    multiple=True,
    metavar="PATH",
    help="Index the repository whose source is this folder of this machine (repeatable; "
    "needed for an s3:// corpus, whose corpus.json others can write).",
)
@click.option(
    "--rebuild",
    is_flag=True,
    help="Drop the corpus's tables and index every repository again (no NAMES).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_obj
def index_command(
    obj: Context, uri: str, names: tuple[str, ...], address: str | None, workers: int,
    writers: int, in_process: bool, folders: tuple[str, ...], rebuild: bool, as_json: bool,
) -> None:  # fmt: skip
    """Index the corpus's repositories (all, or NAMES): only changed files are embedded.

    A repository whose source is a folder is indexed when the corpus is a folder of this
    machine that only you can write, or when that folder is given with --folder."""
    from seek.corpus.build import CorpusIndexer
    from seek.corpus.fanout import make_runner
    from seek.corpus.location import CorpusLocation

    settings = load_settings(None, overrides=obj.overrides)
    runner = make_runner(address, workers, in_process)
    try:
        indexer = CorpusIndexer(CorpusLocation(uri), settings, runner, writers=writers,
                                folders=folders, rebuild=rebuild)  # fmt: skip
        report = indexer.run(names)
    finally:
        runner.close()
    data = report.to_json()
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    rebuilt: dict[str, list[str]] = {}
    for repo in data["repos"]:
        if repo["rebuild_reason"]:
            rebuilt.setdefault(repo["rebuild_reason"], []).append(repo["name"])
    for reason, names in rebuilt.items():  # a damaged table: every repository, one reason
        click.echo(f"Rebuilt {', '.join(names)}: {reason}.", err=True)
    for repo in data["repos"]:
        click.echo(f"{repo['name']}: {repo['embedded']} files embedded ({repo['chunks']} "
                   f"chunks), {repo['removed']} removed, {repo['files']} files in all")  # fmt: skip
    click.echo(f"{data['chunks']} chunks in {data['seconds']} s ({data['runner']}, "
               f"{data['workers']} workers, {data['tasks']} tasks)")  # fmt: skip


@corpus_group.command("search")
@URI
@click.argument("query")
@click.option("-k", "k", type=click.IntRange(1, CLI_MAX_K), default=10, show_default=True)
@click.option("--repo", "repos", multiple=True, help="Only this repository (repeatable).")
@click.option("--under", "prefixes", multiple=True, metavar="PATH",
              help="Only files under this path prefix (repeatable).")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def search_command(
    obj: Context, uri: str, query: str, k: int, repos: tuple[str, ...],
    prefixes: tuple[str, ...], as_json: bool,
) -> None:  # fmt: skip
    """Search the corpus; each hit names its repository."""
    from seek.corpus.location import CorpusLocation
    from seek.corpus.search import CorpusSearcher

    searcher = CorpusSearcher(CorpusLocation(uri), load_settings(None, overrides=obj.overrides))
    result = searcher.search(query, k, repos=repos, prefixes=prefixes)
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=2))
        return
    for note in result.notes:
        click.echo(f"note: {printable(note)}", err=True)
    for hit in result.hits:  # repository and file names come from the indexed repositories
        where = f"{printable(hit.repo)}:{printable(hit.path)}:{hit.start_line}-{hit.end_line}"
        click.echo(f"{where}  {hit.score:.3f}")


@corpus_group.command("unlock")
@URI
@click.argument("name")
def unlock_command(uri: str, name: str) -> None:
    """Remove the lock a killed `seek corpus index` left on a repository."""
    from seek.corpus.location import CorpusLocation, check_repo_name

    CorpusLocation(uri).delete(f"locks/{check_repo_name(name)}.json")


def _graph_command(
    tool: str, target: str, uri: str, repo: str, limit: int | None, as_json: bool,
    budget: int | None = None, across: bool = False,
) -> None:  # fmt: skip
    """``across``: the answer of every repository of the corpus (issue 45,
    :mod:`seek.corpus.org`), else of ``repo`` alone."""
    from seek.corpus.graph import lookup
    from seek.corpus.location import CorpusLocation
    from seek.corpus.org import cross_lookup

    if across:
        result = cross_lookup(CorpusLocation(uri), repo, tool, target, limit)
    else:
        result = lookup(CorpusLocation(uri), repo, tool, target, limit, budget=budget)
    if as_json:
        click.echo(json.dumps({"repo": repo, **result.to_json()}, indent=2))
        return
    click.echo(result.to_text(notes=False))
    if result.truncated:
        click.echo(f"note: only the first {len(result.rows)} rows (ask for more with -n)", err=True)
    for note in result.notes:
        click.echo(f"note: {printable(note)}", err=True)


def _location(location: str) -> str:
    """``PATH:LINE`` checked as `seek callers` checks it (the path is the repository's, not
    one of this machine: it is only a key into the stored graph)."""
    path, line = split_location(location)
    return f"{path}:{line}"


_REPO = click.option("--repo", required=True, help="The repository to look in.")
_LIMIT = click.option("-n", "--limit", "limit", type=click.IntRange(1, MAX_ROWS), default=50,
                      show_default=True, help="At most this many rows.")  # fmt: skip
_JSON = click.option("--json", "as_json", is_flag=True, help="Print JSON.")
_THIS_REPO = click.option("--this-repo", is_flag=True,
                          help="Only the uses inside --repo, not those of the repositories "
                               "that import it.")  # fmt: skip


@corpus_group.command("def")
@URI
@click.argument("name")
@_REPO
@_LIMIT
@_JSON
def def_command(uri: str, name: str, repo: str, limit: int, as_json: bool) -> None:
    """Where NAME is defined in one repository of the corpus (`Container.name` narrows it),
    from the code graph stored with the corpus; as `seek def`."""
    _graph_command("defs", name, uri, repo, limit, as_json)


@corpus_group.command("refs")
@URI
@click.argument("target", metavar="NAME|PATH:LINE")
@_REPO
@_LIMIT
@_JSON
@_THIS_REPO
def refs_command(
    uri: str, target: str, repo: str, limit: int, as_json: bool, this_repo: bool
) -> None:
    """Who uses NAME (or the definition at PATH:LINE) of one repository: in it and in every
    repository of the corpus that imports it, grouped by repository, file and enclosing
    definition; as `seek refs`."""
    _graph_command("refs", target, uri, repo, limit, as_json, across=not this_repo)


@corpus_group.command("callers")
@URI
@click.argument("location", metavar="PATH:LINE")
@_REPO
@_LIMIT
@_JSON
@_THIS_REPO
def callers_command(
    uri: str, location: str, repo: str, limit: int, as_json: bool, this_repo: bool
) -> None:
    """The definitions that call the function at PATH:LINE (a path of the repository), in
    it and in every repository of the corpus that imports it; as `seek callers`."""
    _graph_command("callers", _location(location), uri, repo, limit, as_json,
                   across=not this_repo)  # fmt: skip


@corpus_group.command("dependents")
@URI
@_REPO
@_LIMIT
@_JSON
def dependents_command(uri: str, repo: str, limit: int, as_json: bool) -> None:
    """The repositories of the corpus that import what --repo provides: how many of their
    files do, how many of their uses bind to its definitions, and which."""
    _graph_command("dependents", "", uri, repo, limit, as_json, across=True)


@corpus_group.command("callees")
@URI
@click.argument("location", metavar="PATH:LINE")
@_REPO
@_LIMIT
@_JSON
def callees_command(uri: str, location: str, repo: str, limit: int, as_json: bool) -> None:
    """What the function at PATH:LINE (a path of the repository) calls, each resolved to its
    definition in one repository of the corpus; as `seek callees`."""
    _graph_command("callees", _location(location), uri, repo, limit, as_json)


@corpus_group.command("outline")
@URI
@click.argument("path", metavar="PATH")
@_REPO
@click.option("-n", "--limit", "limit", type=click.IntRange(1, MAX_ROWS), default=None,
              help="At most this many rows (default: all).")  # fmt: skip
@_JSON
def outline_command(uri: str, path: str, repo: str, limit: int | None, as_json: bool) -> None:
    """PATH's definitions (a path of the repository) with their line spans and signatures,
    in file order; as `seek outline`."""
    _graph_command("outline", path, uri, repo, limit, as_json)


@corpus_group.command("map")
@URI
@click.argument("question", required=False, default="")
@_REPO
@budget_option
@_JSON
def map_command(uri: str, question: str, repo: str, budget: int, as_json: bool) -> None:
    """One repository's most central definitions (PageRank over who uses what), as
    signatures under their files, within --budget; with QUESTION, those near its words; as
    `seek map`."""
    _graph_command("map", question, uri, repo, None, as_json, budget)
