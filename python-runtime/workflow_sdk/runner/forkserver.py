"""The fork server: a warm, single-threaded parent that keeps pre-forked children, one per session.

It stays single-threaded (no thread may exist at fork time). It ends, killing its children, when
its stdin reaches EOF (the service is gone) or on SIGTERM. A line `retire` on stdin makes it
stop taking sessions and exit once the sessions it has started have ended (a deployment-warm
server whose deployment was replaced); its spares that hold no connection leave by themselves.
"""

# Warm imports: what every session needs, loaded once here instead of in each child.
import _signal
import asyncio  # noqa: F401
import base64  # noqa: F401
import concurrent.futures  # noqa: F401
import gc
import importlib
import json
import os
import pickle  # noqa: F401
import platform
import select
import selectors
import signal
import socket
import sys
import time

import workflow_sdk

from . import ahead, faults, prctl, process
from . import limits as limits_module
from .reaper import Reaper

# Children forked ahead of need, each waiting for one session.
SPARES = 2
# What a spare sets back to the default, as plain ints for `_signal`: the `signal` module's
# wrappers turn every number they take and give into an enum, which costs a child about 60
# copy-on-write faults of the server's enum machinery (docs/performance.md).
_SERVER_SIGNALS = tuple(int(s) for s in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT, signal.SIGHUP))
_SIGCHLD = {int(signal.SIGCHLD)}


def _accept(listener, retired):
    """The next connection, or None once the server has retired (`retired` reads EOF) and none
    is waiting. The kernel hands each connection to one spare, so a spare leaves only when it
    holds none: a session that reached a retiring server is never killed with its spare."""
    listener.setblocking(False)  # spares race for each connection; the losers wait again
    poll = select.poll()
    poll.register(listener, select.POLLIN)
    poll.register(retired, select.POLLIN)
    while True:
        events = dict(poll.poll())
        try:
            conn, _ = listener.accept()
        except BlockingIOError:
            if retired in events:
                return None
            continue
        conn.setblocking(True)
        return conn


def _spare(listener, notify, retired, server_pid, limits, cgroups):
    """A pre-forked child: made ready ahead of time, it waits for its one session connection.

    Forking and setting up happen off the session's critical path; the parent forks the next
    spare when this one takes a connection (it writes a byte to `notify`). When the server
    retires (`retired` reads EOF) a spare without a connection exits.
    """
    faults.mark("forked")
    for sig in _SERVER_SIGNALS:
        _signal.signal(sig, _signal.SIG_DFL)
    _signal.pthread_sigmask(_signal.SIG_UNBLOCK, _SIGCHLD)
    prctl.die_with_parent()
    if os.getppid() != server_pid:  # the server died before prctl took effect
        os._exit(1)
    limits_module.apply(limits, cgroups)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        prepared = ahead.Prepared()  # threads and capture, before the session arrives
        listener.setblocking(True)
        faults.mark("spare")
        conn = _accept(listener, retired)
        if conn is None:
            os._exit(0)
        listener.close()
        os.write(notify, os.getpid().to_bytes(4, "little"))  # one atomic pipe write
        os.close(notify)
        process.run_session(conn, prepared=prepared)
    finally:
        os._exit(1)


