"""Running a step where LLVM may still end the process, in a child process.

LLVM answers some inputs with a fatal error: ``report_fatal_error`` prints ``LLVM ERROR:
...`` and exits, and instruction selection aborts (SIGABRT) on an intrinsic its target
lacks. Inside ``tile_mlir.compile`` that would take the user's Python process with it.
Two ways to run such a step elsewhere; either way the step's result or exception comes
back through a pipe, and if the child dies instead, the parent raises ``ChildDied`` with
what LLVM printed, and stays alive:

* ``run_in_child`` forks a copy of this process for one step (tile-opt, once per chunk);
* ``Worker`` forks one copy on its first call and keeps it for the next calls, forking a
  new one after a death, so that a process that compiles many kernels pays the fork (and
  the copying of the pages the child writes) once. The step's function and arguments
  travel pickled: a module-level function, and data (MLIR bytecode, not live objects).

The contexts that run these steps are single-threaded (``source.new_context``), so the
fork copies no thread in the middle of MLIR's work. Where ``os.fork`` does not exist the
step runs in this process.
"""

from __future__ import annotations

import atexit
import gc
import os
import pickle
import signal
import struct
import sys
import tempfile
import threading
import warnings
from collections.abc import Callable

from ..errors import TileError


class ChildDied(TileError):
    """The child process ended without a result: ``how`` (``killed by SIGABRT``, ``exit
    status 1``) and what it wrote to stderr."""

    def __init__(self, how: str, stderr: str):
        super().__init__(f"{stderr.strip()}\n({how})".strip())
        self.how, self.stderr = how, stderr


def run_in_child(fn: Callable, *args, capture_stderr: bool = True):
    """``fn(*args)`` run in a forked child: its result, or its exception raised here.

    With ``capture_stderr`` the child's file descriptor 2 goes to a temporary file, which
    is copied to ``sys.stderr`` when the child succeeds (LLVM's warnings) and is the
    message of ``ChildDied`` when it does not.
    """
    if not hasattr(os, "fork"):
        return fn(*args)
    sys.stdout.flush()
    sys.stderr.flush()
    with tempfile.TemporaryFile() as captured:
        read_end, write_end = os.pipe()
        pid = _fork()
        if pid == 0:  # the child: never returns
            _child(fn, args, write_end, read_end, captured.fileno() if capture_stderr else None)
        os.close(write_end)
        with os.fdopen(read_end, "rb") as pipe:
            data = pipe.read()
        _, status = os.waitpid(pid, 0)
        captured.seek(0)
        stderr = captured.read().decode(errors="replace")
    if not data:
        raise ChildDied(_how(status), stderr)
    if stderr:
        sys.stderr.write(stderr)
    outcome, value = pickle.loads(data)
    if outcome == "raise":
        raise value
    return value


def _child(fn: Callable, args, write_end: int, read_end: int, stderr_fd: int | None) -> None:
    status = 0
    gc.disable()  # a short job: no collection walking (and copying) the parent's objects
    try:
        os.close(read_end)
        if stderr_fd is not None:
            os.dup2(stderr_fd, 2)
        data = _outcome(fn, args)
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(data)
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:  # noqa: BLE001 - the parent sees no result and reports it
        status = 1
    finally:
        os._exit(status)


def _how(status: int) -> str:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            return f"killed by {signal.Signals(number).name}"
        except ValueError:
            return f"killed by signal {number}"
    return f"exit status {os.WEXITSTATUS(status)}"


def _fork() -> int:
    with warnings.catch_warnings():
        # Python 3.12 warns at a fork from a process with threads (an MLIR context's
        # pool, elsewhere). The child touches none of them: it runs steps on its own
        # single-threaded contexts and leaves with os._exit.
        warnings.simplefilter("ignore", DeprecationWarning)
        return os.fork()


_LENGTH = struct.Struct("<Q")


