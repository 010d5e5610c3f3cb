"""Running a step where LLVM may still end the process, in a child process.

LLVM answers some inputs with a fatal error: ``report_fatal_error`` prints ``LLVM ERROR:
...`` and exits, and instruction selection aborts (SIGABRT) on an intrinsic its target
lacks. Inside ``tile_mlir.compile`` that would take the user's Python process with it.
``run_in_child`` runs such a step in a forked copy of this process, which costs a few
milliseconds (the copy shares memory with its parent until either writes): the step's
result or exception comes back through a pipe; if the child dies instead, the parent
raises ``ChildDied`` with what LLVM printed, and stays alive.

The contexts that run these steps are single-threaded (``source.new_context``), so the
fork copies no thread in the middle of MLIR's work. Where ``os.fork`` does not exist the
step runs in this process.
"""

from __future__ import annotations

import gc
import os
import pickle
import signal
import sys
import tempfile
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
        with warnings.catch_warnings():
            # Python 3.12 warns at a fork from a process with threads (an MLIR context's
            # pool, elsewhere). The child touches none of them: it runs the step on its
            # own single-threaded context and leaves with os._exit.
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
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
        try:
            payload = ("return", fn(*args))
        except Exception as e:  # noqa: BLE001 - handed to the parent, which raises it
            payload = ("raise", e)
        try:
            data = pickle.dumps(payload)
        except Exception as e:  # noqa: BLE001 - an exception that does not pickle
            data = pickle.dumps(("raise", TileError(f"{type(e).__name__}: {e}")))
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
