"""Process reuse: one process runs sessions of its deployment one after the other.

A trigger with `reuse_process: true` (non-durable only) lets the service hand a session to an idle
process that ran one of its deployment's sessions (same build, vars and entry) instead of a
fresh fork. Module state stays between sessions, as in AWS Lambda; see docs/sessions.md,
"Reused processes". `start` says `reuse: true` when the process may stay after this session;
the process answers `done` with `reuse: true` only when the session left nothing that could
reach the next one (`Reuse.settle`), then waits for the next `start` on the same connection.
Anything else ends the process as a fresh one ends: an error, a timeout, a stop, a crash, a
thread or a child process still running, output not through, a CPU limit it cannot renew.

Each session gets afresh: sys.stdout and sys.stderr, the output of fds 1 and 2 up to its `done`,
its event and id, `os.environ` as the deployment set it (its own TRACEPARENT), the workflow
clock, its own CPU seconds. What stays: modules and their state, the import hook, the runner's
threads (reader, capture pumps, watchdog, activity lane and pool), and the process's memory,
open files and processes limits, which bound the process and so its module state too.

A `start` with `fresh_modules: true` (a non-durable trigger without `reuse_process`: the
default) gives its session fresh module state as well: the project's modules (those its import
hook loaded) are dropped before it, so the entry module is imported anew and module-level code
runs once per session, as in a fresh process; the global `random` is seeded anew, as a fork
does. Modules from outside the project (the standard library, installed packages) stay imported,
with whatever state a session left in them (docs/sessions.md, "Fresh modules"). Importing them
anew costs what their module-level code costs: past SLOW_IMPORT the process ends after the
session, its `done` says `slow_import`, and the service gives the deployment's sessions processes
of their own, forked from the warm server that has imported the project once.
"""

import os
import random
import resource
import sys
import threading
import time

from ..errors import ProtocolError
from . import limits, standby

__all__ = ["Reuse", "Sink", "serve"]

# Written to fds 1 and 2 at a session's end: once it is out of the pipe, so is every byte before.
_MARK = "\x00hl-flush:"
# Seconds to wait for the marker; a pump stuck longer (a partial line over 64 KiB cut it) ends
# the process instead, whose exit drains the pipes as a fresh process's does.
FLUSH_WAIT = 2.0
# CPU seconds an import anew may take before a process of its own is the cheaper way: a forked
# session costs a few ms of faults and set-up, up to 50 ms where a fault costs 50 µs.
SLOW_IMPORT = 0.02


class Sink:
    """The capture pumps' lines (fds 1 and 2) to the running session's prints, and the marker."""

    def __init__(self, emit):
        self._emit = emit
        self._seen = {"stdout": 0, "stderr": 0}
        self._flushes = 0
        self._cond = threading.Condition()

    def __call__(self, text, stream):
        at = text.find(_MARK)
        try:
            n = int(text[at + len(_MARK) :]) if at != -1 else None
        except ValueError:
            n = None
        if n is None:
            self._emit(text, stream)
            return
        if at:
            self._emit(text[:at], stream)  # the session's last line, left without its newline
        with self._cond:
            self._seen[stream] = n
            self._cond.notify_all()

    def flush(self):
        """Wait until what was written to fds 1 and 2 has gone out as prints; False if it did not."""
        self._flushes += 1
        n = self._flushes
        mark = f"{_MARK}{n}\n".encode()
        try:
            os.write(1, mark)
            os.write(2, mark)
        except OSError:  # the session closed or replaced them
            return False
        with self._cond:
            return self._cond.wait_for(lambda: all(v == n for v in self._seen.values()), FLUSH_WAIT)


