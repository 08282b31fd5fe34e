"""Where a corpus run's tasks execute: Ray, or this process (issue 17, "Fan-out on Ray").

Both runners have one method, :meth:`map_unordered`: run ``fn`` on each argument tuple and
yield results as they finish, with at most ``in_flight`` tasks submitted at once (the rows
of finished tasks wait in memory for a writer, so the bound is a memory bound).

:class:`RayRunner` submits each task with ``max_retries``: when the worker running it dies
(killed, out of memory, its node lost), Ray runs the task again on another worker; a task
that raises is not retried (the same files would fail the same way) and stops the run. The
driver receives one result per task, so a retried task's rows are written once. Before any
task, it checks that every node's workers import the seek the driver runs (same version, same
Python source; see :func:`_seek_build_probe`): a task's arguments and its function are
seek's own classes, which a worker with another seek cannot read (an older one lacks
``FileSpec.graph`` or ``seek.index.graph_rows``), so without the check the run would stop
on its first task with Ray's traceback; with it, it stops before writing anything, with one
line naming both seeks.

:class:`LocalRunner` calls ``fn`` in order in this process: ``seek corpus index`` without
Ray installed (``pip install 'seek-code[scale]'`` adds it), or with ``--in-process``.
"""

from __future__ import annotations

import functools
import logging
import os
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol

from seek.corpus.location import CorpusError
from seek.redact import one_line
from seek.untrusted import printable

log = logging.getLogger(__name__)

TASK_RETRIES = 3


class Runner(Protocol):
    workers: int
    name: str

    def map_unordered(
        self, fn: Callable[..., Any], args: Iterable[tuple], in_flight: int
    ) -> Iterator[Any]: ...

    def close(self) -> None: ...


class LocalRunner:
    """Every task in this process, one after the other."""

    name = "in-process"
    workers = 1

    def map_unordered(
        self, fn: Callable[..., Any], args: Iterable[tuple], in_flight: int
    ) -> Iterator[Any]:
        for arg in args:
            yield fn(*arg)

    def close(self) -> None:
        pass


def ray_available() -> bool:
    try:
        import ray  # noqa: F401
    except ImportError:
        return False
    return True


class RayRunner:
    """Tasks on a Ray cluster: ``address`` joins a running one, else a local one is started
    with ``workers`` CPUs (and shut down by :meth:`close`)."""

    name = "ray"

    def __init__(self, address: str | None = None, workers: int = 2) -> None:
        try:
            import ray
        except ImportError as exc:
            raise CorpusError("Ray is not installed: pip install 'seek-code[scale]'") from exc
        self._ray = ray
        self._started = False
        if not ray.is_initialized():
            options: dict[str, Any] = {"log_to_driver": False, "include_dashboard": False}
            if address:
                _join(ray, address, options)
            else:
                _refuse_open_local_ray(ray)
                ray.init(num_cpus=workers, **options)
                self._started = True
            try:
                _check_workers(ray, address)
            except BaseException:
                ray.shutdown()  # the cluster this runner joined or started: nothing left behind
                self._started = False
                raise
        else:
            _check_workers(ray, address)
        self.workers = int(ray.cluster_resources().get("CPU", workers))
        self._remotes: dict[Callable[..., Any], Any] = {}
        self._where = address or ray.get_runtime_context().gcs_address

    def _remote(self, fn: Callable[..., Any]) -> Any:
        remote = self._remotes.get(fn)
        if remote is None:
            task = _on_this_seek(fn)
            remote = self._ray.remote(num_cpus=1, max_retries=TASK_RETRIES)(task)
            self._remotes[fn] = remote
        return remote

    def map_unordered(
        self, fn: Callable[..., Any], args: Iterable[tuple], in_flight: int
    ) -> Iterator[Any]:
        from ray import cloudpickle

        ray = self._ray
        remote = self._remote(fn)
        pending: list[Any] = []
        queue = iter(args)
        exhausted = False
        try:
            while True:
                while not exhausted and len(pending) < max(1, in_flight):
                    try:
                        pending.append(remote.remote(cloudpickle.dumps(next(queue))))
                    except StopIteration:
                        exhausted = True
                if not pending:
                    return
                ready, pending = ray.wait(pending, num_returns=1)
                try:
                    result = ray.get(ready[0])
                except ray.exceptions.RayError as exc:
                    raise _task_failure(exc, self._where) from exc
                yield result
        finally:
            for ref in pending:  # a run that stops early does not leave work behind
                ray.cancel(ref, force=True)

    def close(self) -> None:
        if self._started:
            self._ray.shutdown()
            self._started = False


