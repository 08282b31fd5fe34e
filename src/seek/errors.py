"""seek's exceptions: the whole tree (design "A documented exception tree, checked").

Every error seek raises on purpose is a :class:`SeekError`; its message is one line a user
can act on. Front-ends turn it into one line and exit 1 (CLI), a tool error (MCP) or a JSON
error body (HTTP: :class:`ApiError` carries the status; the others map in ``web/``)::

    SeekError
    ├── SettingsError          a settings file or SEEK_* variable has a bad value
    ├── WorkspaceError         the workspace folder is missing or not a folder
    ├── IndexLockedError       another process is writing the same index
    ├── IndexUnwritableError   the index folder cannot be written (no space, read-only,
    │                          quota, permission, I/O error); the last complete index stays
    ├── IndexMismatchError     the index was built differently (model, dimensions, chunk
    │                          settings, format) and must be rebuilt before it is updated
    ├── DamagedIndexError      the stored index cannot be read; ``seek index`` repairs it
    ├── EmbeddingError         the embedder failed (model missing, server down, ...)
    ├── ChatError              the chat server could not answer (``seek ask``)
    ├── ModelError             ``seek models``: an unknown name, an unreachable hub, a failed
    │                          or corrupt download, a model that does not load
    ├── RerankerUnavailable    the reranker cannot score (no model, or it failed to load or
    │                          run); callers fall back to the unreranked order
    ├── CorpusError            ``seek corpus``: a bad URI or name, a missing repository
    │   └── CorpusLockedError  another indexer holds a repository's lock
    └── ApiError               an HTTP request seek serve refuses (status, code, message)

``tests/test_errors.py`` checks that this drawing names every class here and that each is
exported by ``seek``.
"""


def failure_line(exc: BaseException) -> str:
    """A caught failure (a library's, e.g. LanceDB reporting a damaged file) on one line of
    at most 160 characters, its kind when it has no message: the cause a seek error names."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 160 else text[:157] + "..."


class SeekError(Exception):
    """Base class of every error seek raises deliberately."""


class SettingsError(SeekError):
    """A setting has a value seek cannot use."""


class WorkspaceError(SeekError):
    """The workspace path is missing or unusable."""


class IndexLockedError(SeekError):
    """Another live process holds the index's writer lock."""


class IndexUnwritableError(SeekError):
    """The index folder cannot be written: ``errno`` says why (``ENOSPC``, ``EROFS``,
    ``EDQUOT``, ``EACCES``, ``EPERM``, ``EIO``), ``folder`` where. The last complete index is
    left as it was, and searchable (see :mod:`seek.store.faults`)."""

    def __init__(self, message: str, errno: int, folder: str) -> None:
        super().__init__(message)
        self.errno, self.folder = errno, folder


class IndexMismatchError(SeekError):
    """The stored index no longer matches the settings and needs a rebuild."""


class DamagedIndexError(SeekError):
    """The stored index cannot be read (files deleted or truncated)."""


class EmbeddingError(SeekError):
    """The embedding provider could not produce vectors."""


class ChatError(SeekError):
    """The chat server could not answer."""


class ModelError(SeekError):
    """A model cannot be pulled, found or removed."""


class RerankerUnavailable(SeekError):
    """The reranker cannot score (no model, or it failed to load or run)."""


class CorpusError(SeekError):
    """A corpus cannot be used as asked (bad URI or name, missing repository or index)."""


class CorpusLockedError(CorpusError):
    """Another indexer holds the lock of a corpus repository."""


class ApiError(SeekError):
    """A request ``seek serve`` refuses: the HTTP status, a short code and the message."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message
