"""The fork server: a warm, single-threaded parent that forks one child per session connection.

It stays single-threaded (no thread may exist at fork time). It ends, killing its children, when
its stdin reaches EOF (the service is gone) or on SIGTERM.
"""

import importlib
import json
import os
import platform
import selectors
import signal
import socket
import sys

# Warm imports: what every session needs, loaded once here instead of in each child.
import asyncio  # noqa: F401
import base64  # noqa: F401
import concurrent.futures  # noqa: F401
import pickle  # noqa: F401

import workflow_sdk

from . import session as session_module


def _reap(children):
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        children.discard(pid)


def _die_with_parent(server_pid):
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass
    if os.getppid() != server_pid:  # the server died before prctl took effect
        os._exit(1)


def _child(conn, listener, server_pid):
    listener.close()
    for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
    _die_with_parent(server_pid)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        session_module.run_session(conn)
    finally:
        os._exit(1)


def serve(socket_path, preload=()):
    for name in preload:
        try:
            importlib.import_module(name)
        except Exception as e:
            print(f"preload {name}: {type(e).__name__}: {e}", file=sys.stderr)
    try:
        os.unlink(socket_path)
    except FileNotFoundError:
        pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path)
    listener.listen(64)
    children = set()
    server_pid = os.getpid()
    stopping = []

    signal.signal(signal.SIGCHLD, lambda *_: _reap(children))
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    signal.signal(signal.SIGINT, lambda *_: stopping.append(True))

    ready = {"type": "ready", "pid": server_pid, "python": platform.python_version(), "sdk": workflow_sdk.__version__}
    sys.stdout.write(json.dumps(ready, separators=(",", ":")) + "\n")
    sys.stdout.flush()

    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ, "accept")
    sel.register(0, selectors.EVENT_READ, "stdin")
    try:
        while not stopping:
            for key, _ in sel.select(timeout=1.0):
                if key.data == "stdin":
                    if not os.read(0, 4096):
                        stopping.append(True)
                    continue
                try:
                    conn, _ = listener.accept()
                except (BlockingIOError, InterruptedError):
                    continue
                # SIGCHLD waits until the pid is in `children`, so a quick child is never left behind
                # there (a stale pid could be reused and then killed at shutdown).
                signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
                try:
                    pid = os.fork()
                    if pid == 0:
                        sel.close()
                        _child(conn, listener, server_pid)
                    children.add(pid)
                except OSError as e:  # out of processes: this connection fails, the server lives on
                    print(f"fork: {e}", file=sys.stderr)
                finally:
                    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
                conn.close()
            _reap(children)
    finally:
        for pid in list(children):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        _reap(children)
        listener.close()
        try:
            os.unlink(socket_path)
        except FileNotFoundError:
            pass
    return 0