LOCAL_TOKEN_SINCE = (2, 59)
"""The first Ray whose new local instance checks a token by default."""


def _refuse_open_local_ray(ray: Any) -> None:
    """A local Ray instance listens on every network interface (its GCS and raylets bind
    all addresses), and whoever reaches those ports can run code as this user unless the
    instance checks a token. Ray turns tokens on for a new local instance from 2.59 (it
    makes one in ``~/.ray/auth_token`` and gives it to the instance's own workers); an older
    Ray would start one that takes anyone's tasks, so seek does not start it. An explicit
    ``RAY_AUTH_MODE`` is the user's choice and is left as it is."""
    found = tuple(int(part) for part in re.findall(r"\d+", str(ray.__version__))[:2])
    if found < LOCAL_TOKEN_SINCE:
        since = ".".join(map(str, LOCAL_TOKEN_SINCE))
        raise CorpusError(
            f"Ray {printable(one_line(str(ray.__version__), 40))} would start a local instance "
            f"that takes tasks from anyone who can reach this machine: install ray>={since} "
            "(pip install -U 'seek-code[scale]'), join a cluster with --ray ADDRESS, or use "
            "--in-process"
        )


def _ray_token_available() -> bool:
    """Whether this machine holds a Ray cluster token where Ray's client looks for one."""
    if os.environ.get("RAY_AUTH_TOKEN"):
        return True
    path = os.environ.get("RAY_AUTH_TOKEN_PATH") or os.path.expanduser("~/.ray/auth_token")
    return os.path.isfile(path)


def _join(ray: Any, address: str, options: dict[str, Any]) -> None:
    """Connect to the running cluster at ``address``. A cluster started by ``ray start``
    (Ray 2.5x and later) checks a token, which Ray's client sends only with
    ``RAY_AUTH_MODE=token``: without it every attempt is refused for ~20 s, then a
    traceback. So a token found where Ray keeps it is sent unless ``RAY_AUTH_MODE`` says
    otherwise, and a cluster that cannot be joined is a clear error."""
    if "RAY_AUTH_MODE" not in os.environ and _ray_token_available():
        try:  # Ray's own switch: sets the variable and has Ray (imported) read it again
            from ray._private.authentication import authentication_token_setup as auth

            auth.maybe_enable_token_auth_if_token_available(warn_if_disabled=False)
        except (ImportError, AttributeError):  # another Ray version: the variable alone
            os.environ["RAY_AUTH_MODE"] = "token"
    try:
        ray.init(address=address, **options)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        hint = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        raise CorpusError(
            f"could not join the Ray cluster at {address}: {hint} (a cluster that checks "
            "tokens needs its token in RAY_AUTH_TOKEN or ~/.ray/auth_token)"
        ) from exc


def _seek_build_probe() -> Callable[[], tuple[str, str, str]]:
    """A function returning ``(version, digest of its Python source, "")`` of the seek that
    the calling Python imports, or ``("", "", the error)`` when it cannot import it. Made
    here, nested, so that Ray sends it by value (cloudpickle pickles a nested function's
    code, a module-level one by name): a worker runs it without importing any module of
    this seek, which may be missing or different there. The driver runs the same function
    on itself."""

    def seek_build() -> tuple[str, str, str]:
        import hashlib
        from pathlib import Path

        try:
            import seek

            version = str(getattr(seek, "__version__", "(no version)"))
            root = Path(seek.__file__).parent
            digest = hashlib.sha256()
            for path in sorted(root.rglob("*.py")):
                data = path.read_bytes()
                name = path.relative_to(root).as_posix().encode()
                digest.update(b"%d %s %d\n" % (len(name), name, len(data)) + data)
        except Exception as exc:  # whatever stops it is the answer: seek is not usable there
            return "", "", f"{type(exc).__name__}: {exc}"
        return version, digest.hexdigest(), ""

    return seek_build


@functools.cache
def _driver_build() -> tuple[str, str]:
    """This process's (version, source digest), read once: the run's check of every node and
    each task's check compare against it."""
    return _seek_build_probe()()[:2]


