"""Does a change keep what a cold index writes? Index one folder from scratch with one
version of seek and dump its search cache and table rows; then compare two dumps file by
file (issue 14, indexing memory: the cache must be built with less memory, not differently).

    PYTHONHASHSEED=0 python -m bench.checks.same_index dump FOLDER OUT_DIR
    PYTHONHASHSEED=0 BASELINE_PYTHON -m bench.checks.same_index dump FOLDER BASE_DIR
    python -m bench.checks.same_index compare BASE_DIR OUT_DIR

Run all three from this checkout: the baseline's python then imports this module and its own
seek (an editable install of the baseline's ``src``; ``PYTHONPATH`` unset).

``PYTHONHASHSEED`` must be fixed for both dumps: the word list of ``words.npz`` and
``strings.json`` follows the iteration order of Python's sets of strings, so two runs of the
same seek differ there without it. What is compared: every cache file byte for byte, but
``meta.json`` without its time and key (the key names the table, a random name) and
``table.json`` (LanceDB's file names are random, and how rows split into data files depends
on the timing of the run's writes); instead, every row of the table, in its stored order.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import tempfile
from pathlib import Path

SKIPPED = ("table.json",)


def dump(folder: Path, out: Path) -> None:
    from seek import index_workspace, load_settings
    from seek.embed import make_embedder
    from seek.store import ChunkTable, index_dir_for, load_manifest

    scratch = Path(tempfile.mkdtemp(prefix="same-index-"))
    settings = load_settings(overrides={"home": str(scratch / "home")},
                             user_config=scratch / "no-config.toml")  # fmt: skip
    index_workspace(folder, settings, embedder=make_embedder(settings))
    index_dir = index_dir_for(folder.resolve(), settings)
    [cache] = index_dir.glob("search-*")
    out.mkdir(parents=True, exist_ok=True)
    for file in cache.iterdir():
        if file.name in SKIPPED:
            continue
        data = file.read_bytes()
        if file.name == "meta.json":
            meta = json.loads(data)
            meta.pop("written"), meta.pop("key")
            data = json.dumps(meta, sort_keys=True).encode()
        (out / file.name).write_bytes(data)
    rows = ChunkTable(index_dir, load_manifest(index_dir).table).load_all()
    with open(out / "rows.pickle", "wb") as fh:
        pickle.dump(rows, fh)
    print(f"{len(rows['path'])} rows, cache files: {sorted(p.name for p in out.iterdir())}")


def compare(base: Path, new: Path) -> int:
    for folder in (base, new):
        if not folder.is_dir():
            print(f"no dump at {folder}", file=sys.stderr)
            return 2
    names = sorted({p.name for p in base.iterdir()} | {p.name for p in new.iterdir()})
    differ = [n for n in names
              if not (base / n).is_file() or not (new / n).is_file()
              or (base / n).read_bytes() != (new / n).read_bytes()]  # fmt: skip
    for name in names:
        print(f"{'DIFFERS' if name in differ else 'same':8s}{name}")
    return 1 if differ else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.checks.same_index", description=__doc__.split("\n\n")[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump")
    d.add_argument("folder", type=Path)
    d.add_argument("out", type=Path)
    c = sub.add_parser("compare")
    c.add_argument("base", type=Path)
    c.add_argument("new", type=Path)
    args = parser.parse_args(argv)
    if args.command == "dump":
        dump(args.folder, args.out)
        return 0
    return compare(args.base, args.new)


if __name__ == "__main__":
    sys.exit(main())