def _unlink(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _kill(pids):
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


class ForkServer:
    """The server's state and loop: its listener, children, spares, and the reaper."""

    def __init__(self, socket_path, spares, limits):
        self.socket_path = socket_path
        self.spares = spares
        self.limits = limits
        _unlink(socket_path)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(socket_path)
        self.listener.listen(128)
        self.pid = os.getpid()
        self.children = set()
        prctl.become_subreaper()  # orphans of sessions come to this server, which reaps them
        self.cgroups = limits_module.server_cgroups(self.pid, limits)
        self.reap = Reaper(self.children, self.cgroups)
        self.stopping = False
        self.retiring = False
        self.notify_r, self.notify_w = os.pipe()
        os.set_blocking(self.notify_r, False)
        # Closed at retire: the spares see EOF (only the server holds the write end).
        self.retired_r, self.retired_w = os.pipe()

    def _stop(self, *_):
        self.stopping = True

    def start(self):
        """Signals, the shared heap made once, the spares, then the `ready` line."""
        signal.signal(signal.SIGCHLD, self.reap)
        signal.signal(signal.SIGTERM, self._stop)
        signal.signal(signal.SIGINT, self._stop)
        ahead.warm_server()
        # What the children share is made now, once: a frozen heap is not touched by their gc.
        gc.collect()
        gc.freeze()
        # Sessions yield the CPU to the service, so accepting webhooks stays quick under load; so
        # does this server, whose forks (the kernel's page-table copy) are work of the sessions too.
        limits_module.server_priority(self.limits)
        for _ in range(self.spares):
            self.fork_spare()
        ready = {
            "type": "ready",
            "pid": self.pid,
            "python": platform.python_version(),
            "sdk": workflow_sdk.__version__,
        }
        os.write(1, (json.dumps(ready, separators=(",", ":")) + "\n").encode())  # as the exit lines

    def fork_spare(self):
        # SIGCHLD waits until the pid is in `children`, so a quick child is never left behind
        # there (a stale pid could be reused and then killed at shutdown).
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
        try:
            pid = os.fork()
            if pid == 0:
                os.close(self.notify_r)
                os.close(self.retired_w)
                _spare(self.listener, self.notify_w, self.retired_r, self.pid, self.limits, self.cgroups)
            self.children.add(pid)
        except OSError as e:  # out of processes: fewer spares for now, the server lives on
            print(f"fork: {e}", file=sys.stderr)
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})

    def run(self):
        """Until stdin ends, a signal stops it, or a retiring server's last session has ended."""
        sel = selectors.DefaultSelector()
        sel.register(self.notify_r, selectors.EVENT_READ, self._taken)
        sel.register(0, selectors.EVENT_READ, self._stdin)
        while not self.stopping:
            for key, _ in sel.select(timeout=1.0):
                key.data()
            self.reap()
            self.reap.sweep()
            if self.retiring and not self.children:
                break

    def _stdin(self):
        data = os.read(0, 4096)
        if not data:
            self.stopping = True
        elif b"retire" in data and not self.retiring:
            self.retire()

    def _taken(self):
        try:
            data = os.read(self.notify_r, 4096)
        except (BlockingIOError, InterruptedError):
            return
        for _ in range(len(data) // 4):  # a spare took a session (its pid): fork the next
            if not self.retiring:
                self.fork_spare()

    def retire(self):
        """No new sessions: the socket goes, and spares without a connection leave by themselves.

        They are not killed: one may have accepted a session's connection and not yet said so on
        `notify` (a busy machine stretches that moment), and killing it would kill the session.
        Sessions already started, and connections already made, run to their end.
        """
        self.retiring = True
        self.listener.close()
        _unlink(self.socket_path)
        os.close(self.retired_w)

    def close(self):
        """Every child killed and reaped, its cgroups removed, the socket gone."""
        _kill(list(self.children))
        deadline = time.monotonic() + 3
        while self.children and time.monotonic() < deadline:  # every child reaped before the server goes
            self.reap()
            time.sleep(0.005)
        for path in self.reap.sweeping:
            for _ in range(50):  # what the group left must be gone before its cgroup can go
                if limits_module.sweep_cgroup(path):
                    break
                self.reap()
                time.sleep(0.01)
        limits_module.remove_cgroups(self.cgroups)
        if not self.retiring:
            self.listener.close()
        _unlink(self.socket_path)


def _preload(names):
    for name in names:
        try:
            importlib.import_module(name)
        except Exception as e:
            print(f"preload {name}: {type(e).__name__}: {e}", file=sys.stderr)


def serve(socket_path, preload=(), spares=SPARES, warm_dir=None, warm_modules=(), limits=None):
    """Run a fork server on `socket_path` until the service is gone; the exit status (3: the warm
    import of `warm_dir` failed, and the service runs this deployment's sessions cold)."""
    limits = limits or limits_module.Limits()
    _preload(preload)
    if warm_dir is not None:
        from .warm import warm_import

        try:
            warm_import(warm_dir, warm_modules)
        except BaseException as e:
            print(f"warm import failed: {type(e).__name__}: {e}", file=sys.stderr)
            return 3
    server = ForkServer(socket_path, spares, limits)
    try:
        server.start()
        server.run()
    finally:
        server.close()
    return 0
