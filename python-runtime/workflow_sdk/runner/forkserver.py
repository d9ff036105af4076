"""The fork server: a warm, single-threaded parent that keeps pre-forked children, one per session.

It stays single-threaded (no thread may exist at fork time). It ends, killing its children, when
its stdin reaches EOF (the service is gone) or on SIGTERM. A line `retire` on stdin makes it
stop taking sessions, kill its spares, and exit once the sessions it has started have ended
(a deployment-warm server whose deployment was replaced).
"""

# Warm imports: what every session needs, loaded once here instead of in each child.
import asyncio  # noqa: F401
import base64  # noqa: F401
import concurrent.futures  # noqa: F401
import ctypes
import gc
import importlib
import json
import os
import pickle  # noqa: F401
import platform
import selectors
import signal
import socket
import sys
import time

import workflow_sdk

from . import ahead
from . import limits as limits_module
from . import session as session_module

# Children forked ahead of need, each waiting for one session.
SPARES = 2

try:
    _LIBC = ctypes.CDLL(None, use_errno=True)
except OSError:  # not glibc/Linux: children just do not die with the server
    _LIBC = None


class Reaper:
    """Reaps every child (and, as subreaper, what they orphan) and tells the service how each of
    its own children ended: one line `{"type":"exit","pid":…,"code"|"signal":…}` on stdout, so a
    session whose process died is reported with its signal or exit code."""

    def __init__(self, children, cgroups):
        self.children = children
        self.cgroups = cgroups
        self.sweeping = []  # session cgroups not yet empty

    def __call__(self, *_):
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid not in self.children:
                continue  # a grandchild its session left behind
            self.children.discard(pid)
            how = (
                {"signal": os.WTERMSIG(status)}
                if os.WIFSIGNALED(status)
                else {"code": os.waitstatus_to_exitcode(status)}
            )
            if "signal" in how and limits_module.oom_killed(self.cgroups, pid):
                how["limit"] = "memory"  # the OOM killer, at the session's memory.max
            line = json.dumps({"type": "exit", "pid": pid, **how}, separators=(",", ":")) + "\n"
            try:
                os.write(1, line.encode())  # one write, below PIPE_BUF: never torn, safe in a handler
            except OSError:
                pass
            self.sweeping.extend(limits_module.end_group(pid, self.cgroups))

    def sweep(self):
        self.sweeping = [p for p in self.sweeping if not limits_module.sweep_cgroup(p)]


def _die_with_parent(server_pid):
    try:
        _LIBC.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass
    if os.getppid() != server_pid:  # the server died before prctl took effect
        os._exit(1)


def _spare(listener, notify, server_pid, limits, cgroups):
    """A pre-forked child: made ready ahead of time, it waits for its one session connection.

    Forking and setting up happen off the session's critical path; the parent forks the next
    spare when this one takes a connection (it writes a byte to `notify`).
    """
    for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
    _die_with_parent(server_pid)
    limits_module.apply(limits, cgroups)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        prepared = ahead.Prepared()  # threads and capture, before the session arrives
        listener.setblocking(True)
        conn, _ = listener.accept()
        listener.close()
        os.write(notify, os.getpid().to_bytes(4, "little"))  # one atomic pipe write
        os.close(notify)
        session_module.run_session(conn, prepared=prepared)
    finally:
        os._exit(1)


def serve(socket_path, preload=(), spares=SPARES, warm_dir=None, warm_modules=(), limits=None):
    limits = limits or limits_module.Limits()
    for name in preload:
        try:
            importlib.import_module(name)
        except Exception as e:
            print(f"preload {name}: {type(e).__name__}: {e}", file=sys.stderr)
    if warm_dir is not None:
        from .warm import warm_import

        try:
            warm_import(warm_dir, warm_modules)
        except BaseException as e:  # the service runs this deployment's sessions cold instead
            print(f"warm import failed: {type(e).__name__}: {e}", file=sys.stderr)
            return 3
    try:
        os.unlink(socket_path)
    except FileNotFoundError:
        pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path)
    listener.listen(128)
    children = set()
    spare_pids = set()  # forked and not yet given a session
    server_pid = os.getpid()
    try:  # orphans of sessions come to this server, which reaps them
        _LIBC.prctl(36, 1)  # PR_SET_CHILD_SUBREAPER
    except Exception:
        pass
    cgroups = limits_module.server_cgroups(server_pid, limits)
    reap = Reaper(children, cgroups)
    stopping = []
    notify_r, notify_w = os.pipe()
    os.set_blocking(notify_r, False)

    signal.signal(signal.SIGCHLD, reap)
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    signal.signal(signal.SIGINT, lambda *_: stopping.append(True))

    def fork_spare():
        # SIGCHLD waits until the pid is in `children`, so a quick child is never left behind
        # there (a stale pid could be reused and then killed at shutdown).
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
        try:
            pid = os.fork()
            if pid == 0:
                os.close(notify_r)
                _spare(listener, notify_w, server_pid, limits, cgroups)
            children.add(pid)
            spare_pids.add(pid)
        except OSError as e:  # out of processes: fewer spares for now, the server lives on
            print(f"fork: {e}", file=sys.stderr)
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})

    ahead.warm_server()
    # What the children share is made now, once: a frozen heap is not touched by their gc.
    gc.collect()
    gc.freeze()
    # Sessions yield the CPU to the service, so accepting webhooks stays quick under load; so
    # does this server, whose forks (the kernel's page-table copy) are work of the sessions too.
    limits_module.server_priority(limits)
    for _ in range(spares):
        fork_spare()

    ready = {
        "type": "ready",
        "pid": server_pid,
        "python": platform.python_version(),
        "sdk": workflow_sdk.__version__,
    }
    os.write(1, (json.dumps(ready, separators=(",", ":")) + "\n").encode())  # as the exit lines

    sel = selectors.DefaultSelector()
    sel.register(notify_r, selectors.EVENT_READ, "taken")
    sel.register(0, selectors.EVENT_READ, "stdin")
    retiring = False

    def retire():
        # No new sessions: the socket goes, spares die; sessions already started run to their end.
        listener.close()
        try:
            os.unlink(socket_path)
        except FileNotFoundError:
            pass
        for pid in list(spare_pids & children):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    try:
        while not stopping:
            for key, _ in sel.select(timeout=1.0):
                if key.data == "stdin":
                    data = os.read(0, 4096)
                    if not data:
                        stopping.append(True)
                    elif b"retire" in data and not retiring:
                        retiring = True
                        retire()
                    continue
                try:
                    data = os.read(notify_r, 4096)
                except (BlockingIOError, InterruptedError):
                    continue
                for i in range(0, len(data) - 3, 4):  # a spare took a session: fork the next
                    spare_pids.discard(int.from_bytes(data[i : i + 4], "little"))
                    if not retiring:
                        fork_spare()
            reap()
            reap.sweep()
            if retiring and not children:
                break
    finally:
        for pid in list(children):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 3
        while children and time.monotonic() < deadline:  # every child reaped before the server goes
            reap()
            time.sleep(0.005)
        for path in reap.sweeping:
            for _ in range(50):  # what the group left must be gone before its cgroup can go
                if limits_module.sweep_cgroup(path):
                    break
                reap()
                time.sleep(0.01)
        limits_module.remove_cgroups(cgroups)
        if not retiring:
            listener.close()
        try:
            os.unlink(socket_path)
        except FileNotFoundError:
            pass
    return 0