class Reuse:
    """The sessions of one reused process: which one runs, the next `start`, what each resets."""

    def __init__(self, process):
        self._process = process
        self._lock = threading.Lock()
        self._running = True  # the first session, from `serve`
        self.stay = False  # the running session's `start` said reuse: the process may stay
        self.fresh = False  # the running session's `start` said fresh_modules
        self.slow = False  # an import anew took longer than SLOW_IMPORT: the process ends
        self._anew = False  # this session's modules were dropped before it
        self._next = None
        self._arrived = threading.Event()
        self._base = None  # os.environ before the first session's vars
        self._project = None  # the project whose import hook is in place
        self.sink = Sink(process.session.emit_print)

    def on_start(self, msg):
        """The reader thread's `start`: refused while a session runs, or for another kind of session."""
        with self._lock:
            if self._running or self._next is not None:
                raise ProtocolError("a start message while a session runs in this process")
            if msg["durable"]:
                raise ProtocolError("a durable session in a reused process")
            self._next = msg
        self._arrived.set()

    def next_start(self):
        self._arrived.wait()
        self._arrived.clear()
        with self._lock:
            start, self._next = self._next, None
            self._running = True
        if os.path.realpath(start["project_dir"]) != self._project:
            raise ProtocolError("a reused process runs the sessions of one project folder")
        return start

    def _claim(self):
        """The running session's end is this caller's to report (the main thread's or the watchdog's)."""
        with self._lock:
            running, self._running = self._running, False
        return running

    def setup(self, env, project_dir):
        """Session.setup for a reused process: the vars each time, the hook and watchdog once."""
        self.environ(env)
        if self._project is None:
            self._project = project_dir
            self._process.hook(project_dir)
            self._watch()
        elif self.fresh:
            self.fresh_modules()

    def fresh_modules(self):
        """Drop the project's modules, so this session imports them anew; seed `random` anew."""
        activities = self._process.session.activities
        for name in activities.modules:
            sys.modules.pop(name, None)
        activities.forget()  # decisions cached by the functions of the modules gone
        random.seed()
        self._anew = True

    def imported(self, seconds):
        """The session's import took `seconds` of CPU: one anew past SLOW_IMPORT ends the process after it."""
        if self._anew and seconds > SLOW_IMPORT:
            self.slow = True
        self._anew = False

    def environ(self, env):
        """os.environ as the process had it before its first session, then this session's vars."""
        if self._base is None:
            self._base = dict(os.environ)
        want = {**self._base, **env}
        for name in [n for n in os.environ if n not in want]:
            del os.environ[name]
        for name, value in want.items():
            if os.environ.get(name) != value:
                os.environ[name] = value

    def _watch(self):
        """One watchdog for every session: it fails the running one past the workflow timeout."""
        p = self._process
        interval = min(0.05, p.limit / 10)

        def watch():
            while True:
                time.sleep(interval)
                p.session.tell_running()  # activities running long enough get their rows in flight
                if p.clock.over(p.limit) is not None and self._claim():
                    p.timed_out()

        standby.start(watch, "hl-watchdog", p.prepared and p.prepared.watchdog)

    def settle(self):
        """At a completed session's end: whether the process may take the next one (`done` says so)."""
        if not self._claim() or not self.stay or self.slow:
            return False
        clock = self._process.clock
        ok = clock.waiting == 0 and not threads_left() and not children_left()
        ok = ok and self.sink.flush() and renew_cpu()
        clock.pause()  # until the next session's workflow code begins
        return ok


def threads_left():
    """Python threads other than the runner's own (named hl-…) still alive."""
    main = threading.main_thread()
    return [t for t in threading.enumerate() if t is not main and not t.name.startswith("hl-")]


def children_left():
    """Whether the process has a child process, running or ended and not yet waited for."""
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return False
    return True


def renew_cpu():
    """A CPU limit is per session: the next one gets its seconds from now (False: not allowed)."""
    seconds = limits.current.cpu_seconds
    if not seconds:
        return True
    used = resource.getrusage(resource.RUSAGE_SELF)
    soft = int(used.ru_utime + used.ru_stime) + 1 + seconds
    try:
        resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 1))
    except (ValueError, OSError):  # raising the hard limit needs privilege here
        return False
    return True


def serve(process, start):
    """Run `start`'s session, then each next one on this connection, until one ends the process."""
    reuse = Reuse(process)
    process.reuse = reuse
    process.channel.on_start = reuse.on_start
    process.channel.start_reader(process.prepared and process.prepared.reader)
    process.capture(reuse.sink)
    while True:
        reuse.stay = bool(start["reuse"])
        reuse.fresh = bool(start.get("fresh_modules"))
        process.run_one(start)  # returns only after a `done` with reuse
        try:
            start = reuse.next_start()
        except ProtocolError as e:
            process.fatal(e)
        process.streams()