def _send(fd: int, data: bytes) -> None:
    view = memoryview(_LENGTH.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


def _receive(fd: int) -> bytes | None:
    """One message, or None at the end of the pipe."""
    def exactly(n: int) -> bytes | None:
        chunks, left = [], n
        while left:
            chunk = os.read(fd, left)
            if not chunk:
                return None
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    header = exactly(_LENGTH.size)
    return None if header is None else exactly(_LENGTH.unpack(header)[0])


class Worker:
    """A forked process that runs ``fn(*args)`` calls one at a time (``call``), started on
    the first call and again after it dies, or when this process is itself a fork of
    the one that started it. It ends when this process closes its pipe (at exit)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._child: _Child | None = None
        atexit.register(self.stop)

    def call(self, fn: Callable, *args):
        """``fn(*args)`` in the worker: its result, or its exception raised here; a
        ``ChildDied`` when the worker dies on it."""
        if not hasattr(os, "fork"):
            return fn(*args)
        request = pickle.dumps((fn, args))
        with self._lock:
            if self._child is None or self._child.owner != os.getpid():
                sys.stdout.flush()
                sys.stderr.flush()
                self._child = _Child.start()
            child = self._child
            try:
                _send(child.requests, request)
                reply = _receive(child.replies)
            except OSError:
                reply = None
            stderr = child.stderr()
            if reply is None:
                self._child = None
                raise ChildDied(child.stop(), stderr)
        if stderr:
            sys.stderr.write(stderr)
        outcome, value = pickle.loads(reply)
        if outcome == "raise":
            raise value
        return value

    def stop(self) -> None:
        with self._lock:
            if self._child is not None and self._child.owner == os.getpid():
                self._child.stop()
            self._child = None


class _Child:
    """The parent's side of a worker: its pid, the two pipes, its stderr file."""

    def __init__(self, pid: int, requests: int, replies: int, stderr_file, owner: int):
        self.pid, self.requests, self.replies = pid, requests, replies
        self.stderr_file, self.owner = stderr_file, owner

    @classmethod
    def start(cls) -> _Child:
        stderr_file = tempfile.TemporaryFile()
        to_child, requests = os.pipe()
        replies, from_child = os.pipe()
        pid = _fork()
        if pid == 0:  # the worker: never returns
            _serve(to_child, from_child, stderr_file.fileno(), close=(requests, replies))
        os.close(to_child)
        os.close(from_child)
        return cls(pid, requests, replies, stderr_file, os.getpid())

    def stderr(self) -> str:
        """What the worker wrote to stderr during the last call."""
        fd = self.stderr_file.fileno()
        return os.pread(fd, os.fstat(fd).st_size, 0).decode(errors="replace")

    def stop(self) -> str:
        """Close the pipes, reap the worker; how it ended."""
        for fd in (self.requests, self.replies):
            try:
                os.close(fd)
            except OSError:
                pass
        self.stderr_file.close()
        try:
            _, status = os.waitpid(self.pid, 0)
        except ChildProcessError:
            return "ended"
        return _how(status)


def _serve(requests: int, replies: int, stderr_fd: int, close: tuple[int, ...]) -> None:
    """The worker's loop: each request is one call; the end of the pipe ends it."""
    status = 0
    try:
        for fd in close:
            os.close(fd)
        gc.freeze()  # the parent's objects: never walked (and so never copied) by a collection
        os.dup2(stderr_fd, 2)
        while True:
            request = _receive(requests)
            if request is None:
                break
            os.lseek(2, 0, os.SEEK_SET)
            os.ftruncate(2, 0)
            try:
                fn, args = pickle.loads(request)
            except Exception as e:  # noqa: BLE001 - handed to the parent, which raises it
                data = pickle.dumps(("raise", TileError(f"{type(e).__name__}: {e}")))
            else:
                data = _outcome(fn, args)
            sys.stdout.flush()
            sys.stderr.flush()
            _send(replies, data)
    except BaseException:  # noqa: BLE001 - the parent sees no reply and reports it
        status = 1
    finally:
        os._exit(status)


def _outcome(fn, args) -> bytes:
    """``fn(*args)``'s result or exception, pickled for the parent (an exception that does
    not pickle becomes a TileError that names it)."""
    try:
        payload = ("return", fn(*args))
    except Exception as e:  # noqa: BLE001 - handed to the parent, which raises it
        payload = ("raise", e)
    try:
        return pickle.dumps(payload)
    except Exception as e:  # noqa: BLE001 - an exception that does not pickle
        return pickle.dumps(("raise", TileError(f"{type(e).__name__}: {e}")))
