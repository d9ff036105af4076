"""Pieces of a session's start inside Python, timed in a warm interpreter like the fork server's.

    python py_pieces.py handlers.py [more.py ...]

Prints one JSON object (µs per operation, medians of batches):
  fork_exit_us   os.fork() of this interpreter, the child _exit(0)s, the parent waitpid()s
  rewrite_us     {file: parse + rewrite + compile of the handler, as the import hook does}
  compile_us     {file: a plain compile(), the same source without the rewrite}
  exec_us        {file: running the rewritten module body (the import minus finding the file)}
  child_ctypes_us  `import ctypes; ctypes.CDLL(None)` in a freshly forked child: what each session
                   would pay before `hello` (prctl.py `die_with_parent`) were ctypes not
                   imported once in the fork server, as it is (prctl.py, and limits.py). So it
                   is measured first, from a parent with the server's standard-library imports but
                   not yet the runner, whose import brings ctypes.
"""

import json
import os
import statistics
import sys
import time

# What the fork server holds before it forks (forkserver.py's warm imports): the standard
# library's here, the runner's in warm_runner() once child_ctypes is measured.
import asyncio  # noqa: F401
import base64  # noqa: F401
import concurrent.futures  # noqa: F401
import importlib
import pickle  # noqa: F401

from calibrate import in_child  # bench/ is on the path of a script run from it


def per_op(fn, n, batches=5):
    """Median over batches of the mean µs per call."""
    out = []
    for _ in range(batches):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        out.append((time.perf_counter() - t) * 1e6 / n)
    return statistics.median(out)


def fork_exit():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)


def child_ctypes():
    """µs for the first `import ctypes` + CDLL(None) in a forked child, reported over a pipe."""

    def first_ctypes():
        t = time.perf_counter()
        import ctypes

        ctypes.CDLL(None, use_errno=True)
        return (time.perf_counter() - t) * 1e6

    return in_child(first_ctypes)


def warm_runner():
    """The runner's imports, as the fork server has them (ctypes among them: limits.py, prctl.py)."""
    importlib.import_module("workflow_sdk.runner.session")
    return importlib.import_module("workflow_sdk.runner.loader")


def main(files):
    # A cold `import ctypes` in the child needs a parent without it: before the runner's imports.
    assert "ctypes" not in sys.modules, "ctypes is imported already: child_ctypes_us would time nothing"
    child_ctypes_us = statistics.median(child_ctypes() for _ in range(30))
    loader = warm_runner()
    rewrite, CALL_NAME = loader.rewrite, loader.CALL_NAME
    result = {"fork_exit_us": per_op(fork_exit, 60), "rewrite_us": {}, "compile_us": {}, "exec_us": {}}
    result["child_ctypes_us"] = child_ctypes_us
    for path in files:
        source = open(path, "rb").read()
        name = os.path.basename(os.path.dirname(path)) + "/" + os.path.basename(path)
        result["rewrite_us"][name] = per_op(lambda: rewrite(source, path), 100)
        result["compile_us"][name] = per_op(lambda: compile(source, path, "exec", dont_inherit=True), 100)
        code = rewrite(source, path)
        result["exec_us"][name] = per_op(lambda: exec(code, {"__name__": "h", CALL_NAME: lambda f, *a, **k: f(*a, **k)}), 100)
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1:])
