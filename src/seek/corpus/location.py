"""Where a corpus lives: a local folder or ``s3://bucket/prefix`` (issue 17, "Corpus").

A corpus is one LanceDB database (``<uri>/lancedb``, table ``chunks``) plus small JSON
objects beside it:

- ``corpus.json``: the repositories (name -> source folder or git URL);
- ``manifests/<repo>.json``: each repository's manifest (:class:`seek.store.Manifest`);
- ``locks/<repo>.json``: held by the one process indexing that repository.

What object storage gives us, and how each rule is kept:

- *Atomic manifests.* An S3 PUT is all-or-nothing: a reader gets the old object or the new
  one, never half (locally: a temporary file, fsync, rename -
  :func:`seek.store.files.write_atomically`).
- *One writer per repository.* A conditional PUT (``If-None-Match: *``, S3 since 2024, also
  MinIO, R2 and moto) creates the lock object only when it does not exist; locally
  ``O_CREAT | O_EXCL``. A process killed while holding a lock leaves it behind: the next
  writer is refused with the holder's name and age, and ``seek corpus unlock`` removes it
  (stealing a live lock after a timeout would need a lease the writer renews; left for
  later).
- *Readers see the last committed version.* LanceDB commits a table version atomically on S3
  (its own conditional PUT of the version file), so a searcher reading while an indexer
  writes sees a whole version.

S3 settings come from the standard AWS variables (``AWS_ACCESS_KEY_ID``,
``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``, ``AWS_REGION``/``AWS_DEFAULT_REGION``,
``AWS_ENDPOINT_URL``/``AWS_ENDPOINT_URL_S3`` for an S3-compatible server; ``AWS_ALLOW_HTTP``
to allow a plain-HTTP endpoint) and are passed to LanceDB as ``storage_options`` and to
boto3 (the ``scale`` extra) for the JSON objects.

A storage failure (a missing bucket, refused credentials, an endpoint that does not answer)
is one :class:`CorpusError` line naming the corpus, the object and the cause, with any
credential masked (:mod:`seek.redact`): never botocore's traceback (issue 27, finding 10).
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from seek.errors import CorpusError, CorpusLockedError
from seek.redact import one_line, origin
from seek.store.files import write_atomically

DB_FOLDER = "lancedb"
CONFIG_OBJECT = "corpus.json"
CORPUS_LOCK = "_corpus"
"""The lock held while ``corpus.json`` is edited (no repository name starts with ``_``)."""
REPO_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")


def shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:79] + "…"


def check_repo_name(name: object) -> str:
    if not isinstance(name, str) or not REPO_NAME.match(name):
        raise CorpusError(
            f"bad repository name {shown(name)}: letters, digits, '.', '_' and '-' only (max 128)"
        )
    return name


@dataclass
class CorpusLocation:
    """A corpus URI, with the object operations the corpus needs on it."""

    uri: str
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    _client: Any = field(default=None, repr=False)
    _guard: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        uri = self.uri.strip()
        if not uri:
            raise CorpusError("a corpus URI is needed (a folder or s3://bucket/prefix)")
        if "://" in uri and not uri.startswith("s3://"):
            raise CorpusError(f"unsupported corpus URI {uri!r}: use a folder or s3://bucket/prefix")
        if uri.startswith("s3://"):
            bucket, _, prefix = uri[5:].partition("/")
            if not bucket:
                raise CorpusError(f"no bucket in {uri!r}")
            self.bucket, self.prefix = bucket, prefix.strip("/")
            self.uri = f"s3://{bucket}/{self.prefix}" if self.prefix else f"s3://{bucket}"
        else:
            self.bucket, self.prefix = "", ""
            self.uri = str(Path(uri).expanduser().resolve())

    @property
    def is_s3(self) -> bool:
        return bool(self.bucket)

    @property
    def db_uri(self) -> str:
        return f"{self.uri}/{DB_FOLDER}"

    # -- settings ------------------------------------------------------------------
    def _get(self, *names: str) -> str:
        for name in names:
            value = self.env.get(name, "")
            if value:
                return value
        return ""

    def storage_options(self) -> dict[str, str]:
        """LanceDB's ``storage_options`` for this URI (empty for a local folder)."""
        if not self.is_s3:
            return {}
        options: dict[str, str] = {}
        pairs = {
            "aws_access_key_id": ("AWS_ACCESS_KEY_ID",),
            "aws_secret_access_key": ("AWS_SECRET_ACCESS_KEY",),
            "aws_session_token": ("AWS_SESSION_TOKEN",),
            "region": ("AWS_REGION", "AWS_DEFAULT_REGION"),
            "endpoint": ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"),
        }
        for key, names in pairs.items():
            value = self._get(*names)
            if value:
                options[key] = value
        if options.get("endpoint", "").startswith("http://") or self._get("AWS_ALLOW_HTTP"):
            options["allow_http"] = "true"
        return options

    # -- objects -------------------------------------------------------------------
    def _key(self, name: str) -> str:
        return f"{self.prefix}/{name}" if self.prefix else name

    def _path(self, name: str) -> Path:
        return Path(self.uri) / name

    def s3(self) -> Any:
        with self._guard:
            if self._client is None:
                try:
                    import boto3
                    from botocore.config import Config
                except ImportError as exc:
                    raise CorpusError(
                        "an s3:// corpus needs boto3: pip install 'seek-code[scale]'"
                    ) from exc
                options = self.storage_options()
                self._client = boto3.client(
                    "s3",
                    endpoint_url=options.get("endpoint") or None,
                    region_name=options.get("region") or None,
                    aws_access_key_id=options.get("aws_access_key_id") or None,
                    aws_secret_access_key=options.get("aws_secret_access_key") or None,
                    aws_session_token=options.get("aws_session_token") or None,
                    config=Config(retries={"max_attempts": 5, "mode": "standard"}),
                )
            return self._client

    def read(self, name: str) -> bytes | None:
        """The object's bytes, or None when it does not exist."""
        if not self.is_s3:
            try:
                return self._path(name).read_bytes()
            except FileNotFoundError:
                return None
        client = self.s3()
        with self._storage("read", name):
            try:
                return client.get_object(Bucket=self.bucket, Key=self._key(name))["Body"].read()
            except client.exceptions.NoSuchKey:
                return None

    def write(self, name: str, data: bytes) -> None:
        """Replace the object atomically (readers see the old bytes or the new ones)."""
        if self.is_s3:
            with self._storage("write", name):
                self.s3().put_object(Bucket=self.bucket, Key=self._key(name), Body=data)
            return
        write_atomically(self._path(name), data)

    def create(self, name: str, data: bytes) -> bool:
        """Create the object only when it does not exist; False when it does."""
        if not self.is_s3:
            path = self._path(name)
            path.parent.mkdir(parents=True, exist_ok=True)
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                return False
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
            except BaseException:  # a lock note half-written would hold the lock forever
                path.unlink(missing_ok=True)
                raise
            return True
        from botocore.exceptions import ClientError

        with self._storage("create", name):
            try:
                self.s3().put_object(
                    Bucket=self.bucket, Key=self._key(name), Body=data, IfNoneMatch="*"
                )
            except ClientError as exc:
                code = exc.response.get("Error", {}).get("Code", "")
                if code in ("PreconditionFailed", "ConditionalRequestConflict", "412"):
                    return False
                raise
        return True

    def delete(self, name: str) -> None:
        if self.is_s3:
            with self._storage("delete", name):
                self.s3().delete_object(Bucket=self.bucket, Key=self._key(name))
        else:
            self._path(name).unlink(missing_ok=True)

    @contextmanager
    def _storage(self, verb: str, name: str) -> Iterator[None]:
        """botocore's failures as one :class:`CorpusError` line (credentials masked)."""
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            yield
        except ClientError as exc:
            raise CorpusError(f"cannot {verb} {self.uri}/{name}: {self._refusal(exc)}") from None
        except BotoCoreError as exc:
            raise CorpusError(f"cannot {verb} {self.uri}/{name}: {self._failure(exc)}") from None

    def server(self) -> str:
        """What a message names the S3 server by (no credentials, no path)."""
        endpoint = self.storage_options().get("endpoint", "")
        return origin(endpoint) if endpoint else "S3"

    # What an S3 failure is told as, whether botocore (here) or LanceDB
    # (seek.store.corpus_table) met it.
    def no_bucket(self) -> str:
        return f"the bucket {self.bucket} does not exist"

    def access_denied(self) -> str:
        return "access denied (check AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY and the policy)"

    def _refusal(self, exc: Any) -> str:
        error = exc.response.get("Error", {})
        code = str(error.get("Code", ""))
        if code == "NoSuchBucket":
            return self.no_bucket()
        if code in ("AccessDenied", "403", "AllAccessDisabled"):
            return self.access_denied()
        if code in ("InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken"):
            return f"the S3 server refused the credentials ({code})"
        return one_line(f"{code or 'error'}: {error.get('Message', '')}".rstrip(": "), 200)

    def _failure(self, exc: Any) -> str:
        from botocore.exceptions import (
            ConnectTimeoutError,
            EndpointConnectionError,
            NoCredentialsError,
            ReadTimeoutError,
        )

        server = self.server()
        if isinstance(exc, (EndpointConnectionError, ConnectTimeoutError)):
            return f"cannot reach {server}"
        if isinstance(exc, ReadTimeoutError):
            return f"{server} did not answer in time"
        if isinstance(exc, NoCredentialsError):
            return "no AWS credentials (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)"
        return one_line(str(exc), 200) or type(exc).__name__

    # -- JSON helpers ----------------------------------------------------------------
    def read_json(self, name: str) -> dict[str, Any] | None:
        data = self.read(name)
        if data is None:
            return None
        try:
            value = json.loads(data)
        except ValueError as exc:
            raise CorpusError(f"{self.uri}/{name} is not valid JSON ({exc})") from exc
        if not isinstance(value, dict):
            raise CorpusError(f"{self.uri}/{name} is not a JSON object")
        return value

    def write_json(self, name: str, value: Mapping[str, Any]) -> None:
        self.write(name, json.dumps(value, separators=(",", ":"), sort_keys=True).encode())

    # -- the writer lock ---------------------------------------------------------------
    def lock(self, repo: str, command: str) -> RepoLock:
        return RepoLock(self, repo, command)


class RepoLock:
    """Held by the one process indexing ``repo`` (see the module docstring)."""

    def __init__(self, location: CorpusLocation, repo: str, command: str) -> None:
        if repo != CORPUS_LOCK:  # every other lock is named by a checked repository name
            check_repo_name(repo)
        self.location, self.repo, self.command = location, repo, command
        self.name = f"locks/{repo}.json"

    def __enter__(self) -> RepoLock:
        note = {"pid": os.getpid(), "host": os.uname().nodename, "command": self.command,
                "since": time.time()}  # fmt: skip
        if not self.location.create(self.name, json.dumps(note).encode()):
            holder = self.location.read_json(self.name) or {}
            age = time.time() - float(holder.get("since", time.time()))
            raise CorpusLockedError(
                f"repository {self.repo} is being indexed by {holder.get('command', '?')} "
                f"(pid {holder.get('pid', '?')} on {holder.get('host', '?')}, "
                f"{age:.0f} s ago); if that process is gone, run "
                f"`seek corpus unlock {self.location.uri} {self.repo}`"
            )
        return self

    def __exit__(self, *exc: object) -> None:
        self.location.delete(self.name)
