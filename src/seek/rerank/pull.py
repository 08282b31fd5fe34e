"""Fetch a known cross-encoder from the Hugging Face hub (``seek models pull``), all or nothing.

- URL: ``{hub}/{repo}/resolve/{revision}/{path}``. The hub is ``$SEEK_HUB_URL``, else
  ``$HF_ENDPOINT`` (what Hugging Face's own tools read, so a mirror set up for them works
  here too), else https://huggingface.co. ``$HF_TOKEN``, when set, is sent to the hub as
  ``Authorization: Bearer`` (httpx drops it on a redirect to another host, such as the hub's
  file CDN) and never written anywhere. Proxies come from the usual ``HTTPS_PROXY`` variables.
- The files stream into a temporary dot-folder inside the models folder (same file system,
  so the last step is an atomic rename). The pull counts only when every file arrived whole
  (the byte count matches ``Content-Length``, and the SHA-256 matches the one the hub sends
  in ``X-Linked-Etag`` for large files) and the model loads and scores with
  :class:`seek.rerank.local.CrossEncoder`; then the folder becomes ``<models>/<name>``. Any
  failure, or Ctrl-C, removes the temporary folder: ``<name>`` is the complete old model,
  the complete new one, or absent. A pull killed outright leaves a dot-folder, which
  :func:`seek.rerank.hub.pulled_models` ignores and the next pull of that name deletes.
- ``force`` downloads again; the old model stays in place until the new one is verified.
- One pull per name at a time (a lock file beside the models).
- Every failure is a one-line :class:`ModelError`: the hub cannot be reached (offline, DNS,
  refused), an HTTP status with the URL, an interrupted transfer, a checksum, the disk, or a
  model that does not load.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from filelock import FileLock, Timeout

from seek._version import __version__
from seek.errors import ModelError, RerankerUnavailable
from seek.remote import INTERRUPTED, UNREACHABLE, Remote, Response, reason
from seek.remote import Timeout as HttpTimeout
from seek.rerank.hub import SOURCE_FILE, HubModel, is_model_folder, read_source
from seek.rerank.local import CrossEncoder

HUB_URL = "https://huggingface.co"
OFFLINE_HINT = "models pull needs internet; seek works offline without it"
CHUNK_BYTES = 1 << 20
TIMEOUT = HttpTimeout(30.0, connect=10.0)
_SHA256 = re.compile(r"[0-9a-f]{64}")

ProgressFn = Callable[[str, int, int | None], None]
"""Called as ``(local file name, bytes so far, total bytes or None)`` while downloading."""


@dataclass(frozen=True, slots=True)
class Pulled:
    folder: Path
    fresh: bool
    """False when the model was already there (and nothing was downloaded)."""
    source: dict


def hub_url(env: Mapping[str, str] | None = None) -> str:
    env = os.environ if env is None else env
    return (env.get("SEEK_HUB_URL") or env.get("HF_ENDPOINT") or HUB_URL).rstrip("/")


def file_url(base: str, model: HubModel, path: str) -> str:
    return f"{base}/{model.repo}/resolve/{model.revision}/{path}"


def pull(
    model: HubModel,
    root: Path,
    *,
    force: bool = False,
    env: Mapping[str, str] | None = None,
    progress: ProgressFn | None = None,
) -> Pulled:
    """Download ``model`` into ``root/<name>`` unless it is there (or ``force``)."""
    env = os.environ if env is None else env
    target = root / model.name
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ModelError(f"cannot create {root}: {exc.strerror}") from exc
    try:
        with _lock(root, model.name):
            if is_model_folder(target) and not force:
                return Pulled(target, False, read_source(target))
            _remove_leftovers(root, model.name)
            work = Path(tempfile.mkdtemp(prefix=f".{model.name}.partial-", dir=root))
            try:
                source = _download_all(model, work, env, progress)
                _verify(model, work)
                _install(work, target)
            finally:
                shutil.rmtree(work, ignore_errors=True)  # gone already after a good install
    except OSError as exc:
        raise ModelError(f"cannot write to {root}: {exc.strerror or exc}") from exc
    return Pulled(target, True, source)


def remove(root: Path, name: str) -> Path:
    """Delete the pulled model ``root/<name>``; returns its folder."""
    target = root / name
    if name.startswith(".") or name != Path(name).name or not target.is_dir():
        raise ModelError(f"no pulled model named {name!r} in {root}")
    with _lock(root, name):
        if target.is_symlink():
            target.unlink()
        else:
            shutil.rmtree(target)
    return target


@contextmanager
def _lock(root: Path, name: str) -> Iterator[None]:
    try:
        with FileLock(root / f".{name}.lock", timeout=0):
            yield
    except Timeout:
        raise ModelError(f"another seek is pulling {name} into {root}; wait for it") from None


def _remove_leftovers(root: Path, name: str) -> None:
    """Folders left by a pull that was killed (we hold the name's lock, so none is live)."""
    for pattern in (f".{name}.partial-*", f".{name}.old-*"):
        for leftover in root.glob(pattern):
            shutil.rmtree(leftover, ignore_errors=True)


def _download_all(
    model: HubModel, work: Path, env: Mapping[str, str], progress: ProgressFn | None
) -> dict:
    base = hub_url(env)
    if not base.startswith(("http://", "https://")):
        raise ModelError(f"the hub address must start with http:// or https://, not {base!r}")
    token = env.get("HF_TOKEN", "").strip()
    files: dict[str, dict] = {}
    commit = None
    hub = Remote(
        base, error=ModelError, timeout_s=TIMEOUT, token=token, follow_redirects=True,
        headers={"User-Agent": f"seek/{__version__}"}, describe=_describe,
    )  # fmt: skip
    with hub:
        for local, remote in model.files().items():
            url = file_url(base, model, remote)
            got = _download(hub, url, work / local, progress, bool(token))
            file_commit = got.pop("commit")
            commit = commit or file_commit
            files[local] = {"path": remote, **got}
    source = {
        "name": model.name,
        "repo": model.repo,
        "revision": model.revision,
        "commit": commit,
        "hub": base,
        "licence": model.licence,
        "files": files,
        "pulled_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    (work / SOURCE_FILE).write_text(json.dumps(source, indent=2) + "\n", encoding="utf-8")
    return source


def _describe(kind: str, server: str, exc: BaseException) -> str:
    """A failed transfer in the hub's words (the file's URL is added by :func:`_download`)."""
    if kind == UNREACHABLE:
        return f"cannot reach {server} ({reason(exc)}) — {OFFLINE_HINT}"
    return f"{INTERRUPTED} ({reason(exc)})"


def _download(
    hub: Remote, url: str, dest: Path, progress: ProgressFn | None, has_token: bool
) -> dict:
    digest = hashlib.sha256()
    try:
        with hub.stream("GET", url) as response:
            if response.status_code != 200:
                raise ModelError(_status_message(url, response, has_token))
            chain = [*response.history, response]
            expected = _header(chain, "X-Linked-Etag", _SHA256)
            total = _int(response.headers.get("Content-Length"))
            with dest.open("wb") as out:
                for block in response.iter_bytes(CHUNK_BYTES):
                    out.write(block)
                    digest.update(block)
                    if progress is not None:
                        progress(dest.name, response.num_bytes_downloaded, total)
            received = response.num_bytes_downloaded
    except ModelError as exc:  # a dropped connection, a read timeout, a bad response
        if not str(exc).startswith(INTERRUPTED):
            raise
        raise ModelError(f"the download of {url} was {exc}; {_AGAIN}") from exc.__cause__
    if total is not None and received != total:
        raise ModelError(
            f"the download of {url} was interrupted ({received} of {total} bytes); {_AGAIN}"
        )
    sha256 = digest.hexdigest()
    if expected and sha256 != expected:
        raise ModelError(f"{url} does not match the hub's SHA-256 {expected}; {_AGAIN}")
    return {
        "bytes": dest.stat().st_size,
        "sha256": sha256,
        "commit": _header(chain, "X-Repo-Commit", None),
    }


_AGAIN = "nothing was kept, run the command again"


def _status_message(url: str, response: Response, has_token: bool) -> str:
    status = f"HTTP {response.status_code} {response.reason_phrase}".rstrip()
    said = " ".join(response.headers.get("X-Error-Message", "").split())[:200]
    hint = said
    if response.status_code in (401, 403):
        # The hub answers 401 for a repository that is private, gated or does not exist.
        access = (
            "HF_TOKEN was not accepted"
            if has_token
            else "set HF_TOKEN if the repository is gated or private"
        )
        hint = f"{said}; {access}" if said else access
    return f"cannot download {url}: {status}" + (f" ({hint})" if hint else "")


def _verify(model: HubModel, folder: Path) -> None:
    """Load the model and score one pair, as ``seek context`` will."""
    reranker = CrossEncoder(folder, workers=1)
    try:
        with _quiet("seek.rerank"):  # its warning talks about search results; ours says more
            scores = reranker.score("how are retries configured", ["config.py\nretries = 3"])
    except RerankerUnavailable as exc:
        raise ModelError(
            f"{model.name} was downloaded but does not work as a cross-encoder ({exc}); "
            "nothing was kept"
        ) from exc
    finally:
        reranker.shutdown()
    if len(scores) != 1 or not math.isfinite(scores[0]):
        raise ModelError(f"{model.name} scores {scores!r} for one pair; nothing was kept")


def _install(work: Path, target: Path) -> None:
    """Swap the verified folder in; the old model (if any) goes only once the new one is in."""
    old = None
    if target.exists() or target.is_symlink():
        old = target.with_name(f".{target.name}.old-{os.getpid()}")
        os.rename(target, old)
    try:
        os.rename(work, target)
    except OSError:
        if old is not None:
            os.rename(old, target)
        raise
    if old is not None:
        if old.is_symlink():
            old.unlink()
        else:
            shutil.rmtree(old, ignore_errors=True)


@contextmanager
def _quiet(logger_name: str) -> Iterator[None]:
    logger = logging.getLogger(logger_name)
    was = logger.disabled
    logger.disabled = True
    try:
        yield
    finally:
        logger.disabled = was


def _header(chain: list[Response], name: str, pattern: re.Pattern | None) -> str | None:
    """A header from any response on the redirect chain (the hub puts its metadata on the
    redirect, not on the CDN's answer), unquoted, if it matches ``pattern``."""
    for response in chain:
        value = response.headers.get(name, "").removeprefix("W/").strip().strip('"').lower()
        if value and (pattern is None or pattern.fullmatch(value)):
            return value
    return None


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None
