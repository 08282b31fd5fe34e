"""seek's exceptions.

Every error seek raises on purpose is a :class:`SeekError`; its message is one
line a user can act on. Front-ends print ``str(error)`` and exit 1.

- :class:`SettingsError` - a settings file or ``SEEK_*`` variable has a bad value.
- :class:`IndexLockedError` - another process is writing the same index.
- :class:`IndexMismatchError` - the index was built differently (model, dimensions,
  chunk settings, format) and must be rebuilt before it can be updated.
- :class:`DamagedIndexError` - the stored index cannot be read; ``seek index`` repairs it.
- :class:`EmbeddingError` - the embedder failed (model missing, server down, ...).
- :class:`WorkspaceError` - the workspace folder is missing or not a folder.
- :class:`ModelError` - ``seek models``: an unknown name, an unreachable hub, a failed or
  corrupt download, a model that does not load.
"""


class SeekError(Exception):
    """Base class of every error seek raises deliberately."""


class SettingsError(SeekError):
    """A setting has a value seek cannot use."""


class WorkspaceError(SeekError):
    """The workspace path is missing or unusable."""


class IndexLockedError(SeekError):
    """Another live process holds the index's writer lock."""


class IndexMismatchError(SeekError):
    """The stored index no longer matches the settings and needs a rebuild."""


class DamagedIndexError(SeekError):
    """The stored index cannot be read (files deleted or truncated)."""


class EmbeddingError(SeekError):
    """The embedding provider could not produce vectors."""


class ModelError(SeekError):
    """A model cannot be pulled, found or removed."""