def _build_problem() -> Callable[..., str]:
    """A function naming how a worker's seek (``version``, ``digest``, import ``error``)
    differs from the driver's ``ours``, "" when it does not: one wording for the run's check
    of every node and for a task's own check. ``show(text, limit)`` puts the worker's text
    in the line (as it is by default). Made here, nested, so that Ray sends it by value
    with the task."""

    def problem(
        ours: tuple[str, str],
        version: str,
        digest: str,
        error: str,
        show: Callable[[str, int], str] = lambda text, limit: text,
    ) -> str:
        if error:
            return f"cannot import seek ({show(error, 300)})"
        if version != ours[0]:
            return f"run seek {show(version, 40)}"
        if digest != ours[1]:
            return f"run another build of seek {version} (other source)"
        return ""

    return problem


_OTHER_SEEK = "seek-build: "
"""How a task that found another seek on its worker starts its error (see _on_this_seek)."""


def _on_this_seek(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, run only by a worker whose seek is this one (the version and source that
    :func:`_check_workers` compares): a node that joined the cluster after that check, with
    another seek, fails its first task in one line instead of writing rows another way.
    Checked once per worker process, before ``fn`` and its arguments (pickled by
    :meth:`RayRunner.map_unordered`) are unpickled there: their classes are the worker's
    seek's. Made here, nested, so that Ray sends it by value."""
    from ray import cloudpickle

    probe, problem, ours = _seek_build_probe(), _build_problem(), _driver_build()
    payload = cloudpickle.dumps(fn)

    def seek_task(packed_args: bytes) -> Any:
        import sys

        if getattr(sys.modules.get("seek"), "_checked_build", None) != ours:
            found = problem(ours, *probe())
            if found:
                import ray

                node = ray.util.get_node_ip_address()
                raise RuntimeError(f"{_OTHER_SEEK}the Ray workers on node {node} {found}, "
                                   f"this is seek {ours[0]}: install the same seek on the "
                                   "cluster")  # fmt: skip
            sys.modules["seek"]._checked_build = ours  # type: ignore[attr-defined]
        from ray import cloudpickle

        return cloudpickle.loads(payload)(*cloudpickle.loads(packed_args))

    return seek_task


def _task_failure(exc: BaseException, where: str) -> CorpusError:
    """A task's failure on the cluster as one line (its traceback goes to the debug log)."""
    log.debug("a Ray task failed", exc_info=exc)
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    last = lines[-1] if lines else type(exc).__name__
    if _OTHER_SEEK in last:
        return CorpusError(printable(one_line(last.split(_OTHER_SEEK, 1)[1], 400)))
    return CorpusError(f"a task on the Ray cluster at {where} failed: {printable(one_line(last))}")


def _check_workers(ray: Any, address: str | None) -> None:
    """Run the seek probe once on every live node with CPUs (each node's workers share its
    Python and the job's runtime environment) before any task; a node whose seek differs
    from the driver's (version or source) or cannot be imported is one
    :class:`CorpusError`. A node that joins the cluster later is checked by its first task
    (:func:`_on_this_seek`)."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    ours = _driver_build()
    version = ours[0]
    remote = ray.remote(num_cpus=0)(_seek_build_probe())
    nodes = [n for n in ray.nodes() if n.get("Alive") and n.get("Resources", {}).get("CPU")]
    refs = [remote.options(scheduling_strategy=NodeAffinitySchedulingStrategy(
                node["NodeID"], soft=False)).remote() for node in nodes]  # fmt: skip
    cluster = address or ray.get_runtime_context().gcs_address
    for node, ref in zip(nodes, refs, strict=True):
        where = cluster if len(nodes) == 1 else f"{cluster}, node {node.get('NodeManagerAddress')}"
        try:
            theirs, their_digest, error = ray.get(ref)
        except ray.exceptions.RayError as exc:
            lines = str(exc).strip().splitlines() or [type(exc).__name__]
            raise CorpusError(f"the Ray workers at {where} could not run seek's version check "
                              f"({printable(one_line(lines[-1]))}): is seek {version} "
                              "installed on the cluster?") from exc  # fmt: skip
        problem = _build_problem()(ours, theirs, their_digest, error, _shown)
        if problem:
            raise CorpusError(f"the Ray workers at {where} {problem}, this is seek {version}: "
                              "install the same seek on the cluster")  # fmt: skip


def _shown(text: str, limit: int) -> str:
    """A worker's text in a line of the driver's: one line, credentials masked, escaped."""
    return printable(one_line(text, limit))


def make_runner(address: str | None, workers: int, in_process: bool) -> Runner:
    """Ray when it is installed (or asked for by ``address``), else this process."""
    if in_process:
        return LocalRunner()
    if address or ray_available():
        return RayRunner(address, workers)
    log.info("Ray is not installed: indexing in this process")
    return LocalRunner()
